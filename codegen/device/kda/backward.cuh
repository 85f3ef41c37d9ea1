//===- kda/backward.cuh - Kimi Delta Attention backward, chunked ----------===//
//
// Follows lib/reference/KdaChunked.cpp step by step (that file derives it).
// The forward's `prepare` and `propagate` run first and leave their tiles
// (W, U, Kd, e^Γlast, pairwise; and for the backward Γ, Qd, (I + A)⁻¹ and
// U0 in BackwardTiles) and the boundary states
// (or, the boundaries saved by the forward, `restore` forms U from them); then
// `state_gradient` walks the chunks in reverse for dS and dU (parallel over
// batch, heads and blocks of V) and `gradients` computes every input
// gradient chunk-parallel. With 16-bit inputs every product of the three
// runs on tensor cores (operands rounded to the input type, fp32
// accumulation); the decayed intra-chunk products split their decay as
// kda/decay.cuh describes.
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

/// What the backward keeps per chunk: the gradients of the chunk's end
/// state and of its updates in the input type (`gradients` takes them as
/// tensor-core operands, rounded to that type anyway), then its own fp32
/// intermediates.
template <int K, int V, int C, typename TIn> struct GradientTiles {
  // fp32, offsets in floats from the chunk's scratch.
  static constexpr long long kDq = 0;                // [C][K]
  static constexpr long long kDk = kDq + C * K;      // [C][K]
  static constexpr long long kDGamma = kDk + C * K;  // [C][K]
  static constexpr long long kDRw = kDGamma + C * K; // [C][K]
  static constexpr long long kDRu = kDRw + C * K;    // [C][V]
  static constexpr long long kKdTerm = kDRu + C * V; // [C][K]
  static constexpr long long kFp32Floats = kKdTerm + C * K;
  // TIn, offsets in elements from operands().
  static constexpr long long kDSEnd = 0;           // [K][V] dS at chunk end
  static constexpr long long kDU = kDSEnd + K * V; // [C][V]
  static constexpr long long kOperands = kDU + C * V;
  static constexpr long long kFloats =
      kFp32Floats + (kOperands * (long long)sizeof(TIn) + 15) / 16 * 4;

  static __device__ __forceinline__ float *at(float *scratch, int chunk,
                                              int sequence, int sequences) {
    return scratch + ((long long)chunk * sequences + sequence) * kFloats;
  }
  static __device__ __forceinline__ TIn *operands(float *grads) {
    return reinterpret_cast<TIn *>(grads + kFp32Floats);
  }
};

/// grid (chunks, B·H); block size a multiple of 32. With the forward's
/// boundaries saved, the updates U = U0 − W·S_c that `propagate` would form,
/// chunk-parallel.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void restore(const BackwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  const int chunk = blockIdx.x, sequence = blockIdx.y;
  const int sequences = f.batch * f.heads;
  const int L = chunk_tokens<C>(chunk, f.length);
  float *tiles = Tiles::at(f.workspace, chunk, sequence, sequences);
  const TIn *S =
      f.boundaries + ((long long)chunk * sequences + sequence) * K * V;
  chunk_updates<K, V, C, TIn>(tiles, L, 0, V, tile::row_major(S, V),
                              [](int, int, float) {});
}

/// The f32 reverse walk: grid (B·H, ceil(V / VB)); block size a multiple of
/// 32. Chunks in reverse:
///   dU = scale Bmᵀ dO + Kd dS,  dS ← e^Γlast ⊙ dS + scale Qdᵀ dO − Wᵀ dU.
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ void state_gradient_fma(const BackwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Saved = BackwardTiles<K, V, C, TIn>;
  using Grads = GradientTiles<K, V, C, TIn>;
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
    const TIn *operands = Tiles::operands(tiles);
    const TIn *qd = Saved::operands(Saved::at(f.workspace, chunk, sequence,
                                              sequences, f.length)) +
                    Saved::kQd;
    TIn *grads =
        Grads::operands(Grads::at(p.scratch, chunk, sequence, sequences));
    store_state_columns<K, V>(grads + Grads::kDSEnd, dS, v0, width);
    auto keepU = [&](int s, int j, float u) {
      dU[s][j] = u;
      grads[Grads::kDU + s * V + v0 + j] = from_float<TIn>(u);
    };
    auto dOChunk = [&](int i, int j) { return dO(t0 + i, v0 + j); };
    auto dSView = [&](int d, int j) { return dS[d][j]; };
    auto dUView = [&](int i, int j) { return dU[i][j]; };
    auto minusW = [&](int i, int d) {
      return -to_float(operands[Tiles::kW + i * K + d]);
    };
    tile::for_each_warp_tile(
        L, width,
        [&](float(&acc)[4], int s0, int j0) {
          float intra[4] = {0.f, 0.f, 0.f, 0.f};
          tile::mma_accumulate<TIn>(
              intra, L,
              tile::a_transposed(tile::row_major(operands + Tiles::kB, C), L, L,
                                 s0),
              tile::b_columns(dOChunk, L, width, j0));
          for (int r = 0; r < 4; ++r)
            acc[r] = f.scale * intra[r];
          tile::mma_accumulate<TIn>(
              acc, K,
              tile::a_rows(tile::row_major(operands + Tiles::kKd, K), L, K, s0),
              tile::b_columns(dSView, K, width, j0));
        },
        keepU);
    __syncthreads();
    // dS ← e^Γlast ⊙ dS + scale Qdᵀ dO − Wᵀ dU.
    decay_and_add(
        dS, tiles + Tiles::kLast, width, [&](float(&acc)[4], int d0, int j0) {
          tile::mma_accumulate<TIn>(
              acc, L, tile::a_transposed(tile::row_major(qd, K), L, K, d0),
              tile::b_columns(dOChunk, L, width, j0));
          for (int r = 0; r < 4; ++r)
            acc[r] *= f.scale;
          tile::mma_accumulate<TIn>(acc, L,
                                    tile::a_transposed(minusW, L, K, d0),
                                    tile::b_columns(dUView, L, width, j0));
        });
    __syncthreads();
  }
  if (p.d_initial_state)
    store_state_columns<K, V>(p.d_initial_state + stateBase, dS, v0, width);
}

/// The 16-bit reverse walk's dynamic shared memory: two stages of a chunk's
/// operands (Bm, Kd, Qd and W whole, the block's columns of dO, e^Γlast)
/// and the 16-bit copies of dS and −dU that feed the tensor cores.
template <int K, int C, typename TIn> struct GradientWalkShared {
  using Walk = WalkShared<K, C, TIn>;
  using Operand = typename Walk::Operand;
  using Pairwise = tile::SharedTile<TIn, C, C>;
  using Rows = tile::SharedTile<TIn, C, kWalkColumns>; // dO, −dU
  using Last = typename Walk::Last;
  using StateTile = typename Walk::StateTile;
  struct Stage {
    alignas(16) TIn pairwise[Pairwise::kElements];
    alignas(16) TIn kd[Operand::kElements];
    alignas(16) TIn qd[Operand::kElements];
    alignas(16) TIn w[Operand::kElements];
    alignas(16) TIn dO[Rows::kElements];
    alignas(16) float last[Last::kElements];
  };
  Stage stages[2];
  alignas(16) TIn dS[StateTile::kElements];
  alignas(16) TIn minusDU[Rows::kElements];
};

/// The 16-bit reverse walk: grid (B·H, ceil(V / 16)), 128 threads, dynamic
/// shared memory sizeof(GradientWalkShared). As `propagate_tiled`, chunks
/// in reverse: dS in accumulators (warp w rows (K/4)w..), dU for rows
/// 16w.. of the chunk, every operand through ldmatrix (Bmᵀ, Qdᵀ and Wᵀ
/// transposed), the previous chunk's operands in flight meanwhile.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void
state_gradient_tiled(const BackwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Saved = BackwardTiles<K, V, C, TIn>;
  using Grads = GradientTiles<K, V, C, TIn>;
  using Shared = GradientWalkShared<K, C, TIn>;
  using Operand = typename Shared::Operand;
  using Pairwise = typename Shared::Pairwise;
  using Rows = typename Shared::Rows;
  using Last = typename Shared::Last;
  constexpr int VB = kWalkColumns, WM = Shared::Walk::kStateRows / 4;
  constexpr int depth = (K + 15) / 16 * 16; // of Kd·dS
  static_assert(C % 16 == 0 && C <= 64, "one 16-row block of dU a warp");
  constexpr tile::Alignment align = Tiles::kAlignment;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const typename Shared::StateTile dSTile{shared->dS};
  const Rows minusDU{shared->minusDU};
  const int sequence = blockIdx.x, v0 = blockIdx.y * VB;
  const int sequences = f.batch * f.heads;
  const int b = sequence / f.heads, h = sequence % f.heads;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)sequence * K * V + v0;
  const int warp = threadIdx.x / 32, d0 = warp * WM;
  const int chunks = (f.length + C - 1) / C;

  tile::WarpTile<TIn, WM, VB> dS;
  load_state_rows<K, V>(
      dS, p.d_final_state ? p.d_final_state + stateBase : nullptr, d0, width);

  auto issue = [&](int step, int stage) {
    const int chunk = chunks - 1 - step;
    const int t0 = chunk * C, L = chunk_tokens<C>(chunk, f.length);
    const float *tiles = Tiles::at(f.workspace, chunk, sequence, sequences);
    const TIn *operands = Tiles::operands(tiles);
    typename Shared::Stage &to = shared->stages[stage];
    tile::load_tile_async<align>(Pairwise{to.pairwise}, operands + Tiles::kB, C,
                                 L, C);
    tile::load_tile_async<align>(Operand{to.kd}, operands + Tiles::kKd, K, L,
                                 K);
    tile::load_tile_async<align>(
        Operand{to.qd},
        Saved::operands(
            Saved::at(f.workspace, chunk, sequence, sequences, f.length)) +
            Saved::kQd,
        K, L, K);
    tile::load_tile_async<align>(Operand{to.w}, operands + Tiles::kW, K, L, K);
    tile::load_tile_async(Rows{to.dO},
                          p.d_output + p.d_output_strides.offset(b, t0, h) + v0,
                          p.d_output_strides.time, L, width);
    tile::load_tile_async<align>(Last{to.last}, tiles + Tiles::kLast, K, 1, K);
  };
  auto consume = [&](int step, int stage) {
    const int chunk = chunks - 1 - step;
    const int L = chunk_tokens<C>(chunk, f.length);
    TIn *grads =
        Grads::operands(Grads::at(p.scratch, chunk, sequence, sequences));
    typename Shared::Stage &from = shared->stages[stage];
    const Rows dO{from.dO};
    store_state_rows<K, V>(dS, grads + Grads::kDSEnd + v0, d0, width);
    stage_state_rows(dS, dSTile, d0);
    __syncthreads();
    // dU = scale Bmᵀ dO + Kd dS; Bm is zero above its diagonal, so row
    // block s0 needs tokens from s0 on.
    if (warp < C / 16) {
      const int s0 = 16 * warp;
      tile::WarpTile<TIn, 16, VB> dU;
      dU.clear();
      for (int k0 = s0; k0 < L; k0 += 16)
        dU.template mma<tile::BLayout::KN, tile::ALayout::KM>(
            Pairwise{from.pairwise}, s0, dO, 0, k0);
      dU.update_pairs([&](int, int, float &first, float &second) {
        first *= f.scale;
        second *= f.scale;
      });
#pragma unroll
      for (int k0 = 0; k0 < depth; k0 += 16)
        dU.template mma<tile::BLayout::KN>(Operand{from.kd}, s0, dSTile, 0, k0);
      dU.for_each_pair([&](int r, int c, float first, float second) {
        const int i = s0 + r;
        *reinterpret_cast<unsigned *>(&minusDU(i, c)) =
            tile::Mma16<TIn>::pack(-first, -second);
        if (i < L && c < width)
          tile::store_pair(grads + Grads::kDU + (long long)i * V + v0 + c,
                           first, second, c + 1 < width);
      });
    }
    __syncthreads();
    // dS ← e^Γlast ⊙ dS + scale Qdᵀ dO − Wᵀ dU over the chunk's tokens.
    decay_rows(dS, Last{from.last}, d0);
    tile::WarpTile<TIn, WM, VB> qdO;
    qdO.clear();
    for (int k0 = 0; k0 < L; k0 += 16)
      qdO.template mma<tile::BLayout::KN, tile::ALayout::KM>(Operand{from.qd},
                                                             d0, dO, 0, k0);
    dS.add_scaled(qdO, f.scale);
    for (int k0 = 0; k0 < L; k0 += 16)
      dS.template mma<tile::BLayout::KN, tile::ALayout::KM>(Operand{from.w}, d0,
                                                            minusDU, 0, k0);
  };
  tile::two_stage_pipeline(chunks, issue, consume);

  if (p.d_initial_state)
    store_state_rows<K, V>(dS, p.d_initial_state + stateBase, d0, width);
}

/// grid (B·H, ceil(V / VB)): the reverse walk, on the tile layer for 16-bit
/// inputs (VB = kWalkColumns), on FMA for f32.
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ void state_gradient(const BackwardParams<TIn, TGate, TBeta> &p) {
  if constexpr (sizeof(TIn) == 2) {
    static_assert(VB == kWalkColumns, "the 16-bit walk's column blocks");
    state_gradient_tiled<K, V, C>(p);
  } else {
    state_gradient_fma<K, V, C, VB>(p);
  }
}

/// grid (chunks, B·H); block size a multiple of 32. Every input gradient of
/// one chunk. Each product is a tile::mma_accumulate (tensor cores for
/// 16-bit inputs); each warp owns the 16x8 tiles for_each_warp_tile gives
/// it, the same ones in every pass over a [L][K] result, so those passes
/// need no barrier between them.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void gradients(const BackwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Saved = BackwardTiles<K, V, C, TIn>;
  using Grads = GradientTiles<K, V, C, TIn>;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  __shared__ float kk[C][C]; // Σ_d k_id k_jd e^(Γ_id − Γ_jd): A = β ⊙ kk
  __shared__ float dAb[C][C]; // β_i dA_ij
  __shared__ float dBm[C][C];
  const int chunk = blockIdx.x, sequence = blockIdx.y;
  const int sequences = f.batch * f.heads;
  const int b = sequence / f.heads, h = sequence % f.heads;
  const int t0 = chunk * C, L = chunk_tokens<C>(chunk, f.length);
  const float *tiles = Tiles::at(f.workspace, chunk, sequence, sequences);
  float *grads = Grads::at(p.scratch, chunk, sequence, sequences);
  const TIn *S0 =
      f.boundaries + ((long long)chunk * sequences + sequence) * K * V;
  const float *saved =
      Saved::at(f.workspace, chunk, sequence, sequences, f.length);
  const float *gamma = saved + Saved::kGamma;
  const TIn *operands = Tiles::operands(tiles);
  const TIn *savedOperands = Saved::operands(saved);
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
  const TIn *U = operands + Tiles::kU;
  const TIn *dU = Grads::operands(grads) + Grads::kDU,
            *dSEnd = Grads::operands(grads) + Grads::kDSEnd;
  float *dq = grads + Grads::kDq, *dk = grads + Grads::kDk;
  float *dG = grads + Grads::kDGamma, *dRw = grads + Grads::kDRw;
  float *dRu = grads + Grads::kDRu;

  // The second product is not wanted here: it repeats the first.
  decayed_pairwise<TIn, K>(
      L, gamma, k, k, k, [&](int i, int j, float x) { kk[i][j] = x; },
      [](int, int, float) {});
  // Through Qd = scale q ⊙ e^Γ: dQd = dO S0ᵀ.
  tile::for_each_warp_tile(
      L, K,
      [&](float(&acc)[4], int i0, int d0) {
        tile::mma_accumulate<TIn>(
            acc, V, tile::a_rows(dO, L, V, i0),
            tile::b_transposed(tile::row_major(S0, V), K, V, d0));
      },
      [&](int i, int d, float dQd) {
        const float eg = fast_exp(gamma[i * K + d]);
        dq[i * K + d] = f.scale * dQd * eg;
        dG[i * K + d] = f.scale * dQd * q(i, d) * eg;
      });
  // Through Kd = k ⊙ e^(Γlast − Γ): dKd = U dS_endᵀ.
  tile::for_each_warp_tile(
      L, K,
      [&](float(&acc)[4], int i0, int d0) {
        tile::mma_accumulate<TIn>(
            acc, V, tile::a_rows(tile::row_major(U, V), L, V, i0),
            tile::b_transposed(tile::row_major(dSEnd, V), K, V, d0));
      },
      [&](int i, int d, float dKd) {
        const float eLast = fast_exp(gamma[(L - 1) * K + d] - gamma[i * K + d]);
        const float kdTerm = dKd * k(i, d) * eLast;
        dk[i * K + d] = dKd * eLast;
        dG[i * K + d] -= kdTerm;
        grads[Grads::kKdTerm + i * K + d] = kdTerm;
      });
  // dBm = scale dO Uᵀ, lower triangular.
  tile::for_each_warp_tile(
      L, L,
      [&](float(&acc)[4], int i0, int s0) {
        if (s0 <= i0 + 15)
          tile::mma_accumulate<TIn>(
              acc, V, tile::a_rows(dO, L, V, i0),
              tile::b_transposed(tile::row_major(U, V), L, V, s0));
      },
      [&](int i, int s, float x) { dBm[i][s] = s <= i ? f.scale * x : 0.f; });
  // dRu = Mᵀ dU, M = (I + A)⁻¹ from `prepare`.
  tile::for_each_warp_tile(
      L, V,
      [&](float(&acc)[4], int i0, int c0) {
        tile::mma_accumulate<TIn>(
            acc, L,
            tile::a_transposed(
                tile::row_major(savedOperands + Saved::kInverse, C), L, L, i0),
            tile::b_columns(tile::row_major(dU, V), L, V, c0));
      },
      [&](int i, int c, float x) { dRu[i * V + c] = x; });
  __syncthreads();
  // The last row's Γ feeds Kd and e^Γlast of every row.
  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    float x = 0.f, last = 0.f;
    for (int i = 0; i < L; ++i)
      x += grads[Grads::kKdTerm + i * K + d];
    for (int j = 0; j < V; ++j)
      last += to_float(dSEnd[d * V + j]) * to_float(S0[d * V + j]);
    dG[(L - 1) * K + d] += x + tiles[Tiles::kLast + d] * last;
  }
  // dRw = Mᵀ(−dU S0ᵀ) = −dRu S0ᵀ.
  tile::for_each_warp_tile(
      L, K,
      [&](float(&acc)[4], int i0, int d0) {
        tile::mma_accumulate<TIn>(
            acc, V, tile::a_rows(tile::row_major(dRu, V), L, V, i0),
            tile::b_transposed(tile::row_major(S0, V), K, V, d0));
      },
      [&](int i, int d, float x) { dRw[i * K + d] = -x; });
  __syncthreads();
  // dA = −(dRw Wᵀ + dRu U0ᵀ), strictly lower;
  // kept as β ⊙ dA, and kk becomes dA ⊙ kk, dβ's share.
  tile::for_each_warp_tile(
      L, L,
      [&](float(&acc)[4], int i0, int j0) {
        if (j0 > i0 + 15)
          return;
        tile::mma_accumulate<TIn>(
            acc, K, tile::a_rows(tile::row_major(dRw, K), L, K, i0),
            tile::b_transposed(tile::row_major(operands + Tiles::kW, K), L, K,
                               j0));
        tile::mma_accumulate<TIn>(
            acc, V, tile::a_rows(tile::row_major(dRu, V), L, V, i0),
            tile::b_transposed(tile::row_major(savedOperands + Saved::kU0, V),
                               L, V, j0));
      },
      [&](int i, int j, float x) {
        const float dA = j < i ? -x : 0.f;
        dAb[i][j] = beta(i) * dA;
        kk[i][j] = j < i ? dA * kk[i][j] : 0.f;
      });
  __syncthreads();
  auto aB = [&](int i, int j) { return dAb[i][j]; };
  auto bm = [&](int i, int j) { return dBm[i][j]; };
  // Through A and B seen from row t: Σ_j (β dA)_tj k_j e, Σ_j dBm_tj k_j e.
  tile::for_each_warp_tile(
      L, K,
      [&](float(&acc)[4], int i0, int d0) {
        decayed_rows<TIn, K>(acc, L, i0, d0, gamma, aB, k);
      },
      [&](int t, int d, float x) {
        // Plus the right-hand side β k e^Γ of W.
        const float w = dRw[t * K + d] * beta(t) * fast_exp(gamma[t * K + d]);
        dk[t * K + d] += x + w;
        dG[t * K + d] += (x + w) * k(t, d);
      });
  tile::for_each_warp_tile(
      L, K,
      [&](float(&acc)[4], int i0, int d0) {
        decayed_rows<TIn, K>(acc, L, i0, d0, gamma, bm, k);
      },
      [&](int t, int d, float x) {
        dq[t * K + d] += x;
        dG[t * K + d] += x * q(t, d);
      });
  // ... and from column t: Σ_i ((β dA)_it k_i + dBm_it q_i) e.
  tile::for_each_warp_tile(
      L, K,
      [&](float(&acc)[4], int i0, int d0) {
        decayed_columns<TIn, K>(acc, L, i0, d0, gamma, aB, k);
        decayed_columns<TIn, K>(acc, L, i0, d0, gamma, bm, q);
      },
      [&](int t, int d, float x) {
        dk[t * K + d] += x;
        dG[t * K + d] -= x * k(t, d);
      });
  __syncthreads();
  for (int i = threadIdx.x; i < L; i += blockDim.x) {
    float db = 0.f;
    for (int d = 0; d < K; ++d)
      db += dRw[i * K + d] * k(i, d) * fast_exp(gamma[i * K + d]);
    for (int c = 0; c < V; ++c)
      db += dRu[i * V + c] * v(i, c);
    for (int j = 0; j < i; ++j)
      db += kk[i][j];
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
