//===- KdaRules.h - The KDA rules a contract cannot state -------*- C++ -*-===//
//
// Shared by the operator ops (rudnn.kda, rudnn.kda_backward) and the
// primitives with the forward's operands (rudnn.kda_recurrent). The shapes
// and element types come from the contracts (KdaContracts.h).
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_KDARULES_H
#define RUDNN_DIALECTS_IR_KDARULES_H

#include "dialects/IR/KdaContracts.h"
#include "dialects/IR/RudnnInterfaces.h"
#include "dialects/IR/ShapeChecker.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::rudnn {

/// Dims of the KDA contract that shape the generated code.
inline constexpr llvm::StringLiteral kKdaStaticDims = "KV";

/// `chunk` one of 16, 32, 64 and `scale` positive and finite, when given.
LogicalResult verifyKdaAttributes(Operation *op, std::optional<uint64_t> chunk,
                                  FloatAttr scale);

/// The chunk count N of a boundary-state tensor bound in `shapes` equals
/// ceil(T / chunk); a static N needs an explicit chunk.
LogicalResult verifyKdaChunkCount(Operation *op, const ShapeChecker &shapes,
                                  llvm::StringRef name,
                                  std::optional<uint64_t> chunk);

/// Saved tiles [N, B, H, W] bound in `shapes`: an explicit chunk, N =
/// ceil(T / chunk) and W static, the words the kernels save per chunk and
/// head for K, V, the chunk and `q`'s element type.
LogicalResult verifyKdaSavedTiles(Operation *op, const ShapeChecker &shapes,
                                  std::optional<uint64_t> chunk, Value q);

/// A forward-shaped op (rudnn.kda, rudnn.kda_recurrent): the forward's
/// contract (with grouped heads, `grouped`) over its ODS operands and the
/// contract results `result` gives, then attributes and the saved tensors'
/// chunk count.
template <typename KdaLikeOp>
LogicalResult verifyKdaForward(KdaLikeOp op,
                               llvm::function_ref<Value(unsigned)> result,
                               bool grouped, Value tiles = {}) {
  auto first = [](auto group) {
    return group.empty() ? Value() : Value(group.front());
  };
  ShapeChecker shapes(op, kKdaStaticDims);
  if (failed(verifyContract(
          op, ::rudnn::kdaContract(grouped),
          [&](unsigned i) { return first(op.getODSOperands(i)); }, result,
          shapes)) ||
      failed(verifyKdaAttributes(op, op.getChunk(), op.getScaleAttr())))
    return failure();
  if (op.getBoundaries() &&
      failed(verifyKdaChunkCount(op, shapes, "boundaries", op.getChunk())))
    return failure();
  if (tiles)
    return verifyKdaSavedTiles(op, shapes, op.getChunk(), op.getQ());
  return success();
}

/// A forward over packed sequences (rudnn.kda_varlen, a packed
/// rudnn.kda_recurrent): the packed contract over the op's operands by name,
/// then attributes.
template <typename KdaLikeOp>
LogicalResult verifyKdaVarlenForward(KdaLikeOp op, bool grouped) {
  const Value operands[] = {
      op.getQ(),    op.getK(),         op.getV(),           op.getG(),
      op.getBeta(), op.getCuSeqlens(), op.getInitialState()};
  const Value results[] = {op.getOutput(), op.getFinalState()};
  ShapeChecker shapes(op, kKdaStaticDims);
  if (failed(verifyContract(
          op, ::rudnn::kdaVarlenContract(grouped),
          [&](unsigned i) { return i < 7 ? operands[i] : Value(); },
          [&](unsigned i) { return i < 2 ? results[i] : Value(); }, shapes)))
    return failure();
  return verifyKdaAttributes(op, op.getChunk(), op.getScaleAttr());
}

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_KDARULES_H
