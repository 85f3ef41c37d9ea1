//===- KdaRules.h - The KDA rules a contract cannot state -------*- C++ -*-===//
//
// Shared by the operator ops (rudnn.kda, rudnn.kda_backward) and the
// primitives with the forward's operands (rudnn.kda_recurrent). The shapes
// and element types come from the contracts (KdaContracts.h).
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_KDA_KDARULES_H
#define RUDNN_DIALECTS_IR_KDA_KDARULES_H

#include "dialects/IR/RudnnInterfaces.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/kda/KdaContracts.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::rudnn {

/// Dims of the KDA contract that shape the generated code.
inline constexpr llvm::StringLiteral kKdaStaticDims = "KV";

/// `chunk` one of 16, 32, 64 and `scale` positive and finite, when given.
LogicalResult verifyKdaAttributes(Operation *op, std::optional<uint64_t> chunk,
                                  FloatAttr scale);

/// The chunk count N of a boundary-state tensor bound in `shapes` equals
/// ceil(T / chunk), or for packed sequences the chunk slots ceil(T / chunk)
/// + S + 1. Without a chunk it is not checked: rudnn-specialize chooses
/// the chunk, and the op is verified again then.
LogicalResult verifyKdaChunkCount(Operation *op, const ShapeChecker &shapes,
                                  llvm::StringRef name,
                                  std::optional<uint64_t> chunk,
                                  bool packed = false);

/// Saved tiles [N, B, H, W] bound in `shapes`, once the chunk is known: N
/// as verifyKdaChunkCount and W static, the words the kernels save per
/// chunk and head for K, V, the chunk and `q`'s element type.
LogicalResult verifyKdaSavedTiles(Operation *op, const ShapeChecker &shapes,
                                  std::optional<uint64_t> chunk, Value q,
                                  bool packed = false);

/// What a forward saves: `save_tiles` only with `save_boundaries`, and the
/// saved results exactly those asked for.
template <typename KdaLikeOp> LogicalResult verifyKdaSaved(KdaLikeOp op) {
  if (op.getSaveTiles() && !op.getSaveBoundaries())
    return op.emitOpError() << "'save_tiles' needs 'save_boundaries': the "
                               "backward reads both";
  const size_t expected = op.getSaveBoundaries() + op.getSaveTiles();
  const size_t saved = op.getSaved().size();
  if (saved == expected)
    return success();
  if (saved > expected)
    return op.emitOpError()
           << (op.getSaveBoundaries()
                   ? "'tiles' result is produced only with 'save_tiles'"
                   : "'boundaries' result is produced only with "
                     "'save_boundaries'");
  return op.emitOpError()
         << (saved == 0
                 ? "'save_boundaries' is set but the op has no 'boundaries' "
                   "result"
                 : "'save_tiles' is set but the op has no 'tiles' result");
}

/// A forward-shaped op (rudnn.kda, rudnn.kda_recurrent): the forward's
/// contract (with grouped heads, `grouped`) over `operands` in its order
/// (null where absent) and the
/// contract results `result` gives, then attributes and the saved tensors'
/// chunk count.
template <typename KdaLikeOp>
LogicalResult verifyKdaForward(KdaLikeOp op, llvm::ArrayRef<Value> operands,
                               llvm::function_ref<Value(unsigned)> result,
                               bool grouped, Value tiles = {}) {
  ShapeChecker shapes(op, kKdaStaticDims);
  if (failed(verifyContract(
          op, ::rudnn::kdaContract(grouped),
          [&](unsigned i) {
            return i < operands.size() ? operands[i] : Value();
          },
          result, shapes)) ||
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
/// rudnn.kda_recurrent): the packed contract over `operands` and `results`
/// in its order (null where absent), then attributes and the saved
/// tensors' chunk slots.
template <typename KdaLikeOp>
LogicalResult verifyKdaVarlenForward(KdaLikeOp op, bool grouped,
                                     llvm::ArrayRef<Value> operands,
                                     llvm::ArrayRef<Value> results) {
  ShapeChecker shapes(op, kKdaStaticDims);
  auto at = [](llvm::ArrayRef<Value> values, unsigned i) {
    return i < values.size() ? values[i] : Value();
  };
  if (failed(verifyContract(
          op, ::rudnn::kdaVarlenContract(grouped),
          [&](unsigned i) { return at(operands, i); },
          [&](unsigned i) { return at(results, i); }, shapes)) ||
      failed(verifyKdaAttributes(op, op.getChunk(), op.getScaleAttr())))
    return failure();
  if (at(results, 2) && failed(verifyKdaChunkCount(op, shapes, "boundaries",
                                                   op.getChunk(), true)))
    return failure();
  if (at(results, 3))
    return verifyKdaSavedTiles(op, shapes, op.getChunk(), op.getQ(), true);
  return success();
}

/// The input transforms' rules: dt_bias and a lower bound come with a_log,
/// the bound negative.
template <typename KdaLikeOp>
LogicalResult verifyKdaInputTransforms(KdaLikeOp op) {
  if (op.getDtBias() && !op.getALog())
    return op.emitOpError() << "'dt_bias' comes with 'a_log': the gate is "
                               "formed only from both";
  if (FloatAttr bound = op.getGateLowerBoundAttr()) {
    if (!op.getALog())
      return op.emitOpError() << "'gate_lower_bound' needs 'a_log'";
    if (!(bound.getValueAsDouble() < 0.0))
      return op.emitOpError() << "'gate_lower_bound' must be negative, got "
                              << bound.getValueAsDouble();
  }
  return success();
}

/// A backward's gradients returned exactly when their input is given:
/// d_initial_state, d_a_log, d_dt_bias, in that order.
template <typename KdaBackwardLikeOp>
LogicalResult verifyOptionalGradients(KdaBackwardLikeOp op) {
  const bool initial = static_cast<bool>(op.getInitialState());
  const size_t parameters =
      static_cast<bool>(op.getALog()) + static_cast<bool>(op.getDtBias());
  const size_t count = op.getOptionalGradients().size();
  if (count == initial + parameters)
    return success();
  if (initial && count == parameters)
    return op.emitOpError() << "'initial_state' is given, so the op must "
                               "produce 'd_initial_state'";
  if (!initial && count == parameters + 1)
    return op.emitOpError() << "'d_initial_state' is produced only when "
                               "'initial_state' is given";
  return op.emitOpError() << "produces " << count
                          << " optional gradients, expected "
                          << initial + parameters
                          << ": d_initial_state, d_a_log and d_dt_bias exactly "
                             "when initial_state, a_log and dt_bias are given";
}

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_KDA_KDARULES_H
