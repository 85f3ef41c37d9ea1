//===- RudnnInterfaces.h - The extension points of rudnn --------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_RUDNNINTERFACES_H
#define RUDNN_DIALECTS_IR_RUDNNINTERFACES_H

#include "dialects/IR/OperatorContract.h"
#include "dialects/IR/PrimitiveSupport.h"
#include "dialects/IR/RudnnDialect.h"
#include "dialects/IR/ShapeChecker.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::rudnn {

/// Builds the op `name` from its operands by ODS group, `groups[i]` of
/// them in group i (the present ones of `operands`, which holds null for
/// absent ones, in order); `operandSegmentSizes` is set where the op has
/// it.
Operation *buildWithOperandGroups(OpBuilder &builder, Location loc,
                                  StringRef name, ArrayRef<Value> operands,
                                  ArrayRef<int32_t> groups,
                                  ArrayRef<Type> results,
                                  ArrayRef<NamedAttribute> attributes);

/// Builds the op `name` whose contract entries are its ODS operand and
/// result groups one to one (an absent optional operand an empty group):
/// the default of OperatorOpInterface::buildFromContract.
Operation *buildByContractGroups(OpBuilder &builder, Location loc,
                                 StringRef name, ArrayRef<Value> operands,
                                 ArrayRef<Type> results,
                                 ArrayRef<NamedAttribute> attributes);

} // namespace mlir::rudnn

// Generated models take parameters some methods do not use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "dialects/IR/RudnnInterfaces.h.inc"
#pragma GCC diagnostic pop

namespace mlir::rudnn {

/// Checks an op's operands and results against `contract`: presence,
/// ranks, dims bound consistently by letter (through `shapes`), static dims
/// static and within their bounds, element types. `operand(i)` and
/// `result(i)` give the values of the contract's entries (null when
/// absent). Diagnostics name the operand and the value expected.
LogicalResult verifyContract(Operation *op,
                             const ::rudnn::OperatorContract &contract,
                             llvm::function_ref<Value(unsigned)> operand,
                             llvm::function_ref<Value(unsigned)> result,
                             ShapeChecker &shapes);

/// verifyContract for an operator op, against its own contract.
LogicalResult verifyOperatorContract(OperatorOpInterface op,
                                     ShapeChecker &shapes);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_RUDNNINTERFACES_H
