//===- Primitives.h - Each family's primitives, registered ------*- C++ -*-===//

#ifndef RUDNN_CODEGEN_EMIT_PRIMITIVES_H
#define RUDNN_CODEGEN_EMIT_PRIMITIVES_H

#include "mlir/IR/DialectRegistry.h"

namespace rudnn::codegen {

/// Attaches the primitive interface to the tiled-attention ops.
void registerAttentionPrimitives(mlir::DialectRegistry &registry);

/// Attaches it to the attention backward's row-term and gradient ops.
void registerAttentionBackwardPrimitives(mlir::DialectRegistry &registry);

/// Attaches it to the decoding step's partials and combine ops.
void registerKvCachePrimitives(mlir::DialectRegistry &registry);

/// Attaches it to an LSTM layer's projection and recurrence ops.
void registerLstmPrimitives(mlir::DialectRegistry &registry);

/// Attaches it to the normalisations' row and partial-moments ops.
void registerNormPrimitives(mlir::DialectRegistry &registry);

/// Attaches it to the normalisations' gradient ops.
void registerNormGradientPrimitives(mlir::DialectRegistry &registry);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_PRIMITIVES_H
