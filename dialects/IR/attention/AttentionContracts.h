//===- AttentionContracts.h - Attention operator contracts ------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONCONTRACTS_H
#define RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONCONTRACTS_H

#include "dialects/IR/OperatorContract.h"

namespace rudnn {

/// Largest head dimension (D or Dv) of an attention operator.
inline constexpr int64_t kAttentionMaxHeadDim = 256;
/// The widest bounded window side: sequences are shorter (dims stay below
/// 2^30), and the kernels add it to key positions in 32-bit arithmetic.
inline constexpr int64_t kAttentionMaxWindow = int64_t(1) << 30;

/// rudnn.attention: q [B, T, H, D], k [B, S, G, D], v [B, S, G, E],
/// key_lengths [B], key_mask [B, S], alibi_slopes [B, H] -> o [B, T, H, E],
/// lse [B, H, T].
const OperatorContract &attentionContract();

/// rudnn.attention_varlen: q [T, H, D], k [S, G, D], v [S, G, E] packed,
/// cu_seqlens_q and cu_seqlens_k [C] (C = B + 1), alibi_slopes [H] -> o
/// [T, H, E], lse [H, T].
const OperatorContract &attentionVarlenContract();

/// rudnn.attention_backward: the forward's operands, o [B, T, H, E], lse
/// [B, H, T], d_output [B, T, H, E] -> dq [B, T, H, D], dk [B, S, G, D],
/// dv [B, S, G, E].
const OperatorContract &attentionBackwardContract();

/// rudnn.attention_varlen_backward: the packed forward's operands, o
/// [T, H, E], lse [H, T], d_output [T, H, E] -> dq [T, H, D], dk [S, G, D],
/// dv [S, G, E].
const OperatorContract &attentionVarlenBackwardContract();

/// Largest page size of a paged K/V cache, in tokens.
inline constexpr int64_t kKvCacheMaxPageSize = 256;

/// rudnn.kv_cache_attention: q [B, T, H, D], new k [B, T, G, D] and v
/// [B, T, G, E], k_cache [B, S, G, D], v_cache [B, S, G, E], cache_lengths
/// [B] -> o [B, T, H, E], the caches updated in place, lse [B, H, T],
/// status [B].
const OperatorContract &kvCacheAttentionContract();

/// rudnn.kv_cache_attention_paged: q, k, v as above, k_pages [P, Z, G, D],
/// v_pages [P, Z, G, E], block_table [B, M], cache_lengths [B] -> o, the
/// pages updated in place, lse, status.
const OperatorContract &kvCacheAttentionPagedContract();

} // namespace rudnn

#endif // RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONCONTRACTS_H
