//===- KdaInterfaces.cpp - How the KDA operators specialize and decompose -===//
//
// The KDA operator ops' interface methods: the chunk size and scale they
// choose for a target and the chunked-recurrence primitives they become,
// written once for the family; the generated op classes at the end call them.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/kda/KdaPolicy.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <array>
#include <type_traits>

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// A forward's saved tiles [N, B, H, W] left with a dynamic W until the
/// chunk was chosen: W becomes the words that chunk saves. The function
/// returning them takes the new type (rudnn-specialize updates it).
void fixSavedTileWords(Value tiles, int64_t chunk, int64_t featureDimK,
                       int64_t featureDimV, int64_t inputBytes) {
  auto type =
      tiles ? dyn_cast<RankedTensorType>(tiles.getType()) : RankedTensorType();
  if (!type || type.getRank() != 4 || !type.isDynamicDim(3) ||
      ShapedType::isDynamic(featureDimK) || ShapedType::isDynamic(featureDimV))
    return;
  SmallVector<int64_t> shape(type.getShape());
  shape[3] = kdaSavedTileWords(chunk, featureDimK, featureDimV, inputBytes);
  tiles.setType(RankedTensorType::get(shape, type.getElementType()));
}

/// Fills the chunk and scale of a KDA op (forward or backward) when absent;
/// a forward's saved tiles then take the size the chunk fixes.
template <typename KdaLikeOp>
LogicalResult specializeKda(KdaLikeOp op, TargetAttr target) {
  auto queryType = cast<RankedTensorType>(op.getQ().getType());
  auto valueType = cast<RankedTensorType>(op.getV().getType());
  int64_t featureDimK = queryType.getDimSize(3);
  int64_t featureDimV = valueType.getDimSize(3);
  const int64_t inputBytes =
      queryType.getElementType().getIntOrFloatBitWidth() / 8;
  Builder builder(op.getContext());

  const bool chunkGiven = static_cast<bool>(op.getChunk());
  if (!op.getChunk()) {
    std::optional<int64_t> chunk =
        chooseKdaChunk(featureDimK, featureDimV, target.getSmemPerBlock(),
                       inputBytes, target.getComputeCapability());
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
  if constexpr (std::is_same_v<KdaLikeOp, KdaOp> ||
                std::is_same_v<KdaLikeOp, KdaVarlenOp>)
    if (isValidKdaChunk(static_cast<int64_t>(*op.getChunk())))
      fixSavedTileWords(op.getTiles(), static_cast<int64_t>(*op.getChunk()),
                        featureDimK, featureDimV, inputBytes);
  if (!op.getScaleAttr())
    op.setScaleAttr(builder.getF32FloatAttr(defaultKdaScale(featureDimK)));
  // The forward's walk and the backward's reverse walk each have a wgmma
  // form; absent means the mma.sync walk: only a chosen one is spelled.
  constexpr bool forward = std::is_same_v<KdaLikeOp, KdaOp> ||
                           std::is_same_v<KdaLikeOp, KdaVarlenOp>;
  const int64_t chunk = static_cast<int64_t>(*op.getChunk()),
                capability = target.getComputeCapability(),
                smemPerBlock = target.getSmemPerBlock();
  const bool wgmma =
      forward ? chooseKdaWgmmaWalk(capability, inputBytes, chunk, featureDimK,
                                   smemPerBlock)
              : chooseKdaWgmmaGradientWalk(capability, inputBytes, chunk,
                                           featureDimK, smemPerBlock);
  if (!op.getWgmmaAttr() && wgmma)
    op.setWgmmaAttr(builder.getBoolAttr(true));
  if (op.getWgmma().value_or(false) && !wgmma)
    return op.emitOpError()
           << "'wgmma' needs 16-bit inputs on sm_90a, K <= "
           << kKdaWgmmaWalkMaxK << " and "
           << (forward ? kdaWgmmaWalkOutputSharedBytes(chunk, featureDimK)
                       : kdaWgmmaGradientWalkSharedBytes(chunk, featureDimK)) +
                  1024
           << " bytes of shared memory a block (target " << target.getArch()
           << ", K = " << featureDimK << ", " << inputBytes * 8
           << "-bit inputs)";
  op->setAttr("policy",
              builder.getStringAttr(kdaPolicyReason(
                  chunk, chunkGiven, featureDimK, featureDimV, inputBytes,
                  smemPerBlock, op.getWgmma().value_or(false), forward)));
  return success();
}

/// Decomposition runs after rudnn-specialize has fixed chunk and scale.
template <typename KdaLikeOp> LogicalResult requireSpecialized(KdaLikeOp op) {
  if (!op.getChunk() || !op.getScaleAttr())
    return op.emitOpError() << "needs its chunk and scale: run "
                               "rudnn-specialize before rudnn-decompose";
  return success();
}

/// Whether a KDA operator takes packed sequences; their offsets (else null).
template <typename KdaLikeOp>
constexpr bool kIsPacked = std::is_same_v<KdaLikeOp, KdaVarlenOp> ||
                           std::is_same_v<KdaLikeOp, KdaVarlenBackwardOp>;
template <typename KdaLikeOp> Value offsetsOf(KdaLikeOp op) {
  if constexpr (kIsPacked<KdaLikeOp>)
    return op.getCuSeqlens();
  else
    return Value();
}

/// Whether a KDA forward's state walk runs on wgmma (a backward's reverse
/// walk: BackwardCall::wgmma).
template <typename KdaLikeOp> bool wgmmaOf(KdaLikeOp op) {
  if constexpr (std::is_same_v<KdaLikeOp, KdaOp> ||
                std::is_same_v<KdaLikeOp, KdaVarlenOp>)
    return op.getWgmma().value_or(false);
  else
    return false;
}

/// One KDA forward as the primitives need it, whichever op states it: its
/// operands (`cuSeqlens` set for packed sequences), attributes and the types
/// of what it returns (null where not returned).
struct ForwardCall {
  Location loc;
  Value q, k, v, g, beta, initialState, cuSeqlens;
  IntegerAttr chunk;
  FloatAttr scale;
  Type output, finalState, boundaries, tiles;
  bool wgmma = false; // the walk on wgmma

  /// The op's operands and attributes; no result types.
  template <typename KdaLikeOp> static ForwardCall inputsOf(KdaLikeOp op) {
    return {op.getLoc(),
            op.getQ(),
            op.getK(),
            op.getV(),
            op.getG(),
            op.getBeta(),
            op.getInitialState(),
            offsetsOf(op),
            op.getChunkAttr(),
            op.getScaleAttr(),
            {},
            {},
            {},
            {},
            wgmmaOf(op)};
  }
  template <typename KdaLikeOp> static ForwardCall of(KdaLikeOp op) {
    ForwardCall call = inputsOf(op);
    call.output = op.getOutput().getType();
    call.finalState = op.getFinalState().getType();
    if (op.getBoundaries())
      call.boundaries = op.getBoundaries().getType();
    if (op.getTiles())
      call.tiles = op.getTiles().getType();
    return call;
  }
};

/// What a KDA operator applies to its inputs before the recurrence.
struct InputTransforms {
  bool qkL2norm = false, betaLogits = false;
  Value aLog, dtBias;
  FloatAttr lowerBound;

  template <typename KdaLikeOp> static InputTransforms of(KdaLikeOp op) {
    return {op.getQkL2norm(), op.getBetaLogits(), op.getALog(), op.getDtBias(),
            op.getGateLowerBoundAttr()};
  }
  /// flash-linear-attention's l2norm epsilon.
  FloatAttr eps(Builder &builder) const {
    return builder.getF32FloatAttr(1e-6f);
  }
};

/// `type` with element type f32.
RankedTensorType withF32(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return RankedTensorType::get(type.getShape(),
                               Float32Type::get(type.getContext()));
}

/// `call` with its inputs through `t`: what the recurrence runs on.
ForwardCall transformInputs(ForwardCall call, const InputTransforms &t,
                            OpBuilder &builder) {
  if (t.qkL2norm) {
    call.q = builder
                 .create<L2NormalizeOp>(call.loc, call.q.getType(), call.q,
                                        t.eps(builder))
                 .getY();
    call.k = builder
                 .create<L2NormalizeOp>(call.loc, call.k.getType(), call.k,
                                        t.eps(builder))
                 .getY();
  }
  if (t.aLog)
    call.g = builder
                 .create<KdaGateOp>(call.loc, withF32(call.g), call.g, t.aLog,
                                    t.dtBias, t.lowerBound)
                 .getG();
  if (t.betaLogits)
    call.beta =
        builder.create<SigmoidOp>(call.loc, withF32(call.beta), call.beta)
            .getY();
  return call;
}

/// Dims of one KDA call, each static size or ShapedType::kDynamic; for
/// packed sequences the chunk count N is the chunk slots of them all,
/// dynamic.
struct KdaDims {
  int64_t batch, length, heads, featureK, featureV, chunk, chunks;

  static KdaDims of(const ForwardCall &call) {
    auto q = cast<RankedTensorType>(call.q.getType());
    auto v = cast<RankedTensorType>(call.v.getType());
    KdaDims dims{q.getDimSize(0),     q.getDimSize(1),
                 q.getDimSize(2),     q.getDimSize(3),
                 v.getDimSize(3),     static_cast<int64_t>(call.chunk.getInt()),
                 ShapedType::kDynamic};
    if (!ShapedType::isDynamic(dims.length) && !call.cuSeqlens)
      dims.chunks = (dims.length + dims.chunk - 1) / dims.chunk;
    return dims;
  }

  /// An fp32 chunk tile [B, H, N, C, width].
  RankedTensorType tile(Builder &builder, int64_t width) const {
    return RankedTensorType::get({batch, heads, chunks, chunk, width},
                                 builder.getF32Type());
  }
  /// The chunk tiles of width K, V and C.
  std::array<RankedTensorType, 3> tiles(Builder &builder) const {
    return {tile(builder, featureK), tile(builder, featureV),
            tile(builder, chunk)};
  }
  /// States [N, B, H, K, V] of `element`.
  RankedTensorType states(Type element) const {
    return RankedTensorType::get({chunks, batch, heads, featureK, featureV},
                                 element);
  }
};

/// The chunked chain computing `call`'s results, in their order.
SmallVector<Value> decomposeChunked(const ForwardCall &call,
                                    OpBuilder &builder) {
  KdaDims dims = KdaDims::of(call);
  Location loc = call.loc;
  IntegerAttr chunk = call.chunk;
  const auto [keyTile, valueTile, square] = dims.tiles(builder);

  Value gamma =
      builder.create<ChunkDecayOp>(loc, keyTile, call.g, chunk).getGamma();
  auto pairwise = builder.create<ChunkPairwiseOp>(
      loc, square, square, call.q, call.k, call.beta, gamma, chunk);
  // Tiles saved for a backward hold what it keeps besides; the wgmma walk,
  // which forms the outputs too, reads the decayed queries.
  UnitAttr saveTiles = call.tiles ? builder.getUnitAttr() : UnitAttr();
  UnitAttr keepQueries =
      call.wgmma && !call.tiles ? builder.getUnitAttr() : UnitAttr();
  // On sm_90a its inputs may arrive by TMA as the walk's do.
  UnitAttr tma = call.wgmma ? builder.getUnitAttr() : UnitAttr();
  auto solve = builder.create<ChunkSolveOp>(
      loc, keyTile, valueTile, pairwise.getStrict(), call.k, call.v, call.beta,
      gamma, call.cuSeqlens, chunk, saveTiles, keepQueries, tma);
  // Boundaries in the input type: every use takes them as a tensor-core
  // operand.
  auto propagate = builder.create<ChunkPropagateOp>(
      loc, valueTile,
      dims.states(cast<RankedTensorType>(call.q.getType()).getElementType()),
      call.finalState, solve.getW(), solve.getU0(), call.k, gamma,
      call.initialState, call.cuSeqlens, chunk,
      call.wgmma ? builder.getUnitAttr() : UnitAttr());
  auto output = builder.create<ChunkOutputOp>(
      loc, call.output, call.q, call.g, pairwise.getPairwise(),
      propagate.getU(), propagate.getBoundaries(), call.cuSeqlens, chunk,
      call.scale);

  SmallVector<Value> results = {output.getOutput(), propagate.getFinalState()};
  if (call.boundaries) {
    // The op's type may be more static than the propagate's.
    Value saved = propagate.getBoundaries();
    if (saved.getType() != call.boundaries)
      saved = builder.create<tensor::CastOp>(loc, call.boundaries, saved);
    results.push_back(saved);
  }
  if (call.tiles)
    results.push_back(builder
                          .create<ChunkTilesExportOp>(
                              loc, call.tiles, gamma, pairwise.getPairwise(),
                              solve.getW(), propagate.getU(), chunk)
                          .getTiles());
  return results;
}

/// The token-by-token kernel computing `call`'s results, in their order.
SmallVector<Value> decomposeRecurrent(const ForwardCall &call,
                                      OpBuilder &builder) {
  auto recurrent = builder.create<KdaRecurrentOp>(
      call.loc, call.output, call.finalState, call.boundaries, call.q, call.k,
      call.v, call.g, call.beta, call.initialState, call.cuSeqlens, call.chunk,
      call.scale);
  SmallVector<Value> results = {recurrent.getOutput(),
                                recurrent.getFinalState()};
  if (call.boundaries)
    results.push_back(recurrent.getBoundaries());
  return results;
}

/// A forward's results: the recurrent kernel at T = 1 (decoding), the
/// chunked chain otherwise; a dynamic length keeps both, chosen per call by
/// a rudnn.dim_switch, unless the tiles are saved (the chunked kernels alone
/// save them, at any length). Packed sequences always chunk: T counts every
/// sequence's tokens, and a T = 1 call of one sequence is the chunked
/// chain's single chunk.
SmallVector<Value> decomposeForward(const ForwardCall &call,
                                    TypeRange resultTypes, OpBuilder &builder) {
  const int64_t length = KdaDims::of(call).length;
  if (call.cuSeqlens || (!ShapedType::isDynamic(length) && length != 1) ||
      call.tiles)
    return decomposeChunked(call, builder);
  if (length == 1)
    return decomposeRecurrent(call, builder);
  auto alternatives = builder.create<DimSwitchOp>(
      call.loc, resultTypes, call.q, 1, builder.getDenseI64ArrayAttr({1, 2}),
      /*alternatives=*/2);
  using Case = SmallVector<Value> (*)(const ForwardCall &, OpBuilder &);
  const Case cases[] = {&decomposeRecurrent, &decomposeChunked};
  for (auto [region, decomposeCase] :
       llvm::zip(alternatives.getAlternatives(), cases)) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&region.emplaceBlock());
    SmallVector<Value> yielded = decomposeCase(call, builder);
    builder.create<YieldOp>(call.loc, yielded);
  }
  return alternatives.getResults();
}

/// One KDA backward as the primitives need it: the forward's call, what it
/// saved, the output gradients, and the gradients it returns.
struct BackwardCall {
  ForwardCall forward;
  Value boundaries, tiles, dOutput, dFinalState;
  Value dq, dk, dv, dg, dbeta, dInitialState;
  /// q and k shared by groups of value heads: their gradients are summed.
  bool grouped;
  /// The reverse walk keeps dS in wgmma accumulators (and a walk forming
  /// the boundaries again keeps the state in them).
  bool wgmma;
  /// The raw inputs, the transforms the forward applied to them (`forward`
  /// holds what the recurrence ran on) and the parameters' gradients.
  ForwardCall raw = forward;
  InputTransforms transforms = {};
  Value dALog = {}, dDtBias = {};

  template <typename KdaLikeOp> static BackwardCall of(KdaLikeOp op) {
    return {ForwardCall::inputsOf(op),
            op.getBoundaries(),
            op.getTiles(),
            op.getDOutput(),
            op.getDFinalState(),
            op.getDq(),
            op.getDk(),
            op.getDv(),
            op.getDg(),
            op.getDbeta(),
            op.getDInitialState(),
            op.getGroupedHeads(),
            op.getWgmma().value_or(false)};
  }
};

/// Types of the gate's partial sums [ceil(T / 64), B, H, 2, K] and of a
/// [H, K] bias, for raw gate projections of `rawGate`'s type.
RankedTensorType gatePartialsType(Value rawGate) {
  auto type = cast<RankedTensorType>(rawGate.getType());
  return RankedTensorType::get({ShapedType::kDynamic, type.getDimSize(0),
                                type.getDimSize(2), 2, type.getDimSize(3)},
                               Float32Type::get(type.getContext()));
}
RankedTensorType gateBiasType(Value rawGate) {
  auto type = cast<RankedTensorType>(rawGate.getType());
  return RankedTensorType::get({type.getDimSize(2), type.getDimSize(3)},
                               Float32Type::get(type.getContext()));
}

/// The backward takes the forward's chunk quantities from its saved tiles or
/// computes them again (and the states unless saved), walks the chunks in
/// reverse for the state gradient, then takes every input gradient chunk by
/// chunk.
void decomposeBackward(BackwardCall call, OpBuilder &builder) {
  const ForwardCall &f = call.forward;
  KdaDims dims = KdaDims::of(f);
  Location loc = f.loc;
  IntegerAttr chunkAttr = f.chunk;
  const auto [keyTile, valueTile, square] = dims.tiles(builder);
  // States [B, H, K, V], or one a packed sequence [S, H, K, V].
  const int64_t stateRows = f.cuSeqlens ? ShapedType::kDynamic : dims.batch;
  auto state = RankedTensorType::get(
      {stateRows, dims.heads, dims.featureK, dims.featureV},
      builder.getF32Type());

  // The chunk tiles: the forward's saved ones, or computed again; saved
  // boundaries make the updates chunk-parallel, otherwise the walk
  // recomputes the boundaries too.
  Value gamma, pairwise, w, u, boundaries = call.boundaries;
  if (call.tiles) {
    auto saved = builder.create<ChunkTilesImportOp>(
        loc, keyTile, square, keyTile, valueTile, call.tiles, chunkAttr);
    gamma = saved.getGamma();
    pairwise = saved.getPairwise();
    w = saved.getW();
    u = saved.getU();
  } else {
    gamma =
        builder.create<ChunkDecayOp>(loc, keyTile, f.g, chunkAttr).getGamma();
    auto chunkPairwise = builder.create<ChunkPairwiseOp>(
        loc, square, square, f.q, f.k, f.beta, gamma, chunkAttr);
    auto solve = builder.create<ChunkSolveOp>(
        loc, keyTile, valueTile, chunkPairwise.getStrict(), f.k, f.v, f.beta,
        gamma, f.cuSeqlens, chunkAttr, builder.getUnitAttr(),
        /*keep_queries=*/UnitAttr(),
        call.wgmma ? builder.getUnitAttr() : UnitAttr());
    pairwise = chunkPairwise.getPairwise();
    w = solve.getW();
    if (boundaries) {
      u = builder
              .create<ChunkRestoreOp>(loc, valueTile, w, solve.getU0(),
                                      boundaries, chunkAttr)
              .getU();
    } else {
      auto propagate = builder.create<ChunkPropagateOp>(
          loc, valueTile,
          dims.states(cast<RankedTensorType>(f.q.getType()).getElementType()),
          state, w, solve.getU0(), f.k, gamma, f.initialState, f.cuSeqlens,
          chunkAttr, call.wgmma ? builder.getUnitAttr() : UnitAttr());
      u = propagate.getU();
      boundaries = propagate.getBoundaries();
    }
  }
  auto stateGradient = builder.create<ChunkStateGradientOp>(
      loc, valueTile, dims.states(builder.getF32Type()), state, f.q, f.k, gamma,
      pairwise, w, call.dOutput, call.dFinalState, f.cuSeqlens, chunkAttr,
      f.scale, call.wgmma ? builder.getUnitAttr() : UnitAttr());
  // With grouped heads each value head's gradients of q and k come first,
  // then their sums over each group.
  auto perValueHead = [&](Value key) -> Type {
    if (!call.grouped)
      return key.getType();
    auto type = cast<RankedTensorType>(key.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[2] = cast<RankedTensorType>(f.v.getType()).getDimSize(2);
    return RankedTensorType::get(shape, type.getElementType());
  };
  // beta's gradient in the type of the beta the recurrence ran on.
  auto dbetaType = RankedTensorType::get(
      cast<RankedTensorType>(call.dbeta.getType()).getShape(),
      cast<RankedTensorType>(f.beta.getType()).getElementType());
  auto gradients = builder.create<ChunkGradientsOp>(
      loc, perValueHead(call.dq), perValueHead(call.dk), call.dv.getType(),
      call.dg.getType(), dbetaType, f.q, f.k, f.v, f.g, f.beta, pairwise, u,
      boundaries, call.dOutput, stateGradient.getDu(),
      stateGradient.getDStateEnd(), f.cuSeqlens, chunkAttr, f.scale);
  auto grouped = [&](Value perHead, Value like, Type type) -> Value {
    if (!call.grouped)
      return perHead;
    return builder.create<HeadGroupSumOp>(loc, type, perHead, like).getSum();
  };
  // Then back through the input transforms, to the raw inputs' gradients.
  const InputTransforms &t = call.transforms;
  const ForwardCall &raw = call.raw;
  Value dq = grouped(gradients.getDq(), f.q, call.dq.getType());
  Value dk = grouped(gradients.getDk(), f.k, call.dk.getType());
  if (t.qkL2norm) {
    dq = builder
             .create<L2NormalizeBackwardOp>(loc, call.dq.getType(), raw.q, dq,
                                            t.eps(builder))
             .getDx();
    dk = builder
             .create<L2NormalizeBackwardOp>(loc, call.dk.getType(), raw.k, dk,
                                            t.eps(builder))
             .getDx();
  }
  Value dbeta = gradients.getDbeta();
  if (t.betaLogits)
    dbeta = builder
                .create<SigmoidBackwardOp>(loc, call.dbeta.getType(), raw.beta,
                                           dbeta)
                .getDx();
  Value dg = gradients.getDg();
  if (t.aLog) {
    auto gate = builder.create<KdaGateBackwardOp>(
        loc, call.dg.getType(), gatePartialsType(raw.g), raw.g, t.aLog,
        t.dtBias, dg, t.lowerBound);
    dg = gate.getDgRaw();
    auto sums = builder.create<KdaGateSumsOp>(loc, t.aLog.getType(),
                                              t.dtBias ? t.dtBias.getType()
                                                       : gateBiasType(raw.g),
                                              gate.getPartials());
    call.dALog.replaceAllUsesWith(sums.getDALog());
    if (call.dDtBias)
      call.dDtBias.replaceAllUsesWith(sums.getDDtBias());
  }
  call.dq.replaceAllUsesWith(dq);
  call.dk.replaceAllUsesWith(dk);
  call.dv.replaceAllUsesWith(gradients.getDv());
  call.dg.replaceAllUsesWith(dg);
  call.dbeta.replaceAllUsesWith(dbeta);
  if (Value d = call.dInitialState) {
    Value computed = stateGradient.getDInitialState();
    if (computed.getType() != d.getType())
      computed = builder.create<tensor::CastOp>(loc, d.getType(), computed);
    d.replaceAllUsesWith(computed);
  }
}

/// Replaces a forward op's results with `call`'s decomposition.
template <typename KdaLikeOp>
LogicalResult decomposeForwardOp(KdaLikeOp op, OpBuilder &builder) {
  if (failed(requireSpecialized(op)))
    return failure();
  Operation *before = op->getPrevNode();
  SmallVector<Value> results = decomposeForward(
      transformInputs(ForwardCall::of(op), InputTransforms::of(op), builder),
      op->getResultTypes(), builder);
  for (auto [result, value] : llvm::zip(op->getResults(), results))
    result.replaceAllUsesWith(value);
  markAlignedViews(op, before, {op.getQ(), op.getK(), op.getV()});
  return success();
}

/// Replaces a backward op's results with its decomposition.
template <typename KdaLikeOp>
LogicalResult decomposeBackwardOp(KdaLikeOp op, OpBuilder &builder) {
  if (failed(requireSpecialized(op)))
    return failure();
  Operation *before = op->getPrevNode();
  BackwardCall call = BackwardCall::of(op);
  call.raw = call.forward;
  call.transforms = InputTransforms::of(op);
  call.forward = transformInputs(call.raw, call.transforms, builder);
  call.dALog = op.getDALog();
  call.dDtBias = op.getDDtBias();
  decomposeBackward(call, builder);
  markAlignedViews(op, before,
                   {op.getQ(), op.getK(), op.getV(), op.getDOutput()});
  return success();
}

/// The KDA operators' interface methods (Rudnn_KdaOperatorOp).
template <typename KdaLikeOp>
LogicalResult decomposeKda(KdaLikeOp op, OpBuilder &builder) {
  if constexpr (std::is_same_v<KdaLikeOp, KdaOp> ||
                std::is_same_v<KdaLikeOp, KdaVarlenOp>)
    return decomposeForwardOp(op, builder);
  else
    return decomposeBackwardOp(op, builder);
}

} // namespace

//===----------------------------------------------------------------------===//
// KdaDecodeOp
//===----------------------------------------------------------------------===//

const ::rudnn::OperatorContract &KdaDecodeOp::getContract() {
  return ::rudnn::kdaDecodeContract();
}

const ::rudnn::OperatorContract &KdaDecodeOp::getOperatorContract() {
  return ::rudnn::kdaDecodeContract(getGroupedHeads());
}

LogicalResult KdaDecodeOp::specialize(TargetAttr) {
  if (!getScaleAttr()) {
    const int64_t featureK =
        cast<RankedTensorType>(getQ().getType()).getDimSize(3);
    setScaleAttr(
        Builder(getContext()).getF32FloatAttr(defaultKdaScale(featureK)));
  }
  return success();
}

// Token by token, whatever T: a decoding step is short; the input
// transforms first, as for the forward.
LogicalResult KdaDecodeOp::decompose(OpBuilder &builder) {
  if (!getScaleAttr())
    return emitOpError() << "needs its scale: run rudnn-specialize before "
                            "rudnn-decompose";
  Operation *before = getOperation()->getPrevNode();
  ForwardCall call{getLoc(), getQ(), getK(), getV(), getG(), getBeta(), {},
                   {},       {},     {},     {},     {},     {},        {}};
  call = transformInputs(call, InputTransforms::of(*this), builder);
  auto step = builder.create<KdaPoolStepOp>(
      getLoc(), getResultTypes(), call.q, call.k, call.v, call.g, call.beta,
      getStatePool(), getSlots(), getScaleAttr());
  for (auto [result, value] : llvm::zip(getResults(), step.getResults()))
    result.replaceAllUsesWith(value);
  markAlignedViews(*this, before, {getQ(), getK(), getV()});
  return success();
}

//===----------------------------------------------------------------------===//
// The generated op classes, whose methods call the family's functions above
//===----------------------------------------------------------------------===//

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/kda/RudnnKdaOps.cpp.inc"
#pragma GCC diagnostic pop
