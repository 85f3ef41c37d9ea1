//===- AttentionBackwardPrimitives.h - The backward, registered -*- C++ -*-===//

#ifndef RUDNN_CODEGEN_EMIT_ATTENTION_ATTENTIONBACKWARDPRIMITIVES_H
#define RUDNN_CODEGEN_EMIT_ATTENTION_ATTENTIONBACKWARDPRIMITIVES_H

#include "mlir/IR/DialectRegistry.h"

namespace rudnn::codegen {

/// Attaches the primitive interface to the attention backward's row-term
/// and gradient ops (registerAttentionPrimitives calls it).
void registerAttentionBackwardPrimitives(mlir::DialectRegistry &registry);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_ATTENTION_ATTENTIONBACKWARDPRIMITIVES_H
