//===- attention/merge.cuh - Partial results merged by their lse ----------===//
//
// Attention over parts of the keys taken by different blocks (split-KV
// decoding, decoding-shaped forward calls) leaves, for each query row and
// part, a normalised partial output and its log-sum-exp; a warp merges a
// row's parts here. The decoding step and the forward's split share it.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/tensor.cuh"

namespace rudnn {
namespace attention {

/// One query row's `parts` partial results, o_parts [parts][E] and
/// lse_parts [parts] (an empty part: lse −inf), merged by the warp:
/// lse = log Σ_s exp(lse_s) and o = Σ_s exp(lse_s − lse) · o_s, written to
/// `to` (E elements) and, unless null, `lse`. A row whose parts are all
/// empty gives 0 and −inf.
template <typename T, int E>
__device__ __forceinline__ void merge_parts(const float *o_parts,
                                            const float *lse_parts, int parts,
                                            T *to, float *lse) {
  constexpr int kPerLane = (E + 31) / 32;
  const int lane = threadIdx.x % 32;
  const float inf = __int_as_float(0x7f800000);
  float peak = -inf;
  for (int s = 0; s < parts; ++s)
    peak = fmaxf(peak, lse_parts[s]);
  float acc[kPerLane];
#pragma unroll
  for (int n = 0; n < kPerLane; ++n)
    acc[n] = 0.f;
  float total = 0.f;
  if (peak != -inf)
    for (int s = 0; s < parts; ++s) {
      const float weight = expf(lse_parts[s] - peak);
      if (weight == 0.f)
        continue; // an empty part: its output is not read
      total += weight;
#pragma unroll
      for (int n = 0; n < kPerLane; ++n)
        if (lane + 32 * n < E)
          acc[n] += weight * o_parts[s * E + lane + 32 * n];
    }
  const float normalize = total > 0.f ? 1.f / total : 0.f;
#pragma unroll
  for (int n = 0; n < kPerLane; ++n)
    if (lane + 32 * n < E)
      to[lane + 32 * n] = from_float<T>(acc[n] * normalize);
  if (lse && lane == 0)
    *lse = total > 0.f ? peak + logf(total) : -inf;
}

/// The forward split's parts: o_parts [B, H, T, P, E] and lse_parts
/// [B, H, T, P] merged into o [B, T, H, E] (strided) and lse [B, H, T] (or
/// null).
template <typename T> struct KeyParts {
  const float *o_parts, *lse_parts;
  T *o;
  float *lse;
  SequenceStrides o_strides;
  int batch, queries, heads, parts;
};

/// Grid (B·H, ceil(T / warps)): a warp per query row.
template <typename T, int E>
__device__ void combine_key_parts(const KeyParts<T> &p) {
  const int pair = static_cast<int>(blockIdx.x);
  const int t =
      static_cast<int>(blockIdx.y * (blockDim.x / 32) + threadIdx.x / 32);
  if (t >= p.queries)
    return;
  const int b = pair / p.heads, h = pair % p.heads;
  const long long row = static_cast<long long>(pair) * p.queries + t;
  merge_parts<T, E>(p.o_parts + row * p.parts * E, p.lse_parts + row * p.parts,
                    p.parts, p.o + p.o_strides.offset(b, t, h),
                    p.lse ? p.lse + row : nullptr);
}

} // namespace attention
} // namespace rudnn
