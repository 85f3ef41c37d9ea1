//===- RudnnOps.cpp - rudnn operations ------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/KdaRules.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/TargetPolicy.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rudnn;

bool mlir::rudnn::isValidKdaChunk(int64_t chunk) {
  return llvm::is_contained(kKdaChunkSizes, chunk);
}

double mlir::rudnn::defaultKdaScale(int64_t featureDimK) {
  return 1.0 / std::sqrt(static_cast<double>(featureDimK));
}

//===----------------------------------------------------------------------===//
// KDA: rules shared by the forward and the backward
//===----------------------------------------------------------------------===//

LogicalResult mlir::rudnn::verifyKdaAttributes(Operation *op,
                                               std::optional<uint64_t> chunk,
                                               FloatAttr scale) {
  if (chunk && !isValidKdaChunk(static_cast<int64_t>(*chunk)))
    return op->emitOpError() << "'chunk' must be 16, 32 or 64, got "
                             << static_cast<int64_t>(*chunk);
  if (scale) {
    double value = scale.getValueAsDouble();
    if (!(value > 0.0) || !std::isfinite(value))
      return op->emitOpError()
             << "'scale' must be positive and finite, got " << value;
  }
  return success();
}

LogicalResult mlir::rudnn::verifyKdaChunkCount(Operation *op,
                                               const ShapeChecker &shapes,
                                               StringRef name,
                                               std::optional<uint64_t> chunk) {
  std::optional<int64_t> count = shapes.lookup('N');
  std::optional<int64_t> length = shapes.lookup('T');
  if (!count || !length)
    return success();
  if (!chunk)
    return op->emitOpError()
           << "'" << name
           << "' with a static chunk count needs an explicit 'chunk'";
  int64_t expected = llvm::divideCeil(*length, *chunk);
  if (*count != expected)
    return op->emitOpError()
           << "'" << name << "' dim 0 (chunks) is " << *count << ", expected "
           << expected << " = ceil(T=" << *length << " / chunk=" << *chunk
           << ")";
  return success();
}

LogicalResult mlir::rudnn::verifyKdaSavedTiles(Operation *op,
                                               const ShapeChecker &shapes,
                                               std::optional<uint64_t> chunk,
                                               Value q) {
  if (!chunk)
    return op->emitOpError() << "'tiles' needs an explicit 'chunk': their "
                                "size depends on it";
  if (failed(verifyKdaChunkCount(op, shapes, "tiles", chunk)))
    return failure();
  std::optional<int64_t> featureK = shapes.lookup('K'),
                         featureV = shapes.lookup('V');
  if (!featureK || !featureV)
    return success(); // the contract has named the dynamic K or V
  const int64_t inputBytes =
      cast<ShapedType>(q.getType()).getElementTypeBitWidth() / 8;
  const int64_t expected = kdaSavedTileWords(static_cast<int64_t>(*chunk),
                                             *featureK, *featureV, inputBytes);
  std::optional<int64_t> words = shapes.lookup('W');
  if (!words || *words != expected) {
    InFlightDiagnostic diag =
        op->emitOpError() << "'tiles' dim 3 (W) must be " << expected
                          << " at K = " << *featureK << ", V = " << *featureV
                          << ", chunk " << *chunk << " and "
                          << cast<ShapedType>(q.getType()).getElementType()
                          << " inputs, got ";
    if (words)
      diag << *words;
    else
      diag << "a dynamic size";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// KdaOp
//===----------------------------------------------------------------------===//

void KdaOp::build(OpBuilder &builder, OperationState &state, Value q, Value k,
                  Value v, Value g, Value beta, Value initialState,
                  bool saveBoundaries, int64_t saveTilesChunk) {
  auto queryType = cast<RankedTensorType>(q.getType());
  auto valueType = cast<RankedTensorType>(v.getType());
  // States have the value heads (q's may be fewer, grouped).
  int64_t batch = queryType.getDimSize(0), heads = valueType.getDimSize(2);
  int64_t featureDimK = queryType.getDimSize(3);
  int64_t featureDimV = valueType.getDimSize(3);
  Type f32 = builder.getF32Type();
  auto stateType =
      RankedTensorType::get({batch, heads, featureDimK, featureDimV}, f32);
  SmallVector<Type, 2> saved;
  if (saveBoundaries)
    saved.push_back(RankedTensorType::get(
        {ShapedType::kDynamic, batch, heads, featureDimK, featureDimV},
        queryType.getElementType()));
  IntegerAttr chunk;
  if (saveTilesChunk) {
    const int64_t inputBytes = queryType.getElementTypeBitWidth() / 8;
    saved.push_back(
        RankedTensorType::get({ShapedType::kDynamic, batch, heads,
                               kdaSavedTileWords(saveTilesChunk, featureDimK,
                                                 featureDimV, inputBytes)},
                              f32));
    chunk = builder.getI64IntegerAttr(saveTilesChunk);
  }
  build(builder, state, valueType, stateType, saved, q, k, v, g, beta,
        initialState, /*a_log=*/Value(), /*dt_bias=*/Value(), chunk,
        /*scale=*/nullptr, saveBoundaries,
        /*save_tiles=*/saveTilesChunk != 0, /*grouped_heads=*/false,
        /*qk_l2norm=*/false, /*beta_logits=*/false,
        /*gate_lower_bound=*/nullptr);
}

Value KdaOp::getContractResult(unsigned index) {
  switch (index) {
  case 0:
    return getOutput();
  case 1:
    return getFinalState();
  case 2:
    return getBoundaries();
  default:
    return getTiles();
  }
}

LogicalResult KdaOp::verify() {
  if (failed(verifyKdaInputTransforms(*this)))
    return failure();
  if (getSaveTiles() && !getSaveBoundaries())
    return emitOpError() << "'save_tiles' needs 'save_boundaries': the "
                            "backward reads both";
  const size_t expected = getSaveBoundaries() + getSaveTiles();
  if (getSaved().size() != expected) {
    if (getSaved().size() > expected)
      return emitOpError() << (getSaveBoundaries()
                                   ? "'tiles' result is produced only with "
                                     "'save_tiles'"
                                   : "'boundaries' result is produced only "
                                     "with 'save_boundaries'");
    return emitOpError() << (getSaved().empty()
                                 ? "'save_boundaries' is set but the op has "
                                   "no 'boundaries' result"
                                 : "'save_tiles' is set but the op has no "
                                   "'tiles' result");
  }
  return verifyKdaForward(
      *this,
      {getQ(), getK(), getV(), getG(), getBeta(), getInitialState(), getALog(),
       getDtBias()},
      [&](unsigned i) { return getContractResult(i); }, getGroupedHeads(),
      getTiles());
}

//===----------------------------------------------------------------------===//
// KdaBackwardOp
//===----------------------------------------------------------------------===//

LogicalResult KdaBackwardOp::verify() {
  if (failed(verifyKdaInputTransforms(*this)))
    return failure();
  if (failed(verifyOptionalGradients(*this)))
    return failure();
  if (getBoundaries() && !getChunk())
    return emitOpError() << "'boundaries' needs an explicit 'chunk' (the "
                            "forward's chunk size)";
  if (getTiles() && !getBoundaries())
    return emitOpError() << "'tiles' come with the forward's 'boundaries'";
  ShapeChecker shapes(*this, kKdaStaticDims);
  if (failed(verifyOperatorContract(*this, shapes)) ||
      failed(verifyKdaAttributes(*this, getChunk(), getScaleAttr())))
    return failure();
  if (getBoundaries() &&
      failed(verifyKdaChunkCount(*this, shapes, "boundaries", getChunk())))
    return failure();
  if (getTiles())
    return verifyKdaSavedTiles(*this, shapes, getChunk(), getQ());
  return success();
}

//===----------------------------------------------------------------------===//
// KdaVarlenOp, KdaVarlenBackwardOp
//===----------------------------------------------------------------------===//

LogicalResult KdaVarlenOp::verify() {
  if (failed(verifyKdaInputTransforms(*this)))
    return failure();
  return verifyKdaVarlenForward(*this, getGroupedHeads(),
                                {getQ(), getK(), getV(), getG(), getBeta(),
                                 getCuSeqlens(), getInitialState(), getALog(),
                                 getDtBias()});
}

LogicalResult KdaVarlenBackwardOp::verify() {
  if (failed(verifyKdaInputTransforms(*this)))
    return failure();
  if (failed(verifyOptionalGradients(*this)))
    return failure();
  ShapeChecker shapes(*this, kKdaStaticDims);
  if (failed(verifyOperatorContract(*this, shapes)))
    return failure();
  return verifyKdaAttributes(*this, getChunk(), getScaleAttr());
}

//===----------------------------------------------------------------------===//
// KdaDecodeOp
//===----------------------------------------------------------------------===//

LogicalResult KdaDecodeOp::verify() {
  ShapeChecker shapes(*this, kKdaStaticDims);
  if (failed(verifyOperatorContract(*this, shapes)))
    return failure();
  return verifyKdaAttributes(*this, std::nullopt, getScaleAttr());
}

/// dq, dk, dv, dg, dbeta, then the gradients returned exactly when their
/// input is given.
template <typename KdaBackwardLikeOp>
static Value backwardContractResult(KdaBackwardLikeOp op, unsigned index) {
  if (index < 5)
    return op->getResult(index);
  return index < 8 ? op.optionalGradient(index - 5) : Value();
}

Value KdaBackwardOp::getContractResult(unsigned index) {
  return backwardContractResult(*this, index);
}

Value KdaVarlenBackwardOp::getContractResult(unsigned index) {
  return backwardContractResult(*this, index);
}

// Generated builders and parsers take parameters some ops do not use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/RudnnOps.cpp.inc"
#pragma GCC diagnostic pop
