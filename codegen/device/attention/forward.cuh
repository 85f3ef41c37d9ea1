//===- attention/forward.cuh - Tiled attention forward --------------------===//
//
// One block per BQ queries of one (batch entry, query head), a warp per 16
// or 32 query rows (ForwardTiles). The queries and each tile of BK keys
// and values come into swizzled shared tiles by cp.async: 64-row blocks
// through two stages, FlashAttention-2's 128-row blocks through one buffer
// each of K and V (V's copy under the scores, the next K's under the
// products by V), so that two blocks fit an SM. A warp forms its scores on
// tensor cores (ldmatrix), each K fragment serving all its rows, scales,
// soft-caps and masks them, folds them into its online softmax, and adds
// the probabilities times the values into its accumulators: for 16-bit
// inputs straight from the score accumulators (rounded to the input type),
// for f32 through a shared tile on FMA. Key tiles no query of the block
// may see (past the entry's key length, the causal diagonal or the window)
// are never loaded; element masks apply only to the tiles the bounds
// cross. 16-bit outputs leave through shared memory by 16-byte stores.
// Decoding-shaped calls split each row's key tiles over the grid's z and
// write each part's results for merge.cuh.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/block.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace attention {

/// How a block of BQ query rows (64 or 128) is organised: 128 rows take
/// four warps of 32 where the accumulators fit the registers (D, E up to
/// 128: each K and V fragment then serves 32 rows), else eight of 16, and
/// one buffer each of K and V; 64 rows take four warps of 16 and two
/// stages (attentionWarpRows and attentionSharedBytes on the host).
template <int D, int E, int BQ> struct ForwardTiles {
  static_assert(BQ == 64 || BQ == 128, "64 or 128 query rows a block");
  static constexpr int kWarpRows = BQ == 128 && D <= 128 && E <= 128 ? 32 : 16;
  static constexpr int kWarps = BQ / kWarpRows, kThreads = 32 * kWarps;
  static constexpr int kStages = BQ == 64 ? 2 : 1;
};

/// The f32 probabilities' shared tile (Rows x Columns), which 16-bit inputs
/// do without.
template <typename T, int Columns, int Rows = 64> struct ProbabilityTile {};
template <int Columns, int Rows> struct ProbabilityTile<float, Columns, Rows> {
  using Tile = tile::SharedTile<float, Rows, Columns>;
  alignas(16) float p[Tile::kElements];
};

/// The block's dynamic shared memory (attentionSharedBytes on the host).
template <typename T, int D, int E, int BK, int BQ>
struct ForwardShared : ProbabilityTile<T, BK, BQ> {
  static constexpr int kD = (D + 15) / 16 * 16, kE = (E + 15) / 16 * 16;
  static constexpr int kStages = ForwardTiles<D, E, BQ>::kStages;
  using Queries = tile::SharedTile<T, BQ, kD>;
  using Keys = tile::SharedTile<T, BK, kD>;
  using Values = tile::SharedTile<T, BK, kE>;
  alignas(16) T q[Queries::kElements];
  alignas(16) T k[kStages][Keys::kElements];
  alignas(16) T v[kStages][Values::kElements];
};

/// The block's dynamic shared memory in bytes: its tiles, and at least the
/// warps' output stages (16-bit outputs: 64 columns of every row), which
/// take the tiles' place once the products are done.
template <typename T, int D, int E, int BK, int BQ>
inline constexpr int kForwardSharedBytes =
    sizeof(T) == 2 && sizeof(ForwardShared<T, D, E, BK, BQ>) < BQ * 64 * 2
        ? BQ * 64 * 2
        : static_cast<int>(sizeof(ForwardShared<T, D, E, BK, BQ>));

/// One block's BQ queries from q0 of entry b's `queryRows`, head h, against
/// the entry's `keyRows`, soft-capped if `Capped`; q, k and v copied as
/// `Views` promise, o stored as `Out` does. `SplitKeys`: the block takes
/// part blockIdx.z of gridDim.z of the key tiles its queries see and
/// writes that part's results (store_part).
template <typename T, int D, int E, int BK, int BQ, bool Causal, bool Capped,
          bool Biased, tile::Alignment Views, tile::Alignment Out,
          bool SplitKeys>
__device__ void attend(const ForwardParams<T> &p, int b, int h, int q0,
                       Rows queryRows, Rows keyRows) {
  using Tiles = ForwardTiles<D, E, BQ>;
  using Shared = ForwardShared<T, D, E, BK, BQ>;
  constexpr int kD = Shared::kD, kE = Shared::kE, WM = Tiles::kWarpRows;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const typename Shared::Queries queries{shared->q};
  const int warp = threadIdx.x / 32;
  const int hk = h / (p.heads / p.kv_heads);
  const int queryCount = queryRows.count;
  const KeyBounds bounds =
      KeyBounds::of(p, b, Causal, queryCount, keyRows.count);
  const int length = bounds.length;
  const int blockRows = queryCount - q0 < BQ ? queryCount - q0 : BQ;
  int firstTile, tiles;
  bounds.tiles(q0, blockRows, BK, firstTile, tiles);
  if constexpr (SplitKeys) { // an even share of the tiles, whole ones
    const int parts = static_cast<int>(gridDim.z);
    const int share = (tiles + parts - 1) / parts;
    const int before = min(share * static_cast<int>(blockIdx.z), tiles);
    firstTile += before;
    tiles = min(share, tiles - before);
  }

  const int row0 = q0 + WM * warp; // this warp's first query
  // A warp whose rows are all past the queries (a short call, the last
  // tile) loads its share of the tiles but computes nothing.
  const bool active = row0 < queryCount;
  tile::WarpTile<T, WM, kE> out;
  out.clear();
  const ScoreScale<Capped, Biased> scale = ScoreScale<Capped, Biased>::of(p);
  const float biasStep = scale.bias_step(alibi_slope<Biased>(p, b, h));
  OnlineSoftmax<WM> softmax;
  softmax.clear(scale.toLog2);
  tile::WarpTile<T, WM, BK> scores;

  auto keyRowsOf = [&](int step) {
    const int j0 = (firstTile + step) * BK;
    return length - j0 < BK ? length - j0 : BK;
  };
  auto loadKeys = [&](int step, int stage) {
    if (step == 0)
      tile::load_tile_async<Views>(
          queries, p.q + p.q_strides.offset(b, queryRows.first + q0, h),
          p.q_strides.time, blockRows, D);
    const int j0 = (firstTile + step) * BK;
    tile::load_tile_async<Views>(
        typename Shared::Keys{shared->k[stage]},
        p.k + p.k_strides.offset(b, keyRows.first + j0, hk), p.k_strides.time,
        keyRowsOf(step), D);
  };
  auto loadValues = [&](int step, int stage) {
    const int j0 = (firstTile + step) * BK;
    tile::load_tile_async<Views>(
        typename Shared::Values{shared->v[stage]},
        p.v + p.v_strides.offset(b, keyRows.first + j0, hk), p.v_strides.time,
        keyRowsOf(step), E);
  };
  auto formScores = [&](int step, int stage) {
    if (!active)
      return;
    const typename Shared::Keys keys{shared->k[stage]};
    scores.clear();
#pragma unroll
    for (int k0 = 0; k0 < kD; k0 += 16)
      scores.template mma<tile::BLayout::NK>(queries, WM * warp, keys, 0, k0);
    scale.apply(scores, bounds, row0, WM, (firstTile + step) * BK, BK,
                biasStep);
  };
  auto addValues = [&](int, int stage) {
    if (!active)
      return;
    const typename Shared::Values values{shared->v[stage]};
    float rescale[OnlineSoftmax<WM>::kRows];
    softmax.update(scores, rescale);
    rescale_rows(out, rescale);
    if constexpr (sizeof(T) == 2) {
#pragma unroll
      for (int k0 = 0; k0 < BK; k0 += 16) {
        unsigned fa[WM / 16][4];
        scores.a_fragments(fa, k0);
        out.template mma_registers<tile::BLayout::KN>(fa, values, 0, k0);
      }
    } else {
      const typename ProbabilityTile<T, BK, BQ>::Tile probabilities{shared->p};
      scores.for_each_pair([&](int r, int c, float first, float second) {
        tile::store_pair(probabilities, WM * warp + r, c, first, second);
      });
      __syncwarp();
#pragma unroll
      for (int k0 = 0; k0 < BK; k0 += 16)
        out.template mma<tile::BLayout::KN>(probabilities, WM * warp, k0,
                                            values, 0, k0);
      __syncwarp();
    }
  };

  if constexpr (Tiles::kStages == 2)
    tile::two_stage_pipeline(
        tiles,
        [&](int step, int stage) {
          loadKeys(step, stage);
          loadValues(step, stage);
        },
        [&](int step, int stage) {
          formScores(step, stage);
          addValues(step, stage);
        });
  else
    tile::split_stage_pipeline(
        tiles, [&](int step) { loadKeys(step, 0); },
        [&](int step) { loadValues(step, 0); },
        [&](int step) { formScores(step, 0); },
        [&](int step) { addValues(step, 0); });

  if constexpr (SplitKeys) {
    store_part<E>(p, out, softmax, b, h, row0, queryRows);
  } else if constexpr (sizeof(T) == 2) {
    // Both pipelines end on a barrier, so the tiles are free: each warp
    // stages its rows in 2 KiB of them per 16 (kForwardSharedBytes).
    T *stage = reinterpret_cast<T *>(shared) + warp * WM * 64;
    store_rows_staged<E, Out>(p, out, softmax, b, h, row0, queryRows, stage);
  } else {
    store_rows<E>(p, out, softmax, b, h, row0, queryRows);
  }
}

/// A block per BQ queries of one (entry, head) (see for_each_block); one
/// form a kernel, so each holds one copy of the body.
template <typename T, int D, int E, int BK, int BQ, bool Causal, bool Capped,
          bool Biased, bool Packed = false,
          tile::Alignment Views = tile::Alignment::Checked,
          tile::Alignment Out = tile::Alignment::Checked,
          bool SplitKeys = false>
__device__ void forward(const ForwardParams<T> &p) {
  static_assert(!(SplitKeys && Packed), "a split takes padded batches");
  for_each_block<BQ, Packed, /*ByKeys=*/false, Causal>(
      p, p.heads, [&](int b, int h, int q0, Rows queryRows, Rows keyRows) {
        attend<T, D, E, BK, BQ, Causal, Capped, Biased, Views, Out, SplitKeys>(
            p, b, h, q0, queryRows, keyRows);
        if constexpr (Packed) // the shared tiles are the next tile's
          __syncthreads();
      });
}

} // namespace attention
} // namespace rudnn
