// Text nested deeper than the parser's stack allows is refused with a
// diagnostic by every tool, never a crash; nesting at the limit still parses.
// RUN: %python -c "print('func.func @f(%%a: ' + 'tensor<' * 20000 + 'f32' + '>' * 20000 + ') { return }')" > %t.types.mlir
// RUN: not rudnn-opt %t.types.mlir 2>&1 | FileCheck %s
// RUN: not rudnn-translate --rudnn-to-cuda %t.types.mlir 2>&1 | FileCheck %s
// RUN: not rudnn-run %t.types.mlir --random 1 2>&1 | FileCheck %s
// RUN: %python -c "print('module {' * 10000 + '}' * 10000)" > %t.regions.mlir
// RUN: not rudnn-opt %t.regions.mlir 2>&1 | FileCheck %s
// RUN: %python -c "print('func.func @f() attributes {a = ' + '[' * 10000 + ']' * 10000 + '} { return }')" > %t.arrays.mlir
// RUN: not rudnn-opt %t.arrays.mlir 2>&1 | FileCheck %s
// CHECK: nesting deeper than 256 levels, or a result number past 65536: rudnn does not parse this text

// A huge result number or result-group size (the parser sizes a vector by
// it) is refused the same way, never an out-of-memory abort.
// RUN: %python -c "print('func.func @f(%%a: f32) -> f32 { return %%a#4294967295 : f32 }')" > %t.number.mlir
// RUN: not rudnn-opt %t.number.mlir 2>&1 | FileCheck %s
// RUN: %python -c "print('func.func @f() { %%r:99999999999 = \"x.y\"() : () -> () return }')" > %t.group.mlir
// RUN: not rudnn-opt %t.group.mlir 2>&1 | FileCheck %s
// A small result number is left to the parser.
// RUN: %python -c "print('func.func @f(%%a: f32) -> f32 { return %%a#3 : f32 }')" > %t.small.mlir
// RUN: not rudnn-opt %t.small.mlir 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL-NOT: rudnn does not parse

// Brackets in strings and comments do not count, and 250 levels parse.
// RUN: %python -c "print('// ' + '(' * 1000); print('func.func @f() attributes {s = \"' + '{' * 1000 + '\", a = ' + '[' * 250 + ']' * 250 + '} { return }')" > %t.ok.mlir
// RUN: rudnn-opt %t.ok.mlir | FileCheck %s --check-prefix=OK
// OK: func.func @f()

// A name used before its definition is refused before parsing: rudnn IR
// never needs a forward reference, and MLIR's parser can free a region under
// one when the text is invalid. Definitions in result lists and argument
// lists are not uses.
// RUN: %python -c "print('func.func @f() { \"rudnn.plan\"() ({ \"x.y\"(%%v) : (f32) -> () \"rudnn.kernel\"() ({ %%v = \"x.z\"() : () -> f32 }) : () -> () }) : () -> () return }')" > %t.forward.mlir
// RUN: not rudnn-opt %t.forward.mlir 2>&1 | FileCheck %s --check-prefix=FORWARD
// RUN: not rudnn-translate --rudnn-to-cuda %t.forward.mlir 2>&1 | FileCheck %s --check-prefix=FORWARD
// FORWARD: '%v' is used before it is defined: rudnn does not parse forward references
// RUN: %python -c "print('func.func @g(%%a: f32, %%b: f32) -> (f32, f32) { %%c, %%d = \"x.y\"(%%a, %%b) : (f32, f32) -> (f32, f32) return %%c, %%d : f32, f32 }')" > %t.defined.mlir
// RUN: rudnn-opt %t.defined.mlir --allow-unregistered-dialect | FileCheck %s --check-prefix=DEFINED
// DEFINED: return %0#0, %0#1
