// RUN: not rudnn-translate --rudnn-to-cuda %s 2>&1 | FileCheck %s

// Operator ops must be decomposed before emission.
// CHECK: error: cannot emit an operator op: run rudnn-specialize and rudnn-decompose first
func.func @main(%q: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>) {
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
  return
}
