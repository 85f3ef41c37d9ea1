//===- attention/decode_split.cuh - How a decoding step splits its keys ---===//
//
// Flash-decoding: an entry's keys are split into parts attended by
// different blocks, whose partial outputs are combined by their
// log-sum-exp. How many parts each entry takes is decided here, on the
// device, from the lengths: the plan's grid depends on no length, so a
// captured CUDA graph replays correctly as the lengths change. Both
// kernels of the step ask the same functions and agree.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/merge.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace attention {

/// The most parts an entry's keys are split into (o_partial's slots).
inline constexpr int kDecodeMaxSplits = 64;
/// Parts hold whole multiples of this many keys (a warp's key tile)...
inline constexpr int kDecodeSplitGranule = 16;
/// ...and, when the device chooses, at least this many, over at most this
/// many waves of the grid.
inline constexpr int kDecodeMinSplitKeys = 256;
inline constexpr int kDecodeMaxWaves = 8;

/// What both kernels know of the split: the lengths and left paddings
/// (null: none), the new tokens (the query rows of an entry) and how many
/// of them are appended (T, or 0 for an attend-only call), the key heads,
/// the window's left bound (−1: none), the parts forced (0: the device's
/// choice), the persistent grid the partials run on, and the
/// partial-result slots a query row has (the forced parts, or as many as
/// the call's workspace budget holds, 1 to kDecodeMaxSplits): the device
/// never chooses more parts.
struct DecodeSplit {
  const int *cache_lengths, *cache_leftpad;
  int batch, tokens, appended, kv_heads, window_left, forced, blocks, slots;

  /// Entry b's cached tokens, clamped (a refused entry attends to none,
  /// but splits like any).
  __device__ __forceinline__ int length(int b) const {
    const int length = cache_lengths[b];
    return length < 0 ? 0 : length > (1 << 30) ? (1 << 30) : length;
  }

  /// The first key entry b attends to: its left padding, or the window's
  /// first key for its first query when that is later.
  __device__ __forceinline__ int first_key(int b) const {
    const int end = length(b) + appended;
    int first = 0;
    if (cache_leftpad) {
      const int pad = cache_leftpad[b];
      first = pad < 0 ? 0 : pad > end ? end : pad;
    }
    if (window_left >= 0) {
      const long long earliest =
          static_cast<long long>(end) - tokens - window_left;
      if (earliest > first)
        first = earliest < end ? static_cast<int>(earliest) : end;
    }
    return first;
  }

  /// Keys entry b attends to: from first_key(b) to its last, the new ones
  /// included.
  __device__ __forceinline__ int keys(int b) const {
    return length(b) + appended - first_key(b);
  }

  /// Keys a part holds at least when the device chooses: every entry's
  /// keys of every key head spread over whole waves of the grid (as many
  /// as leave kDecodeMinSplitKeys a part, 1 to kDecodeMaxWaves), so that
  /// the items come out near a multiple of the blocks. Warp-collective.
  __device__ __forceinline__ int chosen_part_keys() const {
    long long total = 0;
    for (int b = threadIdx.x % 32; b < batch; b += 32)
      total += keys(b);
    total = warp_sum(total) * kv_heads;
    long long waves =
        total / (static_cast<long long>(blocks) * kDecodeMinSplitKeys);
    waves = waves < 1 ? 1 : waves > kDecodeMaxWaves ? kDecodeMaxWaves : waves;
    const long long slots = waves * blocks;
    long long part = (total + slots - 1) / slots;
    part = part < kDecodeMinSplitKeys ? kDecodeMinSplitKeys : part;
    return part > (1 << 30) ? (1 << 30) : static_cast<int>(part);
  }

  /// The parts of an entry of `count` keys, with `partKeys` from
  /// chosen_part_keys() (unused when forced): as many whole `partKeys` as
  /// it holds (rounding down keeps the items within the waves planned),
  /// 1 to `slots`.
  __device__ __forceinline__ int parts(int count, int partKeys) const {
    if (forced > 0)
      return forced;
    const int n = count / partKeys;
    return n < 1 ? 1 : n > slots ? slots : n;
  }

  /// Keys of each of the `parts` parts of `count` keys (the last may hold
  /// fewer, later ones none).
  static __device__ __forceinline__ int keys_per_part(int count, int parts) {
    const int even = (count + parts - 1) / parts;
    return (even + kDecodeSplitGranule - 1) / kDecodeSplitGranule *
           kDecodeSplitGranule;
  }

  /// Which (entry, key head, part) work item `index` is, the items ordered
  /// by entry, then key head, then part; false past the last.
  /// Warp-collective.
  __device__ __forceinline__ bool item(int index, int partKeys, int &b, int &g,
                                       int &part, int &parts) const {
    int before = 0;
    if (!warp_find_run(
            batch, index,
            [&](int e) { return kv_heads * this->parts(keys(e), partKeys); }, b,
            before))
      return false;
    parts = this->parts(keys(b), partKeys);
    g = (index - before) / parts;
    part = (index - before) % parts;
    return true;
  }
};

/// Where query row (b, h, t) keeps part s of its partial results:
/// o_partial [B, H, T, slots, E], lse_partial [B, H, T, slots].
__device__ __forceinline__ long long
partial_slot(int b, int h, int t, int part, int heads, int tokens, int slots) {
  return ((static_cast<long long>(b) * heads + h) * tokens + t) * slots + part;
}

/// The combine kernel's tensors: o [B, T, H, E] and lse [B, H, T] (or
/// null), written for the entries of more than one part.
template <typename T> struct CombineParams {
  const float *o_partial, *lse_partial;
  T *o;
  float *lse;
  SequenceStrides o_strides;
  int heads;
  DecodeSplit split;
};

/// A warp per query row (b, h, t), the grid's warps taking the rows in
/// turn (any grid), merging the entry's parts (merge_parts); entries of
/// one part were written by the partials.
template <typename T, int E>
__device__ void combine_partials(const CombineParams<T> &p) {
  const DecodeSplit &split = p.split;
  const int partKeys = split.forced > 0 ? 0 : split.chosen_part_keys();
  const int warps = blockDim.x / 32;
  const long long rows =
      static_cast<long long>(split.batch) * p.heads * split.tokens;
  for (long long row =
           static_cast<long long>(blockIdx.x) * warps + threadIdx.x / 32;
       row < rows; row += static_cast<long long>(gridDim.x) * warps) {
    const int t = static_cast<int>(row % split.tokens);
    const int h = static_cast<int>(row / split.tokens % p.heads);
    const int b = static_cast<int>(row / split.tokens / p.heads);
    const int parts = split.parts(split.keys(b), partKeys);
    if (parts == 1)
      continue;
    const long long slot0 =
        partial_slot(b, h, t, 0, p.heads, split.tokens, split.slots);
    merge_parts<T, E>(p.o_partial + slot0 * E, p.lse_partial + slot0, parts,
                      p.o + p.o_strides.offset(b, t, h),
                      p.lse ? p.lse + row : nullptr);
  }
}

} // namespace attention
} // namespace rudnn
