//===- warp.cuh - Warp-wide reductions ------------------------------------===//

#pragma once

namespace rudnn {

constexpr unsigned kFullWarpMask = 0xffffffffu;

/// The sum over the 32 lanes, in every lane (butterfly over xor shuffles).
template <typename T> __device__ __forceinline__ T warp_sum(T value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_xor_sync(kFullWarpMask, value, offset);
  return value;
}

/// The maximum over the 32 lanes, in every lane.
template <typename T> __device__ __forceinline__ T warp_max(T value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    T other = __shfl_xor_sync(kFullWarpMask, value, offset);
    value = other > value ? other : value;
  }
  return value;
}

/// Which of `runs` consecutive runs item `index` falls in, run r holding
/// count(r) items: `run`, and `before` the items of the runs before it;
/// false past the last item. Warp-collective: the lanes take 32 runs at a
/// time, a prefix sum over shuffles.
template <typename Count>
__device__ __forceinline__ bool warp_find_run(int runs, int index, Count count,
                                              int &run, int &before) {
  const int lane = threadIdx.x % 32;
  int scanned = 0; // items of the runs scanned so far
  for (int base = 0; base < runs; base += 32) {
    const int mine = base + lane < runs ? count(base + lane) : 0;
    int sum = mine; // inclusive prefix sum over the lanes
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int from = __shfl_up_sync(kFullWarpMask, sum, d);
      if (lane >= d)
        sum += from;
    }
    const int chunk = __shfl_sync(kFullWarpMask, sum, 31);
    if (index < scanned + chunk) {
      const int first =
          __ffs(__ballot_sync(kFullWarpMask, scanned + sum > index)) - 1;
      run = base + first;
      before = scanned + __shfl_sync(kFullWarpMask, sum - mine, first);
      return true;
    }
    scanned += chunk;
  }
  return false;
}

namespace detail {
/// One step of warp_sum_scatter: lanes l and l ^ Half exchange halves of
/// their first 2·Half values. A template per step, so that every index is a
/// constant and `values` stays in registers.
template <int Half, typename T>
__device__ __forceinline__ void sum_scatter_step(T (&values)[32], int lane) {
  const bool upper = lane & Half;
#pragma unroll
  for (int n = 0; n < Half; ++n) {
    // Both read first, then selected: a select of two addresses would index
    // the array at run time and put it in local memory.
    const T low = values[n], high = values[n + Half];
    const T send = upper ? low : high, keep = upper ? high : low;
    values[n] = keep + __shfl_xor_sync(kFullWarpMask, send, Half);
  }
  if constexpr (Half > 1)
    sum_scatter_step<Half / 2>(values, lane);
}
} // namespace detail

/// Lane l's result: the sum over the 32 lanes of values[l]. A
/// reduce-scatter: each step halves the values a lane carries, 31 shuffles
/// for the 32 sums where 32 butterflies would take 160. `values` is
/// clobbered.
template <typename T>
__device__ __forceinline__ T warp_sum_scatter(T (&values)[32]) {
  detail::sum_scatter_step<16>(values, threadIdx.x % 32);
  return values[0];
}

} // namespace rudnn
