//===- FunctionTensors.h - Names and layouts of a function's tensors -*- C++
//-*-===//
//
// rudnn-plan names each buffer after the argument or result it holds and
// reads each run-time size from the first tensor laid out with its letter;
// the Program API binds a call's views by the same names. Both get them
// here, from the operator contracts, before the operator ops are gone.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_TRANSFORMS_FUNCTIONTENSORS_H
#define RUDNN_CODEGEN_TRANSFORMS_FUNCTIONTENSORS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::rudnn {

/// Gives every argument and result of `func` a `rudnn.name` (kept where
/// present; else the contract name of the first operator operand or result
/// it is; else "arg<i>" / "result<i>"; all distinct), a `rudnn.layout` from
/// that contract entry, and `rudnn.aliases` on a result the contract lets
/// be written over an argument.
void nameFunctionTensors(func::FuncOp func);

/// `value` seen through tensor.cast ops.
Value throughCasts(Value value);

} // namespace mlir::rudnn

#endif // RUDNN_CODEGEN_TRANSFORMS_FUNCTIONTENSORS_H
