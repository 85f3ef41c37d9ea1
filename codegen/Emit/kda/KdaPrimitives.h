//===- KdaPrimitives.h - KDA's input transforms, registered -----*- C++ -*-===//

#ifndef RUDNN_CODEGEN_EMIT_KDA_KDAPRIMITIVES_H
#define RUDNN_CODEGEN_EMIT_KDA_KDAPRIMITIVES_H

#include "mlir/IR/DialectRegistry.h"

namespace rudnn::codegen {

/// Attaches the primitive interface to the ops a KDA operator applies to its
/// inputs (L2 normalisation, the gate, the sigmoid) and their gradients.
void registerKdaInputPrimitives(mlir::DialectRegistry &registry);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_KDA_KDAPRIMITIVES_H
