//===- tensor.cuh - Strided element access with conversion to fp32 --------===//
//
// Operator tensors are views: innermost dim contiguous, the other strides
// free (DESIGN §7). Loads convert to fp32 and stores round from it, so one
// kernel body serves f32, f16 and bf16 data. Offsets are 64-bit.
//
//===----------------------------------------------------------------------===//

#pragma once

namespace rudnn {

/// Strides, in elements, of a [B, T, H, ...] view's three outer dims.
struct SequenceStrides {
  long long batch, time, head;

  __device__ __forceinline__ long long offset(long long b, long long t,
                                              long long h) const {
    return b * batch + t * time + h * head;
  }
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <> __device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

} // namespace rudnn
