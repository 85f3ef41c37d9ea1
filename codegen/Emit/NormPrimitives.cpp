//===- NormPrimitives.cpp - The normalisations' primitives as kernels -----===//
//
// The primitive interface of rudnn.norm_rows and rudnn.norm_partials: one
// kernel normalising rows (a warp or a block a row), or for split rows the
// chunks' moments, then their merge and the normalisation. Rows are read
// through the views' strides; 16-byte accesses where C allows and, checked
// on the device, the rows start on 16 bytes.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KernelBuilder.h"
#include "codegen/Emit/Primitives.h"
#include "dialects/IR/NormContracts.h"
#include "dialects/IR/RudnnOps.h"

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::codegen::cudaType;
using ::rudnn::codegen::dtype;
using ::rudnn::codegen::elementBytes;
using ::rudnn::codegen::KernelBuilder;
using ::rudnn::codegen::lastDim;

namespace {

constexpr llvm::StringLiteral kRowsGroup = "norm.rows";
constexpr llvm::StringLiteral kPartialsGroup = "norm.partials";

int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

/// x's rows: [N] or [M, N] as plan dims.
SmallVector<DimRef, 4> rowDims(Value x) {
  SmallVector<DimRef, 4> dims;
  for (int64_t i = 0; i + 1 < rankOf(x); ++i)
    dims.push_back(DimRef::of(x, static_cast<unsigned>(i)));
  return dims;
}

/// Binds an [N, C] or [M, N, C] view's outer strides; returns its
/// "{outer, inner}" (outer 0 for [N, C]).
std::string bindRows(KernelBuilder &builder, Value value, Value x,
                     const std::string &name) {
  if (rankOf(x) == 3) {
    builder.strides(value, {name + "_m", name + "_n"});
    return "{" + name + "_m, " + name + "_n}";
  }
  builder.strides(value, {name + "_n"});
  return "{0, " + name + "_n}";
}

/// What the kernels of a row form share: the element type, C, the kind
/// and the vector width.
struct RowKernel {
  std::string in, kind;
  int64_t features, vector, kindIndex;

  static RowKernel of(Value x, StringRef kind) {
    RowKernel k;
    k.in = cudaType(dtype(x));
    k.kind = kind.str();
    k.features = lastDim(x);
    const int64_t perVector = 16 / elementBytes(x);
    k.vector = k.features % perVector == 0 ? perVector : 1;
    k.kindIndex = static_cast<int64_t>(*::rudnn::normKindNamed(kind.str()));
    return k;
  }

  std::string entry(const char *stage, Value x, int64_t threads,
                    int64_t rowsPerBlock, int64_t chunk) const {
    std::string name =
        std::string(stage) + "_" + kind + "_" + ::rudnn::dtypeName(dtype(x)) +
        "_c" + std::to_string(features) + "_t" + std::to_string(threads);
    if (rowsPerBlock)
      name += "_r" + std::to_string(rowsPerBlock);
    if (chunk)
      name += "_chunk" + std::to_string(chunk);
    return name + (rankOf(x) == 3 ? "_mnc" : "_nc");
  }
};

/// Binds every NormParams field; the unused ones null or zero.
void bindParams(KernelBuilder &builder, const RowKernel &k, Value x,
                Value residual, Value gamma, Value beta, Value y, Value h,
                Value mean, Value second, Value partials, float eps,
                bool writesPartials) {
  builder.pointer(x, "x", k.in, false);
  builder.pointer(residual, "residual", k.in, false);
  builder.pointer(gamma, "gamma", k.in, false);
  builder.pointer(beta, "beta", k.in, false);
  builder.pointer(y, "y", k.in, true);
  builder.pointer(h, "h", k.in, true);
  builder.pointer(mean, "mean", "float", true);
  builder.pointer(second, "second", "float", true);
  builder.pointer(partials, "partials", "float", writesPartials);
  const std::string xAt = bindRows(builder, x, x, "x"),
                    residualAt = bindRows(builder, residual, x, "residual"),
                    yAt = bindRows(builder, y, x, "y"),
                    hAt = bindRows(builder, h, x, "h");
  const std::string rows =
      builder.dim(DimRef::of(x, static_cast<unsigned>(rankOf(x) - 2)), "rows");
  const std::string outer =
      rankOf(x) == 3 ? builder.dim(DimRef::of(x, 0), "outer") : "1";
  const std::string epsilon = builder.scalar("eps", eps);
  builder.body() << "  const rudnn::norm::NormParams<" << k.in
                 << "> p = {x, residual, gamma, beta, y, h, mean, second,\n"
                 << "      "
                 << (writesPartials ? "partials"
                                    : "const_cast<float *>(partials)")
                 << ", " << xAt << ", " << residualAt << ", " << yAt << ", "
                 << hAt << ",\n      " << rows << ", " << outer << ", "
                 << epsilon << "};\n";
}

/// The grid's second dim: M, or 1.
SizeRef outerGrid(Value x) {
  return rankOf(x) == 3 ? SizeRef{1, {DimRef::of(x, 0)}} : SizeRef{1, {}};
}

/// Bytes a pass reads and writes per row element, and its flops.
void model(KernelBuilder &builder, Value x, int64_t accesses, int64_t flops) {
  SmallVector<DimRef, 4> rows = rowDims(x);
  builder.launch().memoryBytes =
      SizeRef{accesses * elementBytes(x) * lastDim(x), rows};
  builder.launch().flops = SizeRef{flops * lastDim(x), rows};
}

void preamble(KernelBuilder &builder, Operation *op, const char *what) {
  builder.preamble() << "// " << what << "\n";
  if (auto policy = op->getAttrOfType<StringAttr>("policy"))
    builder.preamble() << "// " << policy.getValue().str() << ".\n";
  builder.preamble() << "#include \"rudnn/device.cuh\"\n\n";
}

struct RowsModel : PrimitiveOpInterface::ExternalModel<RowsModel, NormRowsOp> {
  StringRef getKernelGroup(Operation *) const { return kRowsGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    Value x = cast<NormRowsOp>(op).getX();
    SmallVector<DimRef, 4> rows = rowDims(x);
    static const char *const kNames[] = {"y", "mean", "second", "h"};
    const int64_t bytes =
        index == 0 || index == 3 ? elementBytes(x) * lastDim(x) : 4;
    return ResultStorage::own({bytes, rows}, kNames[index]);
  }

  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    Value x = cast<NormRowsOp>(op).getX();
    const bool rowsResult = index == 0 || index == 3;
    if (dim + (rowsResult ? 0 : 1) < rankOf(x))
      return DimRef::of(x, dim);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto rows = cast<NormRowsOp>(op);
    Value x = rows.getX();
    const RowKernel k = RowKernel::of(x, rows.getKind());
    const int64_t threads = rows.getThreads(),
                  rowsPerBlock =
                      threads == 32 && !rows.getChunk()
                          ? int64_t(rows.getRowsPerBlock().value_or(4))
                          : 0,
                  chunk = rows.getChunk() ? int64_t(*rows.getChunk()) : 0;
    builder.setEntry(k.entry("norm_rows", x, threads, rowsPerBlock, chunk));
    preamble(builder, op,
             chunk ? "Split rows: merge the chunks' moments, normalise."
                   : "Rows normalised, each held in registers.");
    const bool moments = k.kindIndex == 0;
    bindParams(builder, k, x, rows.getResidual(), rows.getGamma(),
               rows.getBeta(), moments ? Value() : rows.getY(), rows.getH(),
               rows.getMean(), rows.getSecond(), rows.getPartials(),
               rows.getEps().convertToFloat(), false);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    const std::string common = k.in + ", " + std::to_string(k.features) + ", ";
    const std::string tail = std::to_string(k.vector) + ", " +
                             std::to_string(k.kindIndex) + ">(p);\n";
    SmallVector<DimRef, 4> dims = rowDims(x);
    DimRef inner = dims.back();
    if (chunk) {
      builder.body() << "  rudnn::norm::normalize_split<" << common << chunk
                     << ", " << threads << ", " << tail;
      builder.launch().threads = threads;
      builder.launch().grid[0] =
          SizeRef{(k.features + chunk - 1) / chunk, {inner}};
    } else if (rowsPerBlock) {
      builder.body() << "  rudnn::norm::norm_rows_by_warps<" << common
                     << rowsPerBlock << ", " << tail;
      builder.launch().threads = 32 * rowsPerBlock;
      inner.divisor = rowsPerBlock;
      inner.name = "row_groups";
      builder.launch().grid[0] = SizeRef{1, {inner}};
    } else {
      builder.body() << "  rudnn::norm::norm_rows_by_blocks<" << common
                     << threads << ", " << tail;
      builder.launch().threads = threads;
      builder.launch().grid[0] = SizeRef{1, {inner}};
    }
    builder.launch().grid[1] = outerGrid(x);
    builder.launch().grid[2] = SizeRef{1, {}};
    // Reads x (and a residual), writes y: h, when asked, adds a pass; split
    // moments read their partials alone.
    const int64_t reads = 1 + (rows.getResidual() ? 1 : 0);
    model(builder, x, moments ? (chunk ? 0 : reads) : reads + 1, 8);
    return success();
  }
};

struct PartialsModel
    : PrimitiveOpInterface::ExternalModel<PartialsModel, NormPartialsOp> {
  StringRef getKernelGroup(Operation *) const { return kPartialsGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned) const {
    auto partials = cast<NormPartialsOp>(op);
    const int64_t splits =
        (lastDim(partials.getX()) + int64_t(partials.getChunk()) - 1) /
        int64_t(partials.getChunk());
    return ResultStorage::own({12 * splits, rowDims(partials.getX())},
                              "norm_partials");
  }

  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    Value x = cast<NormPartialsOp>(op).getX();
    if (dim + 1 < rankOf(x))
      return DimRef::of(x, dim);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto partials = cast<NormPartialsOp>(op);
    Value x = partials.getX();
    const RowKernel k = RowKernel::of(x, partials.getKind());
    const int64_t threads = partials.getThreads(), chunk = partials.getChunk();
    builder.setEntry(k.entry("norm_partials", x, threads, 0, chunk));
    preamble(builder, op, "Split rows: each chunk's moments.");
    bindParams(builder, k, x, partials.getResidual(), Value(), Value(), Value(),
               Value(), Value(), Value(), partials.getPartials(), 0.0f, true);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  rudnn::norm::row_partials<" << k.in << ", "
                   << k.features << ", " << chunk << ", " << threads << ", "
                   << k.vector << ", " << k.kindIndex << ">(p);\n";
    builder.launch().threads = threads;
    builder.launch().grid[0] =
        SizeRef{(k.features + chunk - 1) / chunk, {rowDims(x).back()}};
    builder.launch().grid[1] = outerGrid(x);
    builder.launch().grid[2] = SizeRef{1, {}};
    model(builder, x, partials.getResidual() ? 2 : 1, 4);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The gradients
//===----------------------------------------------------------------------===//

constexpr llvm::StringLiteral kGradientSumsGroup = "norm.gradient_sums";
constexpr llvm::StringLiteral kGradientRowsGroup = "norm.gradient_rows";
constexpr llvm::StringLiteral kGradientColumnsGroup = "norm.gradient_columns";

/// Binds every NormBackwardParams field; the unused ones null or zero.
void bindGradientParams(KernelBuilder &builder, const std::string &in, Value dy,
                        Value x, Value gamma, Value mean, Value rstd, Value dx,
                        Value rowSums, bool writesSums, Value partials,
                        bool writesPartials, Value dgamma, Value dbeta) {
  builder.pointer(dy, "dy", in, false);
  builder.pointer(x, "x", in, false);
  builder.pointer(gamma, "gamma", in, false);
  builder.pointer(mean, "mean", "float", false);
  builder.pointer(rstd, "rstd", "float", false);
  builder.pointer(dx, "dx", in, true);
  builder.pointer(rowSums, "row_sums", "float", writesSums);
  builder.pointer(partials, "column_partials", "float", writesPartials);
  builder.pointer(dgamma, "dgamma", in, true);
  builder.pointer(dbeta, "dbeta", in, true);
  const std::string dyAt = x ? bindRows(builder, dy, x, "dy") : "{0, 0}",
                    xAt = x ? bindRows(builder, x, x, "x") : "{0, 0}",
                    dxAt = x ? bindRows(builder, dx, x, "dx") : "{0, 0}";
  std::string rows = "0", outer = "0";
  if (x) {
    rows = builder.dim(DimRef::of(x, static_cast<unsigned>(rankOf(x) - 2)),
                       "rows");
    outer = rankOf(x) == 3 ? builder.dim(DimRef::of(x, 0), "outer") : "1";
  }
  auto mutableOf = [](const char *name, bool written) {
    return written ? std::string(name)
                   : "const_cast<float *>(" + std::string(name) + ")";
  };
  builder.body() << "  const rudnn::norm::NormBackwardParams<" << in
                 << "> p = {dy, x, gamma, mean, rstd, dx,\n      "
                 << mutableOf("row_sums", writesSums) << ", "
                 << mutableOf("column_partials", writesPartials)
                 << ", dgamma, dbeta,\n      " << dyAt << ", " << xAt << ", "
                 << dxAt << ", " << rows << ", " << outer << "};\n";
}

struct GradientSumsModel
    : PrimitiveOpInterface::ExternalModel<GradientSumsModel,
                                          NormGradientSumsOp> {
  StringRef getKernelGroup(Operation *) const { return kGradientSumsGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned) const {
    auto sums = cast<NormGradientSumsOp>(op);
    const int64_t splits =
        (lastDim(sums.getX()) + int64_t(sums.getChunk()) - 1) /
        int64_t(sums.getChunk());
    return ResultStorage::own({8 * splits, rowDims(sums.getX())},
                              "gradient_sums");
  }

  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    Value x = cast<NormGradientSumsOp>(op).getX();
    if (dim + 1 < rankOf(x))
      return DimRef::of(x, dim);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto sums = cast<NormGradientSumsOp>(op);
    Value x = sums.getX();
    const RowKernel k = RowKernel::of(x, sums.getKind());
    const int64_t threads = sums.getThreads(), chunk = sums.getChunk();
    builder.setEntry(k.entry("norm_gradient_sums", x, threads, 0, chunk));
    preamble(builder, op, "Split rows' gradients: each chunk's sums.");
    bindGradientParams(builder, k.in, sums.getDy(), x, sums.getGamma(),
                       sums.getMean(), sums.getRstd(), Value(), sums.getSums(),
                       true, Value(), false, Value(), Value());
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  rudnn::norm::norm_backward_chunk_sums<" << k.in << ", "
                   << k.features << ", " << chunk << ", " << threads << ", "
                   << k.vector << ", " << k.kindIndex << ">(p);\n";
    builder.launch().threads = threads;
    builder.launch().grid[0] =
        SizeRef{(k.features + chunk - 1) / chunk, {rowDims(x).back()}};
    builder.launch().grid[1] = outerGrid(x);
    builder.launch().grid[2] = SizeRef{1, {}};
    model(builder, x, 2, 6);
    return success();
  }
};

struct GradientRowsModel
    : PrimitiveOpInterface::ExternalModel<GradientRowsModel,
                                          NormGradientRowsOp> {
  StringRef getKernelGroup(Operation *) const { return kGradientRowsGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto rows = cast<NormGradientRowsOp>(op);
    Value x = rows.getX();
    if (index == 0)
      return ResultStorage::own({elementBytes(x) * lastDim(x), rowDims(x)},
                                "dx");
    auto partials = cast<RankedTensorType>(rows.getPartials().getType());
    return ResultStorage::own(
        {4 * partials.getDimSize(0) * 2 * partials.getDimSize(2), {}},
        "column_partials");
  }

  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    Value x = cast<NormGradientRowsOp>(op).getX();
    if (index == 0 && dim < rankOf(x))
      return DimRef::of(x, dim);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto rows = cast<NormGradientRowsOp>(op);
    Value x = rows.getX();
    const RowKernel k = RowKernel::of(x, rows.getKind());
    const int64_t threads = rows.getThreads(), blocks = rows.getBlocks(),
                  chunk = rows.getChunk() ? int64_t(*rows.getChunk()) : 0,
                  groups = threads == 32 && !chunk
                               ? int64_t(rows.getRowsPerBlock().value_or(4))
                               : 1;
    builder.setEntry(k.entry("norm_gradient_rows", x, threads,
                             groups > 1 ? groups : 0, chunk) +
                     "_b" + std::to_string(blocks));
    preamble(builder, op, "Gradients: dx, and each block's column sums.");
    bindGradientParams(builder, k.in, rows.getDy(), x, rows.getGamma(),
                       rows.getMean(), rows.getRstd(), rows.getDx(),
                       rows.getSums(), false, rows.getPartials(), true, Value(),
                       Value());
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    const std::string tail = std::to_string(k.vector) + ", " +
                             std::to_string(k.kindIndex) + ">(p);\n";
    if (chunk)
      builder.body() << "  rudnn::norm::norm_backward_split<" << k.in << ", "
                     << k.features << ", " << chunk << ", " << threads << ", "
                     << tail;
    else
      builder.body() << "  rudnn::norm::norm_backward_rows<" << k.in << ", "
                     << k.features << ", " << (groups > 1 ? 32 : threads)
                     << ", " << groups << ", " << tail;
    builder.launch().threads = groups > 1 ? 32 * groups : threads;
    builder.launch().grid[0] = SizeRef{blocks, {}};
    builder.launch().grid[1] = SizeRef{1, {}};
    builder.launch().grid[2] = SizeRef{1, {}};
    // Reads dy and x, writes dx.
    model(builder, x, 3, 10);
    return success();
  }
};

struct GradientColumnsModel
    : PrimitiveOpInterface::ExternalModel<GradientColumnsModel,
                                          NormGradientColumnsOp> {
  StringRef getKernelGroup(Operation *) const { return kGradientColumnsGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto columns = cast<NormGradientColumnsOp>(op);
    Value column = index ? columns.getDbeta() : columns.getDgamma();
    return ResultStorage::own({elementBytes(column) * lastDim(column), {}},
                              index ? "dbeta" : "dgamma");
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto columns = cast<NormGradientColumnsOp>(op);
    auto partials = cast<RankedTensorType>(columns.getPartials().getType());
    const int64_t blocks = partials.getDimSize(0),
                  features = partials.getDimSize(2);
    const std::string in = cudaType(dtype(columns.getDgamma()));
    builder.setEntry(
        "norm_gradient_columns_" +
        std::string(::rudnn::dtypeName(dtype(columns.getDgamma()))) + "_c" +
        std::to_string(features) + "_b" + std::to_string(blocks));
    preamble(builder, op, "dgamma, dbeta: the blocks' sums added in order.");
    bindGradientParams(builder, in, Value(), Value(), Value(), Value(), Value(),
                       Value(), Value(), false, columns.getPartials(), false,
                       columns.getDgamma(), columns.getDbeta());
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  rudnn::norm::norm_backward_columns<" << in << ", "
                   << features << ">(p, " << blocks << ");\n";
    builder.launch().threads = 256;
    builder.launch().grid[0] = SizeRef{(features + 255) / 256, {}};
    builder.launch().grid[1] = SizeRef{1, {}};
    builder.launch().grid[2] = SizeRef{1, {}};
    builder.launch().memoryBytes = SizeRef{8 * blocks * features, {}};
    builder.launch().flops = SizeRef{2 * blocks * features, {}};
    return success();
  }
};

} // namespace

void ::rudnn::codegen::registerNormPrimitives(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, RudnnDialect *) {
    NormRowsOp::attachInterface<RowsModel>(*context);
    NormPartialsOp::attachInterface<PartialsModel>(*context);
    NormGradientSumsOp::attachInterface<GradientSumsModel>(*context);
    NormGradientRowsOp::attachInterface<GradientRowsModel>(*context);
    NormGradientColumnsOp::attachInterface<GradientColumnsModel>(*context);
  });
}
