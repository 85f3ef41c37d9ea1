//===- KdaInterfaces.cpp - How the KDA operators specialize and decompose -===//
//
// rudnn.kda and rudnn.kda_backward as operator ops: their contracts, the
// chunk size and scale they choose for a target, and the chunked-recurrence
// primitives they become.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/TargetPolicy.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// Fills the chunk and scale of a KDA op (forward or backward) when absent.
template <typename KdaLikeOp>
LogicalResult specializeKda(KdaLikeOp op, TargetAttr target,
                            const SpecializeOptions &options) {
  auto queryType = cast<RankedTensorType>(op.getQ().getType());
  auto valueType = cast<RankedTensorType>(op.getV().getType());
  int64_t featureDimK = queryType.getDimSize(3);
  int64_t featureDimV = valueType.getDimSize(3);
  const int64_t inputBytes =
      queryType.getElementType().getIntOrFloatBitWidth() / 8;
  Builder builder(op.getContext());

  if (options.chunk && !isValidKdaChunk(options.chunk))
    return op.emitOpError() << "cannot take the forced chunk " << options.chunk
                            << ": it must be 16, 32 or 64";
  if (!op.getChunk()) {
    std::optional<int64_t> chunk =
        options.chunk ? std::optional<int64_t>(options.chunk)
                      : chooseKdaChunk(featureDimK, featureDimV,
                                       target.getSmemPerBlock(), inputBytes);
    if (!chunk)
      return op.emitOpError()
             << "no chunk size fits K = " << featureDimK
             << ", V = " << featureDimV
             << " in smem_per_block = " << target.getSmemPerBlock()
             << " bytes (needs "
             << std::max(kdaChunkSharedBytes(16, featureDimK, featureDimV),
                         kdaLargestBlockSharedBytes(16, featureDimK,
                                                    featureDimV, inputBytes))
             << " for chunk 16)";
    op.setChunkAttr(builder.getI64IntegerAttr(*chunk));
  }
  if (!op.getScaleAttr())
    op.setScaleAttr(builder.getF32FloatAttr(defaultKdaScale(featureDimK)));
  return success();
}

/// Decomposition runs after rudnn-specialize has fixed chunk and scale.
template <typename KdaLikeOp> LogicalResult requireSpecialized(KdaLikeOp op) {
  if (!op.getChunk() || !op.getScaleAttr())
    return op.emitOpError() << "needs its chunk and scale: run "
                               "rudnn-specialize before rudnn-decompose";
  return success();
}

/// Dims of one KDA call, each static size or ShapedType::kDynamic.
struct KdaDims {
  int64_t batch, length, heads, featureK, featureV, chunk, chunks;

  static KdaDims of(KdaOp op) {
    auto q = cast<RankedTensorType>(op.getQ().getType());
    auto v = cast<RankedTensorType>(op.getV().getType());
    KdaDims dims{q.getDimSize(0),     q.getDimSize(1),
                 q.getDimSize(2),     q.getDimSize(3),
                 v.getDimSize(3),     static_cast<int64_t>(*op.getChunk()),
                 ShapedType::kDynamic};
    if (!ShapedType::isDynamic(dims.length))
      dims.chunks = (dims.length + dims.chunk - 1) / dims.chunk;
    return dims;
  }

  /// An fp32 chunk tile [B, H, N, C, width].
  RankedTensorType tile(Builder &builder, int64_t width) const {
    return RankedTensorType::get({batch, heads, chunks, chunk, width},
                                 builder.getF32Type());
  }
};

/// The chunked chain computing `op`'s results, in their order.
SmallVector<Value> decomposeChunked(KdaOp op, OpBuilder &builder) {
  KdaDims dims = KdaDims::of(op);
  Location loc = op.getLoc();
  IntegerAttr chunk = op.getChunkAttr();
  RankedTensorType keyTile = dims.tile(builder, dims.featureK);
  RankedTensorType valueTile = dims.tile(builder, dims.featureV);
  RankedTensorType square = dims.tile(builder, dims.chunk);

  Value gamma =
      builder.create<ChunkDecayOp>(loc, keyTile, op.getG(), chunk).getGamma();
  auto pairwise = builder.create<ChunkPairwiseOp>(
      loc, square, square, op.getQ(), op.getK(), op.getBeta(), gamma, chunk);
  // Tiles saved for a backward hold what it keeps besides.
  auto solve = builder.create<ChunkSolveOp>(
      loc, keyTile, valueTile, pairwise.getStrict(), op.getK(), op.getV(),
      op.getBeta(), gamma, chunk, op.getSaveTilesAttr());
  // Boundaries in the input type: every use takes them as a tensor-core
  // operand.
  auto boundariesType = RankedTensorType::get(
      {dims.chunks, dims.batch, dims.heads, dims.featureK, dims.featureV},
      cast<RankedTensorType>(op.getQ().getType()).getElementType());
  auto propagate = builder.create<ChunkPropagateOp>(
      loc, valueTile, boundariesType, op.getFinalState().getType(),
      solve.getW(), solve.getU0(), op.getK(), gamma, op.getInitialState(),
      chunk);
  auto output = builder.create<ChunkOutputOp>(
      loc, op.getOutput().getType(), op.getQ(), op.getG(),
      pairwise.getPairwise(), propagate.getU(), propagate.getBoundaries(),
      chunk, op.getScaleAttr());

  SmallVector<Value> results = {output.getOutput(), propagate.getFinalState()};
  if (Value boundaries = op.getBoundaries()) {
    // The op's type may be more static than the propagate's.
    Value saved = propagate.getBoundaries();
    if (saved.getType() != boundaries.getType())
      saved = builder.create<tensor::CastOp>(loc, boundaries.getType(), saved);
    results.push_back(saved);
  }
  if (Value tiles = op.getTiles())
    results.push_back(
        builder
            .create<ChunkTilesExportOp>(loc, tiles.getType(), gamma,
                                        pairwise.getPairwise(), solve.getW(),
                                        propagate.getU(), chunk)
            .getTiles());
  return results;
}

/// The token-by-token kernel computing `op`'s results, in their order.
SmallVector<Value> decomposeRecurrent(KdaOp op, OpBuilder &builder) {
  Type boundaries = op.getBoundaries() ? op.getBoundaries().getType() : Type();
  auto recurrent = builder.create<KdaRecurrentOp>(
      op.getLoc(), op.getOutput().getType(), op.getFinalState().getType(),
      boundaries, op.getQ(), op.getK(), op.getV(), op.getG(), op.getBeta(),
      op.getInitialState(), op.getChunkAttr(), op.getScaleAttr());
  SmallVector<Value> results = {recurrent.getOutput(),
                                recurrent.getFinalState()};
  if (op.getBoundaries())
    results.push_back(recurrent.getBoundaries());
  return results;
}

/// The backward takes the forward's chunk quantities from its saved tiles or
/// computes them again (and the states unless saved), walks the chunks in
/// reverse for the state gradient, then takes every input gradient chunk by
/// chunk.
void decomposeBackward(KdaBackwardOp op, OpBuilder &builder) {
  auto q = cast<RankedTensorType>(op.getQ().getType());
  auto v = cast<RankedTensorType>(op.getV().getType());
  const int64_t chunk = static_cast<int64_t>(*op.getChunk());
  KdaDims dims{q.getDimSize(0),     q.getDimSize(1), q.getDimSize(2),
               q.getDimSize(3),     v.getDimSize(3), chunk,
               ShapedType::kDynamic};
  if (!ShapedType::isDynamic(dims.length))
    dims.chunks = (dims.length + chunk - 1) / chunk;
  Location loc = op.getLoc();
  IntegerAttr chunkAttr = op.getChunkAttr();
  RankedTensorType keyTile = dims.tile(builder, dims.featureK);
  RankedTensorType valueTile = dims.tile(builder, dims.featureV);
  RankedTensorType square = dims.tile(builder, dims.chunk);
  auto states = RankedTensorType::get(
      {dims.chunks, dims.batch, dims.heads, dims.featureK, dims.featureV},
      builder.getF32Type());
  auto boundariesType = RankedTensorType::get(
      {dims.chunks, dims.batch, dims.heads, dims.featureK, dims.featureV},
      q.getElementType());
  auto state = RankedTensorType::get(
      {dims.batch, dims.heads, dims.featureK, dims.featureV},
      builder.getF32Type());

  // The chunk tiles: the forward's saved ones, or computed again; saved
  // boundaries make the updates chunk-parallel, otherwise the walk
  // recomputes the boundaries too.
  Value gamma, pairwise, w, u, boundaries = op.getBoundaries();
  if (Value tiles = op.getTiles()) {
    auto saved = builder.create<ChunkTilesImportOp>(
        loc, keyTile, square, keyTile, valueTile, tiles, chunkAttr);
    gamma = saved.getGamma();
    pairwise = saved.getPairwise();
    w = saved.getW();
    u = saved.getU();
  } else {
    gamma = builder.create<ChunkDecayOp>(loc, keyTile, op.getG(), chunkAttr)
                .getGamma();
    auto chunkPairwise = builder.create<ChunkPairwiseOp>(
        loc, square, square, op.getQ(), op.getK(), op.getBeta(), gamma,
        chunkAttr);
    auto solve = builder.create<ChunkSolveOp>(
        loc, keyTile, valueTile, chunkPairwise.getStrict(), op.getK(),
        op.getV(), op.getBeta(), gamma, chunkAttr, builder.getUnitAttr());
    pairwise = chunkPairwise.getPairwise();
    w = solve.getW();
    if (boundaries) {
      u = builder
              .create<ChunkRestoreOp>(loc, valueTile, w, solve.getU0(),
                                      boundaries, chunkAttr)
              .getU();
    } else {
      auto propagate = builder.create<ChunkPropagateOp>(
          loc, valueTile, boundariesType, state, w, solve.getU0(), op.getK(),
          gamma, op.getInitialState(), chunkAttr);
      u = propagate.getU();
      boundaries = propagate.getBoundaries();
    }
  }
  auto stateGradient = builder.create<ChunkStateGradientOp>(
      loc, valueTile, states, state, op.getQ(), op.getK(), gamma, pairwise, w,
      op.getDOutput(), op.getDFinalState(), chunkAttr, op.getScaleAttr());
  auto gradients = builder.create<ChunkGradientsOp>(
      loc, op.getDq().getType(), op.getDk().getType(), op.getDv().getType(),
      op.getDg().getType(), op.getDbeta().getType(), op.getQ(), op.getK(),
      op.getV(), op.getG(), op.getBeta(), pairwise, u, boundaries,
      op.getDOutput(), stateGradient.getDu(), stateGradient.getDStateEnd(),
      chunkAttr, op.getScaleAttr());
  op.getDq().replaceAllUsesWith(gradients.getDq());
  op.getDk().replaceAllUsesWith(gradients.getDk());
  op.getDv().replaceAllUsesWith(gradients.getDv());
  op.getDg().replaceAllUsesWith(gradients.getDg());
  op.getDbeta().replaceAllUsesWith(gradients.getDbeta());
  if (Value d = op.getDInitialState()) {
    Value computed = stateGradient.getDInitialState();
    if (computed.getType() != d.getType())
      computed = builder.create<tensor::CastOp>(loc, d.getType(), computed);
    d.replaceAllUsesWith(computed);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// KdaOp
//===----------------------------------------------------------------------===//

const ::rudnn::OperatorContract &KdaOp::getContract() {
  return ::rudnn::kdaContract();
}

LogicalResult KdaOp::specialize(TargetAttr target,
                                const SpecializeOptions &options) {
  return specializeKda(*this, target, options);
}

// T = 1 (decoding) runs the fused recurrent kernel; anything else chunks.
// A dynamic length keeps both, chosen per call by a rudnn.dim_switch, unless
// the tiles are saved.
LogicalResult KdaOp::decompose(OpBuilder &builder) {
  if (failed(requireSpecialized(*this)))
    return failure();
  Operation *before = getOperation()->getPrevNode();
  const int64_t length = KdaDims::of(*this).length;
  SmallVector<Value> results;
  // Saved tiles come from the chunked kernels alone (at any length).
  if (length == 1 && !getSaveTiles()) {
    results = decomposeRecurrent(*this, builder);
  } else if (!ShapedType::isDynamic(length) || getSaveTiles()) {
    results = decomposeChunked(*this, builder);
  } else {
    auto alternatives = builder.create<DimSwitchOp>(
        getLoc(), getResultTypes(), getQ(), 1,
        builder.getDenseI64ArrayAttr({1, 2}), /*alternatives=*/2);
    using Case = SmallVector<Value> (*)(KdaOp, OpBuilder &);
    const Case cases[] = {&decomposeRecurrent, &decomposeChunked};
    for (auto [region, decomposeCase] :
         llvm::zip(alternatives.getAlternatives(), cases)) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&region.emplaceBlock());
      SmallVector<Value> yielded = decomposeCase(*this, builder);
      builder.create<YieldOp>(getLoc(), yielded);
    }
    results = alternatives.getResults();
  }
  for (auto [result, value] : llvm::zip(getResults(), results))
    result.replaceAllUsesWith(value);
  markAlignedViews(*this, before, {getQ(), getK(), getV()});
  return success();
}

//===----------------------------------------------------------------------===//
// KdaBackwardOp
//===----------------------------------------------------------------------===//

const ::rudnn::OperatorContract &KdaBackwardOp::getContract() {
  return ::rudnn::kdaBackwardContract();
}

LogicalResult KdaBackwardOp::specialize(TargetAttr target,
                                        const SpecializeOptions &options) {
  return specializeKda(*this, target, options);
}

LogicalResult KdaBackwardOp::decompose(OpBuilder &builder) {
  if (failed(requireSpecialized(*this)))
    return failure();
  Operation *before = getOperation()->getPrevNode();
  decomposeBackward(*this, builder);
  markAlignedViews(*this, before, {getQ(), getK(), getV(), getDOutput()});
  return success();
}
