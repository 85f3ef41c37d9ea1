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

/// Elements of T one 16-byte access moves.
template <typename T> struct Vector16 {
  static constexpr int kCount = 16 / sizeof(T);
};

/// Vector16<T>::kCount elements at `from` (16-byte aligned) in one 16-byte
/// load, converted to fp32.
template <typename T>
__device__ __forceinline__ void load_vector16(const T *from,
                                              float (&to)[16 / sizeof(T)]) {
  const uint4 raw = *reinterpret_cast<const uint4 *>(from);
  const T *elements = reinterpret_cast<const T *>(&raw);
#pragma unroll
  for (int i = 0; i < Vector16<T>::kCount; ++i)
    to[i] = to_float(elements[i]);
}

/// Rounds `from` to T and stores it at `to` (16-byte aligned) in one
/// 16-byte store.
template <typename T>
__device__ __forceinline__ void
store_vector16(T *to, const float (&from)[16 / sizeof(T)]) {
  uint4 raw;
  T *elements = reinterpret_cast<T *>(&raw);
#pragma unroll
  for (int i = 0; i < Vector16<T>::kCount; ++i)
    elements[i] = from_float<T>(from[i]);
  *reinterpret_cast<uint4 *>(to) = raw;
}

/// Whether rows `stride` elements apart from `base` all start on 16 bytes.
template <typename T>
__device__ __forceinline__ bool rows_aligned16(const T *base,
                                               long long stride) {
  return reinterpret_cast<unsigned long long>(base) % 16 == 0 &&
         stride * static_cast<long long>(sizeof(T)) % 16 == 0;
}

} // namespace rudnn
