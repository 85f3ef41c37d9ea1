//===- SampleKernels.h - Kernel sources for runtime tests and benches -*- C++
//-*-===//

#ifndef RUDNN_TEST_SUPPORT_SAMPLEKERNELS_H
#define RUDNN_TEST_SUPPORT_SAMPLEKERNELS_H

namespace rudnn::samples {

/// One warp multiplies a 16x16 bf16 tile A (row-major) by a 16x8 bf16 tile B
/// (column-major) on tensor cores: D (16x8 fp32, row-major) = A·B. Uses the
/// device library, so it includes the bf16 headers and mma.sync.
inline constexpr const char *kMmaTileEntry = "mma_tile_bf16";
inline constexpr const char *kMmaTileSource = R"cuda(
#include "rudnn/device.cuh"

extern "C" __global__ void mma_tile_bf16(const __nv_bfloat16 *a,
                                         const __nv_bfloat16 *b, float *d) {
  const int lane = threadIdx.x % 32;
  const int group = lane / 4, pair = 2 * (lane % 4);
  auto at = [&](int row, int col) { return __bfloat162float(a[row * 16 + col]); };
  auto bt = [&](int k, int n) { return __bfloat162float(b[n * 16 + k]); };
  unsigned fa[4] = {
      rudnn::arch::pack_bf16x2(at(group, pair), at(group, pair + 1)),
      rudnn::arch::pack_bf16x2(at(group + 8, pair), at(group + 8, pair + 1)),
      rudnn::arch::pack_bf16x2(at(group, pair + 8), at(group, pair + 9)),
      rudnn::arch::pack_bf16x2(at(group + 8, pair + 8), at(group + 8, pair + 9))};
  unsigned fb[2] = {rudnn::arch::pack_bf16x2(bt(pair, group), bt(pair + 1, group)),
                    rudnn::arch::pack_bf16x2(bt(pair + 8, group), bt(pair + 9, group))};
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  rudnn::arch::mma_m16n8k16_bf16(acc, fa, fb, acc);
  d[group * 8 + pair] = acc[0];
  d[group * 8 + pair + 1] = acc[1];
  d[(group + 8) * 8 + pair] = acc[2];
  d[(group + 8) * 8 + pair + 1] = acc[3];
}
)cuda";

/// y = a·x + y over n elements.
inline constexpr const char *kAxpyEntry = "axpy";
inline constexpr const char *kAxpySource = R"cuda(
extern "C" __global__ void axpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
)cuda";

/// Does not compile: `undeclared_name` is never declared.
inline constexpr const char *kBrokenEntry = "broken";
inline constexpr const char *kBrokenSource = R"cuda(
extern "C" __global__ void broken(float *out) { out[0] = undeclared_name; }
)cuda";

} // namespace rudnn::samples

#endif // RUDNN_TEST_SUPPORT_SAMPLEKERNELS_H
