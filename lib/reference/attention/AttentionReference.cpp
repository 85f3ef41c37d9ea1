//===- AttentionReference.cpp - Attention in float64 ----------------------===//

#include "lib/reference/attention/AttentionReference.h"
#include "lib/reference/Offsets.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace rudnn::reference;

namespace {

/// One query row of one head: which keys it may see, its scores before
/// (scale · q·k) and after the softcap, their maximum.
struct ScoreRow {
  std::vector<bool> allowed;
  std::vector<double> raw, scores;
  double max = -std::numeric_limits<double>::infinity();

  bool empty() const { return max == -std::numeric_limits<double>::infinity(); }
  /// exp(s_j − max) / Σ: the probabilities (0 where not allowed).
  std::vector<double> probabilities() const {
    std::vector<double> p(scores.size(), 0.0);
    double sum = 0;
    for (size_t j = 0; j < scores.size(); ++j)
      if (allowed[j])
        sum += p[j] = std::exp(scores[j] - max);
    for (double &value : p)
      value /= sum;
    return p;
  }
  double lse() const {
    double sum = 0;
    for (size_t j = 0; j < scores.size(); ++j)
      if (allowed[j])
        sum += std::exp(scores[j] - max);
    return max + std::log(sum);
  }
};

/// Row i of entry b, head h (key head g): q [B,T,H,D], k [B,S,G,D].
ScoreRow scoreRow(const AttentionShape &s, const AttentionInputs &in,
                  const AttentionOptions &options, int64_t b, int64_t h,
                  int64_t i) {
  const int64_t T = s.queries, S = s.keys, H = s.heads, G = s.kvHeads,
                D = s.headDim;
  const int64_t g = h / (H / G);
  const int64_t length =
      in.keyLengths.empty()
          ? S
          : std::clamp<int64_t>(static_cast<int64_t>(in.keyLengths[b]), 0, S);
  const int64_t diagonal = i + length - T; // bottom-right aligned
  ScoreRow row;
  row.allowed.assign(S, false);
  row.raw.assign(S, 0.0);
  row.scores.assign(S, 0.0);
  const double *q = &in.q[((b * T + i) * H + h) * D];
  for (int64_t j = 0; j < S; ++j) {
    row.allowed[j] =
        j < length && (!options.causal || j <= diagonal) &&
        (options.windowRight < 0 || j <= diagonal + options.windowRight) &&
        (options.windowLeft < 0 || j >= diagonal - options.windowLeft) &&
        (in.keyMask.empty() || in.keyMask[b * S + j] != 0);
    if (!row.allowed[j])
      continue;
    const double *k = &in.k[((b * S + j) * G + g) * D];
    double dot = 0;
    for (int64_t d = 0; d < D; ++d)
      dot += q[d] * k[d];
    row.raw[j] = options.scale * dot;
    row.scores[j] =
        options.softcap > 0
            ? options.softcap * std::tanh(row.raw[j] / options.softcap)
            : row.raw[j];
    if (!in.alibiSlopes.empty())
      row.scores[j] -= in.alibiSlopes[b * H + h] *
                       std::abs(static_cast<double>(diagonal - j));
    row.max = std::max(row.max, row.scores[j]);
  }
  return row;
}

/// Entry b's rows of a packed tensor [total, heads, width] as a batch of
/// one, from its offsets.
std::vector<double> entryRows(const std::vector<double> &packed, int64_t first,
                              int64_t last, int64_t width) {
  return std::vector<double>(packed.begin() + first * width,
                             packed.begin() + last * width);
}

} // namespace

AttentionOutputs
rudnn::reference::attentionForward(const AttentionShape &s,
                                   const AttentionInputs &in,
                                   const AttentionOptions &options) {
  const int64_t B = s.batch, T = s.queries, S = s.keys, H = s.heads,
                G = s.kvHeads, E = s.valueDim;
  AttentionOutputs out;
  out.o.assign(B * T * H * E, 0.0);
  out.lse.assign(B * H * T, -std::numeric_limits<double>::infinity());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / (H / G);
      for (int64_t i = 0; i < T; ++i) {
        const ScoreRow row = scoreRow(s, in, options, b, h, i);
        if (row.empty())
          continue; // no allowed key: o = 0, lse = −inf
        const std::vector<double> p = row.probabilities();
        double *o = &out.o[((b * T + i) * H + h) * E];
        for (int64_t j = 0; j < S; ++j) {
          if (!row.allowed[j])
            continue;
          const double *v = &in.v[((b * S + j) * G + g) * E];
          for (int64_t e = 0; e < E; ++e)
            o[e] += p[j] * v[e];
        }
        out.lse[(b * H + h) * T + i] = row.lse();
      }
    }
  return out;
}

namespace {

/// The backward, P and D_i recomputed, or taken from the forward's saved o
/// and lse (`saved`): P_ij = exp(s_ij − lse_i), D_i = dO_i · o_i.
AttentionGradients backward(const AttentionShape &s, const AttentionInputs &in,
                            const std::vector<double> &dOutput,
                            const AttentionOptions &options,
                            const AttentionOutputs *saved) {
  const int64_t B = s.batch, T = s.queries, S = s.keys, H = s.heads,
                G = s.kvHeads, D = s.headDim, E = s.valueDim;
  AttentionGradients grad;
  grad.dq.assign(B * T * H * D, 0.0);
  grad.dk.assign(B * S * G * D, 0.0);
  grad.dv.assign(B * S * G * E, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / (H / G);
      for (int64_t i = 0; i < T; ++i) {
        const ScoreRow row = scoreRow(s, in, options, b, h, i);
        const double lse = saved ? saved->lse[(b * H + h) * T + i] : 0.0;
        if (row.empty() || lse == -std::numeric_limits<double>::infinity())
          continue; // the row depends on no input
        std::vector<double> p = row.probabilities();
        if (saved)
          for (int64_t j = 0; j < S; ++j)
            p[j] = row.allowed[j] ? std::exp(row.scores[j] - lse) : 0.0;
        const double *dO = &dOutput[((b * T + i) * H + h) * E];
        // dP_j = dO·v_j; dS_j = P_j (dP_j − D_i), D_i = Σ_l P_l dP_l = dO·o.
        std::vector<double> dP(S, 0.0);
        double rowTerm = 0;
        for (int64_t j = 0; j < S; ++j) {
          if (!row.allowed[j])
            continue;
          const double *v = &in.v[((b * S + j) * G + g) * E];
          for (int64_t e = 0; e < E; ++e)
            dP[j] += dO[e] * v[e];
          rowTerm += p[j] * dP[j];
        }
        if (saved) {
          rowTerm = 0;
          for (int64_t e = 0; e < E; ++e)
            rowTerm += dO[e] * saved->o[((b * T + i) * H + h) * E + e];
        }
        const double *q = &in.q[((b * T + i) * H + h) * D];
        double *dq = &grad.dq[((b * T + i) * H + h) * D];
        for (int64_t j = 0; j < S; ++j) {
          if (!row.allowed[j])
            continue;
          double dScore = p[j] * (dP[j] - rowTerm);
          if (options.softcap > 0) { // d/dx c·tanh(x/c) = 1 − tanh²(x/c)
            const double t = std::tanh(row.raw[j] / options.softcap);
            dScore *= 1 - t * t;
          }
          const double dDot = options.scale * dScore;
          const double *k = &in.k[((b * S + j) * G + g) * D];
          double *dk = &grad.dk[((b * S + j) * G + g) * D];
          double *dv = &grad.dv[((b * S + j) * G + g) * E];
          for (int64_t d = 0; d < D; ++d) {
            dq[d] += dDot * k[d];
            dk[d] += dDot * q[d];
          }
          for (int64_t e = 0; e < E; ++e)
            dv[e] += p[j] * dO[e];
        }
      }
    }
  return grad;
}

} // namespace

AttentionGradients rudnn::reference::attentionBackward(
    const AttentionShape &s, const AttentionInputs &in,
    const std::vector<double> &dOutput, const AttentionOptions &options) {
  return backward(s, in, dOutput, options, nullptr);
}

AttentionGradients rudnn::reference::attentionBackwardFromSaved(
    const AttentionShape &s, const AttentionInputs &in,
    const AttentionOutputs &saved, const std::vector<double> &dOutput,
    const AttentionOptions &options) {
  return backward(s, in, dOutput, options, &saved);
}

AttentionOutputs rudnn::reference::attentionVarlenForward(
    int64_t heads, int64_t kvHeads, int64_t headDim, int64_t valueDim,
    const AttentionInputs &in, const std::vector<double> &queryOffsets,
    const std::vector<double> &keyOffsets, const AttentionOptions &options) {
  const int64_t H = heads, G = kvHeads, D = headDim, E = valueDim;
  const int64_t T = static_cast<int64_t>(in.q.size()) / (H * D);
  checkOffsets("cu_seqlens_q", queryOffsets, T);
  checkOffsets("cu_seqlens_k", keyOffsets,
               static_cast<int64_t>(in.k.size()) / (G * D));
  if (queryOffsets.size() != keyOffsets.size())
    throw InvalidArgument("'cu_seqlens_q' and 'cu_seqlens_k' differ in size");
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
    slice.q = entryRows(in.q, q0, q1, H * D);
    slice.k = entryRows(in.k, k0, k1, G * D);
    slice.v = entryRows(in.v, k0, k1, G * E);
    slice.alibiSlopes = in.alibiSlopes; // [H]: a batch of one's
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

AttentionGradients rudnn::reference::attentionVarlenBackward(
    int64_t heads, int64_t kvHeads, int64_t headDim, int64_t valueDim,
    const AttentionInputs &in, const std::vector<double> &dOutput,
    const std::vector<double> &queryOffsets,
    const std::vector<double> &keyOffsets, const AttentionOptions &options,
    const AttentionOutputs *saved) {
  const int64_t H = heads, G = kvHeads, D = headDim, E = valueDim;
  const int64_t T = static_cast<int64_t>(in.q.size()) / (H * D),
                S = static_cast<int64_t>(in.k.size()) / (G * D);
  checkOffsets("cu_seqlens_q", queryOffsets, T);
  checkOffsets("cu_seqlens_k", keyOffsets, S);
  if (queryOffsets.size() != keyOffsets.size())
    throw InvalidArgument("'cu_seqlens_q' and 'cu_seqlens_k' differ in size");
  AttentionGradients grad;
  grad.dq.assign(T * H * D, 0.0);
  grad.dk.assign(S * G * D, 0.0);
  grad.dv.assign(S * G * E, 0.0);
  for (size_t b = 0; b + 1 < queryOffsets.size(); ++b) {
    const auto q0 = static_cast<int64_t>(queryOffsets[b]),
               q1 = static_cast<int64_t>(queryOffsets[b + 1]),
               k0 = static_cast<int64_t>(keyOffsets[b]),
               k1 = static_cast<int64_t>(keyOffsets[b + 1]);
    if (q1 <= q0 || k1 <= k0)
      continue; // no query or no key: nothing depends on anything
    const AttentionShape entry{1, q1 - q0, k1 - k0, H, G, D, E};
    AttentionInputs slice;
    slice.q = entryRows(in.q, q0, q1, H * D);
    slice.k = entryRows(in.k, k0, k1, G * D);
    slice.v = entryRows(in.v, k0, k1, G * E);
    slice.alibiSlopes = in.alibiSlopes;
    const std::vector<double> dOutputRows = entryRows(dOutput, q0, q1, H * E);
    AttentionGradients part;
    if (saved) { // the entry's o rows and each head's lse rows
      AttentionOutputs rows{entryRows(saved->o, q0, q1, H * E), {}};
      for (int64_t h = 0; h < H; ++h)
        rows.lse.insert(rows.lse.end(), saved->lse.begin() + h * T + q0,
                        saved->lse.begin() + h * T + q1);
      part =
          attentionBackwardFromSaved(entry, slice, rows, dOutputRows, options);
    } else {
      part = attentionBackward(entry, slice, dOutputRows, options);
    }
    std::copy(part.dq.begin(), part.dq.end(), grad.dq.begin() + q0 * H * D);
    std::copy(part.dk.begin(), part.dk.end(), grad.dk.begin() + k0 * G * D);
    std::copy(part.dv.begin(), part.dv.end(), grad.dv.begin() + k0 * G * E);
  }
  return grad;
}
