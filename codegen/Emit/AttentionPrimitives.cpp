//===- AttentionPrimitives.cpp - The attention primitives as a kernel -----===//
//
// The primitive interface of the tiled-attention ops: the five form one
// kernel group, whose scores, probabilities and accumulators never leave
// the kernel (registers and shared memory); the finalize, last of the
// group, emits the kernel through the device library's
// rudnn::attention::forward, every specialization a constant.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/AttentionPrimitives.h"
#include "codegen/Emit/KernelBuilder.h"
#include "dialects/IR/ElementTypes.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/TargetPolicy.h"

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::DType;
using ::rudnn::codegen::cudaType;
using ::rudnn::codegen::KernelBuilder;
using ::rudnn::codegen::KernelLaunch;

namespace {

constexpr llvm::StringLiteral kGroup = "attention.forward";

/// The chain a finalize ends, from the scores on.
struct AttentionChain {
  AttentionScoresOp scores;
  AttentionMaskOp mask;
  AttentionSoftmaxOp softmax;
  AttentionAccumulateOp accumulate;
};

FailureOr<AttentionChain> chainOf(AttentionFinalizeOp finalize) {
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
    return finalize.emitOpError()
           << "cannot emit its kernel: it must end one chain of "
              "attention_scores, attention_mask, attention_softmax and "
              "attention_accumulate";
  return chain;
}

DType dtype(Value value) {
  return dtypeOf(cast<ShapedType>(value.getType()).getElementType())
      .value_or(DType::F32);
}

int64_t lastDim(Value value) {
  return cast<ShapedType>(value.getType()).getShape().back();
}

/// Whether `q` holds packed batches ([T, H, D], with offsets).
bool isPacked(Value q) { return cast<ShapedType>(q.getType()).getRank() == 3; }

/// The queries a result's dims come from, through the chain.
Value queriesOf(Operation *op) {
  auto finalize = dyn_cast<AttentionFinalizeOp>(op);
  FailureOr<AttentionChain> chain =
      finalize ? chainOf(finalize) : FailureOr<AttentionChain>(failure());
  return succeeded(chain) ? chain->scores.getQ() : Value();
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

  /// o [B, T, H, E] and lse [B, H, T]; packed, o [T, H, E] and lse [H, T].
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto finalize = cast<AttentionFinalizeOp>(op);
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
    return ResultStorage::own({4, rows}, "lse");
  }

  /// The dims of o and lse, from q's.
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    Value q = queriesOf(op);
    if (!q)
      return std::nullopt;
    const unsigned rows = isPacked(q) ? 2 : 3;
    static constexpr unsigned kPaddedLse[] = {0, 2, 1}, kPackedLse[] = {1, 0};
    if (index == 0)
      return dim < rows ? std::optional<DimRef>(DimRef::of(q, dim))
                        : std::nullopt;
    return DimRef::of(q, isPacked(q) ? kPackedLse[dim] : kPaddedLse[dim]);
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto finalize = cast<AttentionFinalizeOp>(op);
    FailureOr<AttentionChain> found = chainOf(finalize);
    if (failed(found))
      return failure();
    AttentionChain chain = *found;
    Value q = chain.scores.getQ(), k = chain.scores.getK(),
          v = chain.accumulate.getV();
    const DType input = dtype(q);
    const std::string in = cudaType(input);
    const int64_t headDim = lastDim(q), valueDim = lastDim(v),
                  blockK = static_cast<int64_t>(chain.scores.getBlockK());
    const bool causal = chain.mask.getCausal();
    const int64_t left = chain.mask.getWindowLeft()
                             ? static_cast<int64_t>(*chain.mask.getWindowLeft())
                             : -1,
                  right =
                      chain.mask.getWindowRight()
                          ? static_cast<int64_t>(*chain.mask.getWindowRight())
                          : -1;

    const bool packed = isPacked(q);
    std::string entry =
        std::string(packed ? "attention_varlen_fwd_" : "attention_fwd_") +
        ::rudnn::dtypeName(input) + "_d" + std::to_string(headDim) + "_e" +
        std::to_string(valueDim) + "_bk" + std::to_string(blockK) +
        (causal ? "_causal" : "");
    auto bound = [](int64_t keys) {
      return keys < 0 ? std::string("inf") : std::to_string(keys);
    };
    if (left >= 0 || right >= 0)
      entry += "_window" + bound(left) + "_" + bound(right);
    // Views promising 16-byte rows are copied without an element-wise path.
    const bool aligned = finalize->hasAttr(RudnnDialect::kAlignedViewsAttrName);
    if (aligned)
      entry += "_a16";
    builder.setEntry(entry);
    const std::string shape = in + ", " + std::to_string(headDim) + ", " +
                              std::to_string(valueDim) + ", " +
                              std::to_string(blockK);
    const int64_t sharedBytes =
        attentionSharedBytes(kAttentionBlockQueries, blockK, headDim, valueDim,
                             static_cast<int64_t>(::rudnn::dtypeSize(input)));
    builder.preamble() << "// Tiled attention forward.\n"
                       << "#include \"rudnn/device.cuh\"\n\n"
                       << "// The host sizes the shared memory from the same "
                          "layout.\n"
                       << "static_assert(sizeof(rudnn::attention::"
                          "ForwardShared<"
                       << shape << ">) == " << sharedBytes << ");\n"
                       << "static_assert(rudnn::attention::kBlockQueries == "
                       << kAttentionBlockQueries << ");\n";

    builder.pointer(q, "q", in, false);
    builder.pointer(k, "k", in, false);
    builder.pointer(v, "v", in, false);
    builder.pointer(chain.mask.getKeyLengths(), "key_lengths", "int", false);
    builder.pointer(chain.mask.getKeyMask(), "key_mask", "unsigned char",
                    false);
    builder.pointer(chain.mask.getCuSeqlensQ(), "cu_seqlens_q", "int", false);
    builder.pointer(chain.mask.getCuSeqlensK(), "cu_seqlens_k", "int", false);
    builder.pointer(finalize.getO(), "o", in, true);
    builder.pointer(finalize.getLse(), "lse", "float", true);
    // Packed rows have no batch dim: a batch stride of 0.
    for (auto [value, name] :
         {std::pair{q, "q"}, std::pair{k, "k"}, std::pair{v, "v"},
          std::pair{Value(finalize.getO()), "o"}}) {
      std::vector<std::string> strides = {std::string(name) + "_t",
                                          std::string(name) + "_h"};
      if (!packed)
        strides.insert(strides.begin(), std::string(name) + "_b");
      builder.strides(value, strides);
    }
    builder.strides(chain.mask.getKeyMask(), {"key_mask_b"});
    // Packed: the entries are the offsets' count less one.
    builder.dim(packed ? DimRef::of('C') : DimRef::of('B'),
                packed ? "offsets" : "batch");
    builder.dim(DimRef::of('T'), "queries");
    builder.dim(DimRef::of('S'), "keys");
    builder.dim(DimRef::of('H'), "heads");
    builder.dim(DimRef::of('G'), "kv_heads");
    builder.scalar("scale", chain.scores.getScaleAttr().getValueAsDouble());
    builder.scalar("softcap",
                   chain.scores.getSoftcapAttr()
                       ? chain.scores.getSoftcapAttr().getValueAsDouble()
                       : 0.0);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();

    // lse [B, H, T] or packed [H, T]: b·lse_batch + h·lse_head + row.
    builder.body()
        << "  const rudnn::attention::ForwardParams<" << in << "> p = {\n"
        << "      q, k, v, key_lengths, key_mask, cu_seqlens_q, cu_seqlens_k,\n"
        << "      o, lse,\n";
    for (std::string name : {"q", "k", "v", "o"})
      builder.body() << "      {" << (packed ? "0" : name + "_b") << ", "
                     << name << "_t, " << name << "_h},\n";
    builder.body() << "      key_mask_b, "
                   << (packed ? "0, queries"
                              : "(long long)heads * queries, queries")
                   << ",\n      " << (packed ? "offsets - 1" : "batch")
                   << ", queries, keys, heads, kv_heads, scale, softcap, "
                   << left << ", " << right << "};\n"
                   << "  rudnn::attention::forward<" << shape << ", "
                   << (causal ? "true" : "false") << ", "
                   << (packed ? "true" : "false")
                   << (aligned ? ", rudnn::tile::Alignment::Aligned" : "")
                   << ">(p);\n";

    KernelLaunch &launch = builder.launch();
    launch.threads = 32 * (kAttentionBlockQueries / 16);
    launch.sharedBytes = sharedBytes;
    launch.grid[0] = SizeRef{
        1, {DimRef::ceilDiv('T', kAttentionBlockQueries, "query_tiles")}};
    // Packed: every head's query tiles spread over ceil(T / 64) blocks.
    launch.grid[1] = packed ? SizeRef{1, {DimRef::of('H')}}
                            : SizeRef{1, {DimRef::of('B'), DimRef::of('H')}};
    launch.grid[2] = SizeRef{1, {}};
    // The model. Bytes: q read, o and lse written once (K and V, read once
    // per group of query heads at least, not counted: a lower bound; long
    // sequences are bound by the products anyway). FLOPs: 2·(D + E) per
    // query and key the bounds allow — every key, half of them when causal,
    // the window's width when both its sides are bounded (lengths and masks
    // not discounted).
    const int64_t elementBytes =
        static_cast<int64_t>(::rudnn::dtypeSize(input));
    SizeRef rows{1, {DimRef::of('H'), DimRef::of('T')}};
    if (!packed)
      rows.dims.insert(rows.dims.begin(), DimRef::of('B'));
    launch.memoryBytes = {(headDim + valueDim) * elementBytes + 4, rows.dims};
    const int64_t perPair = 2 * (headDim + valueDim);
    // Packed batches: no FLOP model (their work is in the offsets, on the
    // device).
    if (left >= 0 && right >= 0)
      launch.flops = {perPair * (left + right + 1), rows.dims};
    else if (!packed)
      launch.flops = {
          causal ? perPair / 2 : perPair,
          {DimRef::of('B'), DimRef::of('H'), DimRef::of('T'), DimRef::of('S')}};
    return success();
  }
};

} // namespace

void ::rudnn::codegen::registerAttentionPrimitives(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, RudnnDialect *) {
    AttentionScoresOp::attachInterface<ScoresModel>(*context);
    AttentionMaskOp::attachInterface<MaskModel>(*context);
    AttentionSoftmaxOp::attachInterface<SoftmaxModel>(*context);
    AttentionAccumulateOp::attachInterface<AccumulateModel>(*context);
    AttentionFinalizeOp::attachInterface<FinalizeModel>(*context);
  });
}
