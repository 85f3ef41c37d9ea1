//===- AttentionInterfaces.cpp - The attention operators and primitives ---===//
//
// rudnn.attention, rudnn.attention_varlen and their backward ops as
// operator ops: their contracts and rules, the tile sizes and scale they
// choose for a target, and the tiled-attention primitives they become; the
// primitives' verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/attention/AttentionContracts.h"
#include "dialects/IR/attention/AttentionPolicy.h"
#include "dialects/IR/attention/AttentionRules.h"

#include <cmath>
#include <string>
#include <type_traits>

using namespace mlir;
using namespace mlir::rudnn;

AttentionDims mlir::rudnn::attentionDimsOf(Value q, Value v) {
  auto qType = cast<RankedTensorType>(q.getType());
  return {qType.getShape().back(),
          cast<RankedTensorType>(v.getType()).getShape().back(),
          qType.getElementTypeBitWidth() / 8};
}

void mlir::rudnn::setDefaultScale(Operation *op, int64_t headDim) {
  if (!op->hasAttr("scale"))
    op->setAttr(
        "scale",
        Builder(op->getContext())
            .getF32FloatAttr(1.0 / std::sqrt(static_cast<double>(headDim))));
}

LogicalResult mlir::rudnn::checkPositive(Operation *op, StringRef name,
                                         FloatAttr value) {
  if (!value)
    return success();
  const double x = value.getValueAsDouble();
  if (!(x > 0.0) || !std::isfinite(x))
    return op->emitOpError()
           << "'" << name << "' must be positive and finite, got " << x;
  return success();
}

LogicalResult mlir::rudnn::checkWindow(Operation *op,
                                       std::optional<int64_t> left,
                                       std::optional<int64_t> right) {
  if (left.has_value() != right.has_value())
    return op->emitOpError() << "'window' needs both bounds";
  auto outside = [](std::optional<int64_t> bound) {
    return bound && (*bound < -1 || *bound > ::rudnn::kAttentionMaxWindow);
  };
  if (outside(left) || outside(right))
    return op->emitOpError()
           << "'window' bounds must be -1 (unbounded) or 0 to "
           << ::rudnn::kAttentionMaxWindow;
  return success();
}

namespace {

/// The dims attention code is specialized for.
constexpr llvm::StringLiteral kAttentionStaticDims = "DE";

/// Without `wgmma` the mma.sync kernel: block_q 64, or 128 for 16-bit
/// inputs, block_k 16, 32 or 64. With it the Hopper kernel, for 16-bit
/// inputs: block_q 128, or 192 (three consumer warpgroups) to head dims of
/// 64, block_k following the head dims, and a persistent grid of `blocks`.
LogicalResult checkTiles(Operation *op, Value q, Value v,
                         std::optional<int64_t> blockQ,
                         std::optional<int64_t> blockK,
                         std::optional<int64_t> blocks, bool wgmma) {
  if (blocks && (*blocks < 1 || !wgmma))
    return op->emitOpError()
           << "'blocks' (a persistent grid) must be positive and goes with "
              "'wgmma' (the Hopper kernel)";
  auto queries = cast<ShapedType>(q.getType());
  const bool sixteenBit = queries.getElementTypeBitWidth() == 16;
  if (wgmma) {
    if (!sixteenBit)
      return op->emitOpError()
             << "'wgmma' (the Hopper kernel) takes 16-bit inputs";
    if (blockQ && !isHopperAttentionBlock(*blockQ))
      return op->emitOpError()
             << "'block_q' must be " << kHopperAttentionBlockQueries << " or "
             << kHopperAttentionThreeGroupQueries << " with 'wgmma', got "
             << *blockQ;
    const int64_t headDim = queries.getShape().back(),
                  valueDim =
                      v ? cast<ShapedType>(v.getType()).getShape().back() : 0;
    // Three consumer warpgroups hold 64-column rows at most.
    if (blockQ && *blockQ == kHopperAttentionThreeGroupQueries &&
        (headDim > 64 || valueDim > 64))
      return op->emitOpError()
             << "'block_q' 192 (three consumer warpgroups) takes head dims "
                "up to 64, got D = "
             << headDim << (v ? ", E = " + std::to_string(valueDim) : "");
    // A primitive without the values: its operator checked the head dims;
    // its key tiles are still ones a tensor map can load.
    if (!v) {
      if (blockK && *blockK != 64 && *blockK != 128)
        return op->emitOpError()
               << "'block_k' must be 64 or 128 with 'wgmma', got " << *blockK;
      return success();
    }
    const int64_t hopperKeys = hopperAttentionBlockKeys(
        headDim, valueDim, blockQ.value_or(kHopperAttentionBlockQueries));
    if (blockK && *blockK != hopperKeys)
      return op->emitOpError()
             << "'block_k' must be " << hopperKeys
             << " with 'wgmma' at these head dims, got " << *blockK;
    return success();
  }
  if (blockQ && *blockQ != kAttentionBlockQueries &&
      *blockQ != kAttentionWideBlockQueries)
    return op->emitOpError()
           << "'block_q' must be " << kAttentionBlockQueries << " or "
           << kAttentionWideBlockQueries << " (or 'wgmma'), got " << *blockQ;
  if (blockQ && *blockQ == kAttentionWideBlockQueries && !sixteenBit)
    return op->emitOpError() << "'block_q' " << kAttentionWideBlockQueries
                             << " takes 16-bit inputs (f32 blocks are "
                             << kAttentionBlockQueries << " rows)";
  if (blockK && *blockK != 16 && *blockK != 32 && *blockK != 64)
    return op->emitOpError()
           << "'block_k' must be 16, 32 or 64, got " << *blockK;
  return success();
}

/// A shaped value's innermost size (D or E).
int64_t lastDim(Value value) {
  return cast<ShapedType>(value.getType()).getShape().back();
}

std::optional<int64_t> optionalInt(std::optional<uint64_t> value) {
  return value ? std::optional<int64_t>(static_cast<int64_t>(*value))
               : std::nullopt;
}

/// The layout letters of the attention tensors, padded ([B, T, H, D]) or
/// packed ([T, H, D] with offsets).
struct AttentionLayouts {
  StringRef q, k, v, scores, rows, acc, o;
};
constexpr AttentionLayouts kPadded{"BTHD", "BSGD", "BSGE", "BHTS",
                                   "BHT",  "BHTE", "BTHE"};
constexpr AttentionLayouts kPacked{"THD", "SGD", "SGE", "HTS",
                                   "HT",  "HTE", "THE"};

/// The layouts of a chain by `value` (queries, scores, probabilities or
/// accumulators): rank 3 when packed, 4 when padded.
const AttentionLayouts &layoutsOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == 3 ? kPacked : kPadded;
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

/// The optional ALiBi slopes: f32 [B, H], or [H] for packed batches.
LogicalResult checkSlopes(Operation *op, ShapeChecker &shapes, Value slopes,
                          bool packed) {
  if (!slopes)
    return success();
  return checkTensor(op, shapes, "alibi_slopes", slopes, packed ? "H" : "BH",
                     checkF32ElementType);
}

} // namespace

//===----------------------------------------------------------------------===//
// AttentionOp and AttentionVarlenOp
//===----------------------------------------------------------------------===//

namespace {

/// `decode_split (n, blocks)`: n from 0 (off) to one 64-row block's
/// queries, blocks positive, both or neither.
LogicalResult checkDecodeSplit(Operation *op, std::optional<int64_t> queries,
                               std::optional<int64_t> blocks) {
  if (!queries && !blocks)
    return success();
  if (!queries || !blocks || *queries < 0 ||
      *queries > kAttentionBlockQueries || *blocks < 1)
    return op->emitOpError()
           << "'decode_split' takes the most queries a split call has (0 to "
           << kAttentionBlockQueries
           << ") and the blocks it aims at (positive)";
  return success();
}

/// The rules both forms share: the contract (H a multiple of G among
/// them), then the attributes; the padded form's decoding split.
template <typename AttentionLikeOp>
LogicalResult verifyAttention(AttentionLikeOp op) {
  ShapeChecker shapes(op, kAttentionStaticDims);
  if constexpr (std::is_same_v<AttentionLikeOp, AttentionOp>)
    if (failed(checkDecodeSplit(op, optionalInt(op.getDecodeQueries()),
                                optionalInt(op.getDecodeBlocks()))))
      return failure();
  return success(succeeded(verifyOperatorContract(op, shapes)) &&
                 succeeded(checkWindow(op, optionalInt(op.getWindowLeft()),
                                       optionalInt(op.getWindowRight()))) &&
                 succeeded(checkPositive(op, "softcap", op.getSoftcapAttr())) &&
                 succeeded(checkPositive(op, "scale", op.getScaleAttr())) &&
                 succeeded(checkTiles(
                     op, op.getQ(), op.getV(), optionalInt(op.getBlockQ()),
                     optionalInt(op.getBlockK()), optionalInt(op.getBlocks()),
                     op.getWgmma())));
}

/// A padded call that may have few queries splits them over the keys.
void chooseDecodeSplit(AttentionOp op, TargetAttr target) {
  auto q = cast<RankedTensorType>(op.getQ().getType());
  const int64_t queries = q.getDimSize(1);
  if (op.getDecodeQueries() ||
      (!ShapedType::isDynamic(queries) && queries > kAttentionDecodeQueries))
    return;
  if (std::optional<int64_t> blocks = attentionDecodeBlocks(
          q.getShape().back(), lastDim(op.getV()),
          q.getElementTypeBitWidth() / 8, target.getSmemPerBlock(),
          target.getSmCount())) {
    Builder builder(op.getContext());
    op.setDecodeQueriesAttr(builder.getI64IntegerAttr(kAttentionDecodeQueries));
    op.setDecodeBlocksAttr(builder.getI64IntegerAttr(*blocks));
  }
}

/// Fills the scale (D^-0.5) and the tile sizes for `target` when absent.
template <typename AttentionLikeOp>
LogicalResult specializeAttention(AttentionLikeOp op, TargetAttr target) {
  const auto [headDim, valueDim, inputBytes] =
      attentionDimsOf(op.getQ(), op.getV());
  Builder builder(op.getContext());
  setDefaultScale(op, headDim);
  // Hopper targets take 16-bit inputs through TMA and wgmma, unless the
  // tiles asked for are the mma.sync kernel's.
  const bool hopper = target.getComputeCapability() == 90 && inputBytes == 2 &&
                      hopperAttentionSharedBytes(
                          headDim, valueDim, kHopperAttentionBlockQueries) <=
                          target.getSmemPerBlock();
  if (hopper && !op.getBlockQ() && !op.getBlockK())
    op.setWgmma(true);
  if (!op.getBlockQ()) {
    int64_t blockQ =
        op.getWgmma()
            ? hopperAttentionBlockQueries(
                  headDim, valueDim,
                  cast<RankedTensorType>(op.getQ().getType()).getRank() == 3)
            : attentionBlockQueries(inputBytes);
    // Keys given for the two-group block keep it.
    if (op.getWgmma() && op.getBlockK() &&
        static_cast<int64_t>(*op.getBlockK()) !=
            hopperAttentionBlockKeys(headDim, valueDim, blockQ))
      blockQ = kHopperAttentionBlockQueries;
    // A target whose shared memory takes no 128-row block takes 64 rows.
    if (!op.getWgmma() && !op.getBlockK() &&
        !chooseAttentionBlockKeys(blockQ, headDim, valueDim, inputBytes,
                                  target.getSmemPerBlock()))
      blockQ = kAttentionBlockQueries;
    op.setBlockQAttr(builder.getI64IntegerAttr(blockQ));
  }
  if (op.getWgmma()) {
    if (!op.getBlockK())
      op.setBlockKAttr(builder.getI64IntegerAttr(
          hopperAttentionBlockKeys(headDim, valueDim, *op.getBlockQ())));
    // One block an SM: a block takes all of its registers.
    if (!op.getBlocks())
      op.setBlocksAttr(builder.getI64IntegerAttr(target.getSmCount()));
  }
  if (!op.getBlockK()) {
    const int64_t blockQ = *op.getBlockQ();
    std::optional<int64_t> keys = chooseAttentionBlockKeys(
        blockQ, headDim, valueDim, inputBytes, target.getSmemPerBlock());
    if (!keys)
      return op.emitOpError()
             << "no key tile fits D = " << headDim << ", E = " << valueDim
             << " in smem_per_block = " << target.getSmemPerBlock()
             << " bytes (needs "
             << attentionSharedBytes(blockQ, 16, headDim, valueDim, inputBytes)
             << " for 16 keys)";
    op.setBlockKAttr(builder.getI64IntegerAttr(*keys));
  }
  if constexpr (std::is_same_v<AttentionLikeOp, AttentionOp>)
    chooseDecodeSplit(op, target);
  return success();
}

/// What restricts the keys, besides the attributes, and biases them.
struct KeyRestrictions {
  Value lengths, mask, queryOffsets, keyOffsets, slopes;
};

/// The padded forms' key lengths and mask, or the packed forms' offsets;
/// the ALiBi slopes of either.
template <typename Op> KeyRestrictions keysOf(Op op) {
  if constexpr (std::is_same_v<Op, AttentionVarlenOp> ||
                std::is_same_v<Op, AttentionVarlenBackwardOp>)
    return {
        {}, {}, op.getCuSeqlensQ(), op.getCuSeqlensK(), op.getAlibiSlopes()};
  else
    return {op.getKeyLengths(), op.getKeyMask(), {}, {}, op.getAlibiSlopes()};
}

/// A decoding-shaped call's split: its keys split over about `blocks`
/// blocks of 64 rows, `blockK` keys a tile.
struct KeySplit {
  int64_t blocks, blockK;
};

/// scores → mask → online softmax → accumulate → finalize: one kernel;
/// with a split, the finalize writes each part's results and
/// attention_combine merges them (a second kernel). Returns o and lse.
template <typename AttentionLikeOp>
std::pair<Value, Value> buildChain(AttentionLikeOp op, OpBuilder &builder,
                                   const KeyRestrictions &keys,
                                   std::optional<KeySplit> split) {
  auto q = cast<RankedTensorType>(op.getQ().getType());
  auto k = cast<RankedTensorType>(op.getK().getType());
  const int64_t valueDim =
      cast<RankedTensorType>(op.getV().getType()).getShape().back();
  // Padded [B, T, H, D]: scores [B, H, T, S]; packed [T, H, D]: [H, T, S].
  SmallVector<int64_t> rows;
  if (q.getRank() == 4)
    rows = {q.getDimSize(0), q.getDimSize(2), q.getDimSize(1)};
  else
    rows = {q.getDimSize(1), q.getDimSize(0)};
  const int64_t keyCount = k.getDimSize(k.getRank() - 3);
  Type f32 = builder.getF32Type();
  auto withLast = [&](int64_t last) {
    SmallVector<int64_t> shape(rows);
    shape.push_back(last);
    return RankedTensorType::get(shape, f32);
  };
  RankedTensorType scoresType = withLast(keyCount),
                   accType = withLast(valueDim);
  auto rowType = RankedTensorType::get(rows, f32);
  Location loc = op.getLoc();
  // A split runs the mma.sync kernel's 64-row blocks, on every target.
  IntegerAttr blockQ = op.getBlockQAttr(), blockK = op.getBlockKAttr(),
              blocks = op.getBlocksAttr(), splitKeys;
  UnitAttr wgmma = op.getWgmmaAttr();
  if (split) {
    blockQ = builder.getI64IntegerAttr(kAttentionBlockQueries);
    blockK = builder.getI64IntegerAttr(split->blockK);
    blocks = {}, wgmma = {};
    splitKeys = builder.getI64IntegerAttr(split->blocks);
  }
  Value scores = builder.create<AttentionScoresOp>(
      loc, scoresType, op.getQ(), op.getK(), op.getScaleAttr(),
      op.getSoftcapAttr(), blockQ, blockK, blocks, wgmma, splitKeys);
  Value masked = builder.create<AttentionMaskOp>(
      loc, scoresType, scores, keys.lengths, keys.mask, keys.queryOffsets,
      keys.keyOffsets, keys.slopes, op.getCausalAttr(), op.getWindowLeftAttr(),
      op.getWindowRightAttr());
  auto softmax = builder.create<AttentionSoftmaxOp>(loc, scoresType, rowType,
                                                    rowType, masked);
  Value acc = builder.create<AttentionAccumulateOp>(loc, accType,
                                                    softmax.getP(), op.getV());
  if (!split) {
    auto finalize = builder.create<AttentionFinalizeOp>(
        loc, op.getO().getType(), op.getLse().getType(), acc,
        softmax.getRowMax(), softmax.getRowSum());
    return {finalize.getO(), finalize.getLse()};
  }
  // Each part's results: [B, H, T, P, E] and [B, H, T, P].
  SmallVector<int64_t> parts(rows);
  parts.push_back(ShapedType::kDynamic);
  auto lseParts = RankedTensorType::get(parts, f32);
  parts.push_back(valueDim);
  auto oParts = RankedTensorType::get(parts, f32);
  auto finalize = builder.create<AttentionFinalizeOp>(
      loc, oParts, lseParts, acc, softmax.getRowMax(), softmax.getRowSum());
  auto combine = builder.create<AttentionCombineOp>(
      loc, op.getO().getType(), op.getLse().getType(), finalize.getO(),
      finalize.getLse());
  return {combine.getO(), combine.getLse()};
}

/// The chain of buildChain, or for a call that may be decoding-shaped
/// (`decode_split`), a rudnn.dim_switch on T between the split chain (T
/// up to n) and the plain one; T known picks one of them.
template <typename AttentionLikeOp>
LogicalResult decomposeAttention(AttentionLikeOp op, OpBuilder &builder) {
  const KeyRestrictions keys = keysOf(op);
  std::optional<int64_t> decodeQueries, decodeBlocks;
  if constexpr (std::is_same_v<AttentionLikeOp, AttentionOp>) {
    decodeQueries = optionalInt(op.getDecodeQueries());
    decodeBlocks = optionalInt(op.getDecodeBlocks());
  }
  if (!op.getScaleAttr() || !op.getBlockQ() || !op.getBlockK())
    return op.emitOpError() << "needs its scale and tile sizes: run "
                               "rudnn-specialize before rudnn-decompose";
  Operation *before = op->getPrevNode();
  auto q = cast<RankedTensorType>(op.getQ().getType());
  const int64_t queries = q.getRank() == 4 ? q.getDimSize(1) : 0;
  std::optional<KeySplit> split;
  if (decodeQueries && *decodeQueries > 0 && decodeBlocks)
    split =
        KeySplit{*decodeBlocks, attentionDecodeBlockKeys(lastDim(op.getQ()),
                                                         lastDim(op.getV()))};
  std::pair<Value, Value> results;
  if (!split || (!ShapedType::isDynamic(queries) && queries > *decodeQueries)) {
    results = buildChain(op, builder, keys, std::nullopt);
  } else if (!ShapedType::isDynamic(queries)) {
    results = buildChain(op, builder, keys, split);
  } else {
    auto alternatives = builder.create<DimSwitchOp>(
        op.getLoc(), op->getResultTypes(), op.getQ(), 1,
        builder.getDenseI64ArrayAttr({1, *decodeQueries + 1}),
        /*alternatives=*/2);
    const std::optional<KeySplit> cases[] = {split, std::nullopt};
    for (auto [region, caseSplit] :
         llvm::zip(alternatives.getAlternatives(), cases)) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&region.emplaceBlock());
      std::pair<Value, Value> yielded =
          buildChain(op, builder, keys, caseSplit);
      builder.create<YieldOp>(op.getLoc(),
                              ValueRange{yielded.first, yielded.second});
    }
    results = {alternatives.getResult(0), alternatives.getResult(1)};
  }
  op.getO().replaceAllUsesWith(results.first);
  op.getLse().replaceAllUsesWith(results.second);
  markAlignedViews(op, before, {op.getQ(), op.getK(), op.getV()});
  markAlignedViews(op, before, {results.first},
                   RudnnDialect::kAlignedOutputsAttrName);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// The tiled-attention primitives
//===----------------------------------------------------------------------===//

LogicalResult AttentionScoresOp::verify() {
  const AttentionLayouts &layouts = layoutsOf(getQ());
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(checkTensor(*this, shapes, "q", getQ(), layouts.q,
                         checkFloatElementType)) ||
      failed(checkTensor(*this, shapes, "k", getK(), layouts.k,
                         checkFloatElementType)) ||
      failed(checkSameElementType(*this, "k", getK(), "q", getQ())) ||
      failed(checkTensor(*this, shapes, "scores", getScores(), layouts.scores,
                         checkF32ElementType)) ||
      failed(checkPositive(*this, "scale", getScaleAttr())) ||
      failed(checkPositive(*this, "softcap", getSoftcapAttr())))
    return failure();
  if (std::optional<uint64_t> split = getSplitKeys();
      split && (*split < 1 || &layouts != &kPadded || getWgmma() ||
                static_cast<int64_t>(getBlockQ()) != kAttentionBlockQueries))
    return emitOpError() << "'split_keys' (the blocks a split aims at) must "
                            "be positive, over padded queries in blocks of "
                         << kAttentionBlockQueries << " rows, without 'wgmma'";
  return checkTiles(
      *this, getQ(), /*v=*/Value(), static_cast<int64_t>(getBlockQ()),
      static_cast<int64_t>(getBlockK()), optionalInt(getBlocks()), getWgmma());
}

LogicalResult AttentionMaskOp::verify() {
  const AttentionLayouts &layouts = layoutsOf(getScores());
  const bool packed = &layouts == &kPacked;
  if (packed != static_cast<bool>(getCuSeqlensQ()) ||
      (packed && (getKeyLengths() || getKeyMask())))
    return emitOpError() << "packed scores [H, T, S] take the entries' "
                            "offsets (cu_seqlens) and no lengths or mask; "
                            "padded scores [B, H, T, S] take no offsets";
  ShapeChecker shapes(*this, "");
  if (failed(checkTensor(*this, shapes, "scores", getScores(), layouts.scores,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "masked", getMasked(), layouts.scores,
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
  for (auto [name, offsets] : {std::pair{"cu_seqlens_q", getCuSeqlensQ()},
                               std::pair{"cu_seqlens_k", getCuSeqlensK()}})
    if (offsets && (failed(shapes.check(name, offsets, "C")) ||
                    failed(checkIntegerElementType(*this, name, offsets, 32))))
      return failure();
  return checkSlopes(*this, shapes, getAlibiSlopes(), packed);
}

LogicalResult AttentionSoftmaxOp::verify() {
  const AttentionLayouts &layouts = layoutsOf(getMasked());
  ShapeChecker shapes(*this, "");
  if (failed(checkTensor(*this, shapes, "masked", getMasked(), layouts.scores,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "p", getP(), layouts.scores,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "row_max", getRowMax(), layouts.rows,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "row_sum", getRowSum(), layouts.rows,
                         checkF32ElementType)))
    return failure();
  return success();
}

LogicalResult AttentionAccumulateOp::verify() {
  const AttentionLayouts &layouts = layoutsOf(getP());
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(checkTensor(*this, shapes, "p", getP(), layouts.scores,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "v", getV(), layouts.v,
                         checkFloatElementType)) ||
      failed(checkTensor(*this, shapes, "acc", getAcc(), layouts.acc,
                         checkF32ElementType)))
    return failure();
  return success();
}

/// The layouts of a split's partial results: each part's o and lse.
constexpr llvm::StringLiteral kPartsO = "BHTPE", kPartsLse = "BHTP";

LogicalResult AttentionFinalizeOp::verify() {
  const AttentionLayouts &layouts = layoutsOf(getAcc());
  ShapeChecker shapes(*this, kAttentionStaticDims);
  // Padded o of rank 5: the parts' results of a split chain.
  const bool parts =
      &layouts == &kPadded && cast<ShapedType>(getO().getType()).getRank() == 5;
  if (failed(checkTensor(*this, shapes, "acc", getAcc(), layouts.acc,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "row_max", getRowMax(), layouts.rows,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "row_sum", getRowSum(), layouts.rows,
                         checkF32ElementType)) ||
      failed(checkTensor(
          *this, shapes, "o", getO(), parts ? StringRef(kPartsO) : layouts.o,
          parts ? checkF32ElementType : checkFloatElementType)) ||
      failed(checkTensor(*this, shapes, "lse", getLse(),
                         parts ? StringRef(kPartsLse) : layouts.rows,
                         checkF32ElementType)))
    return failure();
  return success();
}

LogicalResult AttentionCombineOp::verify() {
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(checkTensor(*this, shapes, "o_parts", getOParts(), kPartsO,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "lse_parts", getLseParts(), kPartsLse,
                         checkF32ElementType)) ||
      failed(checkTensor(*this, shapes, "o", getO(), kPadded.o,
                         checkFloatElementType)) ||
      failed(checkTensor(*this, shapes, "lse", getLse(), kPadded.rows,
                         checkF32ElementType)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionBackwardOp and its primitives
//===----------------------------------------------------------------------===//

namespace {

/// Without `wgmma`, the sm_80 kernel: block_rows 64, or 128 for 16-bit
/// inputs with head dims to 128. With it, the Hopper kernel (16-bit
/// inputs, head dims up to 256), whose blocks take
/// hopperAttentionBackwardRows keys.
LogicalResult checkBackwardRows(Operation *op, Value q, Value v,
                                std::optional<int64_t> rows, bool wgmma) {
  if (!wgmma) {
    const auto [headDim, valueDim, inputBytes] = attentionDimsOf(q, v);
    if (rows && *rows != kBackwardBlockRows &&
        !(attentionGradientWideKeys(headDim, valueDim, inputBytes) &&
          *rows == kBackwardWideBlockRows))
      return op->emitOpError()
             << "'block_rows' of the sm_80 kernel must be "
             << kBackwardBlockRows << ", or " << kBackwardWideBlockRows
             << " for 16-bit inputs with head dims to 128, got " << *rows;
    return success();
  }
  auto queries = cast<ShapedType>(q.getType());
  const int64_t headDim = queries.getShape().back(),
                valueDim = cast<ShapedType>(v.getType()).getShape().back();
  if (queries.getElementTypeBitWidth() != 16 ||
      headDim > kHopperAttentionBackwardMaxDim ||
      valueDim > kHopperAttentionBackwardMaxDim)
    return op->emitOpError() << "'wgmma' (the Hopper kernel) takes 16-bit "
                                "inputs and head dims up to "
                             << kHopperAttentionBackwardMaxDim;
  const int64_t keys = hopperAttentionBackwardRows(headDim, valueDim);
  if (rows && *rows != keys)
    return op->emitOpError()
           << "'block_rows' of the Hopper kernel at D = " << headDim
           << ", E = " << valueDim << " must be " << keys << ", got " << *rows;
  return success();
}

/// `blocks` (the deterministic Hopper kernel's grid) is positive and goes
/// with `deterministic`.
LogicalResult checkDeterministicGrid(Operation *op, bool deterministic,
                                     std::optional<int64_t> blocks) {
  if (blocks && (*blocks < 1 || !deterministic))
    return op->emitOpError()
           << "'blocks' (the deterministic kernel's persistent grid) must be "
              "positive and goes with 'deterministic'";
  return success();
}

template <typename BackwardLikeOp>
LogicalResult verifyAttentionBackward(BackwardLikeOp op) {
  ShapeChecker shapes(op, kAttentionStaticDims);
  return success(succeeded(verifyOperatorContract(op, shapes)) &&
                 succeeded(checkDeterministicGrid(
                     op, op.getDeterministic(), optionalInt(op.getBlocks()))) &&
                 succeeded(checkWindow(op, optionalInt(op.getWindowLeft()),
                                       optionalInt(op.getWindowRight()))) &&
                 succeeded(checkPositive(op, "softcap", op.getSoftcapAttr())) &&
                 succeeded(checkPositive(op, "scale", op.getScaleAttr())) &&
                 succeeded(checkBackwardRows(op, op.getQ(), op.getV(),
                                             optionalInt(op.getBlockRows()),
                                             op.getWgmma())));
}

/// Why the backward runs the kernels it does, recorded as its `policy`.
std::string backwardPolicy(bool wgmma, bool chosen, TargetAttr target,
                           int64_t headDim, int64_t valueDim,
                           int64_t inputBytes) {
  if (!chosen)
    return wgmma ? "the Hopper kernel, as asked" : "the sm_80 kernel, as asked";
  const int64_t smemPerBlock = target.getSmemPerBlock();
  if (wgmma)
    return hopperAttentionBackwardRows(headDim, valueDim) ==
                   kHopperAttentionBackwardRows
               ? "the Hopper kernel: 16-bit inputs on sm_90; 128 keys a "
                 "block, each consumer warpgroup 64 with dK and dV in its "
                 "registers (D, E <= 128)"
               : "the Hopper kernel: 16-bit inputs on sm_90; D or E past "
                 "128, so 64 keys a block that both warpgroups share, each "
                 "accumulating half of dK's and dV's columns";
  const std::string keys =
      attentionGradientKeys(headDim, valueDim, inputBytes, smemPerBlock) ==
              kBackwardWideBlockRows
          ? "; 128 keys a block (16-bit inputs, D, E <= 128)"
          : "; 64 keys a block";
  if (target.getComputeCapability() != 90)
    return "the sm_80 kernel: the target has no wgmma" + keys;
  if (inputBytes != 2)
    return "the sm_80 kernel: the Hopper kernel multiplies 16-bit inputs" +
           keys;
  return "the sm_80 kernel: the Hopper kernel's shared memory does not fit" +
         keys;
}

/// Fills the scale (D^-0.5) when absent, chooses the kernels (recording
/// why as `policy`), and checks the gradient blocks' shared memory fits the
/// target.
template <typename BackwardLikeOp>
LogicalResult specializeAttentionBackward(BackwardLikeOp op,
                                          TargetAttr target) {
  const auto [headDim, valueDim, inputBytes] =
      attentionDimsOf(op.getQ(), op.getV());
  // Hopper targets take 16-bit inputs through TMA and wgmma.
  const bool hopper = target.getComputeCapability() == 90 && inputBytes == 2 &&
                      headDim <= kHopperAttentionBackwardMaxDim &&
                      valueDim <= kHopperAttentionBackwardMaxDim &&
                      hopperAttentionBackwardSharedBytes(headDim, valueDim) <=
                          target.getSmemPerBlock();
  const bool chosen = !op.getBlockRows();
  if (chosen) {
    if (hopper)
      op.setWgmma(true);
    op.setBlockRowsAttr(
        Builder(op.getContext())
            .getI64IntegerAttr(
                op.getWgmma()
                    ? hopperAttentionBackwardRows(headDim, valueDim)
                    : attentionGradientKeys(headDim, valueDim, inputBytes,
                                            target.getSmemPerBlock())));
  }
  const int64_t needed =
      op.getWgmma() ? hopperAttentionBackwardSharedBytes(headDim, valueDim)
                    : attentionGradientSharedBytes(
                          headDim, valueDim, inputBytes, *op.getBlockRows());
  if (needed > target.getSmemPerBlock())
    return op.emitOpError()
           << "the gradient blocks need " << needed
           << " bytes of shared memory at D = " << headDim
           << ", E = " << valueDim << " with " << inputBytes * 8
           << "-bit inputs; smem_per_block = " << target.getSmemPerBlock();
  setDefaultScale(op, headDim);
  if (!op->hasAttr("policy"))
    op->setAttr("policy", Builder(op.getContext())
                              .getStringAttr(backwardPolicy(
                                  op.getWgmma(), chosen, target, headDim,
                                  valueDim, inputBytes)));
  // The deterministic kernels: one block an SM, all resident.
  if (op.getDeterministic() && !op.getBlocks())
    op.setBlocksAttr(
        Builder(op.getContext()).getI64IntegerAttr(target.getSmCount()));
  return success();
}

/// The row terms, the gradients in one pass over each key tile (on Hopper
/// where `wgmma` and views of 16-byte rows, else on sm_80) and dQ's
/// conversion from its accumulator: three kernels.
template <typename BackwardLikeOp>
LogicalResult decomposeAttentionBackward(BackwardLikeOp op,
                                         OpBuilder &builder) {
  const KeyRestrictions keys = keysOf(op);
  if (!op.getScaleAttr())
    return op.emitOpError() << "needs its scale: run rudnn-specialize before "
                               "rudnn-decompose";
  Location loc = op.getLoc();
  Operation *before = op->getPrevNode();
  Value terms = builder.create<AttentionRowTermsOp>(loc, op.getLse().getType(),
                                                    op.getO(), op.getDOutput());
  // The Hopper kernel loads its operands with TMA: 16-byte rows. Else the
  // sm_80 kernel, over 64 keys where the Hopper kernel was asked for.
  const bool hopper =
      op.getWgmma() &&
      promisesAlignedViews({op.getQ(), op.getK(), op.getV(), op.getDOutput()});
  IntegerAttr rows = op.getWgmma() && !hopper
                         ? builder.getI64IntegerAttr(kBackwardBlockRows)
                         : op.getBlockRowsAttr();
  auto dq = cast<RankedTensorType>(op.getDq().getType());
  auto gradients = builder.create<AttentionGradientsOp>(
      loc, op.getDk().getType(), op.getDv().getType(),
      dq.clone(builder.getF32Type()), op.getQ(), op.getK(), op.getV(),
      keys.lengths, keys.mask, keys.queryOffsets, keys.keyOffsets, keys.slopes,
      op.getLse(), terms, op.getDOutput(), op.getCausalAttr(),
      op.getWindowLeftAttr(), op.getWindowRightAttr(), op.getSoftcapAttr(),
      op.getScaleAttr(), rows, hopper ? builder.getUnitAttr() : UnitAttr(),
      op.getDeterministicAttr(), op.getBlocksAttr());
  op.getDq().replaceAllUsesWith(
      builder.create<AttentionDqConvertOp>(loc, dq, gradients.getDqAccum()));
  op.getDk().replaceAllUsesWith(gradients.getDk());
  op.getDv().replaceAllUsesWith(gradients.getDv());
  markAlignedViews(op, before,
                   {op.getQ(), op.getK(), op.getV(), op.getDOutput()});
  return success();
}

} // namespace

LogicalResult AttentionRowTermsOp::verify() {
  const AttentionLayouts &layouts = layoutsOf(getO());
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(checkTensor(*this, shapes, "o", getO(), layouts.o,
                         checkFloatElementType)) ||
      failed(checkTensor(*this, shapes, "d_output", getDOutput(), layouts.o,
                         checkFloatElementType)) ||
      failed(
          checkSameElementType(*this, "d_output", getDOutput(), "o", getO())) ||
      failed(checkTensor(*this, shapes, "terms", getTerms(), layouts.rows,
                         checkF32ElementType)))
    return failure();
  return success();
}

namespace {

/// What the gradient primitive takes: the forward's operands, lse, the row
/// terms and dO; then its results.
template <typename GradientOp>
LogicalResult
verifyGradients(GradientOp op, ShapeChecker &shapes,
                std::initializer_list<std::pair<StringRef, Value>> results) {
  const AttentionLayouts &layouts = layoutsOf(op.getQ());
  const bool packed = &layouts == &kPacked;
  if (packed != static_cast<bool>(op.getCuSeqlensQ()) ||
      packed != static_cast<bool>(op.getCuSeqlensK()) ||
      (packed && (op.getKeyLengths() || op.getKeyMask())))
    return op.emitOpError() << "packed q [T, H, D] takes the entries' offsets "
                               "(cu_seqlens) and no lengths or mask; padded "
                               "q [B, T, H, D] takes no offsets";
  if (failed(checkTensor(op, shapes, "q", op.getQ(), layouts.q,
                         checkFloatElementType)) ||
      failed(checkTensor(op, shapes, "k", op.getK(), layouts.k,
                         checkFloatElementType)) ||
      failed(checkTensor(op, shapes, "v", op.getV(), layouts.v,
                         checkFloatElementType)) ||
      failed(checkTensor(op, shapes, "lse", op.getLse(), layouts.rows,
                         checkF32ElementType)) ||
      failed(checkTensor(op, shapes, "terms", op.getTerms(), layouts.rows,
                         checkF32ElementType)) ||
      failed(checkTensor(op, shapes, "d_output", op.getDOutput(), layouts.o,
                         checkFloatElementType)) ||
      failed(checkWindow(op, optionalInt(op.getWindowLeft()),
                         optionalInt(op.getWindowRight()))) ||
      failed(checkPositive(op, "softcap", op.getSoftcapAttr())) ||
      failed(checkPositive(op, "scale", op.getScaleAttr())) ||
      failed(checkBackwardRows(op, op.getQ(), op.getV(),
                               optionalInt(op.getBlockRows()),
                               op.getWgmma())) ||
      failed(checkDeterministicGrid(op, op.getDeterministic(),
                                    optionalInt(op.getBlocks()))))
    return failure();
  for (auto [name, value] : {std::pair<StringRef, Value>{"k", op.getK()},
                             {"v", op.getV()},
                             {"d_output", op.getDOutput()}})
    if (failed(checkSameElementType(op, name, value, "q", op.getQ())))
      return failure();
  if (Value lengths = op.getKeyLengths();
      lengths &&
      (failed(shapes.check("key_lengths", lengths, "B")) ||
       failed(checkIntegerElementType(op, "key_lengths", lengths, 32))))
    return failure();
  if (Value mask = op.getKeyMask();
      mask && (failed(shapes.check("key_mask", mask, "BS")) ||
               failed(checkIntegerElementType(op, "key_mask", mask, 1))))
    return failure();
  for (auto [name, offsets] : {std::pair{"cu_seqlens_q", op.getCuSeqlensQ()},
                               std::pair{"cu_seqlens_k", op.getCuSeqlensK()}})
    if (offsets && (failed(shapes.check(name, offsets, "C")) ||
                    failed(checkIntegerElementType(op, name, offsets, 32))))
      return failure();
  if (failed(checkSlopes(op, shapes, op.getAlibiSlopes(), packed)))
    return failure();
  for (auto [name, value] : results)
    if (failed(shapes.check(name, value,
                            name == "dq"   ? layouts.q
                            : name == "dk" ? layouts.k
                                           : layouts.v)) ||
        failed(checkSameElementType(op, name, value, "q", op.getQ())))
      return failure();
  return success();
}

} // namespace

LogicalResult AttentionGradientsOp::verify() {
  ShapeChecker shapes(*this, kAttentionStaticDims);
  if (failed(
          verifyGradients(*this, shapes, {{"dk", getDk()}, {"dv", getDv()}})))
    return failure();
  if (!getBlockRows())
    return emitOpError() << "needs its 'block_rows' (keys a block)";
  if (getDeterministic() && !getBlocks())
    return emitOpError()
           << "'deterministic' needs 'blocks', its cooperative "
              "grid (rudnn-specialize sets the target's SM count)";
  return checkTensor(*this, shapes, "dq_accum", getDqAccum(),
                     layoutsOf(getQ()).q, checkF32ElementType);
}

LogicalResult AttentionDqConvertOp::verify() {
  ShapeChecker shapes(*this, kAttentionStaticDims);
  const AttentionLayouts &layouts = layoutsOf(getDqAccum());
  return success(succeeded(checkTensor(*this, shapes, "dq_accum", getDqAccum(),
                                       layouts.q, checkF32ElementType)) &&
                 succeeded(checkTensor(*this, shapes, "dq", getDq(), layouts.q,
                                       checkFloatElementType)));
}

//===----------------------------------------------------------------------===//
// The generated op classes, whose methods call the family's functions
//===----------------------------------------------------------------------===//

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/attention/RudnnAttentionOps.cpp.inc"
#pragma GCC diagnostic pop
