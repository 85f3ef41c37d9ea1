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

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto finalize = cast<AttentionFinalizeOp>(op);
    if (index == 0)
      return ResultStorage::own(
          {static_cast<int64_t>(::rudnn::dtypeSize(dtype(finalize.getO()))) *
               lastDim(finalize.getO()),
           {DimRef::of('B'), DimRef::of('T'), DimRef::of('H')}},
          "o");
    return ResultStorage::own(
        {4, {DimRef::of('B'), DimRef::of('H'), DimRef::of('T')}}, "lse");
  }

  /// o [B, T, H, E] and lse [B, H, T] take B, T and H from q.
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    Value q = queriesOf(op);
    if (!q)
      return std::nullopt;
    static constexpr unsigned kLseDims[] = {0, 2, 1};
    if (index == 0)
      return dim < 3 ? std::optional<DimRef>(DimRef::of(q, dim)) : std::nullopt;
    return DimRef::of(q, kLseDims[dim]);
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

    std::string entry =
        std::string("attention_fwd_") + ::rudnn::dtypeName(input) + "_d" +
        std::to_string(headDim) + "_e" + std::to_string(valueDim) + "_bk" +
        std::to_string(blockK) + (causal ? "_causal" : "");
    auto bound = [](int64_t keys) {
      return keys < 0 ? std::string("inf") : std::to_string(keys);
    };
    if (left >= 0 || right >= 0)
      entry += "_window" + bound(left) + "_" + bound(right);
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
    builder.pointer(finalize.getO(), "o", in, true);
    builder.pointer(finalize.getLse(), "lse", "float", true);
    for (auto [value, name] :
         {std::pair{q, "q"}, std::pair{k, "k"}, std::pair{v, "v"},
          std::pair{Value(finalize.getO()), "o"}})
      builder.strides(value,
                      {std::string(name) + "_b", std::string(name) + "_t",
                       std::string(name) + "_h"});
    builder.strides(chain.mask.getKeyMask(), {"key_mask_b"});
    builder.dim(DimRef::of('B'), "batch");
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

    builder.body()
        << "  const rudnn::attention::ForwardParams<" << in << "> p = {\n"
        << "      q, k, v, key_lengths, key_mask, o, lse,\n"
        << "      {q_b, q_t, q_h}, {k_b, k_t, k_h}, {v_b, v_t, v_h},\n"
        << "      {o_b, o_t, o_h}, key_mask_b, batch, queries, keys, heads,\n"
        << "      kv_heads, scale, softcap, " << left << ", " << right << "};\n"
        << "  rudnn::attention::forward<" << shape << ", "
        << (causal ? "true" : "false") << ">(p);\n";

    KernelLaunch &launch = builder.launch();
    launch.threads = 32 * (kAttentionBlockQueries / 16);
    launch.sharedBytes = sharedBytes;
    launch.grid[0] = SizeRef{
        1, {DimRef::ceilDiv('T', kAttentionBlockQueries, "query_tiles")}};
    launch.grid[1] = SizeRef{1, {DimRef::of('B'), DimRef::of('H')}};
    launch.grid[2] = SizeRef{1, {}};
    // The model. Bytes: q read, o and lse written once (K and V, read once
    // per group of query heads at least, not counted: a lower bound; long
    // sequences are bound by the products anyway). FLOPs: 2·(D + E) per
    // query and key the bounds allow — every key, half of them when causal,
    // the window's width when both its sides are bounded (lengths and masks
    // not discounted).
    const int64_t elementBytes =
        static_cast<int64_t>(::rudnn::dtypeSize(input));
    const SizeRef rows{1, {DimRef::of('B'), DimRef::of('H'), DimRef::of('T')}};
    launch.memoryBytes = {(headDim + valueDim) * elementBytes + 4, rows.dims};
    const int64_t perPair = 2 * (headDim + valueDim);
    if (left >= 0 && right >= 0)
      launch.flops = {perPair * (left + right + 1), rows.dims};
    else
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
