//===- AttentionReference.cpp - Attention in float64 ----------------------===//

#include "lib/reference/AttentionReference.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace rudnn::reference;

AttentionOutputs
rudnn::reference::attentionForward(const AttentionShape &s,
                                   const AttentionInputs &in,
                                   const AttentionOptions &options) {
  const int64_t B = s.batch, T = s.queries, S = s.keys, H = s.heads,
                G = s.kvHeads, D = s.headDim, E = s.valueDim;
  AttentionOutputs out;
  out.o.assign(B * T * H * E, 0.0);
  out.lse.assign(B * H * T, -std::numeric_limits<double>::infinity());
  std::vector<double> scores(S);
  std::vector<bool> allowed(S);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t length =
        in.keyLengths.empty()
            ? S
            : std::clamp<int64_t>(static_cast<int64_t>(in.keyLengths[b]), 0, S);
    const int64_t offset = length - T;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / (H / G);
      for (int64_t i = 0; i < T; ++i) {
        const double *q = &in.q[((b * T + i) * H + h) * D];
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < S; ++j) {
          const int64_t diagonal = i + offset;
          allowed[j] =
              j < length && (!options.causal || j <= diagonal) &&
              (options.windowRight < 0 ||
               j <= diagonal + options.windowRight) &&
              (options.windowLeft < 0 || j >= diagonal - options.windowLeft) &&
              (in.keyMask.empty() || in.keyMask[b * S + j] != 0);
          if (!allowed[j])
            continue;
          const double *k = &in.k[((b * S + j) * G + g) * D];
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q[d] * k[d];
          double score = options.scale * dot;
          if (options.softcap > 0)
            score = options.softcap * std::tanh(score / options.softcap);
          scores[j] = score;
          max = std::max(max, score);
        }
        if (max == -std::numeric_limits<double>::infinity())
          continue; // no allowed key: o = 0, lse = −inf
        double sum = 0;
        for (int64_t j = 0; j < S; ++j)
          if (allowed[j])
            sum += std::exp(scores[j] - max);
        double *o = &out.o[((b * T + i) * H + h) * E];
        for (int64_t j = 0; j < S; ++j) {
          if (!allowed[j])
            continue;
          const double weight = std::exp(scores[j] - max) / sum;
          const double *v = &in.v[((b * S + j) * G + g) * E];
          for (int64_t e = 0; e < E; ++e)
            o[e] += weight * v[e];
        }
        out.lse[(b * H + h) * T + i] = max + std::log(sum);
      }
    }
  }
  return out;
}

AttentionOutputs rudnn::reference::attentionVarlenForward(
    int64_t heads, int64_t kvHeads, int64_t headDim, int64_t valueDim,
    const AttentionInputs &in, const std::vector<double> &queryOffsets,
    const std::vector<double> &keyOffsets, const AttentionOptions &options) {
  const int64_t H = heads, G = kvHeads, D = headDim, E = valueDim;
  const int64_t T = static_cast<int64_t>(in.q.size()) / (H * D);
  AttentionOutputs out;
  out.o.assign(T * H * E, 0.0);
  out.lse.assign(H * T, -std::numeric_limits<double>::infinity());
  for (size_t b = 0; b + 1 < queryOffsets.size(); ++b) {
    const auto q0 = static_cast<int64_t>(queryOffsets[b]),
               q1 = static_cast<int64_t>(queryOffsets[b + 1]),
               k0 = static_cast<int64_t>(keyOffsets[b]),
               k1 = static_cast<int64_t>(keyOffsets[b + 1]);
    if (q1 <= q0)
      continue;
    // The entry alone, as a batch of one.
    AttentionShape entry{1, q1 - q0, std::max<int64_t>(k1 - k0, 0), H, G, D, E};
    AttentionInputs slice;
    slice.q.assign(in.q.begin() + q0 * H * D, in.q.begin() + q1 * H * D);
    slice.k.assign(in.k.begin() + k0 * G * D, in.k.begin() + k1 * G * D);
    slice.v.assign(in.v.begin() + k0 * G * E, in.v.begin() + k1 * G * E);
    if (entry.keys == 0) // no key: every row 0 and −inf, as preset
      continue;
    AttentionOutputs part = attentionForward(entry, slice, options);
    std::copy(part.o.begin(), part.o.end(), out.o.begin() + q0 * H * E);
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < q1 - q0; ++i)
        out.lse[h * T + q0 + i] = part.lse[h * (q1 - q0) + i];
  }
  return out;
}
