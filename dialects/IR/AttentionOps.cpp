//===- AttentionOps.cpp - The attention operator and its primitives -------===//
//
// rudnn.attention as an operator op: its contract and rules, the tile sizes
// and scale it chooses for a target, and the tiled-attention primitives it
// becomes; the primitives' verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/AttentionContracts.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/TargetPolicy.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// The dims attention code is specialized for.
constexpr llvm::StringLiteral kAttentionStaticDims = "DE";

LogicalResult checkPositive(Operation *op, StringRef name, FloatAttr value) {
  if (!value)
    return success();
  const double x = value.getValueAsDouble();
  if (!(x > 0.0) || !std::isfinite(x))
    return op->emitOpError()
           << "'" << name << "' must be positive and finite, got " << x;
  return success();
}

LogicalResult checkWindow(Operation *op, std::optional<int64_t> left,
                          std::optional<int64_t> right) {
  if (left.has_value() != right.has_value())
    return op->emitOpError() << "'window' needs both bounds";
  if ((left && *left < -1) || (right && *right < -1))
    return op->emitOpError()
           << "'window' bounds must be -1 (unbounded) or at least 0";
  return success();
}

LogicalResult checkTiles(Operation *op, std::optional<int64_t> blockQ,
                         std::optional<int64_t> blockK) {
  if (blockQ && *blockQ != kAttentionBlockQueries)
    return op->emitOpError() << "'block_q' must be " << kAttentionBlockQueries
                             << ", got " << *blockQ;
  if (blockK && *blockK != 16 && *blockK != 32 && *blockK != 64)
    return op->emitOpError()
           << "'block_k' must be 16, 32 or 64, got " << *blockK;
  return success();
}

std::optional<int64_t> optionalInt(std::optional<uint64_t> value) {
  return value ? std::optional<int64_t>(static_cast<int64_t>(*value))
               : std::nullopt;
}

/// Checks `value` against `layout`, then its element type.
LogicalResult checkTensor(Operation *op, ShapeChecker &shapes, StringRef name,
                          Value value, StringRef layout,
                          LogicalResult (*element)(Operation *, StringRef,
                                                   Value)) {
  if (failed(shapes.check(name, value, layout)))
    return failure();
  return element(op, name, value);
}

} // namespace

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

const ::rudnn::OperatorContract &AttentionOp::getContract() {
  return ::rudnn::attentionContract();
}

LogicalResult AttentionOp::verify() {
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(verifyOperatorContract(*this, shapes)) ||
      failed(checkWindow(*this, optionalInt(getWindowLeft()),
                         optionalInt(getWindowRight()))) ||
      failed(checkPositive(*this, "softcap", getSoftcapAttr())) ||
      failed(checkPositive(*this, "scale", getScaleAttr())) ||
      failed(checkTiles(*this, optionalInt(getBlockQ()),
                        optionalInt(getBlockK()))))
    return failure();
  std::optional<int64_t> heads = shapes.lookup('H'),
                         groups = shapes.lookup('G');
  if (heads && groups && *heads % *groups != 0)
    return emitOpError() << "query heads H = " << *heads
                         << " must be a multiple of the key heads G = "
                         << *groups;
  return success();
}

LogicalResult AttentionOp::specialize(TargetAttr target,
                                      const SpecializeOptions &) {
  auto q = cast<RankedTensorType>(getQ().getType());
  const int64_t headDim = q.getDimSize(3),
                valueDim =
                    cast<RankedTensorType>(getV().getType()).getDimSize(3),
                inputBytes = q.getElementTypeBitWidth() / 8;
  Builder builder(getContext());
  if (!getScaleAttr())
    setScaleAttr(
        builder.getF32FloatAttr(1.0 / std::sqrt(static_cast<double>(headDim))));
  if (!getBlockQ())
    setBlockQAttr(builder.getI64IntegerAttr(kAttentionBlockQueries));
  if (!getBlockK()) {
    std::optional<int64_t> keys = chooseAttentionBlockKeys(
        headDim, valueDim, inputBytes, target.getSmemPerBlock());
    if (!keys)
      return emitOpError() << "no key tile fits D = " << headDim
                           << ", E = " << valueDim << " in smem_per_block = "
                           << target.getSmemPerBlock() << " bytes (needs "
                           << attentionSharedBytes(kAttentionBlockQueries, 16,
                                                   headDim, valueDim,
                                                   inputBytes)
                           << " for 16 keys)";
    setBlockKAttr(builder.getI64IntegerAttr(*keys));
  }
  return success();
}

// scores → mask → online softmax → accumulate → finalize: one kernel.
LogicalResult AttentionOp::decompose(OpBuilder &builder) {
  if (!getScaleAttr() || !getBlockQ() || !getBlockK())
    return emitOpError() << "needs its scale and tile sizes: run "
                            "rudnn-specialize before rudnn-decompose";
  auto q = cast<RankedTensorType>(getQ().getType());
  auto k = cast<RankedTensorType>(getK().getType());
  auto v = cast<RankedTensorType>(getV().getType());
  const int64_t batch = q.getDimSize(0), length = q.getDimSize(1),
                heads = q.getDimSize(2), keys = k.getDimSize(1);
  Type f32 = builder.getF32Type();
  auto scoresType = RankedTensorType::get({batch, heads, length, keys}, f32);
  auto rowType = RankedTensorType::get({batch, heads, length}, f32);
  auto accType =
      RankedTensorType::get({batch, heads, length, v.getDimSize(3)}, f32);
  Location loc = getLoc();
  Value scores = builder.create<AttentionScoresOp>(
      loc, scoresType, getQ(), getK(), getScaleAttr(), getSoftcapAttr(),
      getBlockQAttr(), getBlockKAttr());
  Value masked = builder.create<AttentionMaskOp>(
      loc, scoresType, scores, getKeyLengths(), getKeyMask(), getCausalAttr(),
      getWindowLeftAttr(), getWindowRightAttr());
  auto softmax = builder.create<AttentionSoftmaxOp>(loc, scoresType, rowType,
                                                    rowType, masked);
  Value acc = builder.create<AttentionAccumulateOp>(loc, accType,
                                                    softmax.getP(), getV());
  auto finalize = builder.create<AttentionFinalizeOp>(
      loc, getO().getType(), getLse().getType(), acc, softmax.getRowMax(),
      softmax.getRowSum());
  getO().replaceAllUsesWith(finalize.getO());
  getLse().replaceAllUsesWith(finalize.getLse());
  return success();
}

//===----------------------------------------------------------------------===//
// The tiled-attention primitives
//===----------------------------------------------------------------------===//

LogicalResult AttentionScoresOp::verify() {
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(checkTensor(*this, shapes, "q", getQ(), "BTHD",
                         checkFloatElementType)) ||
      failed(checkTensor(*this, shapes, "k", getK(), "BSGD",
                         checkFloatElementType)) ||
      failed(checkSameElementType(*this, "k", getK(), "q", getQ())) ||
      failed(checkTensor(*this, shapes, "scores", getScores(), "BHTS",
                         checkF32ElementType)) ||
      failed(checkPositive(*this, "scale", getScaleAttr())) ||
      failed(checkPositive(*this, "softcap", getSoftcapAttr())))
    return failure();
  return checkTiles(*this, static_cast<int64_t>(getBlockQ()),
                    static_cast<int64_t>(getBlockK()));
}

LogicalResult AttentionMaskOp::verify() {
  ShapeChecker shapes(*this, "");
  if (failed(checkTensor(*this, shapes, "scores", getScores(), "BHTS",
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "masked", getMasked(), "BHTS",
                         checkF32ElementType)) ||
      failed(checkWindow(*this, optionalInt(getWindowLeft()),
                         optionalInt(getWindowRight()))))
    return failure();
  if (Value lengths = getKeyLengths();
      lengths &&
      (failed(shapes.check("key_lengths", lengths, "B")) ||
       failed(checkIntegerElementType(*this, "key_lengths", lengths, 32))))
    return failure();
  if (Value mask = getKeyMask();
      mask && (failed(shapes.check("key_mask", mask, "BS")) ||
               failed(checkIntegerElementType(*this, "key_mask", mask, 1))))
    return failure();
  return success();
}

LogicalResult AttentionSoftmaxOp::verify() {
  ShapeChecker shapes(*this, "");
  if (failed(checkTensor(*this, shapes, "masked", getMasked(), "BHTS",
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "p", getP(), "BHTS",
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "row_max", getRowMax(), "BHT",
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "row_sum", getRowSum(), "BHT",
                         checkF32ElementType)))
    return failure();
  return success();
}

LogicalResult AttentionAccumulateOp::verify() {
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(checkTensor(*this, shapes, "p", getP(), "BHTS",
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "v", getV(), "BSGE",
                         checkFloatElementType)) ||
      failed(checkTensor(*this, shapes, "acc", getAcc(), "BHTE",
                         checkF32ElementType)))
    return failure();
  return success();
}

LogicalResult AttentionFinalizeOp::verify() {
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(checkTensor(*this, shapes, "acc", getAcc(), "BHTE",
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "row_max", getRowMax(), "BHT",
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "row_sum", getRowSum(), "BHT",
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "o", getO(), "BTHE",
                         checkFloatElementType)) ||
      failed(checkTensor(*this, shapes, "lse", getLse(), "BHT",
                         checkF32ElementType)))
    return failure();
  return success();
}
