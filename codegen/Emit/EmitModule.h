//===- EmitModule.h - The CUDA kernels of a planned module ------*- C++ -*-===//

#ifndef RUDNN_CODEGEN_EMIT_EMITMODULE_H
#define RUDNN_CODEGEN_EMIT_EMITMODULE_H

#include "codegen/Emit/KernelBuilder.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <vector>

namespace rudnn::codegen {

struct EmittedKernel {
  std::string entry, source;
  /// Threads per block and dynamic shared memory bytes of its launches.
  int64_t threads = 0, dynamicShared = 0;
  /// Compiled for the arch-specific target (sm_90a).
  bool archSpecific = false;
};

/// Emits `kernel` through the last primitive of its region, under the
/// kernel's symbol name; `builder` then holds its bindings and geometry.
mlir::LogicalResult emitKernel(mlir::rudnn::KernelOp kernel,
                               KernelBuilder &builder);

/// The CUDA C++ of every `rudnn.kernel` of the module's plans, in plan
/// order. Emits a located error for IR that is not planned yet.
mlir::FailureOr<std::vector<EmittedKernel>> emitKernels(mlir::ModuleOp module);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_EMITMODULE_H
