//===- Primitives.h - Each family's primitives, registered ------*- C++ -*-===//

#ifndef RUDNN_CODEGEN_EMIT_PRIMITIVES_H
#define RUDNN_CODEGEN_EMIT_PRIMITIVES_H

#include "mlir/IR/DialectRegistry.h"

namespace rudnn::codegen {

// One function a family, called by registerRudnnDialects
// (codegen/InitRudnn.cpp): each attaches its primitives' models.

/// Attaches the primitive interface to the tiled-attention ops, forward and
/// backward.
void registerAttentionPrimitives(mlir::DialectRegistry &registry);

/// Attaches it to KDA's chunked-recurrence ops and its input transforms.
void registerKdaPrimitives(mlir::DialectRegistry &registry);

/// Attaches it to the decoding step's partials and combine ops.
void registerKvCachePrimitives(mlir::DialectRegistry &registry);

/// Attaches it to an LSTM layer's projection and recurrence ops.
void registerLstmPrimitives(mlir::DialectRegistry &registry);

/// Attaches it to the normalisations' row, partial-moments and gradient
/// ops.
void registerNormPrimitives(mlir::DialectRegistry &registry);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_PRIMITIVES_H
