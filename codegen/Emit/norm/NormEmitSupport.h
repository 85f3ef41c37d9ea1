//===- NormEmitSupport.h - What the norms' emitters share -------*- C++ -*-===//
//
// The rows of x [N, C] or [M, N, C] as kernels see them: their plan dims,
// strides bound as rudnn::norm::Rows, the grid's outer dim, the kernels'
// names, vector widths and cost models.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_EMIT_NORM_NORMEMITSUPPORT_H
#define RUDNN_CODEGEN_EMIT_NORM_NORMEMITSUPPORT_H

#include "codegen/Emit/KernelBuilder.h"

#include "mlir/IR/DialectRegistry.h"

#include <string>

namespace rudnn::codegen::norm {

int64_t rankOf(mlir::Value value);

/// x's rows: [N] or [M, N] as plan dims.
llvm::SmallVector<mlir::rudnn::DimRef, 4> rowDims(mlir::Value x);

/// Binds an [N, C] or [M, N, C] view's outer strides; returns its
/// "{outer, inner}" (outer 0 for [N, C]).
std::string bindRows(KernelBuilder &builder, mlir::Value value, mlir::Value x,
                     const std::string &name);

/// What the kernels of a row form share: the element type, C, the kind
/// and the vector width.
struct RowKernel {
  std::string in, kind;
  int64_t features, vector, kindIndex;

  static RowKernel of(mlir::Value x, llvm::StringRef kind);
  /// "norm_rows_layer_norm_bf16_c4096_t256_nc".
  std::string entry(const char *stage, mlir::Value x, int64_t threads,
                    int64_t rowsPerBlock, int64_t chunk) const;
};

/// Workspace for ⌈C / chunk⌉ records of `recordBytes` a row of x.
mlir::rudnn::ResultStorage chunkRecords(mlir::Value x, int64_t chunk,
                                        int64_t recordBytes,
                                        const std::string &name);

/// Dim `dim` of a result whose leading dims are x's rows.
std::optional<mlir::rudnn::DimRef> rowDim(mlir::Value x, unsigned dim);

/// The grid's second dim: M, or 1.
mlir::rudnn::SizeRef outerGrid(mlir::Value x);

/// A split-row kernel's body and grid once its parameters are bound:
/// `function`<in, C, chunk, threads, vector, kind>(p), a block per chunk of
/// each row. Fails, naming the conflict, when the bindings had one.
mlir::LogicalResult emitChunkKernel(mlir::Operation *op, KernelBuilder &builder,
                                    const RowKernel &k, mlir::Value x,
                                    llvm::StringRef function, int64_t threads,
                                    int64_t chunk);

/// The cost model: `accesses` bytes of x's type and `flops` per row element.
void model(KernelBuilder &builder, mlir::Value x, int64_t accesses,
           int64_t flops);

/// The kernel's comment (and the op's policy) and the library include.
void preamble(KernelBuilder &builder, mlir::Operation *op, const char *what);

} // namespace rudnn::codegen::norm

namespace rudnn::codegen {

/// Attaches the primitive interface to the normalisations' gradient ops
/// (registerNormPrimitives calls it).
void registerNormGradientPrimitives(mlir::DialectRegistry &registry);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_NORM_NORMEMITSUPPORT_H
