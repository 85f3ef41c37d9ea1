//===- attention/forward.cuh - Tiled attention forward --------------------===//
//
// One block per 64 queries of one (batch entry, query head): four warps of
// 16 query rows. The queries and, through a two-stage cp.async pipeline,
// each tile of BK keys and values come into swizzled shared tiles; a warp
// forms its 16 x BK scores on tensor cores (ldmatrix), scales, soft-caps and
// masks them, folds them into its online softmax, and adds the
// probabilities times the values into 16 x E accumulators: for 16-bit
// inputs straight from the score accumulators (rounded to the input type),
// for f32 through a shared tile on FMA. Key tiles no query of the block may
// see (past the entry's key length, the causal diagonal or the window) are
// never loaded; element masks apply only to the tiles the bounds cross.
// 16-bit outputs leave through shared memory by 16-byte stores.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/block.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace attention {

/// Query rows of a block: four warps of 16.
inline constexpr int kBlockQueries = 64;

/// The f32 probabilities' shared tile, which 16-bit inputs do without.
template <typename T, int BK> struct ProbabilityTile {};
template <int BK> struct ProbabilityTile<float, BK> {
  using Tile = tile::SharedTile<float, kBlockQueries, BK>;
  alignas(16) float p[Tile::kElements];
};

/// The block's dynamic shared memory (attentionSharedBytes on the host).
template <typename T, int D, int E, int BK>
struct ForwardShared : ProbabilityTile<T, BK> {
  static constexpr int kD = (D + 15) / 16 * 16, kE = (E + 15) / 16 * 16;
  using Queries = tile::SharedTile<T, kBlockQueries, kD>;
  using Keys = tile::SharedTile<T, BK, kD>;
  using Values = tile::SharedTile<T, BK, kE>;
  alignas(16) T q[Queries::kElements];
  alignas(16) T k[2][Keys::kElements];
  alignas(16) T v[2][Values::kElements];
};

/// One block's 64 queries from q0 of entry b's `queryRows`, head h, against
/// the entry's `keyRows`; q, k and v copied as `Views` promise, o stored as
/// `Out` does.
template <typename T, int D, int E, int BK, bool Causal, tile::Alignment Views,
          tile::Alignment Out>
__device__ void attend(const ForwardParams<T> &p, int b, int h, int q0,
                       Rows queryRows, Rows keyRows) {
  using Shared = ForwardShared<T, D, E, BK>;
  constexpr int kD = Shared::kD, kE = Shared::kE;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const typename Shared::Queries queries{shared->q};
  const int warp = threadIdx.x / 32;
  const int hk = h / (p.heads / p.kv_heads);
  const int queryCount = queryRows.count;
  const KeyBounds bounds =
      KeyBounds::of(p, b, Causal, queryCount, keyRows.count);
  const int length = bounds.length;
  const int blockRows =
      queryCount - q0 < kBlockQueries ? queryCount - q0 : kBlockQueries;
  int firstTile, tiles;
  bounds.tiles(q0, blockRows, BK, firstTile, tiles);

  const int row0 = q0 + 16 * warp; // this warp's first query
  tile::WarpTile<T, 16, kE> out;
  out.clear();
  const ScoreScale scale = ScoreScale::of(p);
  OnlineSoftmax<16> softmax;
  softmax.clear(scale.toLog2);

  tile::two_stage_pipeline(
      tiles,
      [&](int step, int stage) {
        if (step == 0)
          tile::load_tile_async<Views>(
              queries, p.q + p.q_strides.offset(b, queryRows.first + q0, h),
              p.q_strides.time, blockRows, D);
        const int j0 = (firstTile + step) * BK;
        const int rows = length - j0 < BK ? length - j0 : BK;
        tile::load_tile_async<Views>(
            typename Shared::Keys{shared->k[stage]},
            p.k + p.k_strides.offset(b, keyRows.first + j0, hk),
            p.k_strides.time, rows, D);
        tile::load_tile_async<Views>(
            typename Shared::Values{shared->v[stage]},
            p.v + p.v_strides.offset(b, keyRows.first + j0, hk),
            p.v_strides.time, rows, E);
      },
      [&](int step, int stage) {
        const typename Shared::Keys keys{shared->k[stage]};
        const typename Shared::Values values{shared->v[stage]};
        const int j0 = (firstTile + step) * BK;
        tile::WarpTile<T, 16, BK> scores;
        scores.clear();
#pragma unroll
        for (int k0 = 0; k0 < kD; k0 += 16)
          scores.template mma<tile::BLayout::NK>(queries, 16 * warp, keys, 0,
                                                 k0);
        scale.apply(scores, bounds, row0, 16, j0, BK);
        float rescale[OnlineSoftmax<16>::kRows];
        softmax.update(scores, rescale);
        rescale_rows(out, rescale);
        if constexpr (sizeof(T) == 2) {
#pragma unroll
          for (int k0 = 0; k0 < BK; k0 += 16) {
            unsigned fa[1][4];
            scores.a_fragments(fa, k0);
            out.template mma_registers<tile::BLayout::KN>(fa, values, 0, k0);
          }
        } else {
          const typename ProbabilityTile<T, BK>::Tile probabilities{shared->p};
          scores.for_each_pair([&](int r, int c, float first, float second) {
            tile::store_pair(probabilities, 16 * warp + r, c, first, second);
          });
          __syncwarp();
#pragma unroll
          for (int k0 = 0; k0 < BK; k0 += 16)
            out.template mma<tile::BLayout::KN>(probabilities, 16 * warp, k0,
                                                values, 0, k0);
          __syncwarp();
        }
      });

  if constexpr (sizeof(T) == 2) {
    // The pipeline ends on a barrier, so the tiles are free: each warp
    // stages its rows in 2 KiB of them.
    static_assert(sizeof(Shared) >= kBlockQueries / 16 * 16 * 64 * sizeof(T));
    T *stage = reinterpret_cast<T *>(shared) + warp * 16 * 64;
    store_rows_staged<E, Out>(p, out, softmax, b, h, row0, queryRows, stage);
  } else {
    store_rows<E>(p, out, softmax, b, h, row0, queryRows);
  }
}

/// A block per 64 queries of one (entry, head) (see for_each_block); one
/// form a kernel, so each holds one copy of the body.
template <typename T, int D, int E, int BK, bool Causal, bool Packed = false,
          tile::Alignment Views = tile::Alignment::Checked,
          tile::Alignment Out = tile::Alignment::Checked>
__device__ void forward(const ForwardParams<T> &p) {
  for_each_block<kBlockQueries, Packed, /*ByKeys=*/false, Causal>(
      p, p.heads, [&](int b, int h, int q0, Rows queryRows, Rows keyRows) {
        attend<T, D, E, BK, Causal, Views, Out>(p, b, h, q0, queryRows,
                                                keyRows);
        if constexpr (Packed) // the shared tiles are the next tile's
          __syncthreads();
      });
}

} // namespace attention
} // namespace rudnn
