//===- NormBackwardInterfaces.cpp - The normalisations' gradients ---------===//
//
// rudnn.layer_norm_backward and rudnn.rms_norm_backward as operator ops:
// their contracts per rank, the forward's form plus the blocks that walk
// the rows, and their primitives: dx and each block's column sums
// (after each chunk's sums for split rows), then the columns added in
// order; the primitives' verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/norm/NormContracts.h"
#include "dialects/IR/norm/NormPolicy.h"
#include "dialects/IR/norm/NormRules.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::rudnn;
using namespace mlir::rudnn::norm;
using ::rudnn::NormOperator;

namespace {

LogicalResult checkBlocks(Operation *op, std::optional<uint64_t> blocks,
                          std::optional<uint64_t> chunk, int64_t features) {
  if (blocks && (*blocks < 1 || *blocks > (uint64_t(1) << 20)))
    return op->emitOpError() << "'blocks' must be 1 to 2^20, got " << *blocks;
  if (blocks && chunk && features > 0) {
    const uint64_t splits = (features + *chunk - 1) / *chunk;
    if (*blocks % splits != 0)
      return op->emitOpError() << "'blocks' must be a multiple of the "
                               << splits << " chunks of a row, got " << *blocks;
  }
  return success();
}

} // namespace

// The backward operators' interface methods (Rudnn_NormOperatorOp).

template <typename Op> LogicalResult norm::verifyNormBackward(Op op) {
  if (failed(checkRank(op, op.getX())))
    return failure();
  ShapeChecker shapes(op, "C");
  if (failed(verifyOperatorContract(op, shapes)))
    return failure();
  const int64_t features = featuresOf(op.getX());
  if (failed(checkForm(op, features, op.getThreads(), op.getRowsPerBlock(),
                       op.getChunk())))
    return failure();
  return checkBlocks(op, op.getBlocks(), op.getChunk(), features);
}

template <typename Op>
LogicalResult norm::specializeNormBackward(Op op, TargetAttr target) {
  const int64_t features = featuresOf(op.getX());
  NormForm form = chooseNormForm(features, kNormMaxHeld / 2);
  Builder builder(op.getContext());
  if (!op.getThreads()) {
    setNormForm(op, form);
  } else {
    form.threads = *op.getThreads();
    form.chunk = op.getChunk().value_or(0);
    if (form.threads == 32 && !form.chunk && !op.getRowsPerBlock())
      op.setRowsPerBlockAttr(builder.getI64IntegerAttr(4));
  }
  if (!op.getBlocks())
    op.setBlocksAttr(builder.getI64IntegerAttr(
        normBackwardBlocks(form, features, target.getSmCount())));
  if (failed(checkForm(op, features, op.getThreads(), op.getRowsPerBlock(),
                       op.getChunk())))
    return failure();
  return checkBlocks(op, op.getBlocks(), op.getChunk(), features);
}

/// [sums →] rows → columns.
template <typename Op>
LogicalResult norm::decomposeNormBackward(Op op, OpBuilder &builder) {
  NormOperator kind = NormOperator::RmsNorm;
  Value mean, dgamma = op.getDgamma(), dbeta;
  if constexpr (std::is_same_v<Op, LayerNormBackwardOp>) {
    kind = NormOperator::LayerNorm;
    mean = op.getMean();
    dbeta = op.getDbeta();
  }
  if (!op.getThreads() || !op.getBlocks())
    return op.emitOpError() << "needs its form: run rudnn-specialize before "
                               "rudnn-decompose";
  Location loc = op.getLoc();
  Value x = op.getX();
  const int64_t features = featuresOf(x), blocks = *op.getBlocks();
  Type f32 = builder.getF32Type();
  const StringAttr kindName =
      builder.getStringAttr(::rudnn::normKindName(kind));
  Value sums;
  int64_t partialRows = blocks;
  if (std::optional<uint64_t> chunk = op.getChunk()) {
    const int64_t splits = (features + int64_t(*chunk) - 1) / int64_t(*chunk);
    partialRows = blocks / splits;
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(x.getType()).getShape().drop_back());
    shape.append({splits, 2});
    sums = builder.create<NormGradientSumsOp>(
        loc, RankedTensorType::get(shape, f32), op.getDy(), x, op.getRstd(),
        mean, op.getGamma(), kindName, op.getChunkAttr(), op.getThreadsAttr());
  }
  auto partialsType = RankedTensorType::get({partialRows, 2, features}, f32);
  auto rows = builder.create<NormGradientRowsOp>(
      loc, TypeRange{x.getType(), partialsType}, op.getDy(), x, op.getRstd(),
      mean, op.getGamma(), sums, kindName, op.getThreadsAttr(),
      op.getRowsPerBlockAttr(), op.getChunkAttr(), op.getBlocksAttr());
  if (auto policy = op->template getAttrOfType<StringAttr>("policy"))
    rows->setAttr("policy", policy);
  auto columnType = RankedTensorType::get(
      {features}, cast<RankedTensorType>(x.getType()).getElementType());
  auto columns = builder.create<NormGradientColumnsOp>(
      loc, TypeRange{columnType, columnType}, rows.getPartials());
  op.getDx().replaceAllUsesWith(rows.getDx());
  dgamma.replaceAllUsesWith(columns.getDgamma());
  if (dbeta)
    dbeta.replaceAllUsesWith(columns.getDbeta());
  return success();
}

template LogicalResult norm::verifyNormBackward(LayerNormBackwardOp);
template LogicalResult norm::verifyNormBackward(RmsNormBackwardOp);
template LogicalResult norm::specializeNormBackward(LayerNormBackwardOp,
                                                    TargetAttr);
template LogicalResult norm::specializeNormBackward(RmsNormBackwardOp,
                                                    TargetAttr);
template LogicalResult norm::decomposeNormBackward(LayerNormBackwardOp,
                                                   OpBuilder &);
template LogicalResult norm::decomposeNormBackward(RmsNormBackwardOp,
                                                   OpBuilder &);

//===----------------------------------------------------------------------===//
// The gradient primitives
//===----------------------------------------------------------------------===//

namespace {

/// dy, x, rstd, mean (LayerNorm only), gamma: as the operators have them.
LogicalResult verifyGradientOperands(Operation *op, ShapeChecker &shapes,
                                     StringRef kind, Value dy, Value x,
                                     Value rstd, Value mean, Value gamma) {
  if (failed(checkRank(op, x)))
    return failure();
  std::optional<NormOperator> parsed = ::rudnn::normKindNamed(kind.str());
  if (!parsed || *parsed == NormOperator::Moments)
    return op->emitOpError()
           << "'kind' must be layer_norm or rms_norm, got '" << kind << "'";
  if ((*parsed == NormOperator::LayerNorm) != static_cast<bool>(mean))
    return op->emitOpError() << "takes a 'mean' for layer_norm only";
  auto like = [&](StringRef name, Value value, StringRef layout) {
    return !value || (succeeded(shapes.check(name, value, layout)) &&
                      succeeded(checkFloatElementType(op, name, value)) &&
                      succeeded(checkSameElementType(op, name, value, "x", x)));
  };
  auto stat = [&](StringRef name, Value value) {
    return !value || (succeeded(shapes.check(name, value, statsLayout(x))) &&
                      succeeded(checkF32ElementType(op, name, value)));
  };
  return success(like("x", x, rowsLayout(x)) && like("dy", dy, rowsLayout(x)) &&
                 like("gamma", gamma, "C") && stat("rstd", rstd) &&
                 stat("mean", mean));
}

/// [N, S, 2] (or [M, N, S, 2]) sums of a split row.
LogicalResult checkSums(Operation *op, ShapeChecker &shapes, Value x,
                        Value sums, uint64_t chunk) {
  return checkChunkSummaries(op, shapes, "sums", sums, x, chunk, 2,
                             "the sums of g and g·x̂");
}

} // namespace

LogicalResult NormGradientSumsOp::verify() {
  ShapeChecker shapes(*this, "CSZ");
  // The form first: the sums' count divides by 'chunk'.
  if (failed(verifyGradientOperands(*this, shapes, getKind(), getDy(), getX(),
                                    getRstd(), getMean(), getGamma())) ||
      failed(checkForm(*this, featuresOf(getX()), getThreads(), std::nullopt,
                       getChunk())))
    return failure();
  return checkSums(*this, shapes, getX(), getSums(), getChunk());
}

LogicalResult NormGradientRowsOp::verify() {
  ShapeChecker shapes(*this, "CSZ");
  if (failed(verifyGradientOperands(*this, shapes, getKind(), getDy(), getX(),
                                    getRstd(), getMean(), getGamma())))
    return failure();
  const int64_t features = featuresOf(getX());
  if (failed(checkForm(*this, features, getThreads(), getRowsPerBlock(),
                       getChunk())) ||
      failed(checkBlocks(*this, getBlocks(), getChunk(), features)))
    return failure();
  if (static_cast<bool>(getSums()) != getChunk().has_value())
    return emitOpError() << "split rows take both 'chunk' and their 'sums'";
  if (getSums() &&
      failed(checkSums(*this, shapes, getX(), getSums(), *getChunk())))
    return failure();
  if (failed(shapes.check("dx", getDx(), rowsLayout(getX()))) ||
      getDx().getType() != getX().getType())
    return emitOpError() << "'dx' has the type of 'x'";
  const int64_t splits =
      getChunk() && features > 0
          ? (features + int64_t(*getChunk()) - 1) / int64_t(*getChunk())
          : 1;
  auto partials = cast<RankedTensorType>(getPartials().getType());
  if (partials.getShape() !=
          ArrayRef<int64_t>{int64_t(getBlocks()) / splits, 2, features} ||
      !partials.getElementType().isF32())
    return emitOpError() << "'partials' must be "
                         << int64_t(getBlocks()) / splits << " x 2 x "
                         << features << " f32: a row of sums a walker";
  return success();
}

LogicalResult NormGradientColumnsOp::verify() {
  auto partials = cast<RankedTensorType>(getPartials().getType());
  if (partials.getRank() != 3 || partials.getDimSize(1) != 2 ||
      !partials.hasStaticShape() || !partials.getElementType().isF32())
    return emitOpError() << "'partials' must be a static [blocks, 2, C] f32";
  const int64_t features = partials.getDimSize(2);
  for (Value column : {getDgamma(), getDbeta()}) {
    auto type = cast<RankedTensorType>(column.getType());
    if (type.getShape() != ArrayRef<int64_t>{features} ||
        failed(checkFloatElementType(*this, "dgamma", column)))
      return emitOpError() << "'dgamma' and 'dbeta' must be [" << features
                           << "] floats";
  }
  return success();
}
