//===- KdaReference.cpp - Kimi Delta Attention in float64 -----------------===//

#include "lib/reference/KdaReference.h"

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
