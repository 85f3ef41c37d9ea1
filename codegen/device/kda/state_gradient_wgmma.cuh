//===- kda/state_gradient_wgmma.cuh - The KDA reverse walk on wgmma -------===//
//
// The 16-bit reverse walk for Hopper, the forward's wgmma walk run
// backwards: one warpgroup a block carries 16 value columns of dS through
// a sequence's chunks, last first, in fp32 wgmma accumulators (K rows in
// 64-row tiles, warp w holding rows 16w.. of each). Per chunk:
//   dU = scale Bᵀ·dO + Kd·dS      (m64n16, the chunk's tokens as rows),
//   dS ← e^Γlast ⊙ dS + scale Qdᵀ·dO − Wᵀ·dU   (one m64n16 a 64-row tile).
// B, Qd and W are read MN-major where `prepare` left them (tokens by
// features), Kd K-major; dS, dO and −dU reach the tensor cores rounded and
// transposed, K-major. The operands arrive by cp.async into 128-byte
// swizzled column blocks, the previous chunk's copies (and its dO rows,
// into registers) in flight while the current one is computed. Two
// barriers a chunk: the operands' and the staged dS's and dO's hand-over,
// then −dU's.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/kda/backward_params.cuh"
#include "rudnn/kda/walk_wgmma.cuh"

namespace rudnn {
namespace kda {

/// The reverse wgmma walk's dynamic shared memory, from a 1024-byte
/// aligned address (the host adds the slack): two stages of a chunk's
/// operands (B [C][64], Kd with 64 rows as the m64 product takes it, Qd
/// and W [C][K'], e^Γlast; zeros past the chunk), and the staged dS [16][K'],
/// dO (two: a chunk's is staged while the last one's products may still
/// read theirs) and −dU [16][C].
template <int K, int C, typename TIn> struct WgmmaGradientWalkShared {
  using Walk = WgmmaWalkShared<K, C, TIn>;
  static constexpr int kBlocks = Walk::kBlocks;
  using Pairwise = tile::ColumnBlocks<TIn, C, 1>;
  using M64Rows = typename Walk::Weights; // Kd [64][K'], K-major A
  using ChunkRows = typename Walk::Keys;  // Qd, W [C][K'], MN-major A
  using Last = typename Walk::Last;
  using StateT = typename Walk::StateT;
  using RowsT = typename Walk::UpdatesT; // [16][C] of dO or −dU
  struct Stage {
    alignas(1024) TIn pairwise[Pairwise::kElements];
    alignas(1024) TIn kd[M64Rows::kElements];
    alignas(1024) TIn qd[ChunkRows::kElements];
    alignas(1024) TIn w[ChunkRows::kElements];
    alignas(16) float last[Last::kElements];
    unsigned long long loaded; // the stage's TMA boxes (WorkspaceRows)
  };
  Stage stages[2];
  alignas(1024) TIn dS[StateT::kElements];
  alignas(1024) TIn dO[2][RowsT::kElements];
  alignas(1024) TIn minusDU[RowsT::kElements];
};

/// One thread's half of a chunk's row of a block's 16 columns (row
/// threadIdx.x / 2, columns from 8 · (threadIdx.x % 2)), zeros past L rows
/// and `width` columns: read a chunk ahead into registers, one 16-byte
/// load where aligned, then written transposed into the K-major tile a
/// wgmma reads as B. WholeColumns: every block has its 16 columns.
template <typename T> struct HalfRow {
  static_assert(sizeof(T) == 2, "8 elements: one 16-byte vector");
  union {
    uint4 bits;
    T x[8];
  };

  template <tile::Alignment Align, bool WholeColumns>
  __device__ __forceinline__ void load(const T *rows, long long pitch, int L,
                                       int width) {
    const int r = threadIdx.x / 2, c0 = 8 * (threadIdx.x % 2);
    const T *from = rows + (long long)r * pitch + c0;
    if (r >= L) {
      bits = make_uint4(0, 0, 0, 0);
      return;
    }
    if ((WholeColumns || c0 + 8 <= width) &&
        (Align == tile::Alignment::Aligned ||
         reinterpret_cast<unsigned long long>(from) % 16 == 0)) {
      bits = *reinterpret_cast<const uint4 *>(from);
      return;
    }
    if constexpr (!WholeColumns || Align != tile::Alignment::Aligned)
#pragma unroll
      for (int e = 0; e < 8; ++e)
        x[e] = c0 + e < width ? from[e] : from_float<T>(0.f);
  }

  template <typename Staged>
  __device__ __forceinline__ void store_transposed(const Staged &to) const {
    const int r = threadIdx.x / 2, c0 = 8 * (threadIdx.x % 2);
#pragma unroll
    for (int e = 0; e < 8; ++e)
      to(c0 + e, r) = x[e];
  }
};

/// The reverse wgmma walk: grid (WalkAt's, ceil(V / 16)), one warpgroup,
/// dynamic shared memory sizeof(WgmmaGradientWalkShared) + 1024. Views:
/// whether d_output's rows are promised 16-byte aligned. With `Tma`, Kd,
/// Qd and W arrive by TMA through `rows` (WorkspaceRows' map).
template <int K, int V, int C, tile::Alignment Views, bool Tma, typename TIn,
          typename TGate, typename TBeta>
__device__ void state_gradient_wgmma(const BackwardParams<TIn, TGate, TBeta> &p,
                                     const WalkAt &walk,
                                     const arch::TensorMap *rows) {
  using Rows = WorkspaceRows<K, V, C, TIn>;
  static_assert(!Tma || Rows::kFits, "the tiles as whole rows of K");
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Saved = BackwardTiles<K, V, C, TIn>;
  using Grads = GradientTiles<K, V, C, TIn>;
  using Shared = WgmmaGradientWalkShared<K, C, TIn>;
  using ChunkRows = typename Shared::ChunkRows;
  constexpr int VB = kWgmmaWalkColumns, kBlocks = Shared::kBlocks;
  constexpr tile::Alignment align = Tiles::kAlignment;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  Shared &shared = tile::aligned_shared<Shared>();
  const typename Shared::StateT dST{shared.dS};
  const typename Shared::RowsT minusDUT{shared.minusDU};
  const int v0 = blockIdx.y * VB;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)walk.state * K * V + v0;
  const int warp = threadIdx.x / 32;

  WalkState<K, V, TIn> dS;
  dS.load(p.d_final_state ? p.d_final_state + stateBase : nullptr, width);

  if constexpr (Tma) {
    // Rows C.. of Kd's 64-row tiles are never loaded; the barriers are
    // ready before the first box is issued.
    for (int stage = 0; stage < 2; ++stage) {
      tile::clear_rows_from(typename Shared::M64Rows{shared.stages[stage].kd},
                            C);
      if (threadIdx.x == 0)
        arch::mbarrier_init(&shared.stages[stage].loaded, 1);
    }
    __syncthreads();
  }

  HalfRow<TIn> dORows;
  auto issue = [&](int j, int stage) {
    const int L = walk.tokens<C>(j), slot = walk.first + j;
    const float *tiles =
        Tiles::at(f.workspace, slot, walk.column, walk.columns);
    const TIn *operands = Tiles::operands(tiles);
    const TIn *qd = Saved::at(f.workspace, slot, walk.column, walk.columns,
                              chunk_slots<C>(f)) +
                    Saved::kQd;
    typename Shared::Stage &to = shared.stages[stage];
    const typename Shared::M64Rows kd{to.kd};
    if constexpr (Tma) {
      if (threadIdx.x == 0) {
        arch::mbarrier_arrive_expect_tx(
            &to.loaded, Rows::template bytes<typename Shared::M64Rows>() +
                            2 * Rows::template bytes<ChunkRows>());
        Rows::load(kd, *rows, Rows::row(f.workspace, operands + Tiles::kKd),
                   &to.loaded);
        Rows::load(ChunkRows{to.qd}, *rows, Rows::row(f.workspace, qd),
                   &to.loaded);
        Rows::load(ChunkRows{to.w}, *rows,
                   Rows::row(f.workspace, operands + Tiles::kW), &to.loaded);
      }
    } else {
      load_blocks_async<align>(kd, operands + Tiles::kKd, K, L, K);
      load_blocks_async<align>(ChunkRows{to.qd}, qd, K, L, K);
      load_blocks_async<align>(ChunkRows{to.w}, operands + Tiles::kW, K, L, K);
    }
    load_blocks_async<align>(typename Shared::Pairwise{to.pairwise},
                             operands + Tiles::kB, C, L, L);
    tile::load_tile_async<align>(typename Shared::Last{to.last},
                                 tiles + Tiles::kLast, K, 1, K);
    arch::cp_async_commit();
    dORows.template load<Views, V % VB == 0>(
        p.d_output +
            p.d_output_strides.offset(walk.b, walk.t0 + j * C, walk.h) + v0,
        p.d_output_strides.time, L, width);
  };

  if (walk.chunks > 0)
    issue(walk.chunks - 1, (walk.chunks - 1) % 2);
  for (int j = walk.chunks - 1; j >= 0; --j) {
    const int L = walk.tokens<C>(j);
    const typename Shared::Stage &from = shared.stages[j % 2];
    const typename Shared::RowsT dOT{shared.dO[j % 2]};
    TIn *grads =
        Grads::at(p.scratch, walk.first + j, walk.column, walk.columns);
    // dS at the chunk's end, kept for `gradients` and staged.
    dS.store(grads + Grads::kDSEnd + v0, width);
    dS.stage(dST);
    dORows.store_transposed(dOT);
    if constexpr (Tma)
      arch::mbarrier_wait(&shared.stages[j % 2].loaded,
                          (walk.chunks - 1 - j) / 2 % 2);
    arch::cp_async_wait<0>();
    arch::fence_proxy_async_shared();
    // The chunk's operands, dS and dO are in place for the async proxy;
    // every thread is done with the other stage's buffers.
    __syncthreads();

    // dU = scale Bᵀ·dO + Kd·dS, the two products in one group; the
    // previous chunk's copies are issued while the tensor cores run it.
    tile::WarpTile<TIn, 16, VB> intra, dU;
    arch::wgmma_fence_operand(tile::wgmma_accumulators(intra));
    tile::fence_for(dU);
    multiply_transposed<C>(intra, from.pairwise, dOT, /*accumulate=*/false);
    multiply_by_state(dU, from.kd, dST, /*accumulate=*/false);
    arch::wgmma_commit();
    if (j > 0)
      issue(j - 1, (j - 1) % 2);
    arch::wgmma_wait<0>();
    arch::wgmma_fence_operand(tile::wgmma_accumulators(intra));
    arch::wgmma_fence_operand(tile::wgmma_accumulators(dU));
    dU.add_scaled(intra, f.scale);
    dU.for_each_pair([&](int r, int c, float first, float second) {
      const int i = 16 * warp + r;
      if (i >= C)
        return; // rows of the m64 past the chunk size
      minusDUT(c, i) = from_float<TIn>(-first);
      minusDUT(c + 1, i) = from_float<TIn>(-second);
      if (i < L && c < width)
        tile::store_pair(grads + Grads::kDU + (long long)i * V + v0 + c, first,
                         second, c + 1 < width);
    });
    arch::fence_proxy_async_shared();
    __syncthreads(); // −dU is in place

    // dS ← e^Γlast ⊙ dS + scale Qdᵀ·dO − Wᵀ·dU.
    dS.decay(typename Shared::Last{const_cast<float *>(from.last)});
    tile::WarpTile<TIn, 16, VB> queries[kBlocks];
#pragma unroll
    for (int m = 0; m < kBlocks; ++m)
      arch::wgmma_fence_operand(tile::wgmma_accumulators(queries[m]));
    arch::wgmma_fence();
#pragma unroll
    for (int m = 0; m < kBlocks; ++m) {
      const int block = m * ChunkRows::Block::kElements;
      multiply_transposed<C>(queries[m], from.qd + block, dOT,
                             /*accumulate=*/false);
      multiply_transposed<C>(dS.tiles[m], from.w + block, minusDUT,
                             /*accumulate=*/true);
    }
    arch::wgmma_commit();
    arch::wgmma_wait<0>();
    dS.fence();
#pragma unroll
    for (int m = 0; m < kBlocks; ++m) {
      arch::wgmma_fence_operand(tile::wgmma_accumulators(queries[m]));
      dS.tiles[m].add_scaled(queries[m], f.scale);
    }
  }

  dS.store(p.d_initial_state ? p.d_initial_state + stateBase : nullptr, width);
}

} // namespace kda
} // namespace rudnn
