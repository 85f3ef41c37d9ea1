//===- math.cuh - Fast reciprocal and exponentials ------------------------===//

#pragma once

#include "rudnn/arch/math.cuh"

namespace rudnn {

/// 1/x: the hardware approximation refined by one Newton–Raphson step,
/// r' = r (2 - x r), which roughly doubles its correct bits.
__device__ __forceinline__ float fast_reciprocal(float x) {
  float r = arch::rcp_approx(x);
  return r * (2.0f - x * r);
}

/// e^x as 2^(x log2 e): one multiply and one ex2.
__device__ __forceinline__ float fast_exp(float x) {
  return arch::ex2_approx(x * 1.4426950408889634f);
}

} // namespace rudnn
