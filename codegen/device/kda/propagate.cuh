//===- kda/propagate.cuh - The KDA state walk over chunks -----------------===//
//
// The one sequential kernel of the forward: per (batch, head) and block of
// value columns, chunk after chunk, U = U0 − W·S and
// S ← e^Γlast ⊙ S + Kdᵀ·U, leaving the boundary states and U for `output`.
// For 16-bit inputs the walk is latency-bound, so it keeps the state in
// mma accumulators, prefetches the next chunk's operands with cp.async
// while the current one is computed, and splits V into 16-column blocks so
// that small batches still fill the SMs; f32 inputs take the FMA walk.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/kda/chunk.cuh"
#include "rudnn/kda/state_rows.cuh"
#include "rudnn/kda/walk_wgmma.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/mma_tile.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace kda {

/// block[d][j] = state[d·V + v0 + j] for the block's `width` columns of a
/// dense [K][V] state, 0 beyond them or when `state` is null.
template <int K, int V, int VB>
__device__ void load_state_columns(float (&block)[K][VB], const float *state,
                                   int v0, int width) {
  for (int e = threadIdx.x; e < K * VB; e += blockDim.x) {
    const int d = e / VB, j = e % VB;
    block[d][j] = state && j < width ? state[d * V + v0 + j] : 0.f;
  }
}

/// state[d·V + v0 + j] = block[d][j] for the block's `width` columns.
template <int K, int V, int VB, typename T>
__device__ void store_state_columns(T *state, const float (&block)[K][VB],
                                    int v0, int width) {
  for (int e = threadIdx.x; e < K * width; e += blockDim.x) {
    const int d = e / width, j = e % width;
    state[d * V + v0 + j] = from_float<T>(block[d][j]);
  }
}

/// The chunk's updates U = U0 − W·S for its L tokens and `width` value
/// columns from v0, with S(d, j) the state at the chunk start (column j
/// counted from v0); each goes to the tiles and to keep(i, j, u).
template <int K, int V, int C, typename TIn, typename State, typename Keep>
__device__ void chunk_updates(float *tiles, int L, int v0, int width, State S,
                              Keep keep) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  TIn *operands = Tiles::operands(tiles);
  tile::for_each_warp_tile(
      L, width,
      [&](float(&acc)[4], int i0, int j0) {
        tile::mma_accumulate<TIn>(
            acc, K,
            tile::a_rows(tile::row_major(operands + Tiles::kW, K), L, K, i0),
            tile::b_columns(S, K, width, j0));
      },
      [&](int i, int j, float ws) {
        // U replaces U0 in place: each element is read before it is written.
        TIn &slot = operands[Tiles::kU + i * V + v0 + j];
        const float u = to_float(slot) - ws;
        slot = from_float<TIn>(u);
        keep(i, j, u);
      });
}

/// state ← e^Γlast ⊙ state + X over the block's K × width columns, the
/// 16x8 tiles of X from product(acc, d0, j0). Each warp owns its tiles of
/// the state, which no other warp reads meanwhile.
template <int K, int VB, typename Product>
__device__ void decay_and_add(float (&state)[K][VB], const float *last,
                              int width, Product product) {
  tile::for_each_warp_tile(K, width, product, [&](int d, int j, float x) {
    state[d][j] = last[d] * state[d][j] + x;
  });
}

/// The f32 walk: grid (WalkAt's, ceil(V / VB)); block size a multiple of 32;
/// state and updates in shared memory, products on FMA.
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ void propagate_fma(const ForwardParams<TIn, TGate, TBeta> &p,
                              const WalkAt &walk) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  __shared__ float state[K][VB];
  __shared__ float update[C][VB];
  const int v0 = blockIdx.y * VB;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)walk.state * K * V;

  load_state_columns<K, V>(
      state, p.initial_state ? p.initial_state + stateBase : nullptr, v0,
      width);
  __syncthreads();

  auto stateView = [&](int d, int j) { return state[d][j]; };
  auto updateView = [&](int i, int j) { return update[i][j]; };
  for (int j = 0; j < walk.chunks; ++j) {
    const int L = walk.tokens<C>(j), slot = walk.first + j;
    float *tiles = Tiles::at(p.workspace, slot, walk.column, walk.columns);
    TIn *operands = Tiles::operands(tiles);
    store_state_columns<K, V>(
        p.boundaries + ((long long)slot * walk.columns + walk.column) * K * V,
        state, v0, width);
    chunk_updates<K, V, C, TIn>(
        tiles, L, v0, width, stateView,
        [&](int i, int j, float u) { update[i][j] = u; });
    __syncthreads();
    // S ← e^Γlast ⊙ S + Kdᵀ·u.
    decay_and_add(
        state, tiles + Tiles::kLast, width,
        [&](float(&acc)[4], int d0, int j0) {
          tile::mma_accumulate<TIn>(
              acc, L,
              tile::a_transposed(tile::row_major(operands + Tiles::kKd, K), L,
                                 K, d0),
              tile::b_columns(updateView, L, width, j0));
        });
    __syncthreads();
  }
  if (p.final_state)
    store_state_columns<K, V>(p.final_state + stateBase, state, v0, width);
}

/// Value columns one block of the 16-bit walk carries.
constexpr int kWalkColumns = 16;

/// The 16-bit walk's dynamic shared memory: two stages of a chunk's
/// operands (W and Kd whole, the block's columns of U0, e^Γlast), and the
/// 16-bit copies of the state and the updates that feed the tensor cores.
/// The state's rows are padded to 64 so that four warps share them evenly.
template <int K, int C, typename TIn> struct WalkShared {
  static constexpr int kStateRows = (K + 63) / 64 * 64;
  using Operand = tile::SharedTile<TIn, C, kStateRows>; // [token][feature]
  using Updates0 = tile::SharedTile<TIn, C, kWalkColumns>;
  using Last = tile::SharedTile<float, 1, kStateRows>;
  using StateTile = tile::SharedTile<TIn, kStateRows, kWalkColumns>;
  using UpdateTile = tile::SharedTile<TIn, C, kWalkColumns>;
  struct Stage {
    alignas(16) TIn w[Operand::kElements];
    alignas(16) TIn kd[Operand::kElements];
    alignas(16) TIn u0[Updates0::kElements];
    alignas(16) float last[Last::kElements];
  };
  Stage stages[2];
  alignas(16) TIn state[StateTile::kElements];
  alignas(16) TIn updates[UpdateTile::kElements];
};

/// The 16-bit walk: grid (WalkAt's, ceil(V / 16)), 128 threads, dynamic shared
/// memory sizeof(WalkShared). Warp w keeps rows 16w.. of U and rows
/// (K/4)w.. of the state (in mma accumulators, fp32) for the block's 16
/// columns. Per chunk: the state leaves as a boundary and, rounded, as the
/// B operand of W·S; U = U0 − W·S goes to the workspace and, rounded, to
/// the B operand of Kdᵀ·U (Kd read transposed by ldmatrix); the next
/// chunk's operands are in flight meanwhile.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void propagate_tiled(const ForwardParams<TIn, TGate, TBeta> &p,
                                const WalkAt &walk) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Shared = WalkShared<K, C, TIn>;
  using Operand = typename Shared::Operand;
  using Updates0 = typename Shared::Updates0;
  using Last = typename Shared::Last;
  constexpr int VB = kWalkColumns, WM = Shared::kStateRows / 4;
  constexpr int depth = (K + 15) / 16 * 16; // of W·S
  static_assert(C % 16 == 0 && C <= 64, "one 16-row block of U a warp");
  constexpr tile::Alignment align = Tiles::kAlignment;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const typename Shared::StateTile stateTile{shared->state};
  const typename Shared::UpdateTile updateTile{shared->updates};
  const int v0 = blockIdx.y * VB;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)walk.state * K * V + v0;
  const int warp = threadIdx.x / 32, d0 = warp * WM;

  tile::WarpTile<TIn, WM, VB> state;
  load_state_rows<K, V>(state,
                        p.initial_state ? p.initial_state + stateBase : nullptr,
                        d0, width);

  auto issue = [&](int j, int stage) {
    const int L = walk.tokens<C>(j);
    const float *tiles =
        Tiles::at(p.workspace, walk.first + j, walk.column, walk.columns);
    const TIn *operands = Tiles::operands(tiles);
    typename Shared::Stage &to = shared->stages[stage];
    tile::load_tile_async<align>(Operand{to.w}, operands + Tiles::kW, K, L, K);
    tile::load_tile_async<align>(Operand{to.kd}, operands + Tiles::kKd, K, L,
                                 K);
    tile::load_tile_async<align>(Updates0{to.u0}, operands + Tiles::kU + v0, V,
                                 L, width);
    tile::load_tile_async<align>(Last{to.last}, tiles + Tiles::kLast, K, 1, K);
  };
  auto consume = [&](int j, int stage) {
    const int L = walk.tokens<C>(j), slot = walk.first + j;
    TIn *updates = Tiles::operands(Tiles::at(p.workspace, slot, walk.column,
                                             walk.columns)) +
                   Tiles::kU + v0;
    TIn *boundary = p.boundaries +
                    ((long long)slot * walk.columns + walk.column) * K * V + v0;
    typename Shared::Stage &from = shared->stages[stage];
    store_state_rows<K, V>(state, boundary, d0, width);
    stage_state_rows(state, stateTile, d0);
    __syncthreads();
    // U = U0 − W·S: rows beyond the chunk's tokens are zeros (W and U0 were
    // zero-filled there), as Kdᵀ·U needs.
    if (warp < C / 16) {
      const Operand w{from.w};
      const Updates0 u0{from.u0};
      tile::WarpTile<TIn, 16, VB> product;
      product.clear();
#pragma unroll
      for (int k0 = 0; k0 < depth; k0 += 16)
        product.template mma<tile::BLayout::KN>(w, 16 * warp, stateTile, 0, k0);
      product.for_each_pair([&](int r, int c, float x0, float x1) {
        const int i = 16 * warp + r;
        const float first = to_float(u0(i, c)) - x0,
                    second = to_float(u0(i, c + 1)) - x1;
        *reinterpret_cast<unsigned *>(&updateTile(i, c)) =
            tile::Mma16<TIn>::pack(first, second);
        if (i < L && c < width)
          tile::store_pair(updates + (long long)i * V + c, first, second,
                           c + 1 < width);
      });
    }
    __syncthreads();
    // S ← e^Γlast ⊙ S + Kdᵀ·U over the chunk's tokens.
    decay_rows(state, Last{from.last}, d0);
    const Operand kd{from.kd};
    for (int k0 = 0; k0 < L; k0 += 16)
      state.template mma<tile::BLayout::KN, tile::ALayout::KM>(
          kd, d0, updateTile, 0, k0);
  };
  tile::two_stage_pipeline(walk.chunks, issue, consume);

  if (p.final_state)
    store_state_rows<K, V>(state, p.final_state + stateBase, d0, width);
}

/// A packed walk's spare block (one a head, past the last sequence): zeros
/// the boundary slots no sequence fills, in its columns, so that saved
/// boundaries hold nothing stale.
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ void clear_spare_slots(const ForwardParams<TIn, TGate, TBeta> &p,
                                  const WalkAt &walk) {
  const int v0 = blockIdx.y * VB;
  const int width = V - v0 < VB ? V - v0 : VB;
  const int used = packed_tiles_before<C>(p.cu_seqlens, p.sequences, p.length);
  const long long elements = (long long)(chunk_slots<C>(p) - used) * K * width;
  const TIn zero = from_float<TIn>(0.f);
  for (long long e = threadIdx.x; e < elements; e += blockDim.x) {
    const long long row = e / width; // slot - used, then d
    const int slot = used + (int)(row / K), d = (int)(row % K);
    p.boundaries[((long long)slot * walk.columns + walk.column) * K * V +
                 (long long)d * V + v0 + e % width] = zero;
  }
}

/// grid (WalkAt's, ceil(V / VB)): the state walk, on wgmma where `Wgmma`
/// (16-bit inputs on sm_90a, VB = kWgmmaWalkColumns; with `Output` the
/// chunks' outputs too; with `Tma` W, Kd and Qd by TMA through `rows`,
/// WorkspaceRows' map), else on the tile layer for 16-bit inputs
/// (VB = kWalkColumns), on FMA for f32.
template <int K, int V, int C, int VB, bool Wgmma = false, bool Output = false,
          bool Tma = false, typename TIn, typename TGate, typename TBeta>
__device__ void propagate(const ForwardParams<TIn, TGate, TBeta> &p,
                          const arch::TensorMap *rows = nullptr) {
  const WalkAt walk = WalkAt::of<C>(p);
  if (!walk.active) {
    if (p.boundaries) // else none are kept
      clear_spare_slots<K, V, C, VB>(p, walk);
    return;
  }
  if constexpr (Wgmma) {
    static_assert(sizeof(TIn) == 2 && VB == kWgmmaWalkColumns,
                  "the wgmma walk: 16-bit inputs, its column blocks");
    propagate_wgmma<K, V, C, Output, Tma>(p, walk, rows);
  } else if constexpr (sizeof(TIn) == 2) {
    static_assert(VB == kWalkColumns, "the 16-bit walk's column blocks");
    propagate_tiled<K, V, C>(p, walk);
  } else {
    propagate_fma<K, V, C, VB>(p, walk);
  }
}

} // namespace kda
} // namespace rudnn
