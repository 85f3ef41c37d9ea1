//===- attention/block.cuh - What every attention kernel's blocks share ---===//
//
// The forward kernels' parameters, which keys a block's queries may see
// (lengths, causal diagonal, window, mask) and which key tiles it must
// therefore load, packed batches' query tiles, the scores' scaling,
// soft-capping and masking in a warp tile, and the epilogue writing o and
// lse from the accumulators: one copy for the sm_80 and the Hopper kernels.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/online_softmax.cuh"
#include "rudnn/packed.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"

namespace rudnn {
namespace attention {

/// One call's tensors and sizes. Padded batches: q [B, T, H, D], k
/// [B, S, G, D], v [B, S, G, E], o [B, T, H, E] with their (batch, time,
/// head) strides; key_lengths [B] and key_mask [B, S] (one byte a key) or
/// null. Packed batches (cu_seqlens_q set): q [T, H, D] and so on, T and S
/// the totals, batch strides 0, entry b's queries the rows cu_seqlens_q[b]
/// to cu_seqlens_q[b + 1] (its keys likewise). lse (or null) at
/// b·lse_batch + h·lse_head + row. softcap 0: none; window bounds −1:
/// unbounded. A split's blocks (grid z: the parts of every row's keys)
/// write o_parts [B, H, T, P, E] and lse_parts [B, H, T, P] instead.
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
  float *o_parts, *lse_parts;
  /// ALiBi: key j's score for query i gains −slope·|i + off − j| (off the
  /// entry's key length less its queries), slope alibi_slopes[b ·
  /// alibi_batch + h]; null: none.
  const float *alibi_slopes;
  long long alibi_batch;
};

/// Head h of entry b's ALiBi slope, 0 unless the kernel is `Biased`.
template <bool Biased, typename T>
__device__ __forceinline__ float alibi_slope(const ForwardParams<T> &p, int b,
                                             int h) {
  return Biased ? p.alibi_slopes[b * p.alibi_batch + h] : 0.f;
}

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
  /// Entry b's bounds: its key length (key_lengths clamped to the keys
  /// present), the window and the mask row.
  template <typename T>
  static __device__ __forceinline__ KeyBounds of(const ForwardParams<T> &p,
                                                 int b, bool causal,
                                                 int queryCount, int keyCount) {
    int length = keyCount;
    if (p.key_lengths) {
      const int given = p.key_lengths[b];
      length = given < 0 ? 0 : given < length ? given : length;
    }
    return {length,
            length - queryCount,
            causal,
            p.window_left,
            p.window_right,
            p.key_mask ? p.key_mask + b * p.key_mask_batch : nullptr};
  }

  /// The tiles of BK keys some query of [q0, q0 + rows) may see: `count`
  /// from tile `first`. The others are never loaded.
  __device__ __forceinline__ void tiles(int q0, int rows, int BK, int &first,
                                        int &count) const {
    const int lastQuery = q0 + rows - 1;
    int begin = 0, end = length;
    if (causal && end > lastQuery + offset + 1)
      end = lastQuery + offset + 1;
    if (right >= 0 && end > lastQuery + offset + right + 1)
      end = lastQuery + offset + right + 1;
    if (left >= 0 && begin < q0 + offset - left)
      begin = q0 + offset - left;
    first = begin / BK;
    count = end > begin ? (end + BK - 1) / BK - first : 0;
  }

  /// The tiles of BQ queries (of `queries`) some of which may see a key of
  /// [j0, j0 + count): `n` from tile `first` (none past the length).
  __device__ __forceinline__ void query_tiles(int j0, int count, int BQ,
                                              int queries, int &first,
                                              int &n) const {
    const int jLast = (j0 + count < length ? j0 + count : length) - 1;
    int begin = 0, end = jLast < j0 ? 0 : queries;
    if (causal && begin < j0 - offset) // j ≤ i + offset
      begin = j0 - offset;
    if (right >= 0 && begin < j0 - offset - right)
      begin = j0 - offset - right;
    if (left >= 0 && end > jLast - offset + left + 1) // j ≥ i + offset − left
      end = jLast - offset + left + 1;
    first = begin / BQ;
    n = end > begin ? (end + BQ - 1) / BQ - first : 0;
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

/// Which entry and first query packed query tile `tile` is; false past
/// the last tile. Warp-collective.
template <int BlockQueries>
__device__ __forceinline__ bool
packed_query_tile(const int *offsets, int entries, int total, int tile,
                  int &entry, int &q0) {
  int before = 0;
  if (!packed_tile<BlockQueries>(offsets, entries, total, tile, entry, before))
    return false;
  q0 = (tile - before) * BlockQueries;
  return true;
}

/// Calls block(b, head, row0, queryRows, keyRows) for each tile of
/// `BlockRows` query rows (key rows if `ByKeys`) this block takes, the
/// entry's rows in the tensors given as `Rows`. Padded: one tile of one
/// (entry, head), grid (ceil(N / BlockRows), B·heads). Packed: grid
/// (ceil(N / BlockRows), heads), each block taking the packed tiles
/// blockIdx.x, blockIdx.x + gridDim.x, … (at most ceil(N / BlockRows) + B
/// of them), no host read of the offsets. Called by whole warps.
///
/// HeaviestFirst (causal queries, whose last tiles see the most keys):
/// blocks start in the order of their linear index, so a padded grid's
/// blocks are handed out heaviest first: the last query tile of every
/// (entry, head), then the one before, …, leaving the lightest for the
/// tail (longest processing time first).
template <int BlockRows, bool Packed, bool ByKeys, bool HeaviestFirst = false,
          typename T, typename Block>
__device__ __forceinline__ void for_each_block(const ForwardParams<T> &f,
                                               int heads, Block &&block) {
  if constexpr (!Packed) {
    int tile = static_cast<int>(blockIdx.x),
        pair = static_cast<int>(blockIdx.y);
    if constexpr (HeaviestFirst) {
      const int linear = tile + pair * static_cast<int>(gridDim.x);
      pair = linear % static_cast<int>(gridDim.y);
      tile = static_cast<int>(gridDim.x) - 1 -
             linear / static_cast<int>(gridDim.y);
    }
    block(pair / heads, pair % heads, tile * BlockRows, Rows{0, f.queries},
          Rows{0, f.keys});
  } else {
    const int *tiled = ByKeys ? f.cu_seqlens_k : f.cu_seqlens_q;
    for (int tile = blockIdx.x;; tile += gridDim.x) {
      int b = 0, row0 = 0;
      if (!packed_query_tile<BlockRows>(
              tiled, f.batch, ByKeys ? f.keys : f.queries, tile, b, row0))
        return;
      block(b, static_cast<int>(blockIdx.y), row0,
            packed_rows(f.cu_seqlens_q, b, f.queries),
            packed_rows(f.cu_seqlens_k, b, f.keys));
    }
  }
}

/// Scores into log2 units, soft-capped first if asked, then ALiBi's bias
/// added: exponentials are then one ex2 each. A kernel compiled without a
/// softcap (`MayCap` false) or a bias (`Biased` false) holds no code for
/// it at all, so no branch in its key loop.
template <bool MayCap, bool Biased = false> struct ScoreScale {
  bool capped;
  float toLog2, capScale;

  static __device__ __forceinline__ ScoreScale make(float scale,
                                                    float softcap) {
    const bool capped = MayCap && softcap > 0.f;
    return {capped, capped ? kLog2e * softcap : kLog2e * scale,
            capped ? scale / softcap : 0.f};
  }

  template <typename T>
  static __device__ __forceinline__ ScoreScale of(const ForwardParams<T> &p) {
    return make(p.scale, p.softcap);
  }

  /// The bias of a key `distance` from the query's diagonal in the scores'
  /// units (before toLog2: of the capped scores' tanh, or of the raw dot
  /// products), for `slope` (alibi_slope's).
  __device__ __forceinline__ float bias_step(float slope) const {
    return slope * kLog2e / toLog2;
  }

  /// Caps (with a softcap), biases (with `step`, bias_step's; Biased) and,
  /// where the tile crosses a bound, masks (−inf) a warp tile of scores of
  /// queries from row0 against keys from j0. The scale to log2 units
  /// (`toLog2`) is the softmax's, folded into its exponent's FFMA. Each step
  /// is a loop of its own, taken or not as a whole.
  template <typename Tile>
  __device__ __forceinline__ void apply(Tile &scores, const KeyBounds &bounds,
                                        int row0, int rows, int j0, int keys,
                                        float step = 0.f) const {
    if (MayCap && capped)
      scores.update_pairs([&](int, int, float &first, float &second) {
        first = tanhf(first * capScale);
        second = tanhf(second * capScale);
      });
    if constexpr (Biased)
      scores.update_pairs([&](int r, int c, float &first, float &second) {
        const int distance = row0 + r + bounds.offset - (j0 + c);
        first -= step * fabsf(static_cast<float>(distance));
        second -= step * fabsf(static_cast<float>(distance - 1));
      });
    if (bounds.crosses(row0, rows, j0, keys))
      scores.update_pairs([&](int r, int c, float &first, float &second) {
        const float inf = __int_as_float(0x7f800000);
        if (!bounds.allows(row0 + r, j0 + c))
          first = -inf;
        if (!bounds.allows(row0 + r, j0 + c + 1))
          second = -inf;
      });
  }
};

/// Rescales a warp tile's accumulators by its rows' factors.
template <typename Tile, int Rows>
__device__ __forceinline__ void rescale_rows(Tile &out,
                                             const float (&factor)[Rows]) {
  out.update_pairs([&](int r, int, float &first, float &second) {
    first *= factor[Tile::lane_row(r)];
    second *= factor[Tile::lane_row(r)];
  });
}

/// Which query row, of a warp's tile, entry r of a lane's per-row values
/// (OnlineSoftmax's, in WarpTile::lane_row's order) belongs to.
__device__ __forceinline__ int lane_row_of(int r) {
  return 16 * (r / 2) + 8 * (r % 2) + threadIdx.x % 32 / 4;
}

/// Calls at(i, lse) for each query row i below `count` of a warp's rows
/// from row0 whose log-sum-exp this lane holds (the first lane of each
/// quad, 8 rows a lane value).
template <int LaneRows, typename At>
__device__ __forceinline__ void for_each_lse_row(const float (&lse)[LaneRows],
                                                 int row0, int count, At &&at) {
  if (threadIdx.x % 4 == 0)
#pragma unroll
    for (int r = 0; r < LaneRows; ++r) {
      const int i = row0 + lane_row_of(r);
      if (i < count)
        at(i, lse[r]);
    }
}

/// The log-sum-exps of a warp's query rows from row0, where asked (an lse
/// nobody asked for is null).
template <typename T, int LaneRows>
__device__ __forceinline__ void store_lse(const ForwardParams<T> &p,
                                          const float (&lse)[LaneRows], int b,
                                          int h, int row0, Rows queryRows) {
  if (p.lse)
    for_each_lse_row(lse, row0, queryRows.count, [&](int i, float value) {
      p.lse[b * p.lse_batch + h * p.lse_head + queryRows.first + i] = value;
    });
}

/// A warp's output rows from row0 below `count`, each scaled by its row's
/// `normalize`, columns below E stored in pairs from rowOf(i) (the row's
/// first element, in o's type or f32).
template <int E, typename Tile, int LaneRows, typename RowOf>
__device__ __forceinline__ void
store_normalized(const Tile &out, const float (&normalize)[LaneRows], int row0,
                 int count, RowOf &&rowOf) {
  out.for_each_pair([&](int r, int c, float first, float second) {
    const int i = row0 + r;
    if (i < count && c < E) {
      const float factor = normalize[Tile::lane_row(r)];
      tile::store_pair(rowOf(i) + c, first * factor, second * factor,
                       c + 1 < E);
    }
  });
}

/// The epilogue of a warp's query rows (16 or 32) from row0 of entry b,
/// head h: o normalised (columns below E) and, if asked, lse.
template <int E, typename T, typename Tile, int WM>
__device__ __forceinline__ void
store_rows(const ForwardParams<T> &p, const Tile &out,
           OnlineSoftmax<WM> &softmax, int b, int h, int row0, Rows queryRows) {
  float normalize[OnlineSoftmax<WM>::kRows], lse[OnlineSoftmax<WM>::kRows];
  softmax.finish(normalize, lse);
  store_normalized<E>(out, normalize, row0, queryRows.count, [&](int i) {
    return p.o + p.o_strides.offset(b, queryRows.first + i, h);
  });
  store_lse(p, lse, b, h, row0, queryRows);
}

/// store_rows for a split's part (blockIdx.z of gridDim.z): the rows'
/// normalised outputs and log-sum-exps to o_parts and lse_parts (padded
/// batches), an empty part's 0 and −inf included.
template <int E, typename T, typename Tile, int WM>
__device__ __forceinline__ void
store_part(const ForwardParams<T> &p, const Tile &out,
           OnlineSoftmax<WM> &softmax, int b, int h, int row0, Rows queryRows) {
  float normalize[OnlineSoftmax<WM>::kRows], lse[OnlineSoftmax<WM>::kRows];
  softmax.finish(normalize, lse);
  const int parts = static_cast<int>(gridDim.z);
  auto slot = [&](int i) {
    return ((static_cast<long long>(b) * p.heads + h) * p.queries + i) * parts +
           static_cast<int>(blockIdx.z);
  };
  store_normalized<E>(out, normalize, row0, queryRows.count,
                      [&](int i) { return p.o_parts + slot(i) * E; });
  for_each_lse_row(lse, row0, queryRows.count,
                   [&](int i, float value) { p.lse_parts[slot(i)] = value; });
}

/// Whether every row of o starts 16 bytes aligned (16-bit elements): the
/// base and all three strides whole 16-byte chunks.
template <typename T>
__device__ __forceinline__ bool rows_are_chunks(const ForwardParams<T> &p) {
  constexpr long long kChunk = 16 / sizeof(T);
  return reinterpret_cast<unsigned long long>(p.o) % 16 == 0 &&
         p.o_strides.batch % kChunk == 0 && p.o_strides.time % kChunk == 0 &&
         p.o_strides.head % kChunk == 0;
}

/// Where column c of row r of a warp's output stage is: rows of 64 16-bit
/// columns, each row's 16-byte chunks swizzled by the row, as a 128-byte
/// swizzled TMA box lies in shared memory (no two lanes of a store share a
/// bank).
__device__ __forceinline__ int staged_at(int r, int c) {
  return r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8;
}

/// Writes columns [c0, c0 + 64) of a warp's output rows, each scaled by
/// its row's `normalize`, into `stage`.
template <typename T, typename Tile, int LaneRows>
__device__ __forceinline__ void
stage_columns(const Tile &out, const float (&normalize)[LaneRows], int c0,
              T *stage) {
  static_assert(sizeof(T) == 2, "16-bit outputs");
  out.for_each_pair([&](int r, int c, float first, float second) {
    if (c >= c0 && c < c0 + 64) {
      const float factor = normalize[Tile::lane_row(r)];
      *reinterpret_cast<unsigned *>(&stage[staged_at(r, c - c0)]) =
          tile::Mma16<T>::pack(first * factor, second * factor);
    }
  });
}

/// store_rows through this warp's `stage` (its WM rows of 64 16-bit
/// elements in shared memory, 2 KiB each 16): 64 columns at a time, the
/// warp stages its accumulators there and stores each row's chunks with
/// 16-byte stores, eight lanes a 128-byte row. Rows of o that are not whole
/// chunks (known only at run time unless `Out` promises them) take
/// store_rows.
template <int E, tile::Alignment Out, typename T, typename Tile, int WM>
__device__ __forceinline__ void
store_rows_staged(const ForwardParams<T> &p, const Tile &out,
                  OnlineSoftmax<WM> &softmax, int b, int h, int row0,
                  Rows queryRows, T *stage) {
  if (Out == tile::Alignment::Checked && !rows_are_chunks(p)) {
    store_rows<E>(p, out, softmax, b, h, row0, queryRows);
    return;
  }
  float normalize[OnlineSoftmax<WM>::kRows], lse[OnlineSoftmax<WM>::kRows];
  softmax.finish(normalize, lse);
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int c0 = 0; c0 < E; c0 += 64) {
    stage_columns(out, normalize, c0, stage);
    __syncwarp();
#pragma unroll
    for (int k = 0; k < WM / 4; ++k) { // WM rows x 8 chunks
      const int chunk = lane + 32 * k, r = chunk / 8, c = c0 + 8 * (chunk % 8);
      const int i = row0 + r;
      if (i < queryRows.count && c < E) {
        T *to = p.o + p.o_strides.offset(b, queryRows.first + i, h) + c;
        const T *from = &stage[staged_at(r, c - c0)];
        if (E % 8 == 0 || c + 8 <= E)
          *reinterpret_cast<uint4 *>(to) =
              *reinterpret_cast<const uint4 *>(from);
        else // the last chunk of a row that ends mid-chunk
          for (int e = 0; e < E - c; ++e)
            to[e] = from[e];
      }
    }
    __syncwarp();
  }
  store_lse(p, lse, b, h, row0, queryRows);
}

} // namespace attention
} // namespace rudnn
