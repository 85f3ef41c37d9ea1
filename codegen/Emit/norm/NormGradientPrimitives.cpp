//===- NormGradientPrimitives.cpp - The normalisations' gradients ---------===//
//
// The primitive interface of rudnn.norm_gradient_sums, _rows and _columns:
// for split rows each chunk's sums first; then dx with each block's column
// sums, the blocks walking the rows; then the columns added in order.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KernelEmitInterface.h"
#include "codegen/Emit/norm/NormEmitSupport.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/norm/NormContracts.h"

using namespace mlir;
using namespace mlir::rudnn;
using namespace ::rudnn::codegen;
using namespace ::rudnn::codegen::norm;

namespace {

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
    return chunkRecords(sums.getX(), sums.getChunk(), 8, "gradient_sums");
  }

  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    return rowDim(cast<NormGradientSumsOp>(op).getX(), dim);
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
    if (failed(emitChunkKernel(op, builder, k, x,
                               "rudnn::norm::norm_backward_chunk_sums", threads,
                               chunk)))
      return failure();
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
                              index ? "dbeta" : "dgamma")
        .orNull();
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

void ::rudnn::codegen::registerNormGradientPrimitives(
    DialectRegistry &registry) {
  attachPrimitives<Primitive<NormGradientSumsOp, GradientSumsModel>,
                   Primitive<NormGradientRowsOp, GradientRowsModel>,
                   Primitive<NormGradientColumnsOp, GradientColumnsModel>>(
      registry);
}
