//===- arch/math.cuh - Approximate math instructions ----------------------===//

#pragma once

namespace rudnn {
namespace arch {

/// 1/x within 1 ulp, subnormals flushed to zero.
__device__ __forceinline__ float rcp_approx(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
}

/// 2^x, approximate.
__device__ __forceinline__ float ex2_approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
}

} // namespace arch
} // namespace rudnn
