//===- KdaInputPrimitives.cpp - KDA's input transforms as kernels ---------===//
//
// The primitive interface of the ops a KDA operator applies to its inputs
// (rudnn/kda/inputs.cuh): each a kernel of its own over one (b, t) token a
// block, its result dense in the workspace unless a caller's tensor holds
// it.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KernelBuilder.h"
#include "codegen/Emit/KernelEmitInterface.h"
#include "codegen/Emit/kda/KdaPrimitives.h"
#include "dialects/IR/ElementTypes.h"
#include "dialects/IR/RudnnOps.h"

#include <sstream>

using namespace mlir;
using namespace mlir::rudnn;
using namespace ::rudnn::codegen;

namespace {

/// A [B, T, H, width] (or [B, T, H]) tensor of `result`'s type, dense, its
/// dims those of `like`.
ResultStorage rowsLike(Value result, Value like, std::string name) {
  auto type = cast<ShapedType>(result.getType());
  const int64_t width = type.getRank() == 4 ? type.getShape().back() : 1;
  return ResultStorage::own(
      {elementBytes(result) * width,
       {DimRef::of(like, 0), DimRef::of(like, 1), DimRef::of(like, 2)}},
      std::move(name));
}

/// "bf16" for `value`'s element type.
std::string typeName(Value value) { return ::rudnn::dtypeName(dtype(value)); }

/// Binds a [B, T, H, *] view: its pointer and outer strides as `name`,
/// `name`_b, `name`_t, `name`_h; returns "name, {name_b, name_t, name_h}".
std::string view(KernelBuilder &builder, Value value, const std::string &name,
                 const std::string &element, bool written) {
  builder.pointer(value, name, element, written);
  builder.strides(value, {name + "_b", name + "_t", name + "_h"});
  return name + ", {" + name + "_b, " + name + "_t, " + name + "_h}";
}

/// A grid of one block a (b, t) token of `rows` [B, T, H, *].
void tokenGrid(KernelBuilder &builder, Value rows, int64_t bytesPerRow,
               int64_t flopsPerRow) {
  ::rudnn::codegen::KernelLaunch &launch = builder.launch();
  launch.threads = 128;
  launch.grid[0] = SizeRef{1, {DimRef::of(rows, 1)}};
  launch.grid[1] = SizeRef{1, {DimRef::of(rows, 0)}};
  const SizeRef all{
      1, {DimRef::of(rows, 0), DimRef::of(rows, 1), DimRef::of(rows, 2)}};
  launch.memoryBytes = {bytesPerRow, all.dims};
  launch.flops = {flopsPerRow, all.dims};
}

LogicalResult finish(Operation *op, KernelBuilder &builder) {
  if (!builder.conflict().empty())
    return op->emitOpError()
           << "cannot emit its kernel: " << builder.conflict();
  return success();
}

/// Opens a kernel `entry` of the input transforms.
void open(KernelBuilder &builder, const std::string &entry,
          const std::string &what) {
  builder.setEntry(entry);
  builder.preamble() << "// KDA input transform: " << what
                     << ".\n#include \"rudnn/kda.cuh\"\n";
}

template <typename Op, typename Model>
struct InputPrimitive : public PrimitiveOpInterface::ExternalModel<Model, Op> {
  StringRef getKernelGroup(Operation *op) const {
    return op->getName().stripDialect();
  }
};

/// A primitive whose one result is rows shaped as its token operand's: the
/// model names the operand (`tokens`), the result and its workspace.
template <typename Op, typename Model>
struct TokenRowsPrimitive : InputPrimitive<Op, Model> {
  ResultStorage getResultStorage(Operation *op, unsigned) const {
    auto typed = cast<Op>(op);
    return rowsLike(Model::result(typed), Model::tokens(typed),
                    Model::kResultName);
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    return dim < 3 ? std::optional(DimRef::of(Model::tokens(cast<Op>(op)), dim))
                   : std::nullopt;
  }
};

struct L2NormalizeModel : TokenRowsPrimitive<L2NormalizeOp, L2NormalizeModel> {
  static Value tokens(L2NormalizeOp op) { return op.getX(); }
  static Value result(L2NormalizeOp op) { return op.getY(); }
  static constexpr const char *kResultName = "normalized";
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto norm = cast<L2NormalizeOp>(op);
    const int64_t D = lastDim(norm.getX());
    const std::string t = cudaType(dtype(norm.getX()));
    open(builder,
         "kda_l2_normalize_" + typeName(norm.getX()) + "_d" + std::to_string(D),
         "rows L2-normalised");
    const std::string x = view(builder, norm.getX(), "x", t, false);
    const std::string y = view(builder, norm.getY(), "y", t, true);
    builder.dim(DimRef::of(norm.getX(), 2), "heads");
    builder.scalar("eps", norm.getEps().convertToDouble());
    builder.body() << "  rudnn::kda::l2_normalize<" << D << ">(" << x << ", "
                   << y << ", heads, eps);\n";
    tokenGrid(builder, norm.getX(), 2 * elementBytes(norm.getX()) * D, 3 * D);
    return finish(op, builder);
  }
};

struct L2NormalizeBackwardModel
    : TokenRowsPrimitive<L2NormalizeBackwardOp, L2NormalizeBackwardModel> {
  static Value tokens(L2NormalizeBackwardOp op) { return op.getX(); }
  static Value result(L2NormalizeBackwardOp op) { return op.getDx(); }
  static constexpr const char *kResultName = "normalized_gradient";
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto norm = cast<L2NormalizeBackwardOp>(op);
    const int64_t D = lastDim(norm.getX());
    const std::string t = cudaType(dtype(norm.getX()));
    open(builder,
         "kda_l2_normalize_backward_" + typeName(norm.getX()) + "_" +
             typeName(norm.getDy()) + "_d" + std::to_string(D),
         "gradient of the L2 normalisation");
    const std::string x = view(builder, norm.getX(), "x", t, false);
    const std::string dy =
        view(builder, norm.getDy(), "dy", cudaType(dtype(norm.getDy())), false);
    const std::string dx = view(builder, norm.getDx(), "dx", t, true);
    builder.dim(DimRef::of(norm.getX(), 2), "heads");
    builder.scalar("eps", norm.getEps().convertToDouble());
    builder.body() << "  rudnn::kda::l2_normalize_backward<" << D << ">(" << x
                   << ", " << dy << ", " << dx << ", heads, eps);\n";
    tokenGrid(builder, norm.getX(),
              (2 * elementBytes(norm.getX()) + elementBytes(norm.getDy())) * D,
              6 * D);
    return finish(op, builder);
  }
};

/// The gate's parameters bound, as "{a_log, dt_bias, lower_bound}".
std::string gateParams(KernelBuilder &builder, Value aLog, Value dtBias,
                       std::optional<APFloat> lowerBound) {
  builder.pointer(aLog, "a_log", "float", false);
  builder.pointer(dtBias, "dt_bias", "float", false);
  builder.scalar("lower_bound", lowerBound ? lowerBound->convertToDouble() : 0);
  return "{a_log, dt_bias, lower_bound}";
}

std::string gateName(const std::string &stage, Value gRaw, Value dtBias,
                     bool bounded) {
  return "kda_" + stage + "_" + typeName(gRaw) + "_k" +
         std::to_string(lastDim(gRaw)) + (dtBias ? "_bias" : "") +
         (bounded ? "_bounded" : "");
}

struct GateModel : TokenRowsPrimitive<KdaGateOp, GateModel> {
  static Value tokens(KdaGateOp op) { return op.getGRaw(); }
  static Value result(KdaGateOp op) { return op.getG(); }
  static constexpr const char *kResultName = "gate";
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto gate = cast<KdaGateOp>(op);
    const int64_t K = lastDim(gate.getGRaw());
    open(builder,
         gateName("gate", gate.getGRaw(), gate.getDtBias(),
                  gate.getLowerBound().has_value()),
         "the gate from raw projections");
    const std::string raw = view(builder, gate.getGRaw(), "g_raw",
                                 cudaType(dtype(gate.getGRaw())), false);
    const std::string g = view(builder, gate.getG(), "g", "float", true);
    const std::string params = gateParams(
        builder, gate.getALog(), gate.getDtBias(), gate.getLowerBound());
    builder.dim(DimRef::of(gate.getGRaw(), 2), "heads");
    builder.body() << "  rudnn::kda::kda_gate<" << K << ">(" << raw << ", "
                   << params << ", " << g << ", heads);\n";
    tokenGrid(builder, gate.getGRaw(), (elementBytes(gate.getGRaw()) + 4) * K,
              8 * K);
    return finish(op, builder);
  }
};

/// The gate's partial sums, one per block of kdaGatePartialTokens tokens:
/// ceil(T / 64) of raw gate projections `raw`.
DimRef gateBlocks(Value raw) {
  DimRef blocks = DimRef::of(raw, 1);
  blocks.divisor = kdaGatePartialTokens();
  blocks.name = "gate_blocks";
  return blocks;
}

struct GateBackwardModel
    : InputPrimitive<KdaGateBackwardOp, GateBackwardModel> {
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto gate = cast<KdaGateBackwardOp>(op);
    if (index == 0)
      return rowsLike(gate.getDgRaw(), gate.getGRaw(), "gate_gradient");
    return ResultStorage::own(
        {4 * 2 * lastDim(gate.getGRaw()),
         {gateBlocks(gate.getGRaw()), DimRef::of(gate.getGRaw(), 0),
          DimRef::of(gate.getGRaw(), 2)}},
        "gate_partials");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    Value raw = cast<KdaGateBackwardOp>(op).getGRaw();
    if (index == 0)
      return dim < 3 ? std::optional(DimRef::of(raw, dim)) : std::nullopt;
    if (dim == 0)
      return gateBlocks(raw);
    // [blocks, B, H, 2, K]: B and H are g_raw's dims 0 and 2.
    return dim == 1   ? std::optional(DimRef::of(raw, 0))
           : dim == 2 ? std::optional(DimRef::of(raw, 2))
                      : std::nullopt;
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto gate = cast<KdaGateBackwardOp>(op);
    const int64_t K = lastDim(gate.getGRaw());
    open(builder,
         gateName("gate_backward", gate.getGRaw(), gate.getDtBias(),
                  gate.getLowerBound().has_value()),
         "gradient of the gate, and its parameters' partial sums");
    // The host sizes the partial sums by the device's block of tokens.
    builder.preamble() << "static_assert(rudnn::kda::kGatePartialTokens == "
                       << kdaGatePartialTokens() << ");\n";
    const std::string raw = view(builder, gate.getGRaw(), "g_raw",
                                 cudaType(dtype(gate.getGRaw())), false);
    const std::string params = gateParams(
        builder, gate.getALog(), gate.getDtBias(), gate.getLowerBound());
    const std::string dg = view(builder, gate.getDg(), "dg", "float", false);
    const std::string dgRaw =
        view(builder, gate.getDgRaw(), "dg_raw", "float", true);
    builder.pointer(gate.getPartials(), "partials", "float", true);
    builder.dim(DimRef::of(gate.getGRaw(), 0), "batch");
    builder.dim(DimRef::of(gate.getGRaw(), 1), "length");
    builder.dim(DimRef::of(gate.getGRaw(), 2), "heads");
    builder.body() << "  rudnn::kda::kda_gate_backward<" << K << ">(" << raw
                   << ", " << params << ", " << dg << ", " << dgRaw
                   << ", partials, batch, heads, length);\n";
    ::rudnn::codegen::KernelLaunch &launch = builder.launch();
    launch.threads = 128;
    launch.grid[0] = SizeRef{1, {gateBlocks(gate.getGRaw())}};
    launch.grid[1] = SizeRef{
        1, {DimRef::of(gate.getGRaw(), 0), DimRef::of(gate.getGRaw(), 2)}};
    const SizeRef rows{1,
                       {DimRef::of(gate.getGRaw(), 0),
                        DimRef::of(gate.getGRaw(), 1),
                        DimRef::of(gate.getGRaw(), 2)}};
    launch.memoryBytes = {(elementBytes(gate.getGRaw()) + 8) * K, rows.dims};
    launch.flops = {12 * K, rows.dims};
    return finish(op, builder);
  }
};

struct GateSumsModel : InputPrimitive<KdaGateSumsOp, GateSumsModel> {
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto sums = cast<KdaGateSumsOp>(op);
    const int64_t K = lastDim(sums.getPartials());
    return ResultStorage::own(
        {index == 0 ? 4 : 4 * K, {DimRef::of(sums.getPartials(), 2)}},
        index == 0 ? "d_a_log" : "d_dt_bias");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    return dim == 0 ? std::optional(
                          DimRef::of(cast<KdaGateSumsOp>(op).getPartials(), 2))
                    : std::nullopt;
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto sums = cast<KdaGateSumsOp>(op);
    const int64_t K = lastDim(sums.getPartials());
    open(builder, "kda_gate_sums_k" + std::to_string(K),
         "the gate parameters' gradients, summed in order");
    builder.pointer(sums.getPartials(), "partials", "float", false);
    builder.pointer(sums.getDALog(), "d_a_log", "float", true);
    builder.pointer(sums.getDDtBias(), "d_dt_bias", "float", true);
    builder.dim(DimRef::of(sums.getPartials(), 0), "blocks");
    builder.dim(DimRef::of(sums.getPartials(), 1), "batch");
    builder.dim(DimRef::of(sums.getPartials(), 2), "heads");
    builder.body() << "  rudnn::kda::kda_gate_sums<" << K
                   << ">(partials, blocks, batch, heads, d_a_log, "
                      "d_dt_bias);\n";
    ::rudnn::codegen::KernelLaunch &launch = builder.launch();
    launch.threads = 128;
    launch.grid[0] = SizeRef{1, {DimRef::of(sums.getPartials(), 2)}};
    const SizeRef all{1,
                      {DimRef::of(sums.getPartials(), 0),
                       DimRef::of(sums.getPartials(), 1),
                       DimRef::of(sums.getPartials(), 2)}};
    launch.memoryBytes = {8 * K, all.dims};
    launch.flops = {2 * K, all.dims};
    return finish(op, builder);
  }
};

struct SigmoidModel : TokenRowsPrimitive<SigmoidOp, SigmoidModel> {
  static Value tokens(SigmoidOp op) { return op.getX(); }
  static Value result(SigmoidOp op) { return op.getY(); }
  static constexpr const char *kResultName = "sigmoid";
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto sigmoid = cast<SigmoidOp>(op);
    open(builder, "kda_sigmoid_" + typeName(sigmoid.getX()),
         "beta from its logits");
    const std::string x = view(builder, sigmoid.getX(), "x",
                               cudaType(dtype(sigmoid.getX())), false);
    const std::string y = view(builder, sigmoid.getY(), "y", "float", true);
    builder.dim(DimRef::of(sigmoid.getX(), 2), "heads");
    builder.body() << "  rudnn::kda::sigmoid(" << x << ", " << y
                   << ", heads);\n";
    tokenGrid(builder, sigmoid.getX(), elementBytes(sigmoid.getX()) + 4, 4);
    return finish(op, builder);
  }
};

struct SigmoidBackwardModel
    : TokenRowsPrimitive<SigmoidBackwardOp, SigmoidBackwardModel> {
  static Value tokens(SigmoidBackwardOp op) { return op.getX(); }
  static Value result(SigmoidBackwardOp op) { return op.getDx(); }
  static constexpr const char *kResultName = "sigmoid_gradient";
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto sigmoid = cast<SigmoidBackwardOp>(op);
    const std::string t = cudaType(dtype(sigmoid.getX()));
    open(builder,
         "kda_sigmoid_backward_" + typeName(sigmoid.getX()) + "_" +
             typeName(sigmoid.getDy()),
         "gradient of beta's logits");
    const std::string x = view(builder, sigmoid.getX(), "x", t, false);
    const std::string dy = view(builder, sigmoid.getDy(), "dy",
                                cudaType(dtype(sigmoid.getDy())), false);
    const std::string dx = view(builder, sigmoid.getDx(), "dx", t, true);
    builder.dim(DimRef::of(sigmoid.getX(), 2), "heads");
    builder.body() << "  rudnn::kda::sigmoid_backward(" << x << ", " << dy
                   << ", " << dx << ", heads);\n";
    tokenGrid(builder, sigmoid.getX(),
              2 * elementBytes(sigmoid.getX()) + elementBytes(sigmoid.getDy()),
              6);
    return finish(op, builder);
  }
};

} // namespace

void ::rudnn::codegen::registerKdaInputPrimitives(DialectRegistry &registry) {
  attachPrimitives<Primitive<L2NormalizeOp, L2NormalizeModel>,
                   Primitive<L2NormalizeBackwardOp, L2NormalizeBackwardModel>,
                   Primitive<KdaGateOp, GateModel>,
                   Primitive<KdaGateBackwardOp, GateBackwardModel>,
                   Primitive<KdaGateSumsOp, GateSumsModel>,
                   Primitive<SigmoidOp, SigmoidModel>,
                   Primitive<SigmoidBackwardOp, SigmoidBackwardModel>>(
      registry);
}
