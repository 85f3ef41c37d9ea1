//===- NormEmitSupport.cpp - What the normalisations' emitters share ------===//

#include "codegen/Emit/norm/NormEmitSupport.h"
#include "dialects/IR/norm/NormContracts.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace mlir::rudnn;

namespace rudnn::codegen::norm {

int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

SmallVector<DimRef, 4> rowDims(Value x) {
  SmallVector<DimRef, 4> dims;
  for (int64_t i = 0; i + 1 < rankOf(x); ++i)
    dims.push_back(DimRef::of(x, static_cast<unsigned>(i)));
  return dims;
}

std::string bindRows(KernelBuilder &builder, Value value, Value x,
                     const std::string &name) {
  if (rankOf(x) == 3) {
    builder.strides(value, {name + "_m", name + "_n"});
    return "{" + name + "_m, " + name + "_n}";
  }
  builder.strides(value, {name + "_n"});
  return "{0, " + name + "_n}";
}

RowKernel RowKernel::of(Value x, StringRef kind) {
  RowKernel k;
  k.in = cudaType(dtype(x));
  k.kind = kind.str();
  k.features = lastDim(x);
  const int64_t perVector = 16 / elementBytes(x);
  k.vector = k.features % perVector == 0 ? perVector : 1;
  k.kindIndex = static_cast<int64_t>(*::rudnn::normKindNamed(kind.str()));
  return k;
}

std::string RowKernel::entry(const char *stage, Value x, int64_t threads,
                             int64_t rowsPerBlock, int64_t chunk) const {
  std::string name = std::string(stage) + "_" + kind + "_" +
                     ::rudnn::dtypeName(dtype(x)) + "_c" +
                     std::to_string(features) + "_t" + std::to_string(threads);
  if (rowsPerBlock)
    name += "_r" + std::to_string(rowsPerBlock);
  if (chunk)
    name += "_chunk" + std::to_string(chunk);
  return name + (rankOf(x) == 3 ? "_mnc" : "_nc");
}

SizeRef outerGrid(Value x) {
  return rankOf(x) == 3 ? SizeRef{1, {DimRef::of(x, 0)}} : SizeRef{1, {}};
}

LogicalResult emitChunkKernel(Operation *op, KernelBuilder &builder,
                              const RowKernel &k, Value x, StringRef function,
                              int64_t threads, int64_t chunk) {
  if (!builder.conflict().empty())
    return op->emitOpError()
           << "cannot emit its kernel: " << builder.conflict();
  builder.body() << "  " << function.str() << "<" << k.in << ", " << k.features
                 << ", " << chunk << ", " << threads << ", " << k.vector << ", "
                 << k.kindIndex << ">(p);\n";
  builder.launch().threads = threads;
  builder.launch().grid[0] =
      SizeRef{(k.features + chunk - 1) / chunk, {rowDims(x).back()}};
  builder.launch().grid[1] = outerGrid(x);
  builder.launch().grid[2] = SizeRef{1, {}};
  return success();
}

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
  builder.preamble() << "#include \"rudnn/norm.cuh\"\n\n";
}

ResultStorage chunkRecords(Value x, int64_t chunk, int64_t recordBytes,
                           const std::string &name) {
  const int64_t splits = (lastDim(x) + chunk - 1) / chunk;
  return ResultStorage::own({recordBytes * splits, rowDims(x)}, name);
}

std::optional<DimRef> rowDim(Value x, unsigned dim) {
  if (dim + 1 < rankOf(x))
    return DimRef::of(x, dim);
  return std::nullopt;
}

} // namespace rudnn::codegen::norm
