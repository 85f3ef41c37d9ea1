//===- kda/decay.cuh - Products through the per-feature decay -------------===//
//
// KDA's intra-chunk products carry, per feature d, the decay between two
// tokens e^(Γ_id − Γ_jd) with j ≤ i, never above 1 since g ≤ 0. Factoring
// it as e^Γ_i · e^−Γ_j would overflow for g as low as −20 per step, so
// tokens in different 16-token blocks split it at a token r between them,
//   e^(Γ_i − Γ_j) = e^(Γ_i − Γ_r) · e^(Γ_r − Γ_j),  j ≤ r < i,
// both factors ≤ 1, and go to tile::mma_accumulate; tokens within one block
// keep the direct form. Γ is the chunk's inclusive cumulative sum of g, read
// through GammaRows (the whole [C][K] or a block of features); the operand
// callables take chunk-local (token, feature). Exponentials
// are fast_exp (ex2.approx): every argument is ≤ 0, so results lie in
// [0, 1] and the approximation's relative error (~1e-6) stays far below
// the kernels' tolerances.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/math.cuh"
#include "rudnn/tile/mma_tile.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace kda {

/// Γ's rows, Pitch floats apart, holding features first.. (the whole
/// chunk's from 0, or a block of them): gamma(token, feature).
template <int Pitch> struct GammaRows {
  const float *data;
  int first = 0;
  __device__ __forceinline__ float operator()(int i, int d) const {
    return data[i * Pitch + d - first];
  }
};

/// e^(Γ_id − Γ_jd).
template <typename Gamma>
__device__ __forceinline__ float decay(const Gamma &gamma, int i, int j,
                                       int d) {
  return fast_exp(gamma(i, d) - gamma(j, d));
}

/// e^(Γ_id − Γ_jd) on the FMA pipes (polynomial_exp), for a share of the
/// factors of a kernel that the special-function units bound.
template <typename Gamma>
__device__ __forceinline__ float polynomial_decay(const Gamma &gamma, int i,
                                                  int j, int d) {
  return polynomial_exp(gamma(i, d) - gamma(j, d));
}

/// For every j ≤ i < L, with D_ijd = e^(Γ_id − Γ_jd),
///   storeX(i, j, Σ_d x(i, d) · y(j, d) · D_ijd),
///   storeY(i, j, Σ_d z(i, d) · y(j, d) · D_ijd):
/// two products of one decayed operand (KDA's k·k and q·k), which share
/// every exponential and every fragment of y.
///
/// Pairs within a 16-token block: a warp per row i, lanes over the
/// features (coalesced loads, K/32 exponentials a lane per pair, none
/// masked off), then one reduce-scatter hands each lane one of the row's 16
/// + 16 sums. Pairs in different blocks: a warp per row block I, on mma
/// tiles against every earlier token, the decay split at the token r just
/// before the block: e^(Γ_i − Γ_r) of A's rows is shared by both A
/// operands and every column tile, e^(Γ_r − Γ_j) of B's columns by both
/// products (16 + 16·I exponentials a feature for row block I, half what
/// splitting at each column block's end took). L ≤ C; block-collective,
/// block size a multiple of 32.
template <typename TIn, int K, int C, typename X, typename Z, typename Y,
          typename StoreX, typename StoreY, typename Gamma>
__device__ void decayed_pairwise(int L, const Gamma &gamma, X x, Z z, Y y,
                                 StoreX storeX, StoreY storeY) {
  constexpr int perLane = (K + 31) / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32,
            warps = blockDim.x / 32;
  for (int i = warp; i < L; i += warps) {
    const int i0 = i / 16 * 16;
    float gi[perLane], xi[perLane], zi[perLane];
#pragma unroll
    for (int m = 0; m < perLane; ++m) {
      const int d = lane + 32 * m;
      const bool inside = d < K;
      gi[m] = inside ? gamma(i, d) : 0.f;
      xi[m] = inside ? x(i, d) : 0.f;
      zi[m] = inside ? z(i, d) : 0.f;
    }
    float sums[32]; // x·y for j = i0 + n at n, z·y at 16 + n
#pragma unroll
    for (int n = 0; n < 16; ++n) {
      sums[n] = sums[16 + n] = 0.f;
      const int j = i0 + n;
      if (j > i)
        continue; // the same j for every lane
#pragma unroll
      for (int m = 0; m < perLane; ++m) {
        const int d = lane + 32 * m;
        if (d < K) {
          const float t = y(j, d) * fast_exp(gi[m] - gamma(j, d));
          sums[n] += xi[m] * t;
          sums[16 + n] += zi[m] * t;
        }
      }
    }
    const float total = warp_sum_scatter(sums);
    const int j = i0 + lane % 16;
    if (j <= i) {
      if (lane < 16)
        storeX(i, j, total);
      else
        storeY(i, j, total);
    }
  }
  // Across blocks: row block I against its 2·I column tiles of 8 tokens.
  constexpr int kTiles = C / 8 - 2 > 0 ? C / 8 - 2 : 1;
  const int blocks = (L + 15) / 16;
  for (int I = blocks - 1 - warp; I > 0; I -= warps) {
    const int i0 = 16 * I, r = i0 - 1;
    float accX[kTiles][4] = {}, accZ[kTiles][4] = {};
    tile::mma_accumulate_pair_tiles<TIn, kTiles>(
        accX, accZ, 2 * I, K,
        [&](int i, int d) {
          // Never load past the sequence or the features: padding may hold
          // anything, NaN included.
          if (i0 + i >= L || d >= K)
            return make_float2(0.f, 0.f);
          const float split = decay(gamma, i0 + i, r, d);
          return make_float2(x(i0 + i, d) * split, z(i0 + i, d) * split);
        },
        [&](int d, int j) {
          return d < K ? y(j, d) * decay(gamma, r, j, d) : 0.f;
        });
#pragma unroll
    for (int n = 0; n < kTiles; ++n)
      if (n < 2 * I)
        for (int e = 0; e < 4; ++e) {
          const int i = i0 + tile::accumulator_row(e);
          if (i < L) {
            storeX(i, 8 * n + tile::accumulator_col(e), accX[n][e]);
            storeY(i, 8 * n + tile::accumulator_col(e), accZ[n][e]);
          }
        }
  }
}

/// accX and accZ += the warp's 16x8 fragments, at tokens t0.. and
/// features d0.., of
///   R_td = Σ_{j ≤ t} m(t, j) · y(j, d) · e^(Γ_td − Γ_jd)
/// for m = mX and m = mZ, the tokens j of earlier blocks on mma with the
/// decay split at t0 − 1. Both share every exponential: y's decayed
/// operand, the fragment's split and the pairs within the block.
/// Warp-collective; t0 a multiple of 16.
template <typename TIn, int K, typename Gamma, typename MX, typename MZ,
          typename Y>
__device__ void decayed_rows(float (&accX)[4], float (&accZ)[4], int L, int t0,
                             int d0, const Gamma &gamma, MX mX, MZ mZ, Y y) {
  if (t0 > 0) {
    const int r = t0 - 1;
    float partX[4] = {0.f, 0.f, 0.f, 0.f}, partZ[4] = {0.f, 0.f, 0.f, 0.f};
    tile::mma_accumulate_pair<TIn>(
        partX, partZ, t0,
        [&](int t, int j) {
          return t0 + t < L ? make_float2(mX(t0 + t, j), mZ(t0 + t, j))
                            : make_float2(0.f, 0.f);
        },
        [&](int j, int d) {
          return d0 + d < K ? y(j, d0 + d) * decay(gamma, r, j, d0 + d) : 0.f;
        });
    for (int e = 0; e < 4; ++e) {
      const int t = t0 + tile::accumulator_row(e),
                d = d0 + tile::accumulator_col(e);
      if (t < L && d < K) {
        const float split = decay(gamma, t, r, d);
        accX[e] += partX[e] * split;
        accZ[e] += partZ[e] * split;
      }
    }
  }
  for (int e = 0; e < 4; ++e) {
    const int t = t0 + tile::accumulator_row(e),
              d = d0 + tile::accumulator_col(e);
    if (t < L && d < K)
      for (int j = t0; j <= t; ++j) {
        const float decayed = y(j, d) * decay(gamma, t, j, d);
        accX[e] += mX(t, j) * decayed;
        accZ[e] += mZ(t, j) * decayed;
      }
  }
}

/// part += Σ_{i ≥ t0 + 16} m(i, t) · y(i, d) · e^(Γ_id − Γ_rd) over the
/// warp's 16x8 fragment (tokens t0.., features d0..), r = t0 + 15 the
/// split: the later blocks' share of decayed_columns. Warp-collective.
template <typename TIn, int K, typename Gamma, typename M, typename Y>
__device__ void later_rows(float (&part)[4], int L, int t0, int d0,
                           const Gamma &gamma, M m, Y y) {
  const int next = t0 + 16, r = next - 1;
  tile::mma_accumulate<TIn>(
      part, L - next,
      [&](int t, int i) {
        return t0 + t < L && next + i < L ? m(next + i, t0 + t) : 0.f;
      },
      [&](int i, int d) {
        return next + i < L && d0 + d < K
                   ? y(next + i, d0 + d) * decay(gamma, next + i, r, d0 + d)
                   : 0.f;
      });
}

/// acc += the warp's 16x8 fragment, at tokens t0.. and features d0.., of
///   R_td = Σ_{i ≥ t} (mX(i, t) · yX(i, d) + mZ(i, t) · yZ(i, d))
///                    · e^(Γ_id − Γ_td),
/// the tokens i of later blocks on mma with the decay split at t0 + 15.
/// The two terms share the fragment's split and the pairs within the
/// block; the later blocks' operands differ in y, each decayed in turn.
/// The pairs within the block take polynomial_decay: decayed_rows forms
/// the same factors on the special-function units, and `gradients`, which
/// calls both, is bound by them. These are a quarter of its factors: the
/// FMA pipes also carry the kernel's own arithmetic, eight or more
/// instructions beside each factor. Warp-collective; t0 a multiple of 16.
template <typename TIn, int K, typename Gamma, typename MX, typename YX,
          typename MZ, typename YZ>
__device__ void decayed_columns(float (&acc)[4], int L, int t0, int d0,
                                const Gamma &gamma, MX mX, YX yX, MZ mZ,
                                YZ yZ) {
  const int next = t0 + 16;
  if (next < L) {
    const int r = next - 1;
    float part[4] = {0.f, 0.f, 0.f, 0.f};
    later_rows<TIn, K>(part, L, t0, d0, gamma, mX, yX);
    later_rows<TIn, K>(part, L, t0, d0, gamma, mZ, yZ);
    for (int e = 0; e < 4; ++e) {
      const int t = t0 + tile::accumulator_row(e),
                d = d0 + tile::accumulator_col(e);
      if (t < L && d < K)
        acc[e] += part[e] * decay(gamma, r, t, d);
    }
  }
  for (int e = 0; e < 4; ++e) {
    const int t = t0 + tile::accumulator_row(e),
              d = d0 + tile::accumulator_col(e);
    if (t < L && d < K)
      for (int i = t; i < next && i < L; ++i)
        acc[e] += (mX(i, t) * yX(i, d) + mZ(i, t) * yZ(i, d)) *
                  polynomial_decay(gamma, i, t, d);
  }
}

} // namespace kda
} // namespace rudnn
