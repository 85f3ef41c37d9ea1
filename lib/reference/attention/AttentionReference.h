//===- AttentionReference.h - Attention in float64 --------------*- C++ -*-===//
//
// Exact attention of DESIGN §7 in double precision, every score formed and
// the softmax taken over each row's allowed keys at once, and its analytic
// gradient: the independent references the tiled kernels are checked
// against.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_ATTENTION_ATTENTIONREFERENCE_H
#define RUDNN_LIB_REFERENCE_ATTENTION_ATTENTIONREFERENCE_H

#include <cmath>
#include <cstdint>
#include <vector>

namespace rudnn::reference {

struct AttentionShape {
  int64_t batch = 1, queries = 1, keys = 1, heads = 1, kvHeads = 1, headDim = 1,
          valueDim = 1;
};

/// Dense row-major arrays: q [B,T,H,D], k [B,S,G,D], v [B,S,G,E];
/// keyLengths [B] and keyMask [B,S] (nonzero: allowed) or empty;
/// alibiSlopes [B,H] ([H] for packed batches) or empty: an allowed score
/// s_ij gains −slope·|i + L − T − j| after the softcap.
struct AttentionInputs {
  std::vector<double> q, k, v, keyLengths, keyMask, alibiSlopes;
};

/// What restricts the keys: the causal diagonal and a window, bottom-right
/// aligned to each entry's key length (−1: unbounded); softcap 0: none.
struct AttentionOptions {
  double scale = 0, softcap = 0;
  bool causal = false;
  int64_t windowLeft = -1, windowRight = -1;

  /// These options with the scale an operator takes when given none,
  /// D^-0.5 for head dim `headDim`.
  static AttentionOptions forHeadDim(int64_t headDim, bool causal = false,
                                     int64_t windowLeft = -1,
                                     int64_t windowRight = -1,
                                     double softcap = 0) {
    return {1.0 / std::sqrt(static_cast<double>(headDim)), softcap, causal,
            windowLeft, windowRight};
  }
};

struct AttentionOutputs {
  std::vector<double> o;   // [B,T,H,E]
  std::vector<double> lse; // [B,H,T], −inf for a row with no allowed key
};

AttentionOutputs attentionForward(const AttentionShape &shape,
                                  const AttentionInputs &inputs,
                                  const AttentionOptions &options);

/// Gradients of ⟨dOutput, o⟩ (dOutput [B,T,H,E]) with respect to q, k and
/// v, in their layouts: the analytic backward (softcap's derivative
/// included; dk, dv summed over each group's query heads). Rows with no
/// allowed key contribute nothing.
struct AttentionGradients {
  std::vector<double> dq, dk, dv;
};

AttentionGradients attentionBackward(const AttentionShape &shape,
                                     const AttentionInputs &inputs,
                                     const std::vector<double> &dOutput,
                                     const AttentionOptions &options);

/// The same from the forward's saved o and lse, as the kernels take them:
/// P_ij = exp(s_ij − lse_i), D_i = dO_i · o_i (rows of lse −inf add
/// nothing). Equal to attentionBackward when o and lse are the forward's.
AttentionGradients attentionBackwardFromSaved(
    const AttentionShape &shape, const AttentionInputs &inputs,
    const AttentionOutputs &saved, const std::vector<double> &dOutput,
    const AttentionOptions &options);

/// Packed batches: q [T, H, D], k [S, G, D], v [S, G, E] with the entries'
/// offsets (B + 1 each, from 0 to T and to S); each entry attends within
/// itself, as attentionForward does for one batch entry. o [T, H, E], lse
/// [H, T].
AttentionOutputs attentionVarlenForward(int64_t heads, int64_t kvHeads,
                                        int64_t headDim, int64_t valueDim,
                                        const AttentionInputs &inputs,
                                        const std::vector<double> &queryOffsets,
                                        const std::vector<double> &keyOffsets,
                                        const AttentionOptions &options);

/// attentionBackward of packed batches (dOutput [T, H, E]), or
/// attentionBackwardFromSaved's when given the saved o [T, H, E] and lse
/// [H, T].
AttentionGradients attentionVarlenBackward(
    int64_t heads, int64_t kvHeads, int64_t headDim, int64_t valueDim,
    const AttentionInputs &inputs, const std::vector<double> &dOutput,
    const std::vector<double> &queryOffsets,
    const std::vector<double> &keyOffsets, const AttentionOptions &options,
    const AttentionOutputs *saved = nullptr);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_ATTENTION_ATTENTIONREFERENCE_H
