//===- arch/math.cuh - Approximate math instructions ----------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__
#include "rudnn/arch/emulated.cuh"
#endif

namespace rudnn {
namespace arch {

/// 1/x within 1 ulp, subnormals flushed to zero.
__device__ __forceinline__ float rcp_approx(float x) {
#ifdef __RUDNN_EMULATION__
  // .ftz: subnormal inputs and results are zeros of the same sign.
  // Within 1 ulp: check mode moves the exact result by up to that.
  return rudnn_emu_detail::flushSubnormal(rudnn_emu_detail::approximate(
      1.0f / rudnn_emu_detail::flushSubnormal(x), x, 1));
#else
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
#endif
}

/// 2^x, relative error at most 2^-22, subnormals flushed to zero.
__device__ __forceinline__ float ex2_approx(float x) {
#ifdef __RUDNN_EMULATION__
  // Relative error 2^-22 (2 ulps), modelled in check mode.
  return rudnn_emu_detail::flushSubnormal(rudnn_emu_detail::approximate(
      exp2f(rudnn_emu_detail::flushSubnormal(x)), x, 2));
#else
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
#endif
}

} // namespace arch
} // namespace rudnn
