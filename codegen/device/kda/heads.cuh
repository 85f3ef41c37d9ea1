//===- kda/heads.cuh - Gradients of heads shared by groups ----------------===//

#pragma once

#include "rudnn/tensor.cuh"

namespace rudnn {
namespace kda {

/// sum[b, t, q, :] = Σ_{j < G} x[b, t, q·G + j, :], j in order (G = heads /
/// groups): the gradient of a q or k head from each of the G value heads
/// sharing it, the same on every run. grid (T, B), one (b, t) row a block,
/// the threads along the features (coalesced).
template <int D, typename T>
__device__ void head_group_sum(const T *x, SequenceStrides xs, T *sum,
                               SequenceStrides sums, int heads, int groups) {
  const int t = blockIdx.x, b = blockIdx.y, group = heads / groups;
  for (int e = threadIdx.x; e < groups * D; e += blockDim.x) {
    const int q = e / D, d = e % D;
    float total = 0.f;
    for (int j = 0; j < group; ++j)
      total += to_float(x[xs.offset(b, t, q * group + j) + d]);
    sum[sums.offset(b, t, q) + d] = from_float<T>(total);
  }
}

} // namespace kda
} // namespace rudnn
