//===- kda/recurrent.cuh - KDA token by token, for decode -----------------===//

#pragma once

#include "rudnn/kda/chunk.cuh"
#include "rudnn/math.cuh"

namespace rudnn {
namespace kda {

/// grid (WalkAt's, ceil(V / VB)), block VB threads (whole warps): one
/// column of the state each, token by token. Writes boundaries every C
/// tokens when asked (a batch only).
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ void recurrent(const ForwardParams<TIn, TGate, TBeta> &p) {
  static_assert(VB % 32 == 0, "WalkAt scans the offsets a warp at a time");
  __shared__ float state[K][VB];
  const WalkAt walk = WalkAt::of<C>(p);
  const int j = threadIdx.x, column = blockIdx.y * VB + j;
  const int b = walk.b, h = walk.h;
  const long long stateBase = (long long)walk.state * K * V;
  if (!walk.active || column >= V)
    return; // columns are independent: no barrier follows
  for (int d = 0; d < K; ++d)
    state[d][j] =
        p.initial_state ? p.initial_state[stateBase + d * V + column] : 0.f;
  for (int t = walk.t0; t < walk.t0 + walk.length; ++t) {
    if (p.boundaries && t % C == 0)
      for (int d = 0; d < K; ++d)
        p.boundaries[((long long)(t / C) * walk.columns + walk.column) * K * V +
                     d * V + column] = from_float<TIn>(state[d][j]);
    const long long qk = p.q_offset(b, t, h);
    const long long kk = p.k_offset(b, t, h);
    const long long gk = p.g_strides.offset(b, t, h);
    float predicted = 0.f;
    for (int d = 0; d < K; ++d) {
      float s = state[d][j] * fast_exp(to_float(p.g[gk + d]));
      state[d][j] = s;
      predicted += s * to_float(p.k[kk + d]);
    }
    const float u =
        to_float(p.beta[p.beta_strides.offset(b, t, h)]) *
        (to_float(p.v[p.v_strides.offset(b, t, h) + column]) - predicted);
    float o = 0.f;
    for (int d = 0; d < K; ++d) {
      float s = state[d][j] + to_float(p.k[kk + d]) * u;
      state[d][j] = s;
      o += s * to_float(p.q[qk + d]);
    }
    p.output[p.output_strides.offset(b, t, h) + column] =
        from_float<TIn>(p.scale * o);
  }
  if (p.final_state)
    for (int d = 0; d < K; ++d)
      p.final_state[stateBase + d * V + column] = state[d][j];
}

} // namespace kda
} // namespace rudnn
