//===- KdaReference.cpp - Kimi Delta Attention in float64 -----------------===//

#include "lib/reference/kda/KdaReference.h"
#include "lib/reference/Offsets.h"

#include <algorithm>
#include <cmath>

using namespace rudnn::reference;

KdaOutputs rudnn::reference::kdaForward(const KdaShape &shape,
                                        const KdaInputs &in, double scale,
                                        int64_t chunk) {
  const int64_t B = shape.batch, T = shape.length, H = shape.heads;
  const int64_t K = shape.featureK, V = shape.featureV;
  const int64_t chunks = (T + chunk - 1) / chunk;
  KdaOutputs out;
  out.output.assign(B * T * H * V, 0.0);
  out.finalState.assign(B * H * K * V, 0.0);
  out.boundaries.assign(chunks * B * H * K * V, 0.0);

  std::vector<double> state(K * V), u(V);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t stateOffset = (b * H + h) * K * V;
      for (int64_t i = 0; i < K * V; ++i)
        state[i] =
            in.initialState.empty() ? 0.0 : in.initialState[stateOffset + i];
      for (int64_t t = 0; t < T; ++t) {
        const int64_t row = (b * T + t) * H + h;
        const double *q = &in.q[row * K], *k = &in.k[row * K];
        const double *g = &in.g[row * K], *v = &in.v[row * V];
        if (t % chunk == 0)
          std::copy(state.begin(), state.end(),
                    out.boundaries.begin() +
                        ((t / chunk) * B * H + b * H + h) * K * V);
        for (int64_t i = 0; i < K; ++i) {
          double decay = std::exp(g[i]);
          for (int64_t j = 0; j < V; ++j)
            state[i * V + j] *= decay;
        }
        for (int64_t j = 0; j < V; ++j) {
          double predicted = 0;
          for (int64_t i = 0; i < K; ++i)
            predicted += state[i * V + j] * k[i];
          u[j] = in.beta[row] * (v[j] - predicted);
        }
        for (int64_t i = 0; i < K; ++i)
          for (int64_t j = 0; j < V; ++j)
            state[i * V + j] += k[i] * u[j];
        for (int64_t j = 0; j < V; ++j) {
          double sum = 0;
          for (int64_t i = 0; i < K; ++i)
            sum += state[i * V + j] * q[i];
          out.output[row * V + j] = scale * sum;
        }
      }
      std::copy(state.begin(), state.end(),
                out.finalState.begin() + stateOffset);
    }
  return out;
}

KdaGradients rudnn::reference::zeroGradients(const KdaShape &shape) {
  const int64_t rows = shape.batch * shape.length * shape.heads;
  const int64_t K = shape.featureK, V = shape.featureV;
  KdaGradients grad;
  grad.dq.assign(rows * K, 0.0);
  grad.dk.assign(rows * K, 0.0);
  grad.dg.assign(rows * K, 0.0);
  grad.dv.assign(rows * V, 0.0);
  grad.dbeta.assign(rows, 0.0);
  grad.dInitialState.assign(shape.batch * shape.heads * K * V, 0.0);
  return grad;
}

KdaGradients rudnn::reference::kdaBackward(const KdaShape &shape,
                                           const KdaInputs &in, double scale,
                                           const std::vector<double> &dOutput,
                                           const std::vector<double> &dFinal) {
  const int64_t B = shape.batch, T = shape.length, H = shape.heads;
  const int64_t K = shape.featureK, V = shape.featureV;
  KdaGradients grad = zeroGradients(shape);

  // decayed[t] = diag(e^g_t)·S_{t-1}; states[t] = S_t (states[-1] = S0).
  std::vector<double> decayed(T * K * V), states(T * K * V), u(T * V);
  std::vector<double> dS(K * V), dA(K * V), du(V), dPred(V);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t stateOffset = (b * H + h) * K * V;
      auto row = [&](int64_t t) { return (b * T + t) * H + h; };
      // Forward, keeping every state.
      for (int64_t t = 0; t < T; ++t) {
        const double *k = &in.k[row(t) * K], *g = &in.g[row(t) * K];
        const double *v = &in.v[row(t) * V];
        double *A = &decayed[t * K * V], *S = &states[t * K * V];
        for (int64_t i = 0; i < K; ++i)
          for (int64_t j = 0; j < V; ++j) {
            double previous =
                t > 0 ? states[(t - 1) * K * V + i * V + j]
                      : (in.initialState.empty()
                             ? 0.0
                             : in.initialState[stateOffset + i * V + j]);
            A[i * V + j] = std::exp(g[i]) * previous;
          }
        for (int64_t j = 0; j < V; ++j) {
          double predicted = 0;
          for (int64_t i = 0; i < K; ++i)
            predicted += A[i * V + j] * k[i];
          u[t * V + j] = in.beta[row(t)] * (v[j] - predicted);
        }
        for (int64_t i = 0; i < K; ++i)
          for (int64_t j = 0; j < V; ++j)
            S[i * V + j] = A[i * V + j] + k[i] * u[t * V + j];
      }
      // Backward.
      for (int64_t i = 0; i < K * V; ++i)
        dS[i] = dFinal.empty() ? 0.0 : dFinal[stateOffset + i];
      for (int64_t t = T - 1; t >= 0; --t) {
        const double *q = &in.q[row(t) * K], *k = &in.k[row(t) * K];
        const double *v = &in.v[row(t) * V], *dO = &dOutput[row(t) * V];
        const double *A = &decayed[t * K * V], *S = &states[t * K * V];
        const double *g = &in.g[row(t) * K];
        const double beta = in.beta[row(t)];
        // o_t = scale·S_tᵀ q_t
        for (int64_t i = 0; i < K; ++i) {
          double dq = 0;
          for (int64_t j = 0; j < V; ++j) {
            dq += S[i * V + j] * dO[j];
            dS[i * V + j] += scale * q[i] * dO[j];
          }
          grad.dq[row(t) * K + i] = scale * dq;
        }
        // S_t = A_t + k_t u_tᵀ
        for (int64_t j = 0; j < V; ++j) {
          double sum = 0;
          for (int64_t i = 0; i < K; ++i)
            sum += dS[i * V + j] * k[i];
          du[j] = sum;
        }
        for (int64_t i = 0; i < K; ++i) {
          double dk = 0;
          for (int64_t j = 0; j < V; ++j)
            dk += dS[i * V + j] * u[t * V + j];
          grad.dk[row(t) * K + i] += dk;
        }
        // u_t = β_t (v_t − A_tᵀ k_t)
        double dbeta = 0;
        for (int64_t j = 0; j < V; ++j) {
          double predicted = 0;
          for (int64_t i = 0; i < K; ++i)
            predicted += A[i * V + j] * k[i];
          dbeta += du[j] * (v[j] - predicted);
          grad.dv[row(t) * V + j] = beta * du[j];
          dPred[j] = -beta * du[j];
        }
        grad.dbeta[row(t)] = dbeta;
        for (int64_t i = 0; i < K; ++i) {
          double dk = 0;
          for (int64_t j = 0; j < V; ++j) {
            dA[i * V + j] = dS[i * V + j] + k[i] * dPred[j];
            dk += A[i * V + j] * dPred[j];
          }
          grad.dk[row(t) * K + i] += dk;
        }
        // A_t = diag(e^g_t) S_{t-1}
        for (int64_t i = 0; i < K; ++i) {
          double dg = 0;
          for (int64_t j = 0; j < V; ++j) {
            dg += dA[i * V + j] * A[i * V + j];
            dS[i * V + j] = std::exp(g[i]) * dA[i * V + j];
          }
          grad.dg[row(t) * K + i] = dg;
        }
      }
      std::copy(dS.begin(), dS.end(), grad.dInitialState.begin() + stateOffset);
    }
  return grad;
}

namespace {

/// Sequence n of packed [1, T, H, *] tensors and [S, H, K, V] states.
struct PackedSequence {
  const KdaShape &shape;
  int64_t first, length, n;

  KdaShape alone() const {
    return {1, length, shape.heads, shape.featureK, shape.featureV};
  }
  /// Its rows of a [1, T, H, width] tensor (empty stays empty).
  std::vector<double> rows(const std::vector<double> &packed,
                           int64_t width) const {
    if (packed.empty())
      return {};
    const int64_t row = shape.heads * width;
    return {packed.begin() + first * row,
            packed.begin() + (first + length) * row};
  }
  void putRows(const std::vector<double> &rows, std::vector<double> &packed,
               int64_t width) const {
    std::copy(rows.begin(), rows.end(),
              packed.begin() + first * shape.heads * width);
  }
  /// Its state of [S, H, K, V] states (empty stays empty).
  std::vector<double> state(const std::vector<double> &states) const {
    if (states.empty())
      return {};
    const int64_t size = shape.heads * shape.featureK * shape.featureV;
    return {states.begin() + n * size, states.begin() + (n + 1) * size};
  }
  void putState(const std::vector<double> &value,
                std::vector<double> &states) const {
    const int64_t size = shape.heads * shape.featureK * shape.featureV;
    if (value.empty())
      std::fill(states.begin() + n * size, states.begin() + (n + 1) * size,
                0.0);
    else
      std::copy(value.begin(), value.end(), states.begin() + n * size);
  }
};

/// Calls visit(sequence) for each packed sequence.
template <typename Visit>
void forEachSequence(const KdaShape &shape, const std::vector<double> &offsets,
                     Visit visit) {
  checkOffsets("cu_seqlens", offsets, shape.length);
  for (size_t n = 0; n + 1 < offsets.size(); ++n) {
    const auto first = static_cast<int64_t>(offsets[n]);
    visit(PackedSequence{shape, first,
                         static_cast<int64_t>(offsets[n + 1]) - first,
                         static_cast<int64_t>(n)});
  }
}

KdaInputs sequenceInputs(const PackedSequence &s, const KdaInputs &in) {
  const int64_t K = s.shape.featureK, V = s.shape.featureV;
  return {s.rows(in.q, K), s.rows(in.k, K),    s.rows(in.v, V),
          s.rows(in.g, K), s.rows(in.beta, 1), s.state(in.initialState)};
}

} // namespace

KdaOutputs rudnn::reference::kdaVarlenForward(
    const KdaShape &shape, const KdaInputs &inputs,
    const std::vector<double> &offsets, double scale, int64_t chunk) {
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  const int64_t H = shape.heads, state = shape.featureK * shape.featureV;
  KdaOutputs out;
  out.output.assign(shape.length * H * shape.featureV, 0.0);
  out.finalState.assign(S * H * state, 0.0);
  if (chunk)
    out.boundaries.assign(
        ((shape.length + chunk - 1) / chunk + S + 1) * H * state, 0.0);
  int64_t slot = 0; // the first chunk slot of the next sequence
  forEachSequence(shape, offsets, [&](const PackedSequence &s) {
    KdaInputs in = sequenceInputs(s, inputs);
    if (s.length == 0) {
      s.putState(in.initialState, out.finalState);
      return;
    }
    KdaOutputs alone = kdaForward(s.alone(), in, scale, chunk ? chunk : 64);
    s.putRows(alone.output, out.output, shape.featureV);
    s.putState(alone.finalState, out.finalState);
    if (chunk) {
      // [chunks, 1, H, K, V] alone: the packed slots' rows in order.
      std::copy(alone.boundaries.begin(), alone.boundaries.end(),
                out.boundaries.begin() + slot * H * state);
      slot += (s.length + chunk - 1) / chunk;
    }
  });
  return out;
}

KdaGradients rudnn::reference::kdaVarlenBackward(
    const KdaShape &shape, const KdaInputs &inputs,
    const std::vector<double> &offsets, double scale,
    const std::vector<double> &dOutput,
    const std::vector<double> &dFinalState) {
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  KdaGradients grad = zeroGradients(shape);
  grad.dInitialState.assign(S * shape.heads * shape.featureK * shape.featureV,
                            0.0);
  forEachSequence(shape, offsets, [&](const PackedSequence &s) {
    if (s.length == 0) {
      s.putState(s.state(dFinalState), grad.dInitialState);
      return;
    }
    KdaGradients alone =
        kdaBackward(s.alone(), sequenceInputs(s, inputs), scale,
                    s.rows(dOutput, shape.featureV), s.state(dFinalState));
    const int64_t K = shape.featureK, V = shape.featureV;
    s.putRows(alone.dq, grad.dq, K);
    s.putRows(alone.dk, grad.dk, K);
    s.putRows(alone.dv, grad.dv, V);
    s.putRows(alone.dg, grad.dg, K);
    s.putRows(alone.dbeta, grad.dbeta, 1);
    s.putState(alone.dInitialState, grad.dInitialState);
  });
  return grad;
}

std::vector<double>
rudnn::reference::repeatHeads(const std::vector<double> &x, int64_t rows,
                              int64_t keyHeads, int64_t heads, int64_t width) {
  const int64_t group = heads / keyHeads;
  std::vector<double> out(rows * heads * width);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h)
      std::copy_n(x.begin() + (r * keyHeads + h / group) * width, width,
                  out.begin() + (r * heads + h) * width);
  return out;
}

std::vector<double>
rudnn::reference::sumHeadGroups(const std::vector<double> &x, int64_t rows,
                                int64_t keyHeads, int64_t heads,
                                int64_t width) {
  const int64_t group = heads / keyHeads;
  std::vector<double> out(rows * keyHeads * width, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < width; ++d)
        out[(r * keyHeads + h / group) * width + d] +=
            x[(r * heads + h) * width + d];
  return out;
}

KdaPoolStep rudnn::reference::kdaPoolStep(const KdaShape &shape,
                                          const KdaInputs &inputs,
                                          const std::vector<double> &pool,
                                          const std::vector<double> &slots,
                                          double scale) {
  const int64_t B = shape.batch, T = shape.length, H = shape.heads,
                K = shape.featureK, V = shape.featureV;
  const int64_t state = H * K * V;
  const auto P = static_cast<int64_t>(pool.size()) / state;
  KdaPoolStep step{std::vector<double>(B * T * H * V, 0.0), pool,
                   std::vector<double>(B, 0.0)};
  for (int64_t b = 0; b < B; ++b) {
    const auto slot = static_cast<int64_t>(slots[b]);
    bool refused = slot < 0 || slot >= P;
    for (int64_t other = 0; other < B; ++other)
      refused |= other != b && slots[other] == slots[b];
    if (refused) {
      step.status[b] = 1;
      continue;
    }
    auto rows = [&](const std::vector<double> &x, int64_t width) {
      const int64_t entry = T * H * width;
      return std::vector<double>(x.begin() + b * entry,
                                 x.begin() + (b + 1) * entry);
    };
    KdaInputs entry{rows(inputs.q, K),
                    rows(inputs.k, K),
                    rows(inputs.v, V),
                    rows(inputs.g, K),
                    rows(inputs.beta, 1),
                    std::vector<double>(pool.begin() + slot * state,
                                        pool.begin() + (slot + 1) * state)};
    KdaOutputs out = kdaForward({1, T, H, K, V}, entry, scale, 64);
    std::copy(out.output.begin(), out.output.end(),
              step.output.begin() + b * T * H * V);
    std::copy(out.finalState.begin(), out.finalState.end(),
              step.pool.begin() + slot * state);
  }
  return step;
}

namespace {

constexpr double kL2Epsilon = 1e-6;

double sigmoidOf(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// The gate at raw value `raw` of (h, d): g, ∂g/∂raw, ∂g/∂aLog[h].
struct GatePoint {
  double g, dRaw, dALog;
};
GatePoint gateAt(const KdaInputTransforms &t, int64_t h, int64_t d, int64_t K,
                 double raw) {
  const double x = raw + (t.dtBias.empty() ? 0.0 : t.dtBias[h * K + d]);
  const double a = std::exp(t.aLog[h]);
  if (t.lowerBound < 0) {
    const double s = sigmoidOf(a * x);
    const double slope = t.lowerBound * s * (1 - s);
    return {t.lowerBound * s, slope * a, slope * a * x};
  }
  const double softplus = x > 20 ? x : std::log1p(std::exp(x));
  return {-a * softplus, -a * sigmoidOf(x), -a * softplus};
}

/// Each row of `width` divided by sqrt(Σ x² + eps).
std::vector<double> l2Normalized(const std::vector<double> &x, int64_t width) {
  std::vector<double> y(x.size());
  for (size_t row = 0; row < x.size() / width; ++row) {
    double squares = kL2Epsilon;
    for (int64_t d = 0; d < width; ++d)
      squares += x[row * width + d] * x[row * width + d];
    for (int64_t d = 0; d < width; ++d)
      y[row * width + d] = x[row * width + d] / std::sqrt(squares);
  }
  return y;
}

/// dx = (dy − y (y · dy)) / n per row, in place of dy.
void l2NormalizedGradient(const std::vector<double> &x, int64_t width,
                          std::vector<double> &dy) {
  for (size_t row = 0; row < x.size() / width; ++row) {
    double squares = kL2Epsilon, dot = 0;
    for (int64_t d = 0; d < width; ++d) {
      squares += x[row * width + d] * x[row * width + d];
      dot += x[row * width + d] * dy[row * width + d];
    }
    const double n = std::sqrt(squares);
    for (int64_t d = 0; d < width; ++d)
      dy[row * width + d] =
          (dy[row * width + d] - x[row * width + d] * dot / squares) / n;
  }
}

} // namespace

KdaInputs rudnn::reference::transformKdaInputs(const KdaShape &shape,
                                               const KdaInputs &raw,
                                               const KdaInputTransforms &t) {
  KdaInputs in = raw;
  const int64_t K = shape.featureK, H = shape.heads;
  if (t.qkL2Norm) {
    in.q = l2Normalized(raw.q, K);
    in.k = l2Normalized(raw.k, K);
  }
  if (!t.aLog.empty())
    for (size_t e = 0; e < raw.g.size(); ++e)
      in.g[e] = gateAt(t, static_cast<int64_t>(e / K) % H,
                       static_cast<int64_t>(e % K), K, raw.g[e])
                    .g;
  if (t.betaLogits)
    for (double &b : in.beta)
      b = sigmoidOf(b);
  return in;
}

KdaParameterGradients rudnn::reference::transformKdaGradients(
    const KdaShape &shape, const KdaInputs &raw, const KdaInputTransforms &t,
    KdaGradients &grad) {
  const int64_t K = shape.featureK, H = shape.heads;
  if (t.qkL2Norm) {
    l2NormalizedGradient(raw.q, K, grad.dq);
    l2NormalizedGradient(raw.k, K, grad.dk);
  }
  if (t.betaLogits)
    for (size_t e = 0; e < raw.beta.size(); ++e) {
      const double s = sigmoidOf(raw.beta[e]);
      grad.dbeta[e] *= s * (1 - s);
    }
  KdaParameterGradients parameters;
  if (t.aLog.empty())
    return parameters;
  parameters.dALog.assign(H, 0.0);
  if (!t.dtBias.empty())
    parameters.dDtBias.assign(H * K, 0.0);
  for (size_t e = 0; e < raw.g.size(); ++e) {
    const int64_t h = static_cast<int64_t>(e / K) % H,
                  d = static_cast<int64_t>(e % K);
    const GatePoint p = gateAt(t, h, d, K, raw.g[e]);
    parameters.dALog[h] += grad.dg[e] * p.dALog;
    grad.dg[e] *= p.dRaw;
    if (!t.dtBias.empty())
      parameters.dDtBias[h * K + d] += grad.dg[e];
  }
  return parameters;
}
