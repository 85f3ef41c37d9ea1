//===- norm/welford.cuh - One-pass moments and their merge ----------------===//
//
// Welford's update keeps a running count, mean and M2 (the sum of squared
// deviations from the mean) without the cancellation of E[x²] − E[x]²;
// Chan's merge combines two such summaries, so threads, warps and blocks
// each summarise their share and merge up a tree. Callers subtract a pivot
// (a value of the same set) first: the deviations are then small numbers
// and even data far from zero keeps its variance. Counts are 32-bit
// integers, exact past 2^24; 1/n is the Newton–Raphson reciprocal.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/math.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace norm {

struct Welford {
  unsigned count = 0;
  float mean = 0.0f, m2 = 0.0f;

  /// Welford's update with one value.
  __device__ __forceinline__ void push(float x) {
    ++count;
    const float delta = x - mean;
    mean += delta * fast_reciprocal(static_cast<float>(count));
    m2 += delta * (x - mean);
  }

  /// Population variance, 0 for no values.
  __device__ __forceinline__ float variance() const {
    return count ? m2 * fast_reciprocal(static_cast<float>(count)) : 0.0f;
  }
};

/// Chan's merge: the summary of both sets.
__device__ __forceinline__ Welford merge(const Welford &a, const Welford &b) {
  const unsigned n = a.count + b.count;
  if (n == 0)
    return a;
  const float share = static_cast<float>(b.count) *
                      fast_reciprocal(static_cast<float>(n)),
              delta = b.mean - a.mean;
  Welford merged;
  merged.count = n;
  merged.mean = a.mean + delta * share;
  merged.m2 = a.m2 + b.m2 + delta * delta * static_cast<float>(a.count) * share;
  return merged;
}

/// The summary of the values a thread holds in registers for which
/// `valid(i)` holds: their mean, then the squared deviations from it (two
/// passes over registers rather than an update a value).
template <int N, typename Valid>
__device__ __forceinline__ Welford summarise(const float (&values)[N],
                                             Valid valid) {
  Welford w;
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (valid(i)) {
      ++w.count;
      sum += values[i];
    }
  if (w.count == 0)
    return w;
  w.mean = sum * fast_reciprocal(static_cast<float>(w.count));
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const float d = values[i] - w.mean;
    w.m2 += valid(i) ? d * d : 0.0f;
  }
  return w;
}

/// The merge of the 32 lanes' summaries, in every lane, bit for bit (xor
/// butterfly; both partners merge the lower lane's summary first).
__device__ __forceinline__ Welford warp_merge(Welford w) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    Welford other;
    other.count = __shfl_xor_sync(kFullWarpMask, w.count, offset);
    other.mean = __shfl_xor_sync(kFullWarpMask, w.mean, offset);
    other.m2 = __shfl_xor_sync(kFullWarpMask, w.m2, offset);
    w = lane & offset ? merge(other, w) : merge(w, other);
  }
  return w;
}

/// Scratch a block-wide merge or sum needs: one slot a warp (plain
/// arrays: shared memory takes no constructors).
struct BlockScratch {
  unsigned counts[32];
  float means[32], m2s[32], sums[32];
};

/// The merge of every thread's summary of a block of `Threads` threads, in
/// every thread. Block-collective; `scratch` is free again on return.
template <int Threads>
__device__ __forceinline__ Welford block_merge(Welford w,
                                               BlockScratch &scratch) {
  w = warp_merge(w);
  if constexpr (Threads > 32) {
    constexpr int kWarps = Threads / 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
      scratch.counts[warp] = w.count;
      scratch.means[warp] = w.mean;
      scratch.m2s[warp] = w.m2;
    }
    __syncthreads();
    w = Welford{};
    if (lane < kWarps) {
      w.count = scratch.counts[lane];
      w.mean = scratch.means[lane];
      w.m2 = scratch.m2s[lane];
    }
    w = warp_merge(w);
    __syncthreads();
  }
  return w;
}

/// The sum over a block of `Threads` threads, in every thread.
template <int Threads>
__device__ __forceinline__ float block_sum(float value, BlockScratch &scratch) {
  value = warp_sum(value);
  if constexpr (Threads > 32) {
    constexpr int kWarps = Threads / 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
      scratch.sums[warp] = value;
    __syncthreads();
    value = warp_sum(lane < kWarps ? scratch.sums[lane] : 0.0f);
    __syncthreads();
  }
  return value;
}

} // namespace norm
} // namespace rudnn
