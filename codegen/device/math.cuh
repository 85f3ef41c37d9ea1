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

/// 2^x for x ≤ 0 on the FMA pipes, where fast_exp takes the special-function
/// units (16 results an SM and clock, an eighth of the FMA pipes' rate): a
/// kernel bound by its exponentials hands a share of them here. x = j + f,
/// j the nearest integer (adding 1.5·2^23 rounds it into the low mantissa
/// bits), f in [−1/2, 1/2]; 2^f by a degree-5 minimax polynomial, times 2^j
/// made in the exponent bits. Relative error below 1.6e-7 (ex2.approx's:
/// 2.4e-7) down to 2^-126; below x = −126.5 the result is 0, as ex2.approx.ftz
/// flushes it (between them, a subnormal); NaN stays NaN. No upper clamp:
/// x > 0 is outside its use.
__device__ __forceinline__ float polynomial_exp2(float x) {
  constexpr float kRound = 12582912.f; // 1.5·2^23, bits 0x4b400000
  const float clamped = x < -127.f ? -127.f : x;
  const float shifted = clamped + kRound;
  const float f = clamped - (shifted - kRound);
  // Fitted with p(0) = 1: e^0, a token's decay to itself, stays exact.
  float p = 1.326470869e-3f;
  p = fmaf(p, f, 9.671511129e-3f);
  p = fmaf(p, f, 5.550733954e-2f);
  p = fmaf(p, f, 2.402224243e-1f);
  p = fmaf(p, f, 6.931470037e-1f);
  p = fmaf(p, f, 1.0f);
  // shifted's bits are 0x4b400000 + j: 2^j's biased exponent is j + 127
  // (0 at j = −127, a zero scale).
  const int exponent = __float_as_int(shifted) - 0x4b400000 + 127;
  return p * __int_as_float(exponent << 23);
}

/// e^x for x ≤ 0 as polynomial_exp2(x log2 e).
__device__ __forceinline__ float polynomial_exp(float x) {
  return polynomial_exp2(x * 1.4426950408889634f);
}

} // namespace rudnn
