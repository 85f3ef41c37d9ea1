//===- EmitModule.h - The CUDA kernels of decomposed rudnn IR ---*- C++ -*-===//

#ifndef RUDNN_CODEGEN_EMIT_EMITMODULE_H
#define RUDNN_CODEGEN_EMIT_EMITMODULE_H

#include "codegen/Emit/KdaEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <vector>

namespace rudnn::codegen {

/// The specialization of the KDA kernel computing `primitive` (a
/// chunk_solve, chunk_propagate, chunk_output or kda_recurrent), read from
/// its chain's types; a located error for anything else.
mlir::FailureOr<KdaKernelSpec> kdaSpecOf(mlir::Operation *primitive);

/// The CUDA C++ of every kernel the module's primitives need, each once, in
/// program order. Kernel grouping: `chunk_decay`, `chunk_pairwise` and
/// `chunk_solve` fuse into one chunk-parallel `prepare` kernel (emitted at
/// the solve); `chunk_propagate`, `chunk_output` and `kda_recurrent` are a
/// kernel each. After rudnn-plan, each `rudnn.kernel` is one. Emits a
/// located error for IR it cannot lower.
mlir::FailureOr<std::vector<EmittedKernel>> emitKernels(mlir::ModuleOp module);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_EMITMODULE_H
