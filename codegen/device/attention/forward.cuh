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
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/online_softmax.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace attention {

/// One call's tensors and sizes. Padded batches: q [B, T, H, D], k
/// [B, S, G, D], v [B, S, G, E], o [B, T, H, E] with their (batch, time,
/// head) strides; key_lengths [B] and key_mask [B, S] (one byte a key) or
/// null. Packed batches (cu_seqlens_q set): q [T, H, D] and so on, T and S
/// the totals, batch strides 0, entry b's queries the rows cu_seqlens_q[b]
/// to cu_seqlens_q[b + 1] (its keys likewise). lse (or null) at
/// b·lse_batch + h·lse_head + row. softcap 0: none; window bounds −1:
/// unbounded.
template <typename T> struct ForwardParams {
  const T *q, *k, *v;
  const int *key_lengths;
  const unsigned char *key_mask;
  const int *cu_seqlens_q, *cu_seqlens_k;
  T *o;
  float *lse;
  SequenceStrides q_strides, k_strides, v_strides, o_strides;
  long long key_mask_batch, lse_batch, lse_head;
  int batch, queries, keys, heads, kv_heads;
  float scale, softcap;
  int window_left, window_right;
};

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

/// Which keys the queries of one batch entry may see.
struct KeyBounds {
  int length;                // keys of the entry
  int offset;                // length − queries: the bottom-right alignment
  bool causal;               // j ≤ i + offset
  int left;                  // j ≥ i + offset − left, unless −1
  int right;                 // j ≤ i + offset + right, unless −1
  const unsigned char *mask; // the entry's row of key_mask, or null

  __device__ __forceinline__ bool allows(int i, int j) const {
    const int diagonal = i + offset;
    return j < length && (!causal || j <= diagonal) &&
           (right < 0 || j <= diagonal + right) &&
           (left < 0 || j >= diagonal - left) && (!mask || mask[j]);
  }
  /// Whether some key of [j0, j0 + count) is masked for some query of
  /// [i0, i0 + rows): only such tiles are masked element by element.
  __device__ __forceinline__ bool crosses(int i0, int rows, int j0,
                                          int count) const {
    const int jLast = j0 + count - 1;
    return mask || jLast >= length || (causal && jLast > i0 + offset) ||
           (right >= 0 && jLast > i0 + offset + right) ||
           (left >= 0 && j0 < i0 + rows - 1 + offset - left);
  }
};

/// The rows of one batch entry's queries and keys: `count` from `first`.
struct Rows {
  int first, count;
};

/// Entry b's rows of a packed tensor of `total` rows, by its offsets
/// (clamped, so offsets out of order or range read nothing outside it).
__device__ __forceinline__ Rows packed_rows(const int *offsets, int b,
                                            int total) {
  int first = offsets[b], last = offsets[b + 1];
  first = first < 0 ? 0 : first < total ? first : total;
  last = last < first ? first : last < total ? last : total;
  return {first, last - first};
}

/// Which entry and first query packed query tile `tile` is: each entry's
/// queries in tiles of kBlockQueries, the entries' tiles in order. Every
/// lane of the warp scans the offsets 32 entries at a time (a prefix sum of
/// the entries' tile counts); false past the last tile.
__device__ __forceinline__ bool packed_tile(const int *offsets, int entries,
                                            int total, int tile, int &entry,
                                            int &q0) {
  const int lane = threadIdx.x % 32;
  int before = 0; // tiles of the entries scanned so far
  for (int base = 0; base < entries; base += 32) {
    const int e = base + lane;
    const int count =
        e < entries
            ? (packed_rows(offsets, e, total).count + kBlockQueries - 1) /
                  kBlockQueries
            : 0;
    int sum = count; // inclusive prefix sum over the lanes
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int from = __shfl_up_sync(kFullWarpMask, sum, d);
      if (lane >= d)
        sum += from;
    }
    const int chunk = __shfl_sync(kFullWarpMask, sum, 31);
    if (tile < before + chunk) {
      const int first =
          __ffs(__ballot_sync(kFullWarpMask, before + sum > tile)) - 1;
      entry = base + first;
      q0 = (tile - before - __shfl_sync(kFullWarpMask, sum - count, first)) *
           kBlockQueries;
      return true;
    }
    before += chunk;
  }
  return false;
}

/// One block's 64 queries from q0 of entry b's `queryRows`, head h, against
/// the entry's `keyRows`; q, k and v copied as `Views` promise.
template <typename T, int D, int E, int BK, bool Causal, tile::Alignment Views>
__device__ void attend(const ForwardParams<T> &p, int b, int h, int q0,
                       Rows queryRows, Rows keyRows) {
  using Shared = ForwardShared<T, D, E, BK>;
  constexpr int kD = Shared::kD, kE = Shared::kE;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const typename Shared::Queries queries{shared->q};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int hk = h / (p.heads / p.kv_heads);
  const int queryCount = queryRows.count;

  int length = keyRows.count;
  if (p.key_lengths) {
    const int given = p.key_lengths[b];
    length = given < 0 ? 0 : given < length ? given : length;
  }
  const KeyBounds bounds{
      length,         length - queryCount,
      Causal,         p.window_left,
      p.window_right, p.key_mask ? p.key_mask + b * p.key_mask_batch : nullptr};
  // The keys any query of the block may see, in whole tiles.
  const int blockRows =
      queryCount - q0 < kBlockQueries ? queryCount - q0 : kBlockQueries;
  const int lastQuery = q0 + blockRows - 1;
  int begin = 0, end = length;
  if (Causal && end > lastQuery + bounds.offset + 1)
    end = lastQuery + bounds.offset + 1;
  if (p.window_right >= 0 &&
      end > lastQuery + bounds.offset + p.window_right + 1)
    end = lastQuery + bounds.offset + p.window_right + 1;
  if (p.window_left >= 0 && begin < q0 + bounds.offset - p.window_left)
    begin = q0 + bounds.offset - p.window_left;
  const int firstTile = begin / BK;
  const int tiles = end > begin ? (end + BK - 1) / BK - firstTile : 0;

  const int row0 = q0 + 16 * warp; // this warp's first query
  tile::WarpTile<T, 16, kE> out;
  out.clear();
  OnlineSoftmax<16> softmax;
  softmax.clear();
  // Scores into log2 units: exponentials are then one ex2 each.
  const bool capped = p.softcap > 0.f;
  const float toLog2 = capped ? kLog2e * p.softcap : kLog2e * p.scale;
  const float capScale = capped ? p.scale / p.softcap : 0.f;

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
        const bool masked = bounds.crosses(row0, 16, j0, BK);
        scores.update_pairs([&](int r, int c, float &first, float &second) {
          if (capped) {
            first = tanhf(first * capScale);
            second = tanhf(second * capScale);
          }
          first *= toLog2;
          second *= toLog2;
          if (masked) {
            const float inf = __int_as_float(0x7f800000);
            if (!bounds.allows(row0 + r, j0 + c))
              first = -inf;
            if (!bounds.allows(row0 + r, j0 + c + 1))
              second = -inf;
          }
        });
        float rescale[OnlineSoftmax<16>::kRows];
        softmax.update(scores, rescale);
        out.update_pairs([&](int r, int, float &first, float &second) {
          const float factor = rescale[decltype(out)::lane_row(r)];
          first *= factor;
          second *= factor;
        });
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

  float normalize[OnlineSoftmax<16>::kRows], lse[OnlineSoftmax<16>::kRows];
  softmax.finish(normalize, lse);
  out.for_each_pair([&](int r, int c, float first, float second) {
    const int i = row0 + r;
    if (i < queryCount && c < E) {
      const float factor = normalize[decltype(out)::lane_row(r)];
      tile::store_pair(p.o + p.o_strides.offset(b, queryRows.first + i, h) + c,
                       first * factor, second * factor, c + 1 < E);
    }
  });
  if (p.lse && lane % 4 == 0) // an lse nobody asked for is null
#pragma unroll
    for (int r = 0; r < OnlineSoftmax<16>::kRows; ++r) {
      const int i = row0 + lane / 4 + 8 * r;
      if (i < queryCount)
        p.lse[b * p.lse_batch + h * p.lse_head + queryRows.first + i] = lse[r];
    }
}

/// Padded batches: a block per 64 queries of one (entry, head), grid
/// (ceil(T / 64), B·H). Packed (with the offsets): grid (ceil(T / 64), H),
/// each block taking the packed query tiles blockIdx.x, blockIdx.x +
/// gridDim.x, … (there are at most ceil(T / 64) + B of them), no host read
/// of the offsets. One form a kernel, so each holds one copy of the body.
template <typename T, int D, int E, int BK, bool Causal, bool Packed = false,
          tile::Alignment Views = tile::Alignment::Checked>
__device__ void forward(const ForwardParams<T> &p) {
  if constexpr (!Packed) {
    attend<T, D, E, BK, Causal, Views>(
        p, blockIdx.y / p.heads, blockIdx.y % p.heads,
        blockIdx.x * kBlockQueries, Rows{0, p.queries}, Rows{0, p.keys});
  } else {
    for (int tile = blockIdx.x;; tile += gridDim.x) {
      int b = 0, q0 = 0;
      if (!packed_tile(p.cu_seqlens_q, p.batch, p.queries, tile, b, q0))
        return;
      attend<T, D, E, BK, Causal, Views>(
          p, b, blockIdx.y, q0, packed_rows(p.cu_seqlens_q, b, p.queries),
          packed_rows(p.cu_seqlens_k, b, p.keys));
      __syncthreads(); // the shared tiles are the next tile's
    }
  }
}

} // namespace attention
} // namespace rudnn
