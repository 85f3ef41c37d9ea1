//===- Passes.h - rudnn passes ----------------------------------*- C++ -*-===//

#ifndef RUDNN_CODEGEN_TRANSFORMS_PASSES_H
#define RUDNN_CODEGEN_TRANSFORMS_PASSES_H

#include "dialects/IR/RudnnDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rudnn {

#define GEN_PASS_DECL
#include "codegen/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/Transforms/Passes.h.inc"

} // namespace mlir::rudnn

#endif // RUDNN_CODEGEN_TRANSFORMS_PASSES_H
