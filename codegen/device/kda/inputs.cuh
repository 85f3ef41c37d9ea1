//===- kda/inputs.cuh - KDA's in-kernel input transforms ------------------===//
//
// What a KDA operator applies to its inputs when asked, and the gradients:
// q and k L2-normalised, the gate formed from raw projections (Kimi
// Linear's), beta from logits. Bandwidth-bound passes over [B, T, H, *]
// views, one (b, t) token a block (grid (T, B)) unless said otherwise;
// everything in fp32.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/math.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace kda {

/// y = x / sqrt(Σ x² + eps) along each head's row of D: a warp a row.
template <int D, typename T>
__device__ void l2_normalize(const T *x, SequenceStrides xs, T *y,
                             SequenceStrides ys, int heads, float eps) {
  const int t = blockIdx.x, b = blockIdx.y, lane = threadIdx.x % 32;
  for (int h = threadIdx.x / 32; h < heads; h += blockDim.x / 32) {
    const T *row = x + xs.offset(b, t, h);
    float squares = 0.f;
    for (int d = lane; d < D; d += 32)
      squares += to_float(row[d]) * to_float(row[d]);
    const float inverse = 1.f / sqrtf(warp_sum(squares) + eps);
    T *out = y + ys.offset(b, t, h);
    for (int d = lane; d < D; d += 32)
      out[d] = from_float<T>(to_float(row[d]) * inverse);
  }
}

/// dx = (dy − ŷ (ŷ · dy)) / n, n = sqrt(Σ x² + eps), ŷ = x / n.
template <int D, typename T, typename TGrad>
__device__ void l2_normalize_backward(const T *x, SequenceStrides xs,
                                      const TGrad *dy, SequenceStrides dys,
                                      T *dx, SequenceStrides dxs, int heads,
                                      float eps) {
  const int t = blockIdx.x, b = blockIdx.y, lane = threadIdx.x % 32;
  for (int h = threadIdx.x / 32; h < heads; h += blockDim.x / 32) {
    const T *row = x + xs.offset(b, t, h);
    const TGrad *grad = dy + dys.offset(b, t, h);
    float squares = 0.f, dot = 0.f;
    for (int d = lane; d < D; d += 32) {
      squares += to_float(row[d]) * to_float(row[d]);
      dot += to_float(row[d]) * to_float(grad[d]);
    }
    const float inverse = 1.f / sqrtf(warp_sum(squares) + eps);
    const float projection = warp_sum(dot) * inverse * inverse;
    T *out = dx + dxs.offset(b, t, h);
    for (int d = lane; d < D; d += 32)
      out[d] = from_float<T>(
          (to_float(grad[d]) - to_float(row[d]) * projection) * inverse);
  }
}

/// The gate's parameters: a_log [H], dt_bias [H, K] (or null), and the
/// lower bound (0: none).
struct GateParams {
  const float *a_log, *dt_bias;
  float lower_bound;
};

/// g and, when asked, ∂g/∂x and ∂g/∂a_log at x = g_raw + dt_bias.
struct GateValue {
  float g, dx, da;
};

__device__ __forceinline__ GateValue gate_value(const GateParams &p, int h,
                                                int d, int K, float raw) {
  const float x = raw + (p.dt_bias ? p.dt_bias[h * K + d] : 0.f);
  const float a = expf(p.a_log[h]);
  if (p.lower_bound < 0.f) { // lower_bound · sigmoid(a x)
    const float s = 1.f / (1.f + expf(-a * x));
    const float slope = p.lower_bound * s * (1.f - s);
    return {p.lower_bound * s, slope * a, slope * a * x};
  }
  // −a · softplus(x), softplus linear past 20 as PyTorch's.
  const float softplus = x > 20.f ? x : log1pf(expf(x));
  const float sigmoid = 1.f / (1.f + expf(-x));
  return {-a * softplus, -a * sigmoid, -a * softplus};
}

/// g = gate(g_raw) in fp32.
template <int K, typename T>
__device__ void kda_gate(const T *g_raw, SequenceStrides raws, GateParams p,
                         float *g, SequenceStrides gs, int heads) {
  const int t = blockIdx.x, b = blockIdx.y;
  for (int e = threadIdx.x; e < heads * K; e += blockDim.x) {
    const int h = e / K, d = e % K;
    g[gs.offset(b, t, h) + d] =
        gate_value(p, h, d, K, to_float(g_raw[raws.offset(b, t, h) + d])).g;
  }
}

/// Tokens of each partial sum (kdaGatePartialTokens on the host).
constexpr int kGatePartialTokens = 64;

/// grid (ceil(T / 64), B·H), threads over K: dg_raw = dg · ∂g/∂x for 64
/// tokens of one (b, h), and their sums of dg_raw and dg · ∂g/∂a_log into
/// partials [ceil(T / 64), B, H, 2, K], token by token in order.
template <int K, typename T>
__device__ void kda_gate_backward(const T *g_raw, SequenceStrides raws,
                                  GateParams p, const float *dg,
                                  SequenceStrides dgs, float *dg_raw,
                                  SequenceStrides dgrs, float *partials,
                                  int batch, int heads, int length) {
  const int block = blockIdx.x, b = blockIdx.y / heads, h = blockIdx.y % heads;
  const int t0 = block * kGatePartialTokens;
  const int t1 =
      t0 + kGatePartialTokens < length ? t0 + kGatePartialTokens : length;
  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    float bias = 0.f, a = 0.f;
    for (int t = t0; t < t1; ++t) {
      const GateValue v =
          gate_value(p, h, d, K, to_float(g_raw[raws.offset(b, t, h) + d]));
      const float grad = dg[dgs.offset(b, t, h) + d];
      dg_raw[dgrs.offset(b, t, h) + d] = grad * v.dx;
      bias += grad * v.dx;
      a += grad * v.da;
    }
    float *out =
        partials + (((long long)block * batch + b) * heads + h) * 2 * K;
    out[d] = bias;
    out[K + d] = a;
  }
}

/// grid (H), threads over K: d_dt_bias[h, d] and d_a_log[h] from the
/// partials, added over blocks and entries in order (d_a_log also over d,
/// in order, by thread 0).
template <int K>
__device__ void kda_gate_sums(const float *partials, int blocks, int batch,
                              int heads, float *d_a_log, float *d_dt_bias) {
  __shared__ float perFeature[K];
  const int h = blockIdx.x;
  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    float bias = 0.f, a = 0.f;
    for (int n = 0; n < blocks; ++n)
      for (int b = 0; b < batch; ++b) {
        const float *part =
            partials + (((long long)n * batch + b) * heads + h) * 2 * K;
        bias += part[d];
        a += part[K + d];
      }
    if (d_dt_bias)
      d_dt_bias[h * K + d] = bias;
    perFeature[d] = a;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float a = 0.f;
    for (int d = 0; d < K; ++d)
      a += perFeature[d];
    d_a_log[h] = a;
  }
}

/// y = 1 / (1 + e^−x) in fp32, threads over heads.
template <typename T>
__device__ void sigmoid(const T *x, SequenceStrides xs, float *y,
                        SequenceStrides ys, int heads) {
  const int t = blockIdx.x, b = blockIdx.y;
  for (int h = threadIdx.x; h < heads; h += blockDim.x)
    y[ys.offset(b, t, h)] =
        1.f / (1.f + expf(-to_float(x[xs.offset(b, t, h)])));
}

/// dx = dy · s (1 − s), s = sigmoid(x).
template <typename T, typename TGrad>
__device__ void sigmoid_backward(const T *x, SequenceStrides xs,
                                 const TGrad *dy, SequenceStrides dys, T *dx,
                                 SequenceStrides dxs, int heads) {
  const int t = blockIdx.x, b = blockIdx.y;
  for (int h = threadIdx.x; h < heads; h += blockDim.x) {
    const float s = 1.f / (1.f + expf(-to_float(x[xs.offset(b, t, h)])));
    dx[dxs.offset(b, t, h)] =
        from_float<T>(to_float(dy[dys.offset(b, t, h)]) * s * (1.f - s));
  }
}

} // namespace kda
} // namespace rudnn
