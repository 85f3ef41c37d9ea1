//===- AttentionBackwardPrimitives.cpp - The backward's three kernels -----===//
//
// The primitive interface of the attention backward's ops: the row terms,
// the key gradients and the query gradients are a kernel each, emitted
// through the device library's rudnn::attention::row_terms,
// key_gradients and query_gradients with every specialization a constant.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/AttentionPrimitives.h"
#include "codegen/Emit/KernelBuilder.h"
#include "dialects/IR/ElementTypes.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/TargetPolicy.h"

#include <sstream>

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::DType;
using ::rudnn::codegen::cudaType;
using ::rudnn::codegen::dtype;
using ::rudnn::codegen::elementBytes;
using ::rudnn::codegen::KernelBuilder;
using ::rudnn::codegen::KernelLaunch;
using ::rudnn::codegen::lastDim;

namespace {

/// The tensors and attributes of one backward kernel (null where the
/// kernel reads none).
struct BackwardValues {
  Value q, k, v, lengths, mask, o, lse, dOutput, terms, dq, dk, dv;
  FloatAttr scale, softcap;
  bool causal = false, aligned = false;
  int64_t left = -1, right = -1;

  template <typename GradientOp> static BackwardValues of(GradientOp op) {
    auto bound = [](std::optional<uint64_t> keys) {
      return keys ? static_cast<int64_t>(*keys) : int64_t(-1);
    };
    BackwardValues values;
    values.q = op.getQ(), values.k = op.getK(), values.v = op.getV();
    values.lengths = op.getKeyLengths(), values.mask = op.getKeyMask();
    values.lse = op.getLse(), values.terms = op.getTerms();
    values.dOutput = op.getDOutput();
    values.scale = op.getScaleAttr(), values.softcap = op.getSoftcapAttr();
    values.causal = op.getCausal();
    values.left = bound(op.getWindowLeft());
    values.right = bound(op.getWindowRight());
    // Views promising 16-byte rows are copied without an element-wise path.
    values.aligned = op->hasAttr(RudnnDialect::kAlignedViewsAttrName);
    return values;
  }

  /// "f32_d64_e64_causal_window16_inf_a16".
  std::string specialization() const {
    auto bound = [](int64_t keys) {
      return keys < 0 ? std::string("inf") : std::to_string(keys);
    };
    std::string name = std::string(::rudnn::dtypeName(dtype(q))) + "_d" +
                       std::to_string(lastDim(q)) + "_e" +
                       std::to_string(lastDim(v)) + (causal ? "_causal" : "");
    if (left >= 0 || right >= 0)
      name += "_window" + bound(left) + "_" + bound(right);
    return aligned ? name + "_a16" : name;
  }
};

/// Every parameter the backward's kernels read, bound by name (null
/// pointers and zero strides for the tensors this kernel has not), then
/// the dims and scalars.
void bind(KernelBuilder &builder, const BackwardValues &values, bool keyDims) {
  const std::string in = cudaType(dtype(values.q ? values.q : values.o));
  builder.pointer(values.q, "q", in, false);
  builder.pointer(values.k, "k", in, false);
  builder.pointer(values.v, "v", in, false);
  builder.pointer(values.lengths, "key_lengths", "int", false);
  builder.pointer(values.mask, "key_mask", "unsigned char", false);
  builder.pointer(values.o, "o", in, false);
  builder.pointer(values.lse, "lse", "float", false);
  builder.pointer(values.dOutput, "d_output", in, false);
  builder.pointer(values.terms, "terms", "float", !values.q);
  builder.pointer(values.dq, "dq", in, true);
  builder.pointer(values.dk, "dk", in, true);
  builder.pointer(values.dv, "dv", in, true);
  for (auto [value, name] :
       {std::pair{values.q, "q"}, std::pair{values.k, "k"},
        std::pair{values.v, "v"}, std::pair{values.o, "o"},
        std::pair{values.dOutput, "d_o"}, std::pair{values.dq, "dq"},
        std::pair{values.dk, "dk"}, std::pair{values.dv, "dv"}})
    builder.strides(value, {std::string(name) + "_b", std::string(name) + "_t",
                            std::string(name) + "_h"});
  builder.strides(values.mask, {"key_mask_b"});
  builder.dim(DimRef::of('B'), "batch");
  builder.dim(DimRef::of('T'), "queries");
  builder.dim(DimRef::of('H'), "heads");
  if (keyDims) { // the row terms' kernel has no key dims
    builder.dim(DimRef::of('S'), "keys");
    builder.dim(DimRef::of('G'), "kv_heads");
  }
  builder.scalar("scale", values.scale ? values.scale.getValueAsDouble() : 1.0);
  builder.scalar("softcap",
                 values.softcap ? values.softcap.getValueAsDouble() : 0.0);
}

/// The parameter block, then `call` with it: rudnn::attention::<call>.
void writeBody(KernelBuilder &builder, const BackwardValues &values,
               bool keyDims, const std::string &call) {
  const std::string in = cudaType(dtype(values.q ? values.q : values.o));
  std::ostringstream &body = builder.body();
  body << "  const rudnn::attention::ForwardParams<" << in << "> f = {\n"
       << "      q, k, v, key_lengths, key_mask, nullptr, nullptr,\n"
       << "      const_cast<" << in << " *>(o), const_cast<float *>(lse),\n"
       << "      {q_b, q_t, q_h}, {k_b, k_t, k_h}, {v_b, v_t, v_h},\n"
       << "      {o_b, o_t, o_h}, key_mask_b, (long long)heads * queries,\n"
       << "      queries, batch, queries, " << (keyDims ? "keys" : "0")
       << ", heads, " << (keyDims ? "kv_heads" : "1") << ", scale, softcap, "
       << values.left << ", " << values.right << "};\n"
       << "  const rudnn::attention::BackwardParams<" << in << "> p = {\n"
       << "      f, d_output, {d_o_b, d_o_t, d_o_h}, const_cast<float "
          "*>(terms),\n"
       << "      dq, dk, dv,\n"
       << "      {dq_b, dq_t, dq_h}, {dk_b, dk_t, dk_h}, {dv_b, dv_t, dv_h}};\n"
       << "  rudnn::attention::" << call << "(p);\n";
}

/// "__nv_bfloat16, 128, 64, true, rudnn::tile::Alignment::Aligned".
std::string gradientTemplate(const BackwardValues &values) {
  return std::string(cudaType(dtype(values.q))) + ", " +
         std::to_string(lastDim(values.q)) + ", " +
         std::to_string(lastDim(values.v)) + ", " +
         (values.causal ? "true" : "false") +
         (values.aligned ? ", rudnn::tile::Alignment::Aligned" : "");
}

/// What distinguishes the two gradient kernels: 128 threads over (tiles of
/// 64 `rows`, B·`heads`), the device function `call`, its block's shared
/// memory (sizeof(`layout`), which the kernel checks).
struct GradientKernel {
  const char *stem, *results, *call;
  char rows, heads;
  const char *tiles, *layout;
  int64_t sharedBytes;
};

LogicalResult emitGradients(Operation *op, KernelBuilder &builder,
                            const BackwardValues &values,
                            const GradientKernel &kernel) {
  builder.setEntry(std::string("attention_bwd_") + kernel.stem + "_" +
                   values.specialization());
  const std::string in = cudaType(dtype(values.q));
  builder.preamble() << "// The attention backward's " << kernel.results
                     << ".\n#include \"rudnn/device.cuh\"\n\n"
                     << "// The host sizes the shared memory from the same "
                        "layout.\nstatic_assert(sizeof(rudnn::attention::"
                     << kernel.layout << "<" << in << ", " << lastDim(values.q)
                     << ", " << lastDim(values.v)
                     << ">) == " << kernel.sharedBytes << ");\n";
  bind(builder, values, /*keyDims=*/true);
  if (!builder.conflict().empty())
    return op->emitOpError()
           << "cannot emit its kernel: " << builder.conflict();
  writeBody(builder, values, true,
            std::string(kernel.call) + "<" + gradientTemplate(values) + ">");
  KernelLaunch &launch = builder.launch();
  launch.threads = 128;
  launch.sharedBytes = kernel.sharedBytes;
  launch.grid[0] = SizeRef{1, {DimRef::ceilDiv(kernel.rows, 64, kernel.tiles)}};
  launch.grid[1] = SizeRef{1, {DimRef::of('B'), DimRef::of(kernel.heads)}};
  launch.grid[2] = SizeRef{1, {}};
  return success();
}

/// A result with `value`'s [B, rows, heads, width] layout.
ResultStorage sequenceStorage(Value value, char rows, char heads,
                              std::string name) {
  return ResultStorage::own(
      {elementBytes(value) * lastDim(value),
       {DimRef::of('B'), DimRef::of(rows), DimRef::of(heads)}},
      std::move(name));
}

template <typename Op, typename Model>
struct BackwardPrimitive
    : public PrimitiveOpInterface::ExternalModel<Model, Op> {
  StringRef getKernelGroup(Operation *) const { return Model::kGroup; }
};

struct RowTermsModel : BackwardPrimitive<AttentionRowTermsOp, RowTermsModel> {
  static constexpr llvm::StringLiteral kGroup = "attention.row_terms";

  /// [B, H, T] f32 in the plan's workspace.
  ResultStorage getResultStorage(Operation *, unsigned) const {
    return ResultStorage::own(
        {4, {DimRef::of('B'), DimRef::of('H'), DimRef::of('T')}}, "terms");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    static constexpr unsigned kFromOutput[] = {0, 2, 1};
    return DimRef::of(cast<AttentionRowTermsOp>(op).getO(), kFromOutput[dim]);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto rows = cast<AttentionRowTermsOp>(op);
    BackwardValues values;
    values.o = rows.getO();
    values.dOutput = rows.getDOutput();
    values.terms = rows.getTerms();
    builder.setEntry("attention_bwd_terms_" +
                     std::string(::rudnn::dtypeName(dtype(values.o))) + "_e" +
                     std::to_string(lastDim(values.o)));
    builder.preamble() << "// The attention backward's row terms.\n"
                       << "#include \"rudnn/device.cuh\"\n";
    bind(builder, values, /*keyDims=*/false);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    writeBody(builder, values, false,
              "row_terms<" + std::string(cudaType(dtype(values.o))) + ", " +
                  std::to_string(lastDim(values.o)) + ">");
    KernelLaunch &launch = builder.launch();
    launch.threads = 128; // a warp a row
    launch.grid[0] = SizeRef{1, {DimRef::ceilDiv('T', 4, "query_quads")}};
    launch.grid[1] = SizeRef{1, {DimRef::of('B'), DimRef::of('H')}};
    launch.grid[2] = SizeRef{1, {}};
    return success();
  }
};

struct KeyGradientsModel
    : BackwardPrimitive<AttentionKeyGradientsOp, KeyGradientsModel> {
  static constexpr llvm::StringLiteral kGroup = "attention.key_gradients";

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto keys = cast<AttentionKeyGradientsOp>(op);
    return index == 0 ? sequenceStorage(keys.getDk(), 'S', 'G', "dk")
                      : sequenceStorage(keys.getDv(), 'S', 'G', "dv");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    auto keys = cast<AttentionKeyGradientsOp>(op);
    return DimRef::of(index == 0 ? keys.getK() : keys.getV(), dim);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto keys = cast<AttentionKeyGradientsOp>(op);
    BackwardValues values = BackwardValues::of(keys);
    values.dk = keys.getDk();
    values.dv = keys.getDv();
    return emitGradients(
        op, builder, values,
        {"keys", "dk and dv", "key_gradients", 'S', 'G', "key_tiles",
         "KeyGradientShared",
         attentionKeyGradientSharedBytes(lastDim(values.q), lastDim(values.v),
                                         elementBytes(values.q))});
  }
};

struct QueryGradientsModel
    : BackwardPrimitive<AttentionQueryGradientsOp, QueryGradientsModel> {
  static constexpr llvm::StringLiteral kGroup = "attention.query_gradients";

  ResultStorage getResultStorage(Operation *op, unsigned) const {
    return sequenceStorage(cast<AttentionQueryGradientsOp>(op).getDq(), 'T',
                           'H', "dq");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    return DimRef::of(cast<AttentionQueryGradientsOp>(op).getQ(), dim);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto queries = cast<AttentionQueryGradientsOp>(op);
    BackwardValues values = BackwardValues::of(queries);
    values.dq = queries.getDq();
    return emitGradients(
        op, builder, values,
        {"queries", "dq", "query_gradients", 'T', 'H', "query_tiles",
         "QueryGradientShared",
         attentionQueryGradientSharedBytes(lastDim(values.q), lastDim(values.v),
                                           elementBytes(values.q))});
  }
};

} // namespace

void ::rudnn::codegen::registerAttentionBackwardPrimitives(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, RudnnDialect *) {
    AttentionRowTermsOp::attachInterface<RowTermsModel>(*context);
    AttentionKeyGradientsOp::attachInterface<KeyGradientsModel>(*context);
    AttentionQueryGradientsOp::attachInterface<QueryGradientsModel>(*context);
  });
}
