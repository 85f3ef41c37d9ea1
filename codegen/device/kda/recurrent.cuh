//===- kda/recurrent.cuh - KDA token by token, for decode -----------------===//
//
// One column of the state a thread, token by token: the decode kernels of
// a batch (states [B, H, K, V], or one a packed sequence) and of a serving
// engine's state pool (one state a request, in slots, updated in place).
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/kda/chunk.cuh"
#include "rudnn/math.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace kda {

/// Tokens [t0, t0 + length) of entry b, head h through one state column
/// (state[d][j], value column `column`), writing each token's output; with
/// `boundaries`, the state before every C-th token (a batch only).
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ __forceinline__ void
recur_tokens(const ForwardParams<TIn, TGate, TBeta> &p, float (&state)[K][VB],
             int b, int h, int t0, int length, int column, TIn *boundaries,
             long long boundaryColumn, long long boundaryStride) {
  const int j = threadIdx.x;
  for (int t = t0; t < t0 + length; ++t) {
    if (boundaries && t % C == 0)
      for (int d = 0; d < K; ++d)
        boundaries[(t / C) * boundaryStride + boundaryColumn + d * V + column] =
            from_float<TIn>(state[d][j]);
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
}

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
  const long long stateBase = (long long)walk.state * K * V;
  if (!walk.active || column >= V)
    return; // columns are independent: no barrier follows
  for (int d = 0; d < K; ++d)
    state[d][j] =
        p.initial_state ? p.initial_state[stateBase + d * V + column] : 0.f;
  recur_tokens<K, V, C, VB>(
      p, state, walk.b, walk.h, walk.t0, walk.length, column, p.boundaries,
      (long long)walk.column * K * V, (long long)walk.columns * K * V);
  if (p.final_state)
    for (int d = 0; d < K; ++d)
      p.final_state[stateBase + d * V + column] = state[d][j];
}

/// A decoding step over a state pool: entry b's state is pool[slots[b]]
/// ([slots, H, K, V] in TState: f32, f16 or bf16), read and written in
/// place; status[b] (or null) 0 done, 1 refused.
template <typename TIn, typename TGate, typename TBeta, typename TState>
struct PoolParams {
  ForwardParams<TIn, TGate, TBeta> forward;
  TState *pool;
  const int *slots;
  int slot_count;
  int *status;
};

/// grid (B·H, ceil(V / VB)), block VB threads (whole warps). An entry whose
/// slot is outside the pool or shared with another entry of the call is
/// refused: its state untouched, its output 0, its status 1; so no two
/// blocks ever write one state.
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta, typename TState>
__device__ void pool_step(const PoolParams<TIn, TGate, TBeta, TState> &s) {
  static_assert(VB % 32 == 0, "a warp scans the slots");
  const ForwardParams<TIn, TGate, TBeta> &p = s.forward;
  __shared__ float state[K][VB];
  const int entry = blockIdx.x / p.heads, h = blockIdx.x % p.heads;
  const int j = threadIdx.x, column = blockIdx.y * VB + j;
  const int slot = s.slots[entry];
  bool shared = false;
  for (int other = j % 32; other < p.batch; other += 32)
    shared |= other != entry && s.slots[other] == slot;
  const bool refused =
      slot < 0 || slot >= s.slot_count || __any_sync(kFullWarpMask, shared);
  if (s.status && h == 0 && blockIdx.y == 0 && j == 0)
    s.status[entry] = refused ? 1 : 0;
  if (column >= V)
    return; // columns are independent: no barrier follows
  if (refused) {
    for (int t = 0; t < p.length; ++t)
      p.output[p.output_strides.offset(entry, t, h) + column] =
          from_float<TIn>(0.f);
    return;
  }
  TState *row = s.pool + ((long long)slot * p.heads + h) * K * V + column;
  for (int d = 0; d < K; ++d)
    state[d][j] = to_float(row[d * V]);
  recur_tokens<K, V, C, VB>(p, state, entry, h, 0, p.length, column,
                            static_cast<TIn *>(nullptr), 0, 0);
  for (int d = 0; d < K; ++d)
    row[d * V] = from_float<TState>(state[d][j]);
}

} // namespace kda
} // namespace rudnn
