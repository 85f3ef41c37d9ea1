//===- tensor.cuh - Strided element access with conversion to fp32 --------===//
//
// Operator tensors are views: innermost dim contiguous, the other strides
// free (DESIGN §7). Loads convert to fp32 and stores round from it, so one
// kernel body serves f32, f16 and bf16 data. Offsets are 64-bit.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/global.cuh"

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

/// The bits of a 16-bit float.
__device__ __forceinline__ unsigned short bits_of(__half x) {
  return __half_as_ushort(x);
}
__device__ __forceinline__ unsigned short bits_of(__nv_bfloat16 x) {
  return __bfloat16_as_ushort(x);
}

/// Two values rounded to a 16-bit T, the first in the low half.
template <typename T>
__device__ __forceinline__ unsigned pack_pair(float first, float second) {
  return static_cast<unsigned>(bits_of(from_float<T>(first))) |
         static_cast<unsigned>(bits_of(from_float<T>(second))) << 16;
}

/// Rounds `from` to T and stores it at `to` (16-byte aligned, in global
/// memory) in one 16-byte store.
template <typename T>
__device__ __forceinline__ void
store_vector16(T *to, const float (&from)[16 / sizeof(T)]) {
  uint4 raw;
  if constexpr (sizeof(T) == 4)
    raw = make_uint4(__float_as_uint(from[0]), __float_as_uint(from[1]),
                     __float_as_uint(from[2]), __float_as_uint(from[3]));
  else
    raw = make_uint4(
        pack_pair<T>(from[0], from[1]), pack_pair<T>(from[2], from[3]),
        pack_pair<T>(from[4], from[5]), pack_pair<T>(from[6], from[7]));
  arch::store_global16(to, raw);
}

/// Whether rows `stride` elements apart from `base` all start on 16 bytes.
template <typename T>
__device__ __forceinline__ bool rows_aligned16(const T *base,
                                               long long stride) {
  return reinterpret_cast<unsigned long long>(base) % 16 == 0 &&
         stride * static_cast<long long>(sizeof(T)) % 16 == 0;
}

} // namespace rudnn
