//===- KdaRules.h - The KDA operand contract, for verifiers -----*- C++ -*-===//
//
// Shared by the operator ops (rudnn.kda, rudnn.kda_backward) and the
// chunked-recurrence primitives they decompose into.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_KDARULES_H
#define RUDNN_DIALECTS_IR_KDARULES_H

#include "dialects/IR/ShapeChecker.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::rudnn {

/// Dims of the KDA contract that shape the generated code.
inline constexpr llvm::StringLiteral kKdaStaticDims = "KV";

/// The forward's inputs, which the backward takes too.
struct KdaInputs {
  Value q, k, v, g, beta, initialState;
};

/// Shapes [B, T, H, K|V], dtypes, K and V bounds, chunk and scale.
LogicalResult verifyKdaInputs(Operation *op, ShapeChecker &shapes,
                              const KdaInputs &inputs,
                              std::optional<uint64_t> chunk, FloatAttr scale);

/// A boundary-state tensor [N, B, H, K, V] with N = ceil(T / chunk).
LogicalResult verifyKdaBoundaries(Operation *op, ShapeChecker &shapes,
                                  llvm::StringRef name, Value boundaries,
                                  std::optional<uint64_t> chunk);

/// Inputs, output, final state and (when given) boundaries of a forward.
LogicalResult verifyKdaForward(Operation *op, const KdaInputs &inputs,
                               std::optional<uint64_t> chunk, FloatAttr scale,
                               Value output, Value finalState,
                               Value boundaries);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_KDARULES_H
