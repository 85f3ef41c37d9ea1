//===- KvCacheInterfaces.cpp - The K/V-cache operators and primitives -----===//
//
// rudnn.kv_cache_attention and its paged form as operator ops: their
// contracts and rules, the scale and persistent grid they choose for a
// target, and the two primitives they become (the splits' partials, which
// append, and their combination); the primitives' verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/attention/AttentionContracts.h"
#include "dialects/IR/attention/AttentionRules.h"
#include "dialects/IR/kvcache/KvCachePolicy.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// The dims the decoding kernels are specialized for.
constexpr llvm::StringLiteral kCacheStaticDims = "DEZ";

LogicalResult checkSplits(Operation *op, std::optional<uint64_t> splits) {
  if (splits && (*splits < 1 || *splits > uint64_t(kDecodeMaxSplits)))
    return op->emitOpError() << "'splits' must be 1 to " << kDecodeMaxSplits
                             << ", got " << *splits;
  return success();
}

LogicalResult checkGrid(Operation *op, std::optional<uint64_t> blocks,
                        std::optional<uint64_t> warps) {
  if (blocks && (*blocks < 1 || *blocks > (uint64_t(1) << 20)))
    return op->emitOpError() << "'blocks' must be 1 to 2^20, got " << *blocks;
  if (warps && *warps != 1 && *warps != 2 && *warps != 4)
    return op->emitOpError() << "'warps' must be 1, 2 or 4, got " << *warps;
  return success();
}

std::optional<int64_t> optionalInt(std::optional<uint64_t> value) {
  if (!value)
    return std::nullopt;
  return static_cast<int64_t>(*value);
}

/// The options the operators and their partials share: new keys and values
/// together or neither; the rotary tables together, with new keys, over at
/// most D / 2 pairs; the window, the softcap and the scale.
template <typename CacheOp> LogicalResult verifyOptions(CacheOp op) {
  if (static_cast<bool>(op.getK()) != static_cast<bool>(op.getV()))
    return op.emitOpError() << "takes the new tokens' 'k' and 'v' together, "
                               "or neither (an attend-only call)";
  if (static_cast<bool>(op.getRotaryCos()) !=
      static_cast<bool>(op.getRotarySin()))
    return op.emitOpError()
           << "takes 'rotary_cos' and 'rotary_sin' together, or neither";
  if (op.getRotaryCos()) {
    if (!op.getK())
      return op.emitOpError() << "rotates the new tokens' keys: 'rotary' "
                                 "needs 'k' and 'v'";
    auto table = cast<RankedTensorType>(op.getRotaryCos().getType());
    const int64_t headDim =
        cast<RankedTensorType>(op.getQ().getType()).getShape().back();
    if (table.getRank() == 2 && !table.isDynamicDim(1) &&
        2 * table.getDimSize(1) > headDim)
      return op.emitOpError()
             << "'rotary_cos' holds " << table.getDimSize(1)
             << " pairs a position: at most D / 2 = " << headDim / 2;
  }
  if (op.getRotaryInterleaved() && !op.getRotaryCos())
    return op.emitOpError() << "'interleaved' describes rotary tables it "
                               "does not have";
  return success(succeeded(checkWindow(op, optionalInt(op.getWindowLeft()),
                                       optionalInt(op.getWindowRight()))) &&
                 succeeded(checkPositive(op, "softcap", op.getSoftcapAttr())) &&
                 succeeded(checkPositive(op, "scale", op.getScaleAttr())));
}

template <typename CacheOp> LogicalResult verifyKvCache(CacheOp op) {
  ShapeChecker shapes(op, kCacheStaticDims);
  if (failed(verifyOptions(op)) || failed(verifyOperatorContract(op, shapes)) ||
      failed(checkSplits(op, op.getSplits())) ||
      failed(checkGrid(op, op.getBlocks(), op.getWarps())))
    return failure();
  if constexpr (std::is_same_v<CacheOp, KvCacheAttentionOp>) {
    // Without a row map, cache row b is entry b's.
    const int64_t entries =
        cast<RankedTensorType>(op.getQ().getType()).getDimSize(0);
    const int64_t rows =
        cast<RankedTensorType>(op.getKCache().getType()).getDimSize(0);
    if (!op.getCacheBatchIdx() && !ShapedType::isDynamic(entries) &&
        !ShapedType::isDynamic(rows) && entries != rows)
      return op.emitOpError()
             << "has " << rows << " cache rows for " << entries
             << " entries: without 'cache_batch_idx' they are one each";
  }
  return success();
}

/// The cached values [.., .., G, E] (pages or contiguous).
template <typename CacheOp> Value cachedValues(CacheOp op) {
  if constexpr (std::is_same_v<CacheOp, KvCacheAttentionPagedOp>)
    return op.getVPages();
  else
    return op.getVCache();
}

/// Fills the scale (D^-0.5) and the persistent grid for `target`.
template <typename CacheOp>
LogicalResult specializeKvCache(CacheOp op, TargetAttr target) {
  const auto [headDim, valueDim, inputBytes] =
      attentionDimsOf(op.getQ(), cachedValues(op));
  setDefaultScale(op, headDim);
  std::optional<int64_t> warps = chooseDecodeWarps(
      headDim, valueDim, inputBytes, target.getSmemPerBlock());
  if (!warps)
    return op.emitOpError()
           << "no decoding block fits D = " << headDim << ", E = " << valueDim
           << " in smem_per_block = " << target.getSmemPerBlock()
           << " bytes (needs "
           << decodeSharedBytes(headDim, valueDim, inputBytes, 1) << ")";
  Builder builder(op.getContext());
  if (!op.getWarps())
    op.setWarpsAttr(builder.getI64IntegerAttr(*warps));
  if (!op.getBlocks())
    op.setBlocksAttr(builder.getI64IntegerAttr(decodeBlocks(
        decodeSharedBytes(headDim, valueDim, inputBytes, *op.getWarps()),
        target.getSmemPerBlock(), target.getSmCount())));
  return success();
}

/// partials (appending) → combine.
template <typename CacheOp>
LogicalResult decomposeKvCache(CacheOp op, OpBuilder &builder) {
  Value kCache, vCache, blockTable, batchIndex;
  if constexpr (std::is_same_v<CacheOp, KvCacheAttentionPagedOp>) {
    kCache = op.getKPages();
    vCache = op.getVPages();
    blockTable = op.getBlockTable();
  } else {
    kCache = op.getKCache();
    vCache = op.getVCache();
    batchIndex = op.getCacheBatchIdx();
  }
  if (!op.getScaleAttr() || !op.getBlocks() || !op.getWarps())
    return op.emitOpError() << "needs its scale and grid: run "
                               "rudnn-specialize before rudnn-decompose";
  auto q = cast<RankedTensorType>(op.getQ().getType());
  const int64_t valueDim =
      cast<RankedTensorType>(vCache.getType()).getShape().back();
  const int64_t batch = q.getDimSize(0), tokens = q.getDimSize(1),
                heads = q.getDimSize(2);
  Type f32 = builder.getF32Type();
  auto oPartial = RankedTensorType::get(
      {batch, heads, tokens, kDecodeMaxSplits, valueDim}, f32);
  auto lsePartial =
      RankedTensorType::get({batch, heads, tokens, kDecodeMaxSplits}, f32);
  Location loc = op.getLoc();
  Operation *before = op->getPrevNode();
  Value o = op.getO(), lse = op.getLse();
  auto partials = builder.create<DecodePartialsOp>(
      loc,
      TypeRange{kCache.getType(), vCache.getType(), o.getType(), lse.getType(),
                oPartial, lsePartial, op.getStatus().getType()},
      op.getQ(), op.getK(), op.getV(), kCache, vCache, blockTable,
      op.getCacheLengths(), op.getCacheLeftpad(), batchIndex,
      op.getAlibiSlopes(), op.getRotaryCos(), op.getRotarySin(),
      op.getRotaryInterleavedAttr(), op.getNonCausalAttr(),
      op.getWindowLeftAttr(), op.getWindowRightAttr(), op.getSoftcapAttr(),
      op.getScaleAttr(), op.getBlocksAttr(), op.getWarpsAttr(),
      op.getSplitsAttr());
  UnitAttr attendOnly = op.getK() ? UnitAttr() : builder.getUnitAttr();
  auto combine = builder.create<DecodeCombineOp>(
      loc, TypeRange{o.getType(), lse.getType()}, partials.getOPartial(),
      partials.getLsePartial(), partials.getO(), partials.getLse(),
      op.getCacheLengths(), op.getCacheLeftpad(), attendOnly,
      op.getWindowLeftAttr(), op.getBlocksAttr(), op.getSplitsAttr());
  op->getResult(0).replaceAllUsesWith(combine.getO());
  op->getResult(1).replaceAllUsesWith(partials.getKCacheOut());
  op->getResult(2).replaceAllUsesWith(partials.getVCacheOut());
  op->getResult(3).replaceAllUsesWith(combine.getLse());
  op->getResult(4).replaceAllUsesWith(partials.getStatus());
  SmallVector<Value> gathered = {op.getQ(), kCache, vCache};
  if (op.getK())
    gathered.append({op.getK(), op.getV()});
  markAlignedViews(op, before, gathered);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// The decoding primitives
//===----------------------------------------------------------------------===//

LogicalResult DecodePartialsOp::verify() {
  const bool paged = static_cast<bool>(getBlockTable());
  const StringRef cacheK = paged ? "PZGD" : "NSGD",
                  cacheV = paged ? "PZGE" : "NSGE";
  ShapeChecker shapes(*this, kCacheStaticDims);
  shapes.expect('X', kDecodeMaxSplits, "the partials' slots");
  auto floats = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkFloatElementType(*this, name, value)) &&
           succeeded(checkSameElementType(*this, name, value, "q", getQ()));
  };
  auto f32 = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkF32ElementType(*this, name, value));
  };
  auto i32 = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkIntegerElementType(*this, name, value, 32));
  };
  if (failed(verifyOptions(*this)))
    return failure();
  if (!floats("q", getQ(), "BTHD") ||
      (getK() && !floats("k", getK(), "BTGD")) ||
      (getV() && !floats("v", getV(), "BTGE")) ||
      !floats("k_cache", getKCache(), cacheK) ||
      !floats("v_cache", getVCache(), cacheV) ||
      (paged && !i32("block_table", getBlockTable(), "BM")) ||
      !i32("cache_lengths", getCacheLengths(), "B") ||
      (getCacheLeftpad() && !i32("cache_leftpad", getCacheLeftpad(), "B")) ||
      (getCacheBatchIdx() &&
       !i32("cache_batch_idx", getCacheBatchIdx(), "B")) ||
      (getAlibiSlopes() && !f32("alibi_slopes", getAlibiSlopes(), "BH")) ||
      (getRotaryCos() && !floats("rotary_cos", getRotaryCos(), "RQ")) ||
      (getRotarySin() && !floats("rotary_sin", getRotarySin(), "RQ")) ||
      !floats("k_cache_out", getKCacheOut(), cacheK) ||
      !floats("v_cache_out", getVCacheOut(), cacheV) ||
      !floats("o", getO(), "BTHE") || !f32("lse", getLse(), "BHT") ||
      !f32("o_partial", getOPartial(), "BHTXE") ||
      !f32("lse_partial", getLsePartial(), "BHTX") ||
      !i32("status", getStatus(), "B"))
    return failure();
  if (getKCache().getType() != getKCacheOut().getType() ||
      getVCache().getType() != getVCacheOut().getType())
    return emitOpError() << "updates the caches in place: each result has "
                            "its cache operand's type";
  return success(succeeded(checkSplits(*this, getSplits())) &&
                 succeeded(checkGrid(*this, getBlocks(), getWarps())));
}

LogicalResult DecodeCombineOp::verify() {
  ShapeChecker shapes(*this, "EX");
  shapes.expect('X', kDecodeMaxSplits, "the partials' slots");
  if (failed(shapes.check("o_partial", getOPartial(), "BHTXE")) ||
      failed(checkF32ElementType(*this, "o_partial", getOPartial())) ||
      failed(shapes.check("lse_partial", getLsePartial(), "BHTX")) ||
      failed(checkF32ElementType(*this, "lse_partial", getLsePartial())) ||
      failed(shapes.check("o_single", getOSingle(), "BTHE")) ||
      failed(checkFloatElementType(*this, "o_single", getOSingle())) ||
      failed(shapes.check("lse_single", getLseSingle(), "BHT")) ||
      failed(checkF32ElementType(*this, "lse_single", getLseSingle())) ||
      failed(shapes.check("cache_lengths", getCacheLengths(), "B")) ||
      failed(checkIntegerElementType(*this, "cache_lengths", getCacheLengths(),
                                     32)))
    return failure();
  if (Value leftpad = getCacheLeftpad())
    if (failed(shapes.check("cache_leftpad", leftpad, "B")) ||
        failed(checkIntegerElementType(*this, "cache_leftpad", leftpad, 32)))
      return failure();
  if (std::optional<int64_t> left = optionalInt(getWindowLeft());
      left && *left < -1)
    return emitOpError() << "'window_left' must be -1 (unbounded) or more";
  if (getO().getType() != getOSingle().getType() ||
      getLse().getType() != getLseSingle().getType())
    return emitOpError() << "writes over 'o_single' and 'lse_single': its "
                            "results have their types";
  return success(succeeded(checkSplits(*this, getSplits())) &&
                 succeeded(checkGrid(*this, getBlocks(), std::nullopt)));
}

//===----------------------------------------------------------------------===//
// The generated op classes, whose methods call the family's functions
//===----------------------------------------------------------------------===//

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/kvcache/RudnnKvCacheOps.cpp.inc"
#pragma GCC diagnostic pop
