//===- attention/decode.cuh - A decoding step over a K/V cache ------------===//
//
// The partials kernel of a decoding step. Persistent blocks take work
// items (entry, key head, part of the keys) in turn (decode_split.cuh).
// An item's query rows are every query head of its key head for every new
// token (GQA packing: one read of each key and value serves them all), 16
// rows a pass. Warps split each stage of keys: a two-stage cp.async
// pipeline gathers Warps x 16 key and value rows (cache rows, page rows or
// the new tokens' rows) into swizzled shared tiles; each warp forms its
// 16 x 16 scores on tensor cores, masks them causally, and folds them into
// its online softmax and 16 x E accumulators; the warps' states merge
// through shared memory at the end. Part 0 of each (entry, key head) also
// appends the new tokens to the cache: no block reads those rows from the
// cache, so the append races with nothing. FlashAttention's options (left
// padding, a window, causal or not, a softcap, ALiBi) are per-element
// work on the scores at each query's diagonal; the softcap and ALiBi are
// compiled in only when asked for.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/block.cuh"
#include "rudnn/attention/decode_split.cuh"
#include "rudnn/attention/rotary.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace attention {

/// One call's tensors and sizes: q [B, T, H, D], the new k [B, T, G, D]
/// and v [B, T, G, E] (null: attend only), the caches [B, S, G, *] or
/// pages [P, Z, G, *] (batch strides then step from page to page) with
/// block_table [B, M], o [B, T, H, E]; lse [B, H, T], status [B] or null.
/// `capacity`: the tokens an entry may hold (S, or M·Z); `pages`: P (0:
/// contiguous). ALiBi's slope of head h of entry b: alibi_slopes[b ·
/// alibi_batch + h]; softcap 0: none; window_right −1: unbounded (the left
/// bound is the split's). cache_batch [B] (or null: entry b's) maps an
/// entry to its row of a contiguous cache of cache_rows. `rotary` turns
/// the new keys at their positions and the queries at theirs (each
/// token's own with `rotary_each_query`, else all at the cached length).
template <typename T> struct DecodeParams {
  const T *q, *k, *v;
  T *k_cache, *v_cache;
  const int *block_table;
  T *o;
  float *lse, *o_partial, *lse_partial;
  int *status;
  SequenceStrides q_strides, k_strides, v_strides, k_cache_strides,
      v_cache_strides, o_strides;
  long long block_table_batch;
  int heads, capacity, pages;
  float scale;
  DecodeSplit split;
  const float *alibi_slopes;
  long long alibi_batch;
  float softcap;
  bool causal;
  int window_right;
  const int *cache_batch;
  int cache_rows;
  Rotary<T> rotary;
  bool rotary_each_query;
};

/// The block's dynamic shared memory (decodeSharedBytes on the host): the
/// queries, two stages of keys and values, f32's probabilities, and each
/// warp's row log-sum-exps; the warps' outputs merge over the stages.
template <typename T, int D, int E, int Warps> struct DecodeShared {
  static constexpr int kD = (D + 15) / 16 * 16, kE = (E + 15) / 16 * 16;
  static constexpr int kStageKeys = 16 * Warps;
  using Queries = tile::SharedTile<T, 16, kD>;
  using Keys = tile::SharedTile<T, kStageKeys, kD>;
  using Values = tile::SharedTile<T, kStageKeys, kE>;
  using Probabilities = tile::SharedTile<float, 16, kStageKeys>;
  alignas(16) T q[Queries::kElements];
  alignas(16) T k[2][Keys::kElements];
  alignas(16) T v[2][Values::kElements];
  alignas(16) float p[sizeof(T) == 4 ? Probabilities::kElements : 4];
  float row_lse[Warps][16];

  /// Each warp's normalised 16 x E output, over the stages once done.
  __device__ __forceinline__ float *merged(int warp) {
    static_assert(sizeof(float) * Warps * 16 * kE <= sizeof(k) + sizeof(v),
                  "the warps' outputs fit over the stages");
    return reinterpret_cast<float *>(k) + warp * 16 * kE;
  }
};

/// What locates entry b's tokens, read once an item: its row of a
/// contiguous cache (cache_batch[b], or b), or b itself, whose block-table
/// row a paged cache reads a page at a time.
template <int PageSize, typename T>
__device__ __forceinline__ int cache_entry(const DecodeParams<T> &p, int b) {
  return PageSize == 0 && p.cache_batch ? p.cache_batch[b] : b;
}

/// Where the cache token j of the entry `entry` (cache_entry's) lives
/// (cache row or page row), for the key head g.
template <int PageSize, typename T>
__device__ __forceinline__ long long cache_offset(const DecodeParams<T> &p,
                                                  const SequenceStrides &s,
                                                  int entry, int j, int g) {
  if constexpr (PageSize == 0) {
    return s.offset(entry, j, g);
  } else {
    const int page = p.block_table[entry * p.block_table_batch + j / PageSize];
    return s.offset(page, j % PageSize, g);
  }
}

/// Whether an entry of cached `length` has room for the new tokens (and,
/// attend only, holds no more than the capacity).
template <typename T>
__device__ __forceinline__ bool has_room(const DecodeParams<T> &p, int length) {
  return length >= 0 && static_cast<long long>(length) + p.split.appended <=
                            static_cast<long long>(p.capacity);
}

/// Whether another entry that may run uses (reads or appends to) one of the
/// pages entry b appends to, its slots [first, used): an append there would
/// race with that entry. A scan of every entry's pages, so only a call with
/// a status pays for it (without one, the host checks).
/// Block-collective.
template <int PageSize, typename T>
__device__ __forceinline__ bool
shares_appended_page(const DecodeParams<T> &p, int b, int first, int used) {
  const int *own = p.block_table + b * p.block_table_batch;
  bool shared = false;
  for (int other = 0; other < p.split.batch; ++other) {
    const int length = p.split.cache_lengths[other];
    if (other == b || !has_room(p, length))
      continue; // a refused entry reads nothing
    const int *table = p.block_table + other * p.block_table_batch;
    const int otherUsed = (length + p.split.appended + PageSize - 1) / PageSize;
    for (int slot = threadIdx.x; slot < otherUsed; slot += blockDim.x)
      for (int mine = first; mine < used; ++mine)
        shared = shared || table[slot] == own[mine];
  }
  return shared;
}

/// Whether another entry maps to cache row `row`, which entry b appends
/// to: the appends would race. A scan of the entries, so only a call with
/// a status pays for it (without one, the host checks). Block-collective.
template <typename T>
__device__ __forceinline__ bool shares_cache_row(const DecodeParams<T> &p,
                                                 int b, int row) {
  bool shared = false;
  for (int other = threadIdx.x; other < p.split.batch; other += blockDim.x)
    shared = shared || (other != b && p.cache_batch[other] == row);
  return __syncthreads_or(shared);
}

/// Whether entry b's step may run: a length from 0, room for the new
/// tokens (and rotary positions for them), a left padding within the
/// length, its cache row in range or every page up to the last key in
/// range and, with a status, the row or pages it appends to used by no
/// other entry. Block-collective.
template <int PageSize, typename T>
__device__ __forceinline__ bool entry_fits(const DecodeParams<T> &p, int b,
                                           int length) {
  if (p.split.cache_leftpad) {
    const int pad = p.split.cache_leftpad[b];
    if (pad < 0 || pad > length)
      return false;
  }
  if (p.rotary.cos && static_cast<long long>(length) + p.split.tokens >
                          static_cast<long long>(p.rotary.rows))
    return false;
  if constexpr (PageSize == 0) {
    if (p.cache_batch) {
      const int row = p.cache_batch[b];
      if (row < 0 || row >= p.cache_rows)
        return false;
      if (p.status && p.split.appended && shares_cache_row(p, b, row))
        return false;
    }
    return has_room(p, length);
  } else {
    if (!has_room(p, length))
      return false;
    const int used = (length + p.split.appended + PageSize - 1) / PageSize;
    bool bad = false;
    for (int slot = threadIdx.x; slot < used; slot += blockDim.x) {
      const int page = p.block_table[b * p.block_table_batch + slot];
      bad = bad || page < 0 || page >= p.pages;
    }
    if (p.status && p.split.appended)
      bad =
          bad || shares_appended_page<PageSize>(p, b, length / PageSize, used);
    return !__syncthreads_or(bad);
  }
}

/// Whether every tensor the item gathers allows 16-byte copies.
template <typename T>
__device__ __forceinline__ bool rows_aligned(const DecodeParams<T> &p) {
  constexpr int n = 16 / sizeof(T);
  auto aligned = [&](const T *data, const SequenceStrides &s) {
    return reinterpret_cast<unsigned long long>(data) % 16 == 0 &&
           s.batch % n == 0 && s.time % n == 0 && s.head % n == 0;
  };
  return aligned(p.q, p.q_strides) &&
         (!p.k || (aligned(p.k, p.k_strides) && aligned(p.v, p.v_strides))) &&
         aligned(p.k_cache, p.k_cache_strides) &&
         aligned(p.v_cache, p.v_cache_strides);
}

/// Copies the new tokens' keys and values of key head g into the cache
/// rows [length, length + T), 16 bytes at a time where `vectors` (always,
/// with aligned views of whole chunks); the keys turned first (Rotary).
/// Block-collective.
template <int D, int E, int PageSize, bool Rotary, tile::Alignment Views,
          typename T>
__device__ void append_tokens(const DecodeParams<T> &p, int b, int g,
                              int length, bool vectors) {
  constexpr int n = 16 / sizeof(T);
  constexpr bool kAlwaysVectors =
      Views == tile::Alignment::Aligned && D % n == 0 && E % n == 0;
  constexpr int kChunksD = (D + n - 1) / n,
                kChunks = kChunksD + (E + n - 1) / n;
  const int entry = cache_entry<PageSize>(p, b);
  for (int id = threadIdx.x; id < p.split.tokens * kChunks; id += blockDim.x) {
    const int t = id / kChunks, c = id % kChunks;
    const bool key = c < kChunksD;
    const int column = n * (key ? c : c - kChunksD), width = key ? D : E;
    const T *from = (key ? p.k + p.k_strides.offset(b, t, g)
                         : p.v + p.v_strides.offset(b, t, g)) +
                    column;
    T *to = (key ? p.k_cache + cache_offset<PageSize>(p, p.k_cache_strides,
                                                      entry, length + t, g)
                 : p.v_cache + cache_offset<PageSize>(p, p.v_cache_strides,
                                                      entry, length + t, g)) +
            column;
    if (Rotary && key && column < 2 * p.rotary.pairs) {
      // Turned from the source row, then stored as one vector if it may.
      alignas(16) T turned[n];
      for (int e = 0; e < n; ++e)
        turned[e] = column + e < width
                        ? from_float<T>(p.rotary.feature(
                              from - column, column + e, length + t))
                        : T{};
      if (kAlwaysVectors || (vectors && column + n <= width))
        *reinterpret_cast<uint4 *>(to) =
            *reinterpret_cast<const uint4 *>(turned);
      else
        for (int e = 0; e < n && column + e < width; ++e)
          to[e] = turned[e];
    } else if (kAlwaysVectors || (vectors && column + n <= width)) {
      *reinterpret_cast<uint4 *>(to) = *reinterpret_cast<const uint4 *>(from);
    } else if constexpr (!kAlwaysVectors) {
      for (int e = 0; e < n && column + e < width; ++e)
        to[e] = from[e];
    }
  }
}

/// out += P · V[kb, kb + 16) for a warp's 16 x 16 probabilities: 16-bit
/// from registers, f32 through the warp's columns of `probabilities`.
template <typename T, typename Out, typename Scores, typename Values,
          typename Probabilities>
__device__ __forceinline__ void
add_weighted_values(Out &out, Scores &scores, const Values &values, int kb,
                    const Probabilities &prob) {
  if constexpr (sizeof(T) == 2) {
    unsigned fa[1][4];
    scores.a_fragments(fa, 0);
    out.template mma_registers<tile::BLayout::KN>(fa, values, 0, kb);
  } else {
    scores.for_each_pair([&](int r, int c, float first, float second) {
      tile::store_pair(prob, r, kb + c, first, second);
    });
    __syncwarp();
    out.template mma<tile::BLayout::KN>(prob, 0, kb, values, 0, kb);
    __syncwarp();
  }
}

/// Scores of a warp's 16 x 16 tile into log2 units, capped and biased
/// (Capped, Biased) and masked where the tile crosses a bound: row r of
/// the tile is query row row0 + r, new token (row0 + r) / group, whose
/// diagonal is bounds.offset plus that token; `steps` its lane's rows'
/// ALiBi steps (ScoreScale::bias_step).
template <bool Capped, bool Biased, typename Scores>
__device__ __forceinline__ void
decode_scores(Scores &scores, const ScoreScale<Capped, Biased> &scale,
              const KeyBounds &bounds, const float (&steps)[2], int row0,
              int rows, int group, int j0) {
  const int lastRow = (row0 + 15 < rows ? row0 + 15 : rows - 1);
  const bool crosses =
      bounds.crosses(row0 / group, lastRow / group - row0 / group + 1, j0, 16);
  scores.update_pairs([&](int r, int c, float &s0, float &s1) {
    const int token = (row0 + r) / group;
    if (Capped && scale.capped) {
      s0 = tanhf(s0 * scale.capScale);
      s1 = tanhf(s1 * scale.capScale);
    }
    if constexpr (Biased) {
      const float step = steps[Scores::lane_row(r)];
      const int distance = token + bounds.offset - (j0 + c);
      s0 -= step * fabsf(static_cast<float>(distance));
      s1 -= step * fabsf(static_cast<float>(distance - 1));
    }
    s0 *= scale.toLog2;
    s1 *= scale.toLog2;
    if (crosses) {
      const float inf = __int_as_float(0x7f800000);
      if (!bounds.allows(token, j0 + c))
        s0 = -inf;
      if (!bounds.allows(token, j0 + c + 1))
        s1 = -inf;
    }
  });
}

/// Turns what just landed in shared memory and the rotary embedding
/// concerns: the queries (with `queries`, at the pass's first stage) and
/// the stage's keys of new tokens (rows j0 + r from `length` to `last`),
/// which came from k unturned; the cached keys were turned when appended.
/// Block-collective; ends on a barrier when it turned anything.
template <typename T, typename Queries, typename Keys>
__device__ __forceinline__ void
turn_landed_rows(const DecodeParams<T> &p, const Queries &q, const Keys &k,
                 bool queries, int j0, int length, int last, int row0, int rows,
                 int group) {
  const int queryRows = queries ? Queries::kRows : 0;
  const int keyRows = j0 + Keys::kRows > length && j0 < last ? Keys::kRows : 0;
  if (queryRows + keyRows == 0)
    return;
  const int pairs = p.rotary.pairs;
  for (int id = threadIdx.x; id < (queryRows + keyRows) * pairs;
       id += blockDim.x) {
    const int r = id / pairs, pair = id % pairs;
    if (r < queryRows) {
      if (row0 + r >= rows)
        continue;
      const int token = (row0 + r) / group;
      p.rotary.turn([&](int e) -> T & { return q(r, e); }, pair,
                    length + (p.rotary_each_query ? token : 0));
    } else {
      const int j = j0 + r - queryRows;
      if (j >= length && j < last)
        p.rotary.turn([&](int e) -> T & { return k(r - queryRows, e); }, pair,
                      j);
    }
  }
  __syncthreads();
}

/// Rows [row0, row0 + 16) of item (b, g, part) — row r is query head
/// g·group + r % group of new token r / group — against the item's keys
/// [first, last) of an entry of `length` cached tokens; its normalised
/// outputs and log-sum-exps written as the final o and lse (an entry of
/// one part) or as part `part`'s partial results.
template <typename T, int D, int E, int Warps, int PageSize, bool Capped,
          bool Biased, bool Rotary, tile::Alignment Views>
__device__ void attend_part(const DecodeParams<T> &p, int b, int g, int part,
                            int parts, int row0, int length, int first,
                            int last, bool vectors) {
  using Shared = DecodeShared<T, D, E, Warps>;
  constexpr int kD = Shared::kD, kE = Shared::kE;
  constexpr int kStage = Shared::kStageKeys;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tokens = p.split.tokens, group = p.heads / p.split.kv_heads;
  const int rows = group * tokens;
  const typename Shared::Queries queries{shared->q};
  const typename Shared::Probabilities probabilities{shared->p};

  // A key row: the cache's below the length, the new tokens' after.
  const int entry = cache_entry<PageSize>(p, b);
  auto key_row = [&](const T *cache, const SequenceStrides &cacheStrides,
                     const T *fresh, const SequenceStrides &freshStrides,
                     int j) -> const T * {
    if (j >= last)
      return nullptr;
    if (j < length)
      return cache + cache_offset<PageSize>(p, cacheStrides, entry, j, g);
    return fresh + freshStrides.offset(b, j - length, g);
  };

  // Query i's diagonal: its position among the entry's keys.
  const KeyBounds bounds{last,           length + p.split.appended - tokens,
                         p.causal,       p.split.window_left,
                         p.window_right, nullptr};
  const auto scale = ScoreScale<Capped, Biased>::make(p.scale, p.softcap);
  float biasSteps[2] = {0.f, 0.f};
  if constexpr (Biased)
    for (int i = 0; i < 2; ++i) {
      const int row = row0 + lane / 4 + 8 * i;
      biasSteps[i] = scale.bias_step(
          p.alibi_slopes[b * p.alibi_batch + g * group + row % group]);
    }

  tile::WarpTile<T, 16, kE> out;
  out.clear();
  OnlineSoftmax<16> softmax;
  softmax.clear();
  const int steps = last > first ? (last - first + kStage - 1) / kStage : 0;
  tile::two_stage_pipeline(
      steps,
      [&](int step, int stage) {
        if (step == 0)
          tile::gather_tile_async<Views>(
              queries,
              [&](int r) -> const T * {
                const int row = row0 + r;
                return row < rows
                           ? p.q + p.q_strides.offset(b, row / group,
                                                      g * group + row % group)
                           : nullptr;
              },
              D, vectors, p.q);
        const int j0 = first + step * kStage;
        tile::gather_tile_async<Views>(
            typename Shared::Keys{shared->k[stage]},
            [&](int r) {
              return key_row(p.k_cache, p.k_cache_strides, p.k, p.k_strides,
                             j0 + r);
            },
            D, vectors, p.k);
        tile::gather_tile_async<Views>(
            typename Shared::Values{shared->v[stage]},
            [&](int r) {
              return key_row(p.v_cache, p.v_cache_strides, p.v, p.v_strides,
                             j0 + r);
            },
            E, vectors, p.v);
      },
      [&](int step, int stage) {
        const typename Shared::Keys keys{shared->k[stage]};
        const typename Shared::Values values{shared->v[stage]};
        if constexpr (Rotary)
          turn_landed_rows(p, queries, keys, step == 0, first + step * kStage,
                           length, last, row0, rows, group);
        const int j0 = first + step * kStage + 16 * warp;
        tile::WarpTile<T, 16, 16> scores;
        scores.clear();
#pragma unroll
        for (int k0 = 0; k0 < kD; k0 += 16)
          scores.template mma<tile::BLayout::NK>(queries, 0, keys, 16 * warp,
                                                 k0);
        decode_scores(scores, scale, bounds, biasSteps, row0, rows, group, j0);
        float rescale[OnlineSoftmax<16>::kRows];
        softmax.update(scores, rescale);
        rescale_rows(out, rescale);
        add_weighted_values<T>(out, scores, values, 16 * warp, probabilities);
      });

  // Each warp's rows, normalised, with their log-sum-exps; then the warps'
  // states merged by log-sum-exp, a thread an element.
  float normalize[OnlineSoftmax<16>::kRows], lse[OnlineSoftmax<16>::kRows];
  softmax.finish(normalize, lse);
  float *mine = shared->merged(warp);
  out.for_each_pair([&](int r, int c, float first, float second) {
    const float factor = normalize[tile::WarpTile<T, 16, kE>::lane_row(r)];
    mine[r * kE + c] = first * factor;
    mine[r * kE + c + 1] = second * factor;
  });
  if (lane % 4 == 0)
#pragma unroll
    for (int r = 0; r < OnlineSoftmax<16>::kRows; ++r)
      shared->row_lse[warp][lane / 4 + 8 * r] = lse[r];
  __syncthreads();
  const bool single = parts == 1;
  for (int id = threadIdx.x; id < 16 * (E + 1); id += blockDim.x) {
    const int r = id / (E + 1), c = id % (E + 1); // column E: the lse
    const int row = row0 + r;
    if (row >= rows)
      continue;
    float peak = -__int_as_float(0x7f800000);
#pragma unroll
    for (int w = 0; w < Warps; ++w)
      peak = fmaxf(peak, shared->row_lse[w][r]);
    float total = 0.f, value = 0.f;
    if (peak != -__int_as_float(0x7f800000))
#pragma unroll
      for (int w = 0; w < Warps; ++w) {
        const float weight = expf(shared->row_lse[w][r] - peak);
        total += weight;
        if (c < E)
          value += weight * shared->merged(w)[r * kE + c];
      }
    const int t = row / group, h = g * group + row % group;
    const float rowLse =
        total > 0.f ? peak + logf(total) : -__int_as_float(0x7f800000);
    value = total > 0.f ? value / total : 0.f;
    if (single) {
      if (c < E)
        p.o[p.o_strides.offset(b, t, h) + c] = from_float<T>(value);
      else if (p.lse)
        p.lse[(static_cast<long long>(b) * p.heads + h) * tokens + t] = rowLse;
    } else {
      const long long slot =
          partial_slot(b, h, t, part, p.heads, tokens, p.split.slots);
      if (c < E)
        p.o_partial[slot * E + c] = value;
      else
        p.lse_partial[slot] = rowLse;
    }
  }
  __syncthreads(); // the stages are the next pass's
}

/// The partials kernel: a grid of persistent blocks over the work items.
template <typename T, int D, int E, int Warps, int PageSize, bool Capped,
          bool Biased, bool Rotary,
          tile::Alignment Views = tile::Alignment::Checked>
__device__ void decode_partials(const DecodeParams<T> &p) {
  const DecodeSplit &split = p.split;
  const int partKeys = split.forced > 0 ? 0 : split.chosen_part_keys();
  const bool vectors = Views == tile::Alignment::Aligned || rows_aligned(p);
  const int group = p.heads / split.kv_heads, rows = group * split.tokens;
  for (int index = blockIdx.x;; index += gridDim.x) {
    int b = 0, g = 0, part = 0, parts = 1;
    if (!split.item(index, partKeys, b, g, part, parts))
      return;
    const int length = split.cache_lengths[b];
    const bool fits = entry_fits<PageSize>(p, b, length);
    if (fits && part == 0 && split.appended)
      append_tokens<D, E, PageSize, Rotary, Views>(p, b, g, length, vectors);
    if (p.status && g == 0 && part == 0 && threadIdx.x == 0)
      p.status[b] = fits ? 0 : 1;
    // A refused entry attends to nothing: zeros and −inf.
    const int count = split.keys(b);
    const int keys = fits ? count : 0;
    const int start = fits ? split.first_key(b) : 0;
    const long long per = DecodeSplit::keys_per_part(count, parts);
    const int first =
        start + (part * per < keys ? static_cast<int>(part * per) : keys);
    const int last =
        start +
        (part * per + per < keys ? static_cast<int>(part * per + per) : keys);
    for (int row0 = 0; row0 < rows; row0 += 16)
      attend_part<T, D, E, Warps, PageSize, Capped, Biased, Rotary, Views>(
          p, b, g, part, parts, row0, fits ? length : 0, first, last, vectors);
  }
}

} // namespace attention
} // namespace rudnn
