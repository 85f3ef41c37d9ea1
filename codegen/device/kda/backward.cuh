//===- kda/backward.cuh - Kimi Delta Attention backward, chunked ----------===//
//
// Follows lib/reference/KdaChunked.cpp step by step (that file derives it).
// The forward's `prepare` and `propagate` run first and leave their tiles
// (Γ, W, U0, U, Qd, Kd, e^Γlast, pairwise) and the boundary states (or,
// the boundaries saved by the forward, `restore` forms U from them); then
// `state_gradient` walks the chunks in reverse for dS and dU (parallel over
// batch, heads and blocks of V) and `gradients` computes every input
// gradient chunk-parallel. With 16-bit inputs the products of `restore` and
// `state_gradient` run on tensor cores (operands rounded to the input type,
// fp32 accumulation); `gradients` is fp32 arithmetic.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/kda/forward.cuh"

namespace rudnn {
namespace kda {

template <typename TIn, typename TGate, typename TBeta> struct BackwardParams {
  ForwardParams<TIn, TGate, TBeta> forward; // boundaries: filled, required
  const TIn *d_output;
  const float *d_final_state; // null: zero
  TIn *dq, *dk, *dv;
  float *dg;
  TBeta *dbeta;
  float *d_initial_state; // null: not wanted
  float *scratch;         // GradientTiles per (chunk, batch·head)
  SequenceStrides d_output_strides, dq_strides, dk_strides, dv_strides,
      dg_strides, dbeta_strides;
};

/// What the backward keeps per chunk, in fp32.
template <int K, int V, int C> struct GradientTiles {
  static constexpr long long kDSEnd = 0;             // [K][V] dS at chunk end
  static constexpr long long kDU = kDSEnd + K * V;   // [C][V]
  static constexpr long long kDq = kDU + C * V;      // [C][K]
  static constexpr long long kDk = kDq + C * K;      // [C][K]
  static constexpr long long kDGamma = kDk + C * K;  // [C][K]
  static constexpr long long kDRw = kDGamma + C * K; // [C][K]
  static constexpr long long kDRu = kDRw + C * K;    // [C][V]
  static constexpr long long kKdTerm = kDRu + C * V; // [C][K]
  static constexpr long long kFloats = kKdTerm + C * K;

  static __device__ __forceinline__ float *at(float *scratch, int chunk,
                                              int sequence, int sequences) {
    return scratch + ((long long)chunk * sequences + sequence) * kFloats;
  }
};

/// grid (chunks, B·H); any block size. With the forward's boundaries saved,
/// the updates U = U0 − W·S_c that `propagate` would form, chunk-parallel.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void restore(const BackwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C>;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  const int chunk = blockIdx.x, sequence = blockIdx.y;
  const int sequences = f.batch * f.heads;
  const int L = chunk_tokens<C>(chunk, f.length);
  float *tiles = Tiles::at(f.workspace, chunk, sequence, sequences);
  const float *S =
      f.boundaries + ((long long)chunk * sequences + sequence) * K * V;
  if constexpr (sizeof(TIn) == 2) {
    // Tensor cores, operands rounded to TIn, as `propagate` forms U.
    tile::for_each_warp_tile(
        L, V,
        [&](float(&acc)[4], int i0, int j0) {
          tile::mma_accumulate<TIn>(
              acc, K,
              [&](int i, int d) {
                return i0 + i < L && d < K ? tiles[Tiles::kW + (i0 + i) * K + d]
                                           : 0.f;
              },
              [&](int d, int j) {
                return d < K && j0 + j < V ? S[d * V + j0 + j] : 0.f;
              });
        },
        [&](int i, int j, float ws) {
          tiles[Tiles::kU + i * V + j] = tiles[Tiles::kU0 + i * V + j] - ws;
        });
  } else {
    for (int e = threadIdx.x; e < L * V; e += blockDim.x) {
      const int i = e / V, j = e % V;
      float u = tiles[Tiles::kU0 + i * V + j];
      for (int d = 0; d < K; ++d)
        u -= tiles[Tiles::kW + i * K + d] * S[d * V + j];
      tiles[Tiles::kU + i * V + j] = u;
    }
  }
}

/// grid (B·H, ceil(V / VB)); any block size. Chunks in reverse:
///   dU = scale Bmᵀ dO + Kd dS,  dS ← e^Γlast ⊙ dS + Qdᵀ dO − Wᵀ dU.
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ void state_gradient(const BackwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C>;
  using Grads = GradientTiles<K, V, C>;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  __shared__ float dS[K][VB];
  __shared__ float dU[C][VB];
  const int sequence = blockIdx.x, v0 = blockIdx.y * VB;
  const int sequences = f.batch * f.heads;
  const int b = sequence / f.heads, h = sequence % f.heads;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)sequence * K * V;
  auto dO = [&](int t, int j) {
    return to_float(p.d_output[p.d_output_strides.offset(b, t, h) + j]);
  };

  load_state_columns<K, V>(
      dS, p.d_final_state ? p.d_final_state + stateBase : nullptr, v0, width);
  __syncthreads();
  const int chunks = (f.length + C - 1) / C;
  for (int chunk = chunks - 1; chunk >= 0; --chunk) {
    const int t0 = chunk * C, L = chunk_tokens<C>(chunk, f.length);
    const float *tiles = Tiles::at(f.workspace, chunk, sequence, sequences);
    float *grads = Grads::at(p.scratch, chunk, sequence, sequences);
    store_state_columns<K, V>(grads + Grads::kDSEnd, dS, v0, width);
    auto keepU = [&](int s, int j, float u) {
      dU[s][j] = u;
      grads[Grads::kDU + s * V + v0 + j] = u;
    };
    if constexpr (sizeof(TIn) == 2) {
      // Tensor cores, operands rounded to TIn, fp32 accumulation.
      auto dOTile = [&](int j0) {
        return [&, j0](int i, int j) {
          return i < L && j0 + j < width ? dO(t0 + i, v0 + j0 + j) : 0.f;
        };
      };
      tile::for_each_warp_tile(
          L, width,
          [&](float(&acc)[4], int s0, int j0) {
            tile::mma_accumulate<TIn>(
                acc, L,
                [&](int s, int i) {
                  return s0 + s < L && i < L && i >= s0 + s
                             ? f.scale * tiles[Tiles::kB + i * C + s0 + s]
                             : 0.f;
                },
                dOTile(j0));
            tile::mma_accumulate<TIn>(
                acc, K,
                [&](int s, int d) {
                  return s0 + s < L && d < K
                             ? tiles[Tiles::kKd + (s0 + s) * K + d]
                             : 0.f;
                },
                [&](int d, int j) {
                  return d < K && j0 + j < width ? dS[d][j0 + j] : 0.f;
                });
          },
          keepU);
      __syncthreads();
      // Each warp owns its tiles of dS, which no other warp reads now.
      tile::for_each_warp_tile(
          K, width,
          [&](float(&acc)[4], int d0, int j0) {
            tile::mma_accumulate<TIn>(
                acc, L,
                [&](int d, int i) {
                  return d0 + d < K && i < L
                             ? tiles[Tiles::kQd + i * K + d0 + d]
                             : 0.f;
                },
                dOTile(j0));
            tile::mma_accumulate<TIn>(
                acc, L,
                [&](int d, int i) {
                  return d0 + d < K && i < L
                             ? -tiles[Tiles::kW + i * K + d0 + d]
                             : 0.f;
                },
                [&](int i, int j) {
                  return i < L && j0 + j < width ? dU[i][j0 + j] : 0.f;
                });
          },
          [&](int d, int j, float x) {
            dS[d][j] = tiles[Tiles::kLast + d] * dS[d][j] + x;
          });
      __syncthreads();
    } else {
      for (int e = threadIdx.x; e < L * width; e += blockDim.x) {
        const int s = e / width, j = e % width;
        float u = 0.f;
        for (int i = s; i < L; ++i)
          u += tiles[Tiles::kB + i * C + s] * dO(t0 + i, v0 + j);
        u *= f.scale;
        for (int d = 0; d < K; ++d)
          u += tiles[Tiles::kKd + s * K + d] * dS[d][j];
        keepU(s, j, u);
      }
      __syncthreads();
      for (int e = threadIdx.x; e < K * width; e += blockDim.x) {
        const int d = e / width, j = e % width;
        float x = tiles[Tiles::kLast + d] * dS[d][j];
        for (int i = 0; i < L; ++i)
          x += tiles[Tiles::kQd + i * K + d] * dO(t0 + i, v0 + j) -
               tiles[Tiles::kW + i * K + d] * dU[i][j];
        dS[d][j] = x;
      }
      __syncthreads();
    }
  }
  if (p.d_initial_state)
    store_state_columns<K, V>(p.d_initial_state + stateBase, dS, v0, width);
}

/// grid (chunks, B·H); any block size. Every input gradient of one chunk.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void gradients(const BackwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C>;
  using Grads = GradientTiles<K, V, C>;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  __shared__ float strictA[C][C]; // A, later dA
  __shared__ float dBm[C][C];
  const int chunk = blockIdx.x, sequence = blockIdx.y;
  const int sequences = f.batch * f.heads;
  const int b = sequence / f.heads, h = sequence % f.heads;
  const int t0 = chunk * C, L = chunk_tokens<C>(chunk, f.length);
  const float *tiles = Tiles::at(f.workspace, chunk, sequence, sequences);
  float *grads = Grads::at(p.scratch, chunk, sequence, sequences);
  const float *S0 =
      f.boundaries + ((long long)chunk * sequences + sequence) * K * V;
  const float *gamma = tiles + Tiles::kGamma;
  auto q = [&](int i, int d) {
    return to_float(f.q[f.q_strides.offset(b, t0 + i, h) + d]);
  };
  auto k = [&](int i, int d) {
    return to_float(f.k[f.k_strides.offset(b, t0 + i, h) + d]);
  };
  auto v = [&](int i, int j) {
    return to_float(f.v[f.v_strides.offset(b, t0 + i, h) + j]);
  };
  auto beta = [&](int i) {
    return to_float(f.beta[f.beta_strides.offset(b, t0 + i, h)]);
  };
  auto dO = [&](int i, int j) {
    return to_float(p.d_output[p.d_output_strides.offset(b, t0 + i, h) + j]);
  };
  auto e = [&](int i, int j, int d) {
    return expf(gamma[i * K + d] - gamma[j * K + d]);
  };
  const float *dU = grads + Grads::kDU, *dSEnd = grads + Grads::kDSEnd;
  float *dq = grads + Grads::kDq, *dk = grads + Grads::kDk;
  float *dG = grads + Grads::kDGamma;

  // A (recomputed as in `prepare`); through Qd, Kd.
  for (int pair = threadIdx.x; pair < C * C; pair += blockDim.x) {
    const int i = pair / C, j = pair % C;
    float a = 0.f;
    if (i < L && j < i)
      for (int d = 0; d < K; ++d)
        a += k(i, d) * k(j, d) * e(i, j, d);
    strictA[i][j] = i < L && j < i ? beta(i) * a : 0.f;
  }
  for (int x = threadIdx.x; x < L * K; x += blockDim.x) {
    const int i = x / K, d = x % K;
    float dQd = 0.f, dKd = 0.f;
    for (int j = 0; j < V; ++j) {
      dQd += dO(i, j) * S0[d * V + j];
      dKd += tiles[Tiles::kU + i * V + j] * dSEnd[d * V + j];
    }
    const float eg = expf(gamma[i * K + d]);
    const float eLast = expf(gamma[(L - 1) * K + d] - gamma[i * K + d]);
    const float kd = k(i, d) * eLast;
    dq[i * K + d] = f.scale * dQd * eg;
    dk[i * K + d] = dKd * eLast;
    dG[i * K + d] = f.scale * dQd * q(i, d) * eg - dKd * kd;
    grads[Grads::kKdTerm + i * K + d] = dKd * kd;
  }
  // dBm = scale dO Uᵀ (s ≤ i).
  for (int pair = threadIdx.x; pair < C * C; pair += blockDim.x) {
    const int i = pair / C, s = pair % C;
    float x = 0.f;
    if (i < L && s <= i)
      for (int j = 0; j < V; ++j)
        x += dO(i, j) * tiles[Tiles::kU + s * V + j];
    dBm[i][s] = f.scale * x;
  }
  __syncthreads();
  // The last row's Γ feeds Kd and e^Γlast of every row.
  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    float x = 0.f, last = 0.f;
    for (int i = 0; i < L; ++i)
      x += grads[Grads::kKdTerm + i * K + d];
    for (int j = 0; j < V; ++j)
      last += dSEnd[d * V + j] * S0[d * V + j];
    dG[(L - 1) * K + d] += x + tiles[Tiles::kLast + d] * last;
  }
  // dRw = Mᵀ(−dU S0ᵀ), dRu = Mᵀ dU by back substitution with (I + A)ᵀ.
  for (int column = threadIdx.x; column < K + V; column += blockDim.x) {
    float *x = column < K ? grads + Grads::kDRw + column
                          : grads + Grads::kDRu + (column - K);
    const int pitch = column < K ? K : V;
    for (int i = L - 1; i >= 0; --i) {
      float r = 0.f;
      if (column < K)
        for (int j = 0; j < V; ++j)
          r -= dU[i * V + j] * S0[column * V + j];
      else
        r = dU[i * V + column - K];
      for (int j = i + 1; j < L; ++j)
        r -= strictA[j][i] * x[j * pitch];
      x[i * pitch] = r;
    }
  }
  __syncthreads();
  const float *dRw = grads + Grads::kDRw, *dRu = grads + Grads::kDRu;
  // dA = −(dRw Wᵀ + dRu U0ᵀ), strictly lower (over A: the solve is done).
  for (int pair = threadIdx.x; pair < C * C; pair += blockDim.x) {
    const int i = pair / C, j = pair % C;
    float x = 0.f;
    if (i < L && j < i) {
      for (int d = 0; d < K; ++d)
        x -= dRw[i * K + d] * tiles[Tiles::kW + j * K + d];
      for (int c = 0; c < V; ++c)
        x -= dRu[i * V + c] * tiles[Tiles::kU0 + j * V + c];
    }
    strictA[i][j] = x;
  }
  __syncthreads();
  // Right-hand sides, and A and Bm seen from row i and from column j.
  for (int x = threadIdx.x; x < L * K; x += blockDim.x) {
    const int t = x / K, d = x % K;
    const float eg = expf(gamma[t * K + d]);
    float dkt = dRw[t * K + d] * beta(t) * eg;
    float dgt = dRw[t * K + d] * beta(t) * k(t, d) * eg;
    float dqt = 0.f;
    for (int j = 0; j <= t; ++j) { // t as the row i
      const float ed = e(t, j, d), kj = k(j, d);
      const float a = strictA[t][j] * beta(t), bm = dBm[t][j];
      dkt += a * kj * ed;
      dqt += bm * kj * ed;
      dgt += (a * k(t, d) + bm * q(t, d)) * kj * ed;
    }
    for (int i = t; i < L; ++i) { // t as the column j
      const float ed = e(i, t, d);
      const float a = strictA[i][t] * beta(i), bm = dBm[i][t];
      dkt += (a * k(i, d) + bm * q(i, d)) * ed;
      dgt -= (a * k(i, d) + bm * q(i, d)) * k(t, d) * ed;
    }
    dk[t * K + d] += dkt;
    dq[t * K + d] += dqt;
    dG[t * K + d] += dgt;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < L; i += blockDim.x) {
    float db = 0.f;
    for (int d = 0; d < K; ++d)
      db += dRw[i * K + d] * k(i, d) * expf(gamma[i * K + d]);
    for (int c = 0; c < V; ++c)
      db += dRu[i * V + c] * v(i, c);
    for (int j = 0; j < i; ++j) {
      float s = 0.f;
      for (int d = 0; d < K; ++d)
        s += k(i, d) * k(j, d) * e(i, j, d);
      db += strictA[i][j] * s;
    }
    p.dbeta[p.dbeta_strides.offset(b, t0 + i, h)] = from_float<TBeta>(db);
  }
  for (int x = threadIdx.x; x < L * V; x += blockDim.x) {
    const int i = x / V, c = x % V;
    p.dv[p.dv_strides.offset(b, t0 + i, h) + c] =
        from_float<TIn>(beta(i) * dRu[i * V + c]);
  }
  // dg: the reverse cumulative sum of dΓ; dq, dk out.
  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    float running = 0.f;
    for (int i = L - 1; i >= 0; --i) {
      running += dG[i * K + d];
      p.dg[p.dg_strides.offset(b, t0 + i, h) + d] = running;
      p.dq[p.dq_strides.offset(b, t0 + i, h) + d] =
          from_float<TIn>(dq[i * K + d]);
      p.dk[p.dk_strides.offset(b, t0 + i, h) + d] =
          from_float<TIn>(dk[i * K + d]);
    }
  }
}

} // namespace kda
} // namespace rudnn
