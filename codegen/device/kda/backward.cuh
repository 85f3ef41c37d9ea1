//===- kda/backward.cuh - Kimi Delta Attention backward, chunked ----------===//
//
// Follows lib/reference/kda/KdaChunked.cpp step by step (that file derives it).
// The forward's `prepare` and `propagate` run first and leave their tiles
// (W, U, Kd, e^Γlast, pairwise; and for the backward Qd and (I + A)⁻¹ in
// BackwardTiles) and the boundary states (or, the boundaries saved by the
// forward, `restore` forms U from them); then
// `state_gradient` walks the chunks in reverse for dS and dU (parallel over
// batch, heads and blocks of V) and `gradients` (kda/gradients.cuh)
// computes every input gradient chunk-parallel (on sm_90a the 16-bit walk
// keeps dS in wgmma accumulators: kda/state_gradient_wgmma.cuh). With
// 16-bit inputs every product runs on tensor cores (operands rounded to the
// input type, fp32 accumulation); the decayed intra-chunk products split
// their decay as kda/decay.cuh describes.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/kda/backward_params.cuh"
#include "rudnn/kda/forward.cuh"
#include "rudnn/kda/state_gradient_wgmma.cuh"

namespace rudnn {
namespace kda {

/// The 16-bit restore's dynamic shared memory: two stages of a 64 x 32
/// panel of W and a 32 x 64 panel of the boundary state.
template <typename TIn> struct RestoreShared {
  using Panel = tile::SharedTile<TIn, 64, 32>;
  using StateRows = tile::SharedTile<TIn, 32, 64>;
  alignas(16) TIn w[2][Panel::kElements];
  alignas(16) TIn state[2][StateRows::kElements];
};

/// U = U0 − W·S_c for 16-bit inputs, 64 columns at a time: W and S_c by
/// cp.async through a two-stage pipeline of 32-deep steps, four warps of
/// 32x32 on tensor cores, U0 read and U written two elements at a time.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void restore_tiled(const BackwardParams<TIn, TGate, TBeta> &p,
                              const ChunkAt &at) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Shared = RestoreShared<TIn>;
  using Panel = typename Shared::Panel;
  using StateRows = typename Shared::StateRows;
  constexpr int BK = 32, BN = 64;
  static_assert(C <= 64, "a chunk's rows fit the block's 64");
  constexpr tile::Alignment align = Tiles::kAlignment;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const int L = at.L;
  TIn *operands =
      Tiles::operands(Tiles::at(f.workspace, at.slot, at.column, at.columns));
  const TIn *S = f.boundaries + boundary_offset<K, V>(at);
  const int warp = threadIdx.x / 32, wm = warp / 2 * 32, wn = warp % 2 * 32;
  constexpr int steps = (K + BK - 1) / BK;
  for (int n0 = 0; n0 < V; n0 += BN) {
    auto issue = [&](int step, int stage) {
      const int k0 = step * BK;
      tile::load_tile_async<align>(Panel{shared->w[stage]},
                                   operands + Tiles::kW + k0, K, L, K - k0);
      tile::load_tile_async<align>(StateRows{shared->state[stage]},
                                   S + (long long)k0 * V + n0, V, K - k0,
                                   V - n0);
    };
    tile::WarpTile<TIn, 32, 32> ws;
    ws.clear();
    tile::two_stage_pipeline(steps, issue, [&](int, int stage) {
      if (wm >= L)
        return; // the warp's rows are past the chunk's tokens
#pragma unroll
      for (int k = 0; k < BK; k += 16)
        ws.template mma<tile::BLayout::KN>(Panel{shared->w[stage]}, wm,
                                           StateRows{shared->state[stage]}, wn,
                                           k);
    });
    // U replaces U0 in place: each pair is read before it is written.
    ws.for_each_pair([&](int r, int c, float first, float second) {
      const int i = wm + r, j = n0 + wn + c;
      if (i >= L || j >= V)
        return;
      TIn *slot = operands + Tiles::kU + (long long)i * V + j;
      const bool both = j + 1 < V;
      const float2 u0 = tile::load_pair<align>(slot, both);
      tile::store_pair(slot, u0.x - first, u0.y - second, both);
    });
  }
}

/// grid (ceil(T / C), B·H) as for_each_chunk; block size a multiple of 32
/// (128 for 16-bit inputs, with dynamic shared memory
/// sizeof(RestoreShared)). With the forward's boundaries saved, the updates
/// U = U0 − W·S_c that `propagate` would form, chunk-parallel; each block
/// restores the chunks its `prepare` formed.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void restore(const BackwardParams<TIn, TGate, TBeta> &p) {
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  for_each_chunk<C>(f, [&](const ChunkAt &at) {
    if constexpr (sizeof(TIn) == 2) {
      restore_tiled<K, V, C>(p, at);
    } else {
      using Tiles = ChunkTiles<K, V, C, TIn>;
      float *tiles = Tiles::at(f.workspace, at.slot, at.column, at.columns);
      const TIn *S = f.boundaries + boundary_offset<K, V>(at);
      chunk_updates<K, V, C, TIn>(tiles, at.L, 0, V, tile::row_major(S, V),
                                  [](int, int, float) {});
    }
  });
}

/// The f32 reverse walk: grid (WalkAt's, ceil(V / VB)); block size a
/// multiple of 32. Chunks in reverse:
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
  const WalkAt walk = WalkAt::of<C>(f);
  if (!walk.active)
    return;
  const int v0 = blockIdx.y * VB, b = walk.b, h = walk.h;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)walk.state * K * V;
  auto dO = [&](int t, int j) {
    return to_float(p.d_output[p.d_output_strides.offset(b, t, h) + j]);
  };

  load_state_columns<K, V>(
      dS, p.d_final_state ? p.d_final_state + stateBase : nullptr, v0, width);
  __syncthreads();
  for (int j = walk.chunks - 1; j >= 0; --j) {
    const int t0 = walk.t0 + j * C, L = walk.tokens<C>(j);
    const int slot = walk.first + j;
    const float *tiles =
        Tiles::at(f.workspace, slot, walk.column, walk.columns);
    const TIn *operands = Tiles::operands(tiles);
    const TIn *qd = Saved::at(f.workspace, slot, walk.column, walk.columns,
                              chunk_slots<C>(f)) +
                    Saved::kQd;
    TIn *grads = Grads::at(p.scratch, slot, walk.column, walk.columns);
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

/// The 16-bit reverse walk: grid (WalkAt's, ceil(V / 16)), 128 threads, dynamic
/// shared memory sizeof(GradientWalkShared). As `propagate_tiled`, chunks
/// in reverse: dS in accumulators (warp w rows (K/4)w..), dU for rows
/// 16w.. of the chunk, every operand through ldmatrix (Bmᵀ, Qdᵀ and Wᵀ
/// transposed), the previous chunk's operands in flight meanwhile.
template <int K, int V, int C, tile::Alignment Views, typename TIn,
          typename TGate, typename TBeta>
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
  const WalkAt walk = WalkAt::of<C>(f);
  if (!walk.active)
    return;
  const int v0 = blockIdx.y * VB, b = walk.b, h = walk.h;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)walk.state * K * V + v0;
  const int warp = threadIdx.x / 32, d0 = warp * WM;
  const int chunks = walk.chunks;

  tile::WarpTile<TIn, WM, VB> dS;
  load_state_rows<K, V>(
      dS, p.d_final_state ? p.d_final_state + stateBase : nullptr, d0, width);

  auto issue = [&](int step, int stage) {
    const int j = chunks - 1 - step, slot = walk.first + j;
    const int t0 = walk.t0 + j * C, L = walk.tokens<C>(j);
    const float *tiles =
        Tiles::at(f.workspace, slot, walk.column, walk.columns);
    const TIn *operands = Tiles::operands(tiles);
    typename Shared::Stage &to = shared->stages[stage];
    tile::load_tile_async<align>(Pairwise{to.pairwise}, operands + Tiles::kB, C,
                                 L, C);
    tile::load_tile_async<align>(Operand{to.kd}, operands + Tiles::kKd, K, L,
                                 K);
    tile::load_tile_async<align>(Operand{to.qd},
                                 Saved::at(f.workspace, slot, walk.column,
                                           walk.columns, chunk_slots<C>(f)) +
                                     Saved::kQd,
                                 K, L, K);
    tile::load_tile_async<align>(Operand{to.w}, operands + Tiles::kW, K, L, K);
    tile::load_tile_async<Views>(
        Rows{to.dO}, p.d_output + p.d_output_strides.offset(b, t0, h) + v0,
        p.d_output_strides.time, L, width);
    tile::load_tile_async<align>(Last{to.last}, tiles + Tiles::kLast, K, 1, K);
  };
  auto consume = [&](int step, int stage) {
    const int j = chunks - 1 - step;
    const int L = walk.tokens<C>(j);
    TIn *grads =
        Grads::at(p.scratch, walk.first + j, walk.column, walk.columns);
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

/// grid (WalkAt's, ceil(V / VB)): the reverse walk, on wgmma where `Wgmma`
/// (16-bit inputs on sm_90a, VB = kWgmmaWalkColumns; with `Tma` Kd, Qd and
/// W by TMA through `rows`, WorkspaceRows' map), else on the tile layer
/// for 16-bit inputs (VB = kWalkColumns), on FMA for f32. Views: whether
/// d_output's rows are promised 16-byte aligned.
template <int K, int V, int C, int VB, bool Wgmma = false,
          tile::Alignment Views = tile::Alignment::Checked, bool Tma = false,
          typename TIn, typename TGate, typename TBeta>
__device__ void state_gradient(const BackwardParams<TIn, TGate, TBeta> &p,
                               const arch::TensorMap *rows = nullptr) {
  if constexpr (Wgmma) {
    static_assert(sizeof(TIn) == 2 && VB == kWgmmaWalkColumns,
                  "the wgmma walk: 16-bit inputs, its column blocks");
    const WalkAt walk = WalkAt::of<C>(p.forward);
    if (walk.active)
      state_gradient_wgmma<K, V, C, Views, Tma>(p, walk, rows);
  } else if constexpr (sizeof(TIn) == 2) {
    static_assert(VB == kWalkColumns, "the 16-bit walk's column blocks");
    state_gradient_tiled<K, V, C, Views>(p);
  } else {
    state_gradient_fma<K, V, C, VB>(p);
  }
}

} // namespace kda
} // namespace rudnn
