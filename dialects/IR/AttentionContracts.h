//===- AttentionContracts.h - The contracts of the attention ops -*- C++
//-*-===//

#ifndef RUDNN_DIALECTS_IR_ATTENTIONCONTRACTS_H
#define RUDNN_DIALECTS_IR_ATTENTIONCONTRACTS_H

#include "dialects/IR/OperatorContract.h"

namespace rudnn {

/// Largest head dimension (D or Dv) of an attention operator.
inline constexpr int64_t kAttentionMaxHeadDim = 256;

/// rudnn.attention: q [B, T, H, D], k [B, S, G, D], v [B, S, G, E],
/// key_lengths [B], key_mask [B, S] -> o [B, T, H, E], lse [B, H, T].
const OperatorContract &attentionContract();

} // namespace rudnn

#endif // RUDNN_DIALECTS_IR_ATTENTIONCONTRACTS_H
