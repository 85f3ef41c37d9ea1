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
  return rudnn_emu_detail::flushSubnormal(1.0f /
                                          rudnn_emu_detail::flushSubnormal(x));
#else
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
#endif
}

/// 2^x, approximate.
__device__ __forceinline__ float ex2_approx(float x) {
#ifdef __RUDNN_EMULATION__
  return rudnn_emu_detail::flushSubnormal(
      exp2f(rudnn_emu_detail::flushSubnormal(x)));
#else
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
#endif
}

} // namespace arch
} // namespace rudnn
