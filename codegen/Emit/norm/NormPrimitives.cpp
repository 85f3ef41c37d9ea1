//===- NormPrimitives.cpp - The normalisations' primitives as kernels -----===//
//
// The primitive interface of rudnn.norm_rows and rudnn.norm_partials: one
// kernel normalising rows (a warp or a block a row), or for split rows the
// chunks' moments, then their merge and the normalisation. Rows are read
// through the views' strides; 16-byte accesses where C allows and, checked
// on the device, the rows start on 16 bytes.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KernelEmitInterface.h"
#include "codegen/Emit/Primitives.h"
#include "codegen/Emit/norm/NormEmitSupport.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/norm/NormContracts.h"

using namespace mlir;
using namespace mlir::rudnn;
using namespace ::rudnn::codegen;
using namespace ::rudnn::codegen::norm;

namespace {

constexpr llvm::StringLiteral kRowsGroup = "norm.rows";
constexpr llvm::StringLiteral kPartialsGroup = "norm.partials";

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

struct RowsModel : PrimitiveOpInterface::ExternalModel<RowsModel, NormRowsOp> {
  StringRef getKernelGroup(Operation *) const { return kRowsGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    Value x = cast<NormRowsOp>(op).getX();
    SmallVector<DimRef, 4> rows = rowDims(x);
    static const char *const kNames[] = {"y", "mean", "second", "h"};
    const int64_t bytes =
        index == 0 || index == 3 ? elementBytes(x) * lastDim(x) : 4;
    ResultStorage storage = ResultStorage::own({bytes, rows}, kNames[index]);
    // y is always written; the statistics and h only where asked for.
    return index == 0 ? storage : std::move(storage).orNull();
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
    return chunkRecords(partials.getX(), partials.getChunk(), 12,
                        "norm_partials");
  }

  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    return rowDim(cast<NormPartialsOp>(op).getX(), dim);
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
    if (failed(emitChunkKernel(op, builder, k, x, "rudnn::norm::row_partials",
                               threads, chunk)))
      return failure();
    model(builder, x, partials.getResidual() ? 2 : 1, 4);
    return success();
  }
};

} // namespace

void ::rudnn::codegen::registerNormPrimitives(DialectRegistry &registry) {
  attachPrimitives<Primitive<NormRowsOp, RowsModel>,
                   Primitive<NormPartialsOp, PartialsModel>>(registry);
  registerNormGradientPrimitives(registry);
}
