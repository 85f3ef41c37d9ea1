//===- kda/output.cuh - The chunk-parallel KDA output ---------------------===//
//
// O = scale ((q ⊙ e^Γ)·S + B·U) per chunk. The decayed queries are formed
// here from q and g rather than kept between kernels: the workspace is the
// forward's largest cost in memory, a cumulative sum per feature is cheap.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/kda/chunk.cuh"
#include "rudnn/math.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/mma_tile.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace kda {

/// The output block's dynamic shared memory: the chunk's decayed queries
/// q ⊙ e^Γ in the input type, whole 32-deep steps wide (zeros past K); for
/// 16-bit inputs the block's 64 rows.
template <int K, int C, typename TIn> struct OutputShared {
  static constexpr int kRows = sizeof(TIn) == 2 ? 64 : C;
  using Queries = tile::SharedTile<TIn, kRows, (K + 31) / 32 * 32>;
  alignas(16) TIn qd[Queries::kElements];
};

/// What an output block reads of its chunk.
template <int K, int V, int C, typename TIn> struct OutputChunk {
  int b, h, t0, L;
  const TIn *operands; // the chunk's tiles in the input type
  const TIn *state;    // the boundary state at the chunk's start

  template <typename TGate, typename TBeta>
  __device__ OutputChunk(const ForwardParams<TIn, TGate, TBeta> &p,
                         const ChunkAt &at) {
    using Tiles = ChunkTiles<K, V, C, TIn>;
    b = at.b, h = at.h, t0 = at.t0, L = at.L;
    operands =
        Tiles::operands(Tiles::at(p.workspace, at.slot, at.column, at.columns));
    state = p.boundaries + boundary_offset<K, V>(at);
  }
};

/// queries(i, d) = q_id · e^Γ_id for the chunk's L tokens (zeros beyond):
/// q's rows copied in by cp.async, then scaled down each feature as
/// chunk_decay sums Γ (as `prepare` does). Block-collective.
template <int K, tile::Alignment Views, typename Queries, typename TIn,
          typename TGate, typename TBeta, typename Chunk>
__device__ void load_decayed_queries(const Queries &queries,
                                     const ForwardParams<TIn, TGate, TBeta> &p,
                                     const Chunk &chunk) {
  tile::load_tile_async<Views>(queries,
                               p.q + p.q_offset(chunk.b, chunk.t0, chunk.h),
                               p.q_strides.time, chunk.L, K);
  arch::cp_async_commit();
  arch::cp_async_wait<0>();
  __syncthreads();
  chunk_decay<K>(
      p, chunk.b, chunk.h, chunk.t0, chunk.L, [&](int i, int d, float gamma) {
        queries(i, d) =
            from_float<TIn>(to_float(queries(i, d)) * fast_exp(gamma));
      });
  __syncthreads();
}

/// Columns of the output one block computes with 16-bit inputs.
constexpr int kOutputColumns = 64;

/// O = scale ((q ⊙ e^Γ)·S + B·U) for 16-bit inputs: grid (chunks, B·H,
/// ceil(V / 64)), 128 threads, dynamic shared memory sizeof(OutputShared),
/// the chunk's rows x 64 columns per block, four warps of 32x32 on tensor
/// cores. Both products run through one two-stage pipeline of 32-deep steps
/// (K of them, then the chunk's tokens): operands cp.async'd into swizzled
/// shared tiles, the decayed queries whole in shared memory, fragments by
/// ldmatrix.
template <int K, int V, int C, tile::Alignment Views, typename TIn,
          typename TGate, typename TBeta>
__device__ void output_tiled(const ForwardParams<TIn, TGate, TBeta> &p,
                             const ChunkAt &at) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  constexpr int BM = 64, BN = kOutputColumns, BK = 32;
  static_assert(C <= BM, "a chunk's rows fit one block");
  using TileA = tile::SharedTile<TIn, BM, BK>;
  using TileB = tile::SharedTile<TIn, BK, BN>;
  __shared__ __align__(16) TIn sa[2][TileA::kElements];
  __shared__ __align__(16) TIn sb[2][TileB::kElements];
  using Shared = OutputShared<K, C, TIn>;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const typename Shared::Queries queries{shared->qd};
  const OutputChunk<K, V, C, TIn> chunk(p, at);
  load_decayed_queries<K, Views>(queries, p, chunk);
  const int n0 = blockIdx.z * BN;
  constexpr int stateSteps = (K + BK - 1) / BK;
  const int steps = stateSteps + (chunk.L + BK - 1) / BK;
  constexpr tile::Alignment align = Tiles::kAlignment;
  auto issue = [&](int step, int stage) {
    if (step < stateSteps) {
      const int k0 = step * BK;
      tile::load_tile_async<align>(TileB{sb[stage]},
                                   chunk.state + (long long)k0 * V + n0, V,
                                   K - k0, V - n0);
    } else {
      // B is zero above its diagonal and U is read only for the L tokens.
      const int k0 = (step - stateSteps) * BK;
      tile::load_tile_async<align>(TileA{sa[stage]},
                                   chunk.operands + Tiles::kB + k0, C, chunk.L,
                                   chunk.L - k0);
      tile::load_tile_async<align>(
          TileB{sb[stage]}, chunk.operands + Tiles::kU + (long long)k0 * V + n0,
          V, chunk.L - k0, V - n0);
    }
  };
  const int warp = threadIdx.x / 32, wm = warp / 2 * 32, wn = warp % 2 * 32;
  tile::WarpTile<TIn, 32, 32> acc;
  acc.clear();
  tile::two_stage_pipeline(steps, issue, [&](int step, int stage) {
    if (wm >= chunk.L)
      return; // the warp's rows are past the chunk's tokens
    const TileB bt{sb[stage]};
    if (step < stateSteps) {
#pragma unroll
      for (int k = 0; k < BK; k += 16)
        acc.template mma<tile::BLayout::KN>(queries, wm, step * BK + k, bt, wn,
                                            k);
    } else {
      const TileA a{sa[stage]};
#pragma unroll
      for (int k = 0; k < BK; k += 16)
        acc.template mma<tile::BLayout::KN>(a, wm, bt, wn, k);
    }
  });
  // Adjacent columns leave as one 32-bit store where the row allows.
  struct alignas(4) Pair {
    TIn first, second;
  };
  acc.for_each_pair([&](int r, int c, float o0, float o1) {
    const int i = wm + r, j = n0 + wn + c;
    if (i >= chunk.L || j >= V)
      return;
    TIn *to =
        p.output + p.output_strides.offset(chunk.b, chunk.t0 + i, chunk.h) + j;
    if (j + 1 < V && reinterpret_cast<unsigned long long>(to) % 4 == 0) {
      *reinterpret_cast<Pair *>(to) = {from_float<TIn>(p.scale * o0),
                                       from_float<TIn>(p.scale * o1)};
    } else {
      to[0] = from_float<TIn>(p.scale * o0);
      if (j + 1 < V)
        to[1] = from_float<TIn>(p.scale * o1);
    }
  });
}

/// The same for f32 inputs: grid (chunks, B·H), block size a multiple of 32,
/// dynamic shared memory sizeof(OutputShared); each warp takes 16x8 tiles
/// of the chunk's C x V output in turn, on FMA.
template <int K, int V, int C, tile::Alignment Views, typename TIn,
          typename TGate, typename TBeta>
__device__ void output_fma(const ForwardParams<TIn, TGate, TBeta> &p,
                           const ChunkAt &at) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Shared = OutputShared<K, C, TIn>;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const typename Shared::Queries queries{shared->qd};
  const OutputChunk<K, V, C, TIn> chunk(p, at);
  load_decayed_queries<K, Views>(queries, p, chunk);
  const int b = chunk.b, h = chunk.h, t0 = chunk.t0, L = chunk.L;
  const TIn *operands = chunk.operands;
  const TIn *state = chunk.state;
  tile::for_each_warp_tile(
      L, V,
      [&](float(&acc)[4], int i0, int j0) {
        float intra[4] = {0.f, 0.f, 0.f, 0.f};
        // (q ⊙ e^Γ)·S over the K features.
        tile::mma_accumulate<TIn>(
            acc, K,
            tile::a_rows([&](int i, int d) { return queries(i, d); }, L, K, i0),
            tile::b_columns(tile::row_major(state, V), K, V, j0));
        // pairwise·U over the chunk's tokens.
        tile::mma_accumulate<TIn>(
            intra, L,
            tile::a_rows(tile::row_major(operands + Tiles::kB, C), L, L, i0),
            tile::b_columns(tile::row_major(operands + Tiles::kU, V), L, V,
                            j0));
        for (int r = 0; r < 4; ++r)
          acc[r] = p.scale * (acc[r] + intra[r]);
      },
      [&](int i, int j, float o) {
        p.output[p.output_strides.offset(b, t0 + i, h) + j] =
            from_float<TIn>(o);
      });
}

/// Each chunk's output (see for_each_chunk): on the tile layer for 16-bit
/// inputs, on FMA for f32.
/// Views: whether q's rows are promised 16-byte aligned.
template <int K, int V, int C, tile::Alignment Views = tile::Alignment::Checked,
          typename TIn, typename TGate, typename TBeta>
__device__ void output(const ForwardParams<TIn, TGate, TBeta> &p) {
  for_each_chunk<C>(p, [&](const ChunkAt &at) {
    if constexpr (sizeof(TIn) == 2)
      output_tiled<K, V, C, Views>(p, at);
    else
      output_fma<K, V, C, Views>(p, at);
  });
}

} // namespace kda
} // namespace rudnn
