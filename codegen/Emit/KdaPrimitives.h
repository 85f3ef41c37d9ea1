//===- KdaPrimitives.h - The KDA primitives as kernels ----------*- C++ -*-===//

#ifndef RUDNN_CODEGEN_EMIT_KDAPRIMITIVES_H
#define RUDNN_CODEGEN_EMIT_KDAPRIMITIVES_H

#include "mlir/IR/DialectRegistry.h"

namespace rudnn::codegen {

/// Attaches the primitive interface to the chunked-recurrence ops.
void registerKdaPrimitives(mlir::DialectRegistry &registry);

/// Attaches it to the ops a KDA operator applies to its inputs (L2
/// normalisation, the gate, the sigmoid) and their gradients.
void registerKdaInputPrimitives(mlir::DialectRegistry &registry);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_KDAPRIMITIVES_H
