//===- AttentionPrimitives.cpp - The attention primitives as a kernel -----===//
//
// The primitive interface of the tiled-attention ops: the five form one
// kernel group, whose scores, probabilities and accumulators never leave
// the kernel (registers and shared memory); the finalize, last of the
// group, emits the kernel through the device library's
// rudnn::attention::forward, every specialization a constant.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KernelBuilder.h"
#include "codegen/Emit/KernelEmitInterface.h"
#include "codegen/Emit/Primitives.h"
#include "codegen/Emit/attention/AttentionBackwardPrimitives.h"
#include "dialects/IR/ElementTypes.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/attention/AttentionPolicy.h"

#include <sstream>

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::DType;
using namespace ::rudnn::codegen;

namespace {

constexpr llvm::StringLiteral kGroup = "attention.forward",
                              kCombineGroup = "attention.combine";

/// The chain a finalize ends, from the scores on.
struct AttentionChain {
  AttentionScoresOp scores;
  AttentionMaskOp mask;
  AttentionSoftmaxOp softmax;
  AttentionAccumulateOp accumulate;
};

/// The chain `finalize` ends, if it ends one (a query: nothing reported).
std::optional<AttentionChain> chainOf(AttentionFinalizeOp finalize) {
  AttentionChain chain;
  chain.accumulate = finalize.getAcc().getDefiningOp<AttentionAccumulateOp>();
  if (chain.accumulate)
    chain.softmax = chain.accumulate.getP().getDefiningOp<AttentionSoftmaxOp>();
  if (chain.softmax && chain.softmax.getRowMax() == finalize.getRowMax() &&
      chain.softmax.getRowSum() == finalize.getRowSum())
    chain.mask = chain.softmax.getMasked().getDefiningOp<AttentionMaskOp>();
  if (chain.mask)
    chain.scores = chain.mask.getScores().getDefiningOp<AttentionScoresOp>();
  if (!chain.scores)
    return std::nullopt;
  return chain;
}

/// Whether `q` holds packed batches ([T, H, D], with offsets).
bool isPacked(Value q) { return cast<ShapedType>(q.getType()).getRank() == 3; }

/// The queries a result's dims come from, through the chain.
Value queriesOf(Operation *op) {
  std::optional<AttentionChain> chain = chainOf(cast<AttentionFinalizeOp>(op));
  return chain ? chain->scores.getQ() : Value();
}

/// What shapes one attention kernel, read once from its chain.
struct AttentionKernel {
  DType input;
  int64_t headDim, valueDim, blockK, left, right;
  bool causal, packed, aligned;
  /// The Hopper kernel (TMA, wgmma), asked for by `wgmma`, over views
  /// whose rows are 16-byte aligned as tensor maps need; else the mma.sync
  /// kernel.
  bool hopper;
  /// Query rows of a block: 64 a consumer warpgroup (Hopper), or a warp's
  /// 16 or 32 (attentionWarpRows).
  int64_t blockQ = 0;
  /// A 16-bit o promising 16-byte rows: stored without an element-wise
  /// path, by the Hopper kernel's padded batches through a tensor map.
  bool alignedOutput = false;
  /// The Hopper kernel's persistent grid; 0: a block a query tile.
  int64_t blocks = 0;
  /// A softcap given: the kernel holds the capping code (else none at all);
  /// likewise ALiBi slopes and the bias code.
  bool capped = false, biased = false;
  /// A decoding-shaped call's split: the blocks it aims its grid at (each
  /// row's keys in parts, grid z); 0: none.
  int64_t splitBlocks = 0;

  static AttentionKernel of(AttentionChain &chain,
                            AttentionFinalizeOp finalize) {
    auto bound = [](std::optional<uint64_t> keys) {
      return keys ? static_cast<int64_t>(*keys) : int64_t(-1);
    };
    Value q = chain.scores.getQ();
    // Views promising 16-byte rows are copied without an element-wise path.
    const bool aligned = finalize->hasAttr(RudnnDialect::kAlignedViewsAttrName);
    AttentionKernel kernel{dtype(q),
                           lastDim(q),
                           lastDim(chain.accumulate.getV()),
                           static_cast<int64_t>(chain.scores.getBlockK()),
                           bound(chain.mask.getWindowLeft()),
                           bound(chain.mask.getWindowRight()),
                           chain.mask.getCausal(),
                           isPacked(q),
                           aligned,
                           aligned && chain.scores.getWgmma()};
    kernel.blockQ = static_cast<int64_t>(chain.scores.getBlockQ());
    kernel.capped = static_cast<bool>(chain.scores.getSoftcapAttr());
    kernel.biased = static_cast<bool>(chain.mask.getAlibiSlopes());
    kernel.splitBlocks =
        static_cast<int64_t>(chain.scores.getSplitKeys().value_or(0));
    if (kernel.hopper)
      kernel.blocks =
          static_cast<int64_t>(chain.scores.getBlocks().value_or(0));
    // f32 outputs keep their fragments' 8-byte stores, as do a split's
    // f32 parts.
    kernel.alignedOutput =
        finalize->hasAttr(RudnnDialect::kAlignedOutputsAttrName) &&
        kernel.inputBytes() == 2 && !kernel.splitBlocks;
    // Unaligned views of a Hopper specialization take the mma.sync kernel's
    // 16-bit tiles: 64 keys up to D = 64, else 32 (a warp's 32 rows at
    // D = 128 spill with 64; chooseAttentionBlockKeys).
    if (!kernel.hopper && chain.scores.getWgmma()) {
      kernel.blockQ = kAttentionWideBlockQueries;
      kernel.blockK = std::max(kernel.headDim, kernel.valueDim) <= 64 ? 64 : 32;
    }
    return kernel;
  }

  /// Whether o goes out through TMA stores (padded, aligned, Hopper).
  bool storesByTensorMap() const { return hopper && alignedOutput && !packed; }

  /// Threads: a producer and a consumer warpgroup per 64 queries (Hopper),
  /// or a warp per 16 or 32.
  int64_t threads() const {
    return hopper ? 128 * (blockQ / 64 + 1)
                  : attentionThreads(blockQ, headDim, valueDim);
  }

  int64_t inputBytes() const {
    return static_cast<int64_t>(::rudnn::dtypeSize(input));
  }
  bool windowed() const { return left >= 0 || right >= 0; }
  /// "bf16_d128_e128_bq128_bk64"'s template arguments: "__nv_bfloat16, 128,
  /// 128, 64, 128".
  std::string layout() const {
    return std::string(cudaType(input)) + ", " + std::to_string(headDim) +
           ", " + std::to_string(valueDim) + ", " + std::to_string(blockK) +
           ", " + std::to_string(blockQ);
  }
  int64_t sharedBytes() const {
    return hopper ? hopperAttentionSharedBytes(headDim, valueDim, blockQ)
                  : attentionSharedBytes(blockQ, blockK, headDim, valueDim,
                                         inputBytes());
  }
  /// "attention_fwd_bf16_d128_e128_bq128_bk64_causal_window16_inf_a16_o16"
  /// (views and o aligned); the Hopper kernel's end in "_wgmma" or
  /// "_wgmma_o16".
  std::string entry() const {
    auto bound = [](int64_t keys) {
      return keys < 0 ? std::string("inf") : std::to_string(keys);
    };
    std::string name =
        std::string(packed ? "attention_varlen_fwd_" : "attention_fwd_") +
        ::rudnn::dtypeName(input) + "_d" + std::to_string(headDim) + "_e" +
        std::to_string(valueDim) + "_bq" + std::to_string(blockQ) + "_bk" +
        std::to_string(blockK) + (causal ? "_causal" : "") +
        (capped ? "_softcap" : "") + (biased ? "_alibi" : "");
    if (windowed())
      name += "_window" + bound(left) + "_" + bound(right);
    name += hopper ? "_wgmma" : aligned ? "_a16" : "";
    if (splitBlocks)
      name += "_split";
    return alignedOutput ? name + "_o16" : name;
  }
};

/// The parts each row's keys are split into: clamp(ceil(blocks / (B·H)),
/// 1, ceil(S / kAttentionDecodePartKeys)), chosen by the runtime per call
/// (the split kernel's grid z and the partial results' dim 3).
DimRef keyParts(int64_t blocks) {
  return DimRef::split(
      1, {DimRef::of('B'), DimRef::of('H')}, blocks, 1, "key_parts",
      {DimRef::ceilDiv('S', kAttentionDecodePartKeys, "key_part_spans")});
}

/// The kernel's parameters: the tensors (null for absent ones), their
/// (batch, time, head) strides (no batch stride when packed), the dims and
/// the scalars.
void bind(KernelBuilder &builder, AttentionChain &chain,
          AttentionFinalizeOp finalize, const AttentionKernel &kernel) {
  const std::string in = cudaType(kernel.input);
  Value q = chain.scores.getQ(), k = chain.scores.getK(),
        v = chain.accumulate.getV(), o = finalize.getO();
  builder.pointer(q, "q", in, false);
  builder.pointer(k, "k", in, false);
  builder.pointer(v, "v", in, false);
  builder.pointer(chain.mask.getKeyLengths(), "key_lengths", "int", false);
  builder.pointer(chain.mask.getKeyMask(), "key_mask", "unsigned char", false);
  builder.pointer(chain.mask.getCuSeqlensQ(), "cu_seqlens_q", "int", false);
  builder.pointer(chain.mask.getCuSeqlensK(), "cu_seqlens_k", "int", false);
  builder.pointer(chain.mask.getAlibiSlopes(), "alibi_slopes", "float", false);
  // A split writes its parts (o_parts, lse_parts), not o and lse.
  if (kernel.splitBlocks)
    o = Value();
  builder.pointer(o, "o", in, true);
  builder.pointer(kernel.splitBlocks ? Value() : finalize.getLse(), "lse",
                  "float", true);
  builder.pointer(kernel.splitBlocks ? finalize.getO() : Value(), "o_parts",
                  "float", true);
  builder.pointer(kernel.splitBlocks ? finalize.getLse() : Value(), "lse_parts",
                  "float", true);
  for (auto [value, name] : {std::pair{q, "q"}, std::pair{k, "k"},
                             std::pair{v, "v"}, std::pair{o, "o"}}) {
    std::vector<std::string> strides = {std::string(name) + "_t",
                                        std::string(name) + "_h"};
    if (!kernel.packed)
      strides.insert(strides.begin(), std::string(name) + "_b");
    builder.strides(value, strides);
  }
  builder.strides(chain.mask.getKeyMask(), {"key_mask_b"});
  // [B, H] slopes: the entry's stride ([H] packed: none).
  builder.strides(chain.mask.getAlibiSlopes(),
                  kernel.packed ? std::vector<std::string>{}
                                : std::vector<std::string>{"alibi_b"});
  if (kernel.hopper) {
    // Innermost first: (dim, time, head, batch), packed (dim, row, head);
    // boxes of 64 columns (128-byte rows) by a tile of rows.
    const std::vector<unsigned> dims = kernel.packed
                                           ? std::vector<unsigned>{2, 0, 1}
                                           : std::vector<unsigned>{3, 1, 2, 0};
    auto box = [&](int64_t rows) {
      std::vector<int64_t> sizes = {64, rows, 1};
      if (!kernel.packed)
        sizes.push_back(1);
      return sizes;
    };
    builder.tensorMap(q, "q_map", dims, box(kernel.blockQ));
    builder.tensorMap(k, "k_map", dims, box(kernel.blockK));
    builder.tensorMap(v, "v_map", dims, box(kernel.blockK));
    // A consumer warp stores 16 rows at a time.
    if (kernel.storesByTensorMap())
      builder.tensorMap(o, "o_map", dims, box(16));
    // Packed: the blocks claim their tiles from a counter.
    if (kernel.packed)
      builder.zeroedScratch("tile_counter", "int", SizeRef{4, {}});
    builder.setArchSpecific();
    // One block an SM: its registers, which the producer gives up to the
    // consumers (240 each of two warpgroups, 160 of three).
    builder.setLaunchBounds(kernel.threads(), 1);
  }
  // Packed: the entries are the offsets' count less one.
  builder.dim(kernel.packed ? DimRef::of('C') : DimRef::of('B'),
              kernel.packed ? "offsets" : "batch");
  builder.dim(DimRef::of('T'), "queries");
  builder.dim(DimRef::of('S'), "keys");
  builder.dim(DimRef::of('H'), "heads");
  builder.dim(DimRef::of('G'), "kv_heads");
  FloatAttr softcap = chain.scores.getSoftcapAttr();
  builder.scalar("scale", chain.scores.getScaleAttr().getValueAsDouble());
  builder.scalar("softcap", softcap ? softcap.getValueAsDouble() : 0.0);
}

/// The entry's body: the parameter block, then the device library's
/// forward with every specialization a constant.
void writeBody(KernelBuilder &builder, const AttentionKernel &kernel) {
  std::ostringstream &body = builder.body();
  body << "  const rudnn::attention::ForwardParams<" << cudaType(kernel.input)
       << "> p = {\n"
       << "      q, k, v, key_lengths, key_mask, cu_seqlens_q, cu_seqlens_k,\n"
       << "      o, lse,\n";
  for (std::string name : {"q", "k", "v", "o"})
    body << "      {" << (kernel.packed ? "0" : name + "_b") << ", " << name
         << "_t, " << name << "_h},\n";
  // lse [B, H, T] or packed [H, T]: b·lse_batch + h·lse_head + row.
  body << "      key_mask_b, "
       << (kernel.packed ? "0, queries" : "(long long)heads * queries, queries")
       << ",\n      " << (kernel.packed ? "offsets - 1" : "batch")
       << ", queries, keys, heads, kv_heads, scale, softcap, " << kernel.left
       << ", " << kernel.right << ", o_parts, lse_parts, alibi_slopes, "
       << (kernel.packed ? "0" : "alibi_b") << "};\n";
  // The scores' form: causal, then whether they may be soft-capped and
  // biased.
  const std::string scores = std::string(kernel.causal ? "true" : "false") +
                             (kernel.capped ? ", true" : ", false") +
                             (kernel.biased ? ", true" : ", false");
  const char *packed = kernel.packed ? "true" : "false";
  if (kernel.hopper) {
    body << "  rudnn::attention::forward_hopper<" << cudaType(kernel.input)
         << ", " << kernel.headDim << ", " << kernel.valueDim << ", "
         << kernel.blockQ << ", " << scores << ", " << packed
         << (kernel.alignedOutput ? ", rudnn::tile::Alignment::Aligned" : "")
         << ">(p, q_map, k_map, v_map"
         << (kernel.storesByTensorMap() ? ", &o_map"
             : kernel.packed            ? ", nullptr, tile_counter"
                                        : "")
         << ");\n";
    return;
  }
  auto alignment = [](bool aligned) {
    return aligned ? "rudnn::tile::Alignment::Aligned"
                   : "rudnn::tile::Alignment::Checked";
  };
  body << "  rudnn::attention::forward<" << kernel.layout() << ", " << scores
       << ", " << packed;
  if (kernel.aligned || kernel.alignedOutput || kernel.splitBlocks)
    body << ", " << alignment(kernel.aligned) << ", "
         << alignment(kernel.alignedOutput);
  body << (kernel.splitBlocks ? ", true" : "") << ">(p);\n";
}

/// Grid, block, shared memory and the cost model. Bytes: q read, o and lse
/// written once, and K and V read once per key-value head (a lower bound:
/// query tiles sharing them in L2). FLOPs: 2·(D + E) per query and key the
/// bounds allow — every key, half of them when causal, the window's width when
/// both its sides are bounded (lengths and masks not discounted); packed
/// batches have no FLOP model (their work is in the offsets, on the device).
void setLaunch(KernelLaunch &launch, const AttentionKernel &kernel) {
  launch.threads = kernel.threads();
  launch.sharedBytes = kernel.sharedBytes();
  launch.grid[0] =
      SizeRef{1,
              {DimRef::ceilDiv('T', kernel.blockQ,
                               "query_tiles" + std::to_string(kernel.blockQ))}};
  // Packed: every head's query tiles spread over ceil(T / block_q) blocks.
  launch.grid[1] = kernel.packed
                       ? SizeRef{1, {DimRef::of('H')}}
                       : SizeRef{1, {DimRef::of('B'), DimRef::of('H')}};
  // A split: each row's keys in parts, a block each.
  launch.grid[2] = kernel.splitBlocks
                       ? SizeRef{1, {keyParts(kernel.splitBlocks)}}
                       : SizeRef{1, {}};
  // Persistent: the blocks take the query tiles in turn.
  if (kernel.blocks)
    launch.grid[0] = SizeRef{kernel.blocks, {}}, launch.grid[1] = {1, {}};
  SizeRef rows{1, {DimRef::of('H'), DimRef::of('T')}};
  if (!kernel.packed)
    rows.dims.insert(rows.dims.begin(), DimRef::of('B'));
  launch.memoryBytes = {
      (kernel.headDim + kernel.valueDim) * kernel.inputBytes() + 4, rows.dims};
  // K and V: read once per key-value head at least.
  SizeRef keyRows{1, {DimRef::of('G'), DimRef::of('S')}};
  if (!kernel.packed)
    keyRows.dims.insert(keyRows.dims.begin(), DimRef::of('B'));
  launch.streamedBytes = {
      (kernel.headDim + kernel.valueDim) * kernel.inputBytes(), keyRows.dims};
  const int64_t perPair = 2 * (kernel.headDim + kernel.valueDim);
  launch.flopsPerExponential = perPair; // one a query and key
  // Hopper: per warpgroup of 64 queries and tile of BK keys, S = QKᵀ
  // reads Q and K from shared memory and P·V reads V (P in registers), in
  // 64-column blocks: (64 + BK)·D + BK·E elements of 2 bytes against
  // 2·64·BK·(D + E) FLOPs.
  if (kernel.hopper) {
    const int64_t d = (kernel.headDim + 63) / 64 * 64,
                  e = (kernel.valueDim + 63) / 64 * 64, keys = kernel.blockK;
    launch.flopsPerSharedByte =
        std::max<int64_t>(1, 64 * keys * (kernel.headDim + kernel.valueDim) /
                                 ((64 + keys) * d + keys * e));
  }
  if (kernel.left >= 0 && kernel.right >= 0)
    launch.flops = {perPair * (kernel.left + kernel.right + 1), rows.dims};
  else if (!kernel.packed)
    launch.flops = {
        kernel.causal ? perPair / 2 : perPair,
        {DimRef::of('B'), DimRef::of('H'), DimRef::of('T'), DimRef::of('S')}};
}

/// The blocks a finalize's chain splits its keys over, if it does.
std::optional<int64_t> splitBlocksOf(AttentionFinalizeOp finalize) {
  std::optional<AttentionChain> chain = chainOf(finalize);
  if (!chain || !chain->scores.getSplitKeys())
    return std::nullopt;
  return static_cast<int64_t>(*chain->scores.getSplitKeys());
}

template <typename Op, typename Model>
struct AttentionPrimitive
    : public PrimitiveOpInterface::ExternalModel<Model, Op> {
  StringRef getKernelGroup(Operation *) const { return kGroup; }
  // Tiles of scores, probabilities and accumulators stay in the kernel.
  ResultStorage getResultStorage(Operation *, unsigned) const {
    return ResultStorage::kernelLocal();
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &) const {
    return op->emitOpError()
           << "cannot end a kernel: its attention_finalize does";
  }
};

struct ScoresModel : AttentionPrimitive<AttentionScoresOp, ScoresModel> {};
struct MaskModel : AttentionPrimitive<AttentionMaskOp, MaskModel> {};
struct SoftmaxModel : AttentionPrimitive<AttentionSoftmaxOp, SoftmaxModel> {};
struct AccumulateModel
    : AttentionPrimitive<AttentionAccumulateOp, AccumulateModel> {};

struct FinalizeModel
    : PrimitiveOpInterface::ExternalModel<FinalizeModel, AttentionFinalizeOp> {
  StringRef getKernelGroup(Operation *) const { return kGroup; }

  /// o [B, T, H, E] and lse [B, H, T]; packed, o [T, H, E] and lse [H, T];
  /// a split's parts, o [B, H, T, P, E] and lse [B, H, T, P], f32.
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto finalize = cast<AttentionFinalizeOp>(op);
    if (std::optional<int64_t> blocks = splitBlocksOf(finalize))
      return ResultStorage::own({index == 0 ? 4 * lastDim(finalize.getO()) : 4,
                                 {DimRef::of('B'), DimRef::of('H'),
                                  DimRef::of('T'), keyParts(*blocks)}},
                                index == 0 ? "o_parts" : "lse_parts");
    const bool packed = isPacked(finalize.getO());
    SmallVector<DimRef, 4> rows;
    if (!packed)
      rows.push_back(DimRef::of('B'));
    if (index == 0) {
      rows.append({DimRef::of('T'), DimRef::of('H')});
      return ResultStorage::own(
          {static_cast<int64_t>(::rudnn::dtypeSize(dtype(finalize.getO()))) *
               lastDim(finalize.getO()),
           rows},
          "o");
    }
    rows.append({DimRef::of('H'), DimRef::of('T')});
    return ResultStorage::own({4, rows}, "lse").orNull();
  }

  /// The dims of o and lse, from q's.
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    Value q = queriesOf(op);
    if (!q)
      return std::nullopt;
    const unsigned rows = isPacked(q) ? 2 : 3;
    static constexpr unsigned kPaddedLse[] = {0, 2, 1}, kPackedLse[] = {1, 0};
    // A split's parts: [B, H, T, P, ...].
    if (std::optional<int64_t> blocks =
            splitBlocksOf(cast<AttentionFinalizeOp>(op)))
      return dim < 3    ? DimRef::of(q, kPaddedLse[dim])
             : dim == 3 ? std::optional<DimRef>(keyParts(*blocks))
                        : std::nullopt;
    if (index == 0)
      return dim < rows ? std::optional<DimRef>(DimRef::of(q, dim))
                        : std::nullopt;
    return DimRef::of(q, isPacked(q) ? kPackedLse[dim] : kPaddedLse[dim]);
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto finalize = cast<AttentionFinalizeOp>(op);
    std::optional<AttentionChain> chain = chainOf(finalize);
    if (!chain)
      return finalize.emitOpError()
             << "cannot emit its kernel: it must end one chain of "
                "attention_scores, attention_mask, attention_softmax and "
                "attention_accumulate";
    const AttentionKernel kernel = AttentionKernel::of(*chain, finalize);
    builder.setEntry(kernel.entry());
    std::ostringstream &preamble = builder.preamble();
    preamble << "// Tiled attention forward.\n"
             << "#include \"rudnn/attention.cuh\"\n\n"
             << "// The host sizes the shared memory from the same layout.\n";
    if (kernel.hopper)
      preamble << "using Tiles = rudnn::attention::HopperTiles<"
               << kernel.headDim << ", " << kernel.valueDim << ", "
               << kernel.blockQ << ">;\n"
               << "static_assert(sizeof(rudnn::attention::HopperShared<"
               << cudaType(kernel.input)
               << ", Tiles>) + 1024 == " << kernel.sharedBytes() << ");\n"
               << "static_assert(Tiles::kThreads == " << kernel.threads()
               << ");\n"
               << "static_assert(Tiles::kKeys == " << kernel.blockK << ");\n";
    else
      preamble << "static_assert(rudnn::attention::kForwardSharedBytes<"
               << kernel.layout() << "> == " << kernel.sharedBytes() << ");\n"
               << "static_assert(rudnn::attention::ForwardTiles<"
               << kernel.headDim << ", " << kernel.valueDim << ", "
               << kernel.blockQ << ">::kThreads == " << kernel.threads()
               << ");\n";
    bind(builder, *chain, finalize, kernel);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    writeBody(builder, kernel);
    setLaunch(builder.launch(), kernel);
    return success();
  }
};

/// The split's second kernel: a warp merges each query row's parts.
struct CombineModel
    : PrimitiveOpInterface::ExternalModel<CombineModel, AttentionCombineOp> {
  static constexpr int64_t kWarps = 4;

  StringRef getKernelGroup(Operation *) const { return kCombineGroup; }

  /// o [B, T, H, E] and lse [B, H, T].
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto combine = cast<AttentionCombineOp>(op);
    if (index == 0)
      return ResultStorage::own(
          {static_cast<int64_t>(::rudnn::dtypeSize(dtype(combine.getO()))) *
               lastDim(combine.getO()),
           {DimRef::of('B'), DimRef::of('T'), DimRef::of('H')}},
          "o");
    return ResultStorage::own(
               {4, {DimRef::of('B'), DimRef::of('H'), DimRef::of('T')}}, "lse")
        .orNull();
  }

  /// From the parts' [B, H, T, ...].
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    static constexpr unsigned kO[] = {0, 2, 1};
    Value parts = cast<AttentionCombineOp>(op).getLseParts();
    if (dim >= 3)
      return std::nullopt;
    return DimRef::of(parts, index == 0 ? kO[dim] : dim);
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto combine = cast<AttentionCombineOp>(op);
    const DType output = dtype(combine.getO());
    const int64_t valueDim = lastDim(combine.getO());
    const std::string out = cudaType(output);
    builder.setEntry(std::string("attention_combine_") +
                     ::rudnn::dtypeName(output) + "_e" +
                     std::to_string(valueDim));
    builder.preamble() << "// A split's parts merged by their log-sum-exp.\n"
                       << "#include \"rudnn/attention.cuh\"\n";
    builder.pointer(combine.getOParts(), "o_parts", "float", false);
    builder.pointer(combine.getLseParts(), "lse_parts", "float", false);
    builder.pointer(combine.getO(), "o", out, true);
    builder.pointer(combine.getLse(), "lse", "float", true);
    builder.strides(combine.getO(), {"o_b", "o_t", "o_h"});
    builder.dim(DimRef::of('B'), "batch");
    builder.dim(DimRef::of('T'), "queries");
    builder.dim(DimRef::of('H'), "heads");
    builder.dim(DimRef::of(combine.getLseParts(), 3), "parts");
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  rudnn::attention::combine_key_parts<" << out << ", "
                   << valueDim << ">({o_parts, lse_parts, o, lse, "
                   << "{o_b, o_t, o_h}, batch, queries, heads, parts});\n";
    KernelLaunch &launch = builder.launch();
    launch.threads = 32 * kWarps;
    launch.grid[0] = SizeRef{1, {DimRef::of('B'), DimRef::of('H')}};
    launch.grid[1] = SizeRef{1, {DimRef::ceilDiv('T', kWarps, "query_warps4")}};
    launch.grid[2] = SizeRef{1, {}};
    // The parts read (E + 1 floats each), o and lse written.
    launch.memoryBytes = {4 * (valueDim + 1),
                          {DimRef::of('B'), DimRef::of('H'), DimRef::of('T'),
                           DimRef::of(combine.getLseParts(), 3)}};
    return success();
  }
};

} // namespace

void ::rudnn::codegen::registerAttentionPrimitives(DialectRegistry &registry) {
  attachPrimitives<Primitive<AttentionScoresOp, ScoresModel>,
                   Primitive<AttentionMaskOp, MaskModel>,
                   Primitive<AttentionSoftmaxOp, SoftmaxModel>,
                   Primitive<AttentionAccumulateOp, AccumulateModel>,
                   Primitive<AttentionFinalizeOp, FinalizeModel>,
                   Primitive<AttentionCombineOp, CombineModel>>(registry);
  registerAttentionBackwardPrimitives(registry);
}
