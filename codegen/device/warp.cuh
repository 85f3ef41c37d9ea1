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

} // namespace rudnn
