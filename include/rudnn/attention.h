//===- rudnn/attention.h - Tiled attention ----------------------*- C++ -*-===//

#ifndef RUDNN_ATTENTION_H
#define RUDNN_ATTENTION_H

#include "rudnn/context.h"

#include <optional>

namespace rudnn {

/// q [B, T, H, D], k [B, S, G, D], v [B, S, G, E]: one of f32, f16, bf16,
/// H a multiple of G (MHA, GQA, MQA), D and E from 1 to 256. Views may have
/// any outer strides ([B, T, H, *] and [B, H, T, *] memory both work); the
/// innermost dim must be contiguous. Optionally key_lengths [B] (i32, dense:
/// keys past an entry's length are masked; values outside [0, S] are
/// clamped) and key_mask [B, S] (bool, one byte a key: false masks it);
/// optionally alibiSlopes [B, H] (f32, any strides: a stride of 0 shares
/// one row of slopes): ALiBi as FlashAttention applies it, each allowed
/// score s_ij (after the softcap) less slope·|i + L_b − T − j|.
struct AttentionInputs {
  TensorView q, k, v;
  std::optional<TensorView> keyLengths, keyMask, alibiSlopes;
};

/// o [B, T, H, E] in q's dtype, any outer strides; optionally lse [B, H, T]
/// dense fp32 (natural log of each row's sum of exponentials). A row with
/// no allowed key gives o = 0 and lse = −inf. No output may overlap another
/// or an input.
struct AttentionOutputs {
  TensorView o;
  std::optional<TensorView> lse;
};

struct AttentionOptions {
  /// Default D^-0.5.
  std::optional<float> scale;
  /// Query i sees key j ≤ i + (L_b − T), L_b the entry's key length.
  bool causal = false;
  /// Keys within [i + off − left, i + off + right] (off = L_b − T); −1:
  /// unbounded on that side.
  int windowLeft = -1, windowRight = -1;
  /// Scores become softcap · tanh(s / softcap); 0: none.
  float softcap = 0;
  /// The backward's dq the same bits every call on the Hopper kernel too,
  /// which then adds each query tile's shares in a fixed order (the sm_80
  /// kernels and the forward always are); the forward ignores it.
  bool deterministic = false;
};

/// o_i = Σ_j softmax_j(scale · q_i · k_j) v_j over the keys allowed to query
/// i, computed tile by tile with an online softmax (the scores never leave
/// the chip). One compile per signature (dtype, D, E, causal, window, which
/// optional tensors): batch, lengths, heads and strides never recompile.
/// Throws InvalidArgument naming the bad argument before anything is
/// written.
void attentionForward(Context &context, const AttentionInputs &inputs,
                      const AttentionOutputs &outputs,
                      const AttentionOptions &options = {},
                      Stream stream = nullptr);

/// Packed variable-length batches, as flash_attn_varlen_func takes them:
/// q [T, H, D], k [S, G, D], v [S, G, E] hold the B entries' rows one after
/// another (T and S the totals); cuSeqlensQ and cuSeqlensK [B + 1] (i32,
/// dense, in device memory) are where each entry's queries and keys start,
/// from 0 to T and to S. Each entry attends within itself. The offsets are
/// never read on the host: changing them never recompiles or synchronizes,
/// and offsets out of order or range are clamped (no entry reads outside
/// the tensors). Optionally alibiSlopes [H] (f32): one slope a head for
/// every entry, as attentionForward's.
struct AttentionVarlenInputs {
  TensorView q, k, v, cuSeqlensQ, cuSeqlensK;
  std::optional<TensorView> alibiSlopes;
};

/// o [T, H, E] (q's dtype) and optionally lse [H, T] (dense fp32) for
/// packed batches; the options as for attentionForward, the bounds aligned
/// to each entry's own lengths. Throws InvalidArgument naming the bad
/// argument before anything is written.
void attentionVarlenForward(Context &context,
                            const AttentionVarlenInputs &inputs,
                            const AttentionOutputs &outputs,
                            const AttentionOptions &options = {},
                            Stream stream = nullptr);

/// The forward's inputs (as attentionForward took them), its results o
/// [B, T, H, E] and lse [B, H, T] (dense fp32), and d_output [B, T, H, E]
/// (q's dtype, any outer strides): the gradient of the loss with respect
/// to o.
struct AttentionBackwardInputs {
  AttentionInputs forward;
  TensorView o, lse, dOutput;
};

/// dq [B, T, H, D], dk [B, S, G, D], dv [B, S, G, E] in q's dtype, any outer
/// strides; no gradient may overlap another or an input.
struct AttentionGradients {
  TensorView dq, dk, dv;
};

/// The gradients of ⟨d_output, o⟩ with respect to q, k and v for the
/// attention attentionForward computes with the same options (masks,
/// window, softcap, GQA: dk and dv summed over each group's query heads),
/// from its saved o and lse. Rows with no allowed key contribute nothing;
/// keys no query sees get zeros. Three kernels; on Hopper dq is summed in
/// f32 with atomics (its last bits may differ between calls unless
/// `options.deterministic`); dk and dv, and the sm_80 kernels' dq, are the
/// same bits every call. One compile per signature, as for the forward.
/// Throws InvalidArgument naming the bad argument before anything is
/// written.
void attentionBackward(Context &context, const AttentionBackwardInputs &inputs,
                       const AttentionGradients &gradients,
                       const AttentionOptions &options = {},
                       Stream stream = nullptr);

/// The packed forward's inputs (as attentionVarlenForward took them), its
/// results o [T, H, E] and lse [H, T] (dense fp32), and d_output [T, H, E]
/// (q's dtype, any outer strides).
struct AttentionVarlenBackwardInputs {
  AttentionVarlenInputs forward;
  TensorView o, lse, dOutput;
};

/// attentionBackward for packed batches: dq [T, H, D], dk [S, G, D], dv
/// [S, G, E], each entry's from its own rows alone. The offsets are never
/// read on the host, as for attentionVarlenForward.
void attentionVarlenBackward(Context &context,
                             const AttentionVarlenBackwardInputs &inputs,
                             const AttentionGradients &gradients,
                             const AttentionOptions &options = {},
                             Stream stream = nullptr);

} // namespace rudnn

#endif // RUDNN_ATTENTION_H
