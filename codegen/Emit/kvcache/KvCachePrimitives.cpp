//===- KvCachePrimitives.cpp - The decoding step's primitives as kernels --===//
//
// The primitive interface of rudnn.decode_partials and rudnn.decode_combine:
// two kernels, the partials (appending the new tokens in place, the caches'
// memory being their operands') on a persistent grid the target sizes, and
// the combination of the splits' partial results, which writes over the
// single-part entries' o and lse. Both bind the same split inputs, so the
// device makes the same choice in each.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KernelBuilder.h"
#include "codegen/Emit/KernelEmitInterface.h"
#include "codegen/Emit/Primitives.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/kvcache/KvCachePolicy.h"

#include <sstream>

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::DType;
using namespace ::rudnn::codegen;

namespace {

constexpr llvm::StringLiteral kPartialsGroup = "attention.decode";
constexpr llvm::StringLiteral kCombineGroup = "attention.decode_combine";

/// A window bound: −1 (unbounded) when absent.
int64_t boundOf(std::optional<uint64_t> bound) {
  return bound ? static_cast<int64_t>(*bound) : -1;
}

/// The keys' start both kernels agree on: the new tokens appended (all T,
/// or none attend-only) and the window's left bound.
struct SplitShape {
  bool attendOnly;
  int64_t windowLeft, splits, blocks;

  /// `DecodeSplit{...}`'s initializer from the inputs both kernels bind.
  std::string initializer() const {
    return "{cache_lengths, cache_leftpad, batch, tokens, " +
           std::string(attendOnly ? "0" : "tokens") + ", kv_heads, " +
           std::to_string(windowLeft) + ", " + std::to_string(splits) + ", " +
           std::to_string(blocks) + ", slots}";
  }
};

/// What shapes the partials kernel.
struct PartialsKernel {
  DType input;
  int64_t headDim, valueDim, warps, pageSize;
  SplitShape split;
  int64_t windowRight;
  bool causal, capped, biased, rotary, aligned;

  static PartialsKernel of(DecodePartialsOp op) {
    PartialsKernel kernel{dtype(op.getQ()),
                          lastDim(op.getQ()),
                          lastDim(op.getVCache()),
                          static_cast<int64_t>(op.getWarps()),
                          0,
                          {!op.getK(), boundOf(op.getWindowLeft()),
                           op.getSplits() ? int64_t(*op.getSplits()) : 0,
                           static_cast<int64_t>(op.getBlocks())},
                          boundOf(op.getWindowRight()),
                          !op.getNonCausal(),
                          op.getSoftcapAttr() != nullptr,
                          op.getAlibiSlopes() != nullptr,
                          op.getRotaryCos() != nullptr,
                          op->hasAttr(RudnnDialect::kAlignedViewsAttrName)};
    if (op.getBlockTable())
      kernel.pageSize =
          cast<ShapedType>(op.getKCache().getType()).getDimSize(1);
    return kernel;
  }

  int64_t sharedBytes() const {
    return decodeSharedBytes(headDim, valueDim, ::rudnn::dtypeSize(input),
                             warps);
  }
  /// "decode_partials_bf16_d128_e128_w4_page16_blocks396", with
  /// "_attend" (nothing appended), "_noncausal", "_window{left}_{right}",
  /// "_softcap", "_alibi", "_rotary" and "_a16" when they apply.
  std::string entry() const {
    auto bound = [](int64_t keys) {
      return keys < 0 ? std::string("inf") : std::to_string(keys);
    };
    std::string name = std::string("decode_partials_") +
                       ::rudnn::dtypeName(input) + "_d" +
                       std::to_string(headDim) + "_e" +
                       std::to_string(valueDim) + "_w" + std::to_string(warps);
    if (pageSize)
      name += "_page" + std::to_string(pageSize);
    if (split.splits)
      name += "_splits" + std::to_string(split.splits);
    name += "_blocks" + std::to_string(split.blocks);
    if (split.attendOnly)
      name += "_attend";
    if (!causal)
      name += "_noncausal";
    if (split.windowLeft >= 0 || windowRight >= 0)
      name += "_window" + bound(split.windowLeft) + "_" + bound(windowRight);
    name += std::string(capped ? "_softcap" : "") + (biased ? "_alibi" : "") +
            (rotary ? "_rotary" : "");
    return aligned ? name + "_a16" : name;
  }
};

/// The partial-result slots of a query row: the forced parts, else a count
/// the runtime chooses so that the partials of the call's B·T·H rows (E + 1
/// floats a slot) fit kDecodePartialBudgetBytes, 1 to kDecodeMaxSplits.
std::optional<DimRef> partialSlots(int64_t splits, int64_t valueDim) {
  if (splits)
    return std::nullopt;
  return DimRef::split(
      1, {DimRef::of('B'), DimRef::of('T'), DimRef::of('H')},
      std::max<int64_t>(1, kDecodePartialBudgetBytes / (4 * (valueDim + 1))),
      kDecodeMaxSplits, "partial_slots");
}

/// The split inputs both kernels bind, after their tensors.
void bindSplit(KernelBuilder &builder, Value lengths, Value leftpad,
               int64_t splits, int64_t valueDim) {
  builder.pointer(lengths, "cache_lengths", "int", false);
  builder.pointer(leftpad, "cache_leftpad", "int", false);
  builder.dim(DimRef::of('B'), "batch");
  builder.dim(DimRef::of('T'), "tokens");
  builder.dim(DimRef::of('H'), "heads");
  builder.dim(DimRef::of('G'), "kv_heads");
  if (std::optional<DimRef> slots = partialSlots(splits, valueDim))
    builder.dim(*slots, "slots");
  else
    builder.body() << "  const int slots = " << splits << ";\n";
}

/// Bytes of a [B, T, H]-rowed result of `perRow` bytes a row.
SizeRef rowsOf(int64_t perRow) {
  return {perRow, {DimRef::of('B'), DimRef::of('T'), DimRef::of('H')}};
}

/// Bytes of the partials of `perSlot` bytes a slot: `splits` slots a row
/// when forced, else the runtime's count.
SizeRef partialsOf(int64_t perSlot, int64_t splits, int64_t valueDim) {
  SizeRef bytes = rowsOf(perSlot);
  if (std::optional<DimRef> slots = partialSlots(splits, valueDim))
    bytes.dims.push_back(*slots);
  else
    bytes.constant *= splits;
  return bytes;
}

int64_t splitsOf(DecodePartialsOp op) {
  return op.getSplits() ? int64_t(*op.getSplits()) : 0;
}

struct PartialsModel
    : PrimitiveOpInterface::ExternalModel<PartialsModel, DecodePartialsOp> {
  StringRef getKernelGroup(Operation *) const { return kPartialsGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto partials = cast<DecodePartialsOp>(op);
    const int64_t valueDim = lastDim(partials.getVCache());
    switch (index) {
    case 0: // the caches, updated in place
      return ResultStorage::sharedWith(partials.getKCache());
    case 1:
      return ResultStorage::sharedWith(partials.getVCache());
    case 2:
      return ResultStorage::own(
          rowsOf(elementBytes(partials.getQ()) * valueDim), "o");
    case 3:
      return ResultStorage::own(rowsOf(4), "lse").orNull();
    case 4:
      return ResultStorage::own(
          partialsOf(4 * valueDim, splitsOf(partials), valueDim), "o_partial");
    case 5:
      return ResultStorage::own(partialsOf(4, splitsOf(partials), valueDim),
                                "lse_partial");
    default:
      return ResultStorage::own({4, {DimRef::of('B')}}, "status").orNull();
    }
  }

  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    // o [B, T, H, E], lse [B, H, T], the partials [B, H, T, ...], status
    // [B]: q's dims.
    static constexpr unsigned kRowsFirst[] = {0, 2, 1};
    Value q = cast<DecodePartialsOp>(op).getQ();
    if (index == 2 && dim < 3)
      return DimRef::of(q, dim);
    if ((index >= 3 && index <= 5 && dim < 3) || (index == 6 && dim == 0))
      return DimRef::of(q, kRowsFirst[dim]);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto partials = cast<DecodePartialsOp>(op);
    const PartialsKernel kernel = PartialsKernel::of(partials);
    const SplitShape &split = kernel.split;
    const std::string in = cudaType(kernel.input);
    builder.setEntry(kernel.entry());
    builder.preamble()
        << "// A decoding step's partials: append, then attend by parts.\n"
        << "#include \"rudnn/attention.cuh\"\n\n"
        << "// The host sizes the shared memory and the partials from the "
           "same layout.\n"
        << "static_assert(sizeof(rudnn::attention::DecodeShared<" << in << ", "
        << kernel.headDim << ", " << kernel.valueDim << ", " << kernel.warps
        << ">) == " << kernel.sharedBytes() << ");\n"
        << "static_assert(rudnn::attention::kDecodeMaxSplits == "
        << kDecodeMaxSplits << ");\n";
    // The caches are the results' memory, which the kernel reads and
    // writes; attend only, the operands', only read (a plan may drop the
    // unused results).
    const bool appends = !split.attendOnly;
    Value q = partials.getQ(), k = partials.getK(), v = partials.getV(),
          kCache = appends ? partials.getKCacheOut() : partials.getKCache(),
          vCache = appends ? partials.getVCacheOut() : partials.getVCache(),
          o = partials.getO();
    builder.pointer(q, "q", in, false);
    builder.pointer(k, "k", in, false);
    builder.pointer(v, "v", in, false);
    builder.pointer(kCache, "k_cache", in, appends);
    builder.pointer(vCache, "v_cache", in, appends);
    builder.pointer(partials.getBlockTable(), "block_table", "int", false);
    builder.pointer(o, "o", in, true);
    builder.pointer(partials.getLse(), "lse", "float", true);
    builder.pointer(partials.getOPartial(), "o_partial", "float", true);
    builder.pointer(partials.getLsePartial(), "lse_partial", "float", true);
    builder.pointer(partials.getStatus(), "status", "int", true);
    for (auto [value, name] : {std::pair{q, "q"}, std::pair{k, "k"},
                               std::pair{v, "v"}, std::pair{kCache, "k_cache"},
                               std::pair{vCache, "v_cache"}, std::pair{o, "o"}})
      builder.strides(value,
                      {std::string(name) + "_b", std::string(name) + "_t",
                       std::string(name) + "_h"});
    builder.strides(partials.getBlockTable(), {"block_table_b"});
    builder.pointer(partials.getAlibiSlopes(), "alibi_slopes", "float", false);
    builder.strides(partials.getAlibiSlopes(), {"alibi_b"});
    builder.pointer(partials.getCacheBatchIdx(), "cache_batch", "int", false);
    Value cos = partials.getRotaryCos(), sin = partials.getRotarySin();
    builder.pointer(cos, "rotary_cos", in, false);
    builder.pointer(sin, "rotary_sin", in, false);
    bindSplit(builder, partials.getCacheLengths(), partials.getCacheLeftpad(),
              split.splits, kernel.valueDim);
    // The capacity: S, or pages an entry may have times the page size.
    const std::string capacity =
        kernel.pageSize ? builder.dim(DimRef::of('M'), "max_pages") + " * " +
                              std::to_string(kernel.pageSize)
                        : builder.dim(DimRef::of('S'), "capacity");
    const std::string pages =
        kernel.pageSize ? builder.dim(DimRef::of('P'), "pages") : "0";
    const std::string cacheRows =
        kernel.pageSize ? "0" : builder.dim(DimRef::of('N'), "cache_rows");
    // The rotary tables' positions and pairs (none without them).
    const std::string rotary =
        kernel.rotary
            ? "{rotary_cos, rotary_sin, " +
                  builder.dim(DimRef::of('R'), "rotary_rows") + ", " +
                  builder.dim(DimRef::of('Q'), "rotary_pairs") + ", " +
                  (partials.getRotaryInterleaved() ? "true" : "false") + "}"
            : "{nullptr, nullptr, 0, 0, false}";
    // FlashAttention turns every query at its own position when causal or
    // windowed, else all at the cached length.
    const bool eachQuery =
        kernel.causal || split.windowLeft >= 0 || kernel.windowRight >= 0;
    builder.scalar("scale", partials.getScaleAttr().getValueAsDouble());
    FloatAttr softcap = partials.getSoftcapAttr();
    builder.scalar("softcap", softcap ? softcap.getValueAsDouble() : 0.0);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();

    builder.body()
        << "  const rudnn::attention::DecodeParams<" << in << "> p = {\n"
        << "      q, k, v, "
        << (appends ? "k_cache, v_cache"
                    : "const_cast<" + in + " *>(k_cache), const_cast<" + in +
                          " *>(v_cache)")
        << ", block_table, o, lse, o_partial,\n"
        << "      lse_partial, status,\n"
        << "      {q_b, q_t, q_h}, {k_b, k_t, k_h}, {v_b, v_t, v_h},\n"
        << "      {k_cache_b, k_cache_t, k_cache_h},\n"
        << "      {v_cache_b, v_cache_t, v_cache_h}, {o_b, o_t, o_h},\n"
        << "      block_table_b, heads, " << capacity << ", " << pages
        << ", scale,\n      " << split.initializer()
        << ",\n      alibi_slopes, alibi_b, softcap, "
        << (kernel.causal ? "true" : "false") << ", " << kernel.windowRight
        << ",\n      cache_batch, " << cacheRows << ", " << rotary << ", "
        << (eachQuery ? "true" : "false") << "};\n"
        << "  rudnn::attention::decode_partials<" << in << ", "
        << kernel.headDim << ", " << kernel.valueDim << ", " << kernel.warps
        << ", " << kernel.pageSize << ", " << (kernel.capped ? "true" : "false")
        << ", " << (kernel.biased ? "true" : "false") << ", "
        << (kernel.rotary ? "true" : "false")
        << (kernel.aligned ? ", rudnn::tile::Alignment::Aligned" : "")
        << ">(p);\n";
    KernelLaunch &launch = builder.launch();
    launch.threads = 32 * kernel.warps;
    launch.sharedBytes = kernel.sharedBytes();
    launch.grid[0] = SizeRef{split.blocks, {}};
    launch.grid[1] = SizeRef{1, {}};
    launch.grid[2] = SizeRef{1, {}};
    model(launch, kernel);
    return success();
  }

private:
  /// The cost model at full caches (the lengths live on the device, so the
  /// report's capacity stands for them: S, or M pages of Z): every cached
  /// key and value row read once per key head, each query row's q read
  /// and o written; 2·(D + E) FLOPs per (query row, key). Left out: the
  /// new tokens' append (T rows of the S), and the partial results' round
  /// trip through the combine (its size is chosen on the device).
  static void model(KernelLaunch &launch, const PartialsKernel &kernel) {
    const int64_t bytes = ::rudnn::dtypeSize(kernel.input), D = kernel.headDim,
                  E = kernel.valueDim;
    const int64_t rows = kernel.pageSize ? kernel.pageSize : 1;
    SmallVector<DimRef, 4> keys = {DimRef::of('B'), DimRef::of('G')};
    keys.push_back(DimRef::of(kernel.pageSize ? 'M' : 'S'));
    launch.memoryBytes = {(D + E) * bytes * rows, keys};
    // q read (D elements) and o written (E) a query row.
    launch.streamedBytes = {
        (D + E) * bytes, {DimRef::of('B'), DimRef::of('T'), DimRef::of('H')}};
    SmallVector<DimRef, 4> pairs = {DimRef::of('B'), DimRef::of('T'),
                                    DimRef::of('H')};
    pairs.push_back(DimRef::of(kernel.pageSize ? 'M' : 'S'));
    launch.flops = {2 * (D + E) * rows, pairs};
  }
};

struct CombineModel
    : PrimitiveOpInterface::ExternalModel<CombineModel, DecodeCombineOp> {
  StringRef getKernelGroup(Operation *) const { return kCombineGroup; }

  /// Written over the single-part entries' o and lse.
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto combine = cast<DecodeCombineOp>(op);
    return ResultStorage::sharedWith(index == 0 ? combine.getOSingle()
                                                : combine.getLseSingle());
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto combine = cast<DecodeCombineOp>(op);
    Value o = combine.getO();
    const std::string in = cudaType(dtype(o));
    const int64_t valueDim = lastDim(o);
    const SplitShape split{
        combine.getAttendOnly(), boundOf(combine.getWindowLeft()),
        combine.getSplits() ? int64_t(*combine.getSplits()) : 0,
        static_cast<int64_t>(combine.getBlocks())};
    builder.setEntry(
        std::string("decode_combine_") + ::rudnn::dtypeName(dtype(o)) + "_e" +
        std::to_string(valueDim) +
        (split.splits ? "_splits" + std::to_string(split.splits) : "") +
        "_blocks" + std::to_string(split.blocks) +
        (split.attendOnly ? "_attend" : "") +
        (split.windowLeft >= 0 ? "_left" + std::to_string(split.windowLeft)
                               : ""));
    builder.preamble() << "// A decoding step's splits, combined.\n"
                       << "#include \"rudnn/attention.cuh\"\n";
    builder.pointer(combine.getOPartial(), "o_partial", "float", false);
    builder.pointer(combine.getLsePartial(), "lse_partial", "float", false);
    builder.pointer(o, "o", in, true);
    builder.pointer(combine.getLse(), "lse", "float", true);
    builder.strides(o, {"o_b", "o_t", "o_h"});
    bindSplit(builder, combine.getCacheLengths(), combine.getCacheLeftpad(),
              split.splits, valueDim);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  const rudnn::attention::CombineParams<" << in
                   << "> p = {\n"
                   << "      o_partial, lse_partial, o, lse, {o_b, o_t, o_h}, "
                      "heads,\n      "
                   << split.initializer() << "};\n"
                   << "  rudnn::attention::combine_partials<" << in << ", "
                   << valueDim << ">(p);\n";
    // A block of four warps per (entry, query head), a warp a new token.
    builder.launch().threads = 128;
    builder.launch().grid[0] = SizeRef{1, {DimRef::of('B'), DimRef::of('H')}};
    builder.launch().grid[1] = SizeRef{1, {}};
    builder.launch().grid[2] = SizeRef{1, {}};
    return success();
  }
};

} // namespace

void ::rudnn::codegen::registerKvCachePrimitives(DialectRegistry &registry) {
  attachPrimitives<Primitive<DecodePartialsOp, PartialsModel>,
                   Primitive<DecodeCombineOp, CombineModel>>(registry);
}
