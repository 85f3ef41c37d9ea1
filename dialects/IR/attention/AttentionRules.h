//===- AttentionRules.h - Rules attention-like ops share --------*- C++ -*-===//
//
// What the attention operators and the K/V-cache operators read off their
// q and v the same way.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONRULES_H
#define RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONRULES_H

#include "mlir/IR/Operation.h"

namespace mlir::rudnn {

/// The feature sizes of q [..., D] and v [..., E] and q's element bytes.
struct AttentionDims {
  int64_t headDim, valueDim, inputBytes;
};
AttentionDims attentionDimsOf(Value q, Value v);

/// Sets `op`'s `scale` attribute to D^-0.5 unless it has one.
void setDefaultScale(Operation *op, int64_t headDim);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONRULES_H
