//===- AttentionCall.h - What the attention entry points share --*- C++ -*-===//

#ifndef RUDNN_LIB_ATTENTION_ATTENTIONCALL_H
#define RUDNN_LIB_ATTENTION_ATTENTIONCALL_H

#include "rudnn/attention.h"

#include "mlir/IR/Builders.h"

namespace rudnn {

/// A call's options with the scale resolved (D^-0.5 by default).
struct ResolvedAttention {
  float scale;
  AttentionOptions options;
};

/// Throws InvalidArgument naming a bad scale, softcap or window bound.
ResolvedAttention resolveAttention(const AttentionOptions &options,
                                   int64_t headDim);

/// A window bound attribute, or none when the window is unbounded.
mlir::IntegerAttr windowBoundAttr(mlir::Builder &b,
                                  const AttentionOptions &options, int bound);

} // namespace rudnn

#endif // RUDNN_LIB_ATTENTION_ATTENTIONCALL_H
