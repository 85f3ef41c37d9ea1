//===- AttentionRules.h - Rules attention-like ops share --------*- C++ -*-===//
//
// What the attention operators and the K/V-cache operators read off their
// q and v the same way.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONRULES_H
#define RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONRULES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::rudnn {

/// The feature sizes of q [..., D] and v [..., E] and q's element bytes.
struct AttentionDims {
  int64_t headDim, valueDim, inputBytes;
};
AttentionDims attentionDimsOf(Value q, Value v);

/// Sets `op`'s `scale` attribute to D^-0.5 unless it has one.
void setDefaultScale(Operation *op, int64_t headDim);

/// A `name` attribute, when given, positive and finite (a scale, a softcap).
LogicalResult checkPositive(Operation *op, StringRef name, FloatAttr value);

/// A window's bounds: both or neither, each −1 (unbounded) or 0 to
/// kAttentionMaxWindow.
LogicalResult checkWindow(Operation *op, std::optional<int64_t> left,
                          std::optional<int64_t> right);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONRULES_H
