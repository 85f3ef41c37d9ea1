//===- kda/gradients.cuh - Every KDA input gradient of a chunk ------------===//
//
// The chunk-parallel end of the backward (lib/reference/kda/KdaChunked.cpp
// derives it): one block a chunk of one head, after `state_gradient` left
// dS at the chunk's end and dU. Its operands come by cp.async into shared
// tiles and every product runs on the tile layer (tensor cores through
// ldmatrix for 16-bit inputs, FMA for f32); the fp32 intermediates stay in
// shared memory, so the workspace keeps nothing of this kernel's. Each
// phase's operands take the place of the last phase's where they are done
// with, so two blocks share an SM at K = V = 128, chunk 64, 16-bit.
//   1. Γ from g; the chunk's k, dO and U; β.
//   2. kk = Σ_d k_i k_j e^(Γi−Γj).
//   3. dU and M = (I + A)⁻¹ where Γ was, copied while dBm = scale dO Uᵀ
//      is formed: dRu = Mᵀ dU where k was, and dv = β ⊙ dRu out.
//   4. dA = −(dRw Wᵀ + dRu U0ᵀ) = −dRu Uᵀ, since dRw = −dRu S0ᵀ and
//      U = U0 − W S0: neither W nor U0 is read. The first feature step's
//      copies land where dU and M were meanwhile.
//   5. Sixteen features at a time, S0's and dS_end's rows and q's, k's and
//      g's columns in a two-stage pipeline (Γ of the step's features
//      summed again from g's): dQd = dO S0ᵀ, dKd = U dS_endᵀ,
//      dRw = −dRu S0ᵀ and the decayed products through dA and dBm give dq
//      and dk, out, and dΓ. A warp takes 16 tokens and 8 of the features
//      (the dense products over all 16, the costly decayed ones over its
//      8). Then dg, the reverse cumulative sum of dΓ down each of the
//      step's features, out: written once.
//   6. dβ from its per-row partial sums.
// Partial sums are kept per warp and added in a fixed order: the result
// is the same bit for bit from run to run.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/kda/backward.cuh"
#include "rudnn/kda/decay.cuh"
#include "rudnn/math.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace kda {

/// Warps of a `gradients` block: with two blocks an SM (K = V = 128, chunk
/// 64, 16-bit), four warps to each of the SM's schedulers.
constexpr int kGradientsWarps = 8;

/// The `gradients` block's dynamic shared memory. The feature dims are
/// padded to whole 16-deep mma steps (zeros). `pairs` holds dBm on and
/// below the diagonal and, transposed above it ([j][i] for j < i), kk
/// then β ⊙ dA. `keys` holds k for kk, then dRu. `phases` holds Γ
/// [C][K] for kk, then dU and M for dRu, then the feature steps' two
/// stages and the current step's Γ.
template <int K, int V, int C, typename TIn> struct GradientsShared {
  static constexpr int kFeatures = 16; // a pipeline step's features
  static constexpr int KP = (K + 15) / 16 * 16, VP = (V + 15) / 16 * 16;
  using RowsK = tile::SharedTile<TIn, C, KP>;
  using RowsV = tile::SharedTile<TIn, C, VP>;
  using Square = tile::SharedTile<TIn, C, C>;
  using StateRows = tile::SharedTile<TIn, kFeatures, VP>;
  using Columns = tile::SharedTile<TIn, C, kFeatures>;
  /// g's columns, of any gate type: room for f32's.
  template <typename TGate>
  using GateColumns = tile::SharedTile<TGate, C, kFeatures>;
  static constexpr int kKeysBytes =
      RowsK::kBytes > RowsV::kBytes ? RowsK::kBytes : RowsV::kBytes;
  static constexpr int kGammaBytes = 4 * C * K;
  static constexpr int kSolveBytes = RowsV::kBytes + Square::kBytes;
  static constexpr int kStageBytes =
      2 * StateRows::kBytes + 2 * Columns::kBytes + GateColumns<float>::kBytes;
  static constexpr int kStepsBytes = 2 * kStageBytes + 2 * 4 * C * kFeatures;
  static constexpr int kPhasesBytes =
      kGammaBytes > kSolveBytes
          ? (kGammaBytes > kStepsBytes ? kGammaBytes : kStepsBytes)
          : (kSolveBytes > kStepsBytes ? kSolveBytes : kStepsBytes);

  alignas(16) float pairs[C * C];
  alignas(16) TIn dO[RowsV::kElements];
  alignas(16) TIn u[RowsV::kElements];
  alignas(16) unsigned char keys[kKeysBytes];
  alignas(16) unsigned char phases[kPhasesBytes];
  alignas(16) float beta[(C + 3) / 4 * 4];
  float rowPartials[kGradientsWarps][C];    // dβ's, a warp's own
  float columnPartials[kGradientsWarps][K]; // Σ_t dKd e k, a warp's own
  float lastTerm[K];                        // Σ_j dS_end S0 per feature

  __device__ __forceinline__ RowsK k() {
    return {reinterpret_cast<TIn *>(keys)};
  }
  __device__ __forceinline__ RowsV dRu() {
    return {reinterpret_cast<TIn *>(keys)};
  }
  __device__ __forceinline__ float *gamma() {
    return reinterpret_cast<float *>(phases);
  }
  __device__ __forceinline__ RowsV dU() {
    return {reinterpret_cast<TIn *>(phases)};
  }
  __device__ __forceinline__ Square inverse() {
    return {reinterpret_cast<TIn *>(phases + RowsV::kBytes)};
  }
  __device__ __forceinline__ unsigned char *stage(int stage) {
    return phases + stage * kStageBytes;
  }
  __device__ __forceinline__ StateRows state(int stage) {
    return {reinterpret_cast<TIn *>(this->stage(stage))};
  }
  __device__ __forceinline__ StateRows dStateEnd(int stage) {
    return {reinterpret_cast<TIn *>(this->stage(stage) + StateRows::kBytes)};
  }
  __device__ __forceinline__ Columns queries(int stage) {
    return {
        reinterpret_cast<TIn *>(this->stage(stage) + 2 * StateRows::kBytes)};
  }
  __device__ __forceinline__ Columns keyColumns(int stage) {
    return {reinterpret_cast<TIn *>(this->stage(stage) + 2 * StateRows::kBytes +
                                    Columns::kBytes)};
  }
  template <typename TGate>
  __device__ __forceinline__ GateColumns<TGate> gates(int stage) {
    return {reinterpret_cast<TGate *>(
        this->stage(stage) + 2 * StateRows::kBytes + 2 * Columns::kBytes)};
  }
  /// Γ [C][kFeatures] of the step's features.
  __device__ __forceinline__ float *stepGamma() {
    return reinterpret_cast<float *>(phases + 2 * kStageBytes);
  }
  /// dΓ [C][kFeatures] of the step's features.
  __device__ __forceinline__ float *stepDGamma() {
    return reinterpret_cast<float *>(phases + 2 * kStageBytes +
                                     4 * C * kFeatures);
  }
};

/// task(i0, n0) for each 16x16 tile of a rows x cols result, the block's
/// warps taking them in turn.
template <typename Task>
__device__ __forceinline__ void for_each_tile16(int rows, int cols, Task task) {
  const int colTiles = (cols + 15) / 16, tasks = (rows + 15) / 16 * colTiles;
  for (int t = threadIdx.x / 32; t < tasks; t += blockDim.x / 32)
    task(t / colTiles * 16, t % colTiles * 16);
}

/// visit(acc, i0, j0) for the 16x16 tiles of A·Bᵀ on or below the diagonal,
/// A and B both `rows` x `depth` (the chunk's tokens against its tokens):
/// the lower-triangular products.
template <typename Tile16, typename Rows, typename Visit>
__device__ __forceinline__ void
lower_times_transposed(int rows, int depth, const Rows &a, const Rows &b,
                       Visit visit) {
  for_each_tile16(rows, rows, [&](int i0, int j0) {
    if (j0 > i0)
      return;
    Tile16 acc;
    acc.clear();
    for (int k0 = 0; k0 < depth; k0 += 16)
      acc.template mma<tile::BLayout::NK>(a, i0, b, j0, k0);
    visit(acc, i0, j0);
  });
}

/// slots[i0 + r] += the sum over a warp tile's columns of row r, from each
/// lane's share of its two rows (g and g + 8 of the accumulator layout):
/// the four lanes of a row add by shuffles, then one of them stores.
__device__ __forceinline__ void add_row_sums(float *slots, int i0, float upper,
                                             float lower) {
  for (int offset = 1; offset < 4; offset *= 2) {
    upper += __shfl_xor_sync(0xffffffffu, upper, offset);
    lower += __shfl_xor_sync(0xffffffffu, lower, offset);
  }
  const int lane = threadIdx.x % 32;
  if (lane % 4 == 0) {
    slots[i0 + lane / 4] += upper;
    slots[i0 + lane / 4 + 8] += lower;
  }
  __syncwarp();
}

/// slots[d0 + c] += the sum over a 16-row warp tile of column c of an 8-wide
/// fragment, from each lane's two columns (2t and 2t + 1): the eight lanes
/// of a column add by shuffles, then one of them stores.
__device__ __forceinline__ void add_column_sums(float *slots, int d0, int cols,
                                                float first, float second) {
  for (int offset = 4; offset < 32; offset *= 2) {
    first += __shfl_xor_sync(0xffffffffu, first, offset);
    second += __shfl_xor_sync(0xffffffffu, second, offset);
  }
  const int lane = threadIdx.x % 32, c = 2 * lane;
  if (lane < 4) {
    if (c < cols)
      slots[d0 + c] += first;
    if (c + 1 < cols)
      slots[d0 + c + 1] += second;
  }
  __syncwarp();
}

/// store(t, start + Σ_{L > i ≥ t} x(i)) for every token t < L of a chunk:
/// the lanes take C / 32 consecutive tokens each (at least one), sum
/// theirs from the last, and add the later lanes' totals, a suffix scan by
/// shuffles. Warp-collective; the same order every run.
template <int C, typename X, typename Store>
__device__ __forceinline__ void reverse_cumulative_sum(int L, float start, X x,
                                                       Store store) {
  constexpr int kPerLane = (C + 31) / 32;
  const int lane = threadIdx.x % 32, first = lane * kPerLane;
  float sums[kPerLane];
  float later = 0.f; // this lane's tokens from e on
#pragma unroll
  for (int e = kPerLane - 1; e >= 0; --e) {
    later += first + e < L ? x(first + e) : 0.f;
    sums[e] = later;
  }
  // The suffix sums of the lanes' totals; this lane adds those after it.
  float scan = later;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const float other = __shfl_down_sync(0xffffffffu, scan, offset);
    if (lane + offset < 32)
      scan += other;
  }
  float after = __shfl_down_sync(0xffffffffu, scan, 1);
  after = start + (lane < 31 ? after : 0.f);
#pragma unroll
  for (int e = 0; e < kPerLane; ++e)
    if (first + e < L)
      store(first + e, after + sums[e]);
}

/// kGradientsWarps warps, dynamic shared memory sizeof(GradientsShared):
/// every input gradient of one chunk. Views: whether q's, k's, v's and
/// d_output's rows are promised 16-byte aligned.
template <int K, int V, int C, tile::Alignment Views, typename TIn,
          typename TGate, typename TBeta>
__device__ void gradients_chunk(const BackwardParams<TIn, TGate, TBeta> &p,
                                const ChunkAt &at) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Saved = BackwardTiles<K, V, C, TIn>;
  using Grads = GradientTiles<K, V, C, TIn>;
  using Shared = GradientsShared<K, V, C, TIn>;
  using Tile16 = tile::WarpTile<TIn, 16, 16>;
  constexpr int F = Shared::kFeatures;
  constexpr tile::Alignment align = Tiles::kAlignment;
  const ForwardParams<TIn, TGate, TBeta> &f = p.forward;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const int b = at.b, h = at.h, t0 = at.t0, L = at.L;
  const int warp = threadIdx.x / 32;
  const TIn *operands =
      Tiles::operands(Tiles::at(f.workspace, at.slot, at.column, at.columns));
  const TIn *saved =
      Saved::at(f.workspace, at.slot, at.column, at.columns, chunk_slots<C>(f));
  const TIn *grads = Grads::at(p.scratch, at.slot, at.column, at.columns);
  const TIn *S0 = f.boundaries + boundary_offset<K, V>(at);
  const typename Shared::RowsV dO{shared->dO}, U{shared->u};
  float *pairs = shared->pairs, *rowSums = shared->rowPartials[warp];

  // 1. The chunk's k, dO and U, Γ and β.
  const typename Shared::RowsK k = shared->k();
  tile::load_tile_async<Views>(k, f.k + f.k_offset(b, t0, h), f.k_strides.time,
                               L, K);
  tile::load_tile_async<Views>(dO,
                               p.d_output + p.d_output_strides.offset(b, t0, h),
                               p.d_output_strides.time, L, V);
  tile::load_tile_async<align>(U, operands + Tiles::kU, V, L, V);
  arch::cp_async_commit();
  for (int i = threadIdx.x; i < C; i += blockDim.x) {
    shared->beta[i] =
        i < L ? to_float(f.beta[f.beta_strides.offset(b, t0 + i, h)]) : 0.f;
    for (int w = 0; w < kGradientsWarps; ++w)
      shared->rowPartials[w][i] = 0.f;
  }
  for (int d = threadIdx.x; d < K; d += blockDim.x)
    for (int w = 0; w < kGradientsWarps; ++w)
      shared->columnPartials[w][d] = 0.f;
  // Γ from global memory: staging g's rows as prepare does spills at two
  // blocks an SM (128 registers).
  float *gamma = shared->gamma();
  chunk_decay<K>(f, b, h, t0, L,
                 [&](int i, int d, float g) { gamma[i * K + d] = g; });
  arch::cp_async_wait<0>();
  __syncthreads();
  auto beta = [&](int i) { return shared->beta[i]; };

  // 2. kk above the diagonal, transposed (the second product of
  // decayed_pairwise would repeat it).
  {
    auto kAt = [&](int i, int d) { return to_float(k(i, d)); };
    decayed_pairwise<TIn, K, C>(
        L, GammaRows<K>{gamma}, kAt, kAt, kAt,
        [&](int i, int j, float x) {
          if (j < i)
            pairs[j * C + i] = x;
        },
        [](int, int, float) {});
  }
  __syncthreads(); // Γ and k are done with

  // 3. dU and M in Γ's place, copied while dBm = scale dO Uᵀ fills the
  // matrix on and below the diagonal; then dRu = Mᵀ dU in k's place, M
  // lower triangular: row block i0 needs M's rows from i0.
  const typename Shared::RowsV dU = shared->dU(), dRu = shared->dRu();
  const typename Shared::Square inverse = shared->inverse();
  tile::load_tile_async<align>(dU, grads + Grads::kDU, V, L, V);
  tile::load_tile_async<align>(inverse, saved + Saved::kInverse, C, L, L);
  arch::cp_async_commit();
  lower_times_transposed<Tile16>(L, V, dO, U,
                                 [&](const Tile16 &acc, int i0, int s0) {
                                   acc.for_each([&](int r, int c, float x) {
                                     const int i = i0 + r, s = s0 + c;
                                     if (s <= i)
                                       pairs[i * C + s] = f.scale * x;
                                   });
                                 });
  arch::cp_async_wait<0>();
  __syncthreads();
  for_each_tile16(L, V, [&](int i0, int c0) {
    Tile16 acc;
    acc.clear();
    for (int s0 = i0; s0 < L; s0 += 16)
      acc.template mma<tile::BLayout::KN, tile::ALayout::KM>(inverse, i0, dU,
                                                             c0, s0);
    float upper = 0.f, lower = 0.f; // Σ_c dRu v, dβ's share
    acc.for_each_pair([&](int r, int c, float first, float second) {
      const int i = i0 + r, col = c0 + c;
      tile::store_pair(dRu, i, col, first, second);
      if (i >= L || col >= V)
        return;
      const bool both = col + 1 < V;
      tile::store_pair(p.dv + p.dv_strides.offset(b, t0 + i, h) + col,
                       beta(i) * first, beta(i) * second, both);
      const float2 v = tile::load_pair<Views>(
          f.v + f.v_strides.offset(b, t0 + i, h) + col, both);
      (r < 8 ? upper : lower) += first * v.x + second * v.y;
    });
    add_row_sums(rowSums, i0, upper, lower);
  });
  __syncthreads(); // dU and M are done with

  // The feature steps' copies: S0's and dS_end's rows, q's, k's and g's
  // columns; the first step's land in dU's and M's place while dA is formed.
  auto issue = [&](int step, int stage) {
    const int d0 = step * F;
    tile::load_tile_async<align>(shared->state(stage), S0 + (long long)d0 * V,
                                 V, K - d0, V);
    tile::load_tile_async<align>(shared->dStateEnd(stage),
                                 grads + Grads::kDSEnd + (long long)d0 * V, V,
                                 K - d0, V);
    tile::load_tile_async<Views>(shared->queries(stage),
                                 f.q + f.q_offset(b, t0, h) + d0,
                                 f.q_strides.time, L, K - d0);
    tile::load_tile_async<Views>(shared->keyColumns(stage),
                                 f.k + f.k_offset(b, t0, h) + d0,
                                 f.k_strides.time, L, K - d0);
    tile::load_tile_async(shared->template gates<TGate>(stage),
                          f.g + f.g_strides.offset(b, t0, h) + d0,
                          f.g_strides.time, L, K - d0);
  };
  issue(0, 0);
  arch::cp_async_commit();

  // 4. dA = −dRu Uᵀ, strictly lower: dβ takes Σ_j dA ⊙ kk, and kk's place
  // becomes β ⊙ dA.
  lower_times_transposed<Tile16>(
      L, V, dRu, U, [&](const Tile16 &acc, int i0, int j0) {
        float upper = 0.f, lower = 0.f;
        acc.for_each([&](int r, int c, float x) {
          const int i = i0 + r, j = j0 + c;
          if (i >= L || j >= i)
            return;
          const float dA = -x;
          (r < 8 ? upper : lower) += dA * pairs[j * C + i];
          pairs[j * C + i] = beta(i) * dA;
        });
        add_row_sums(rowSums, i0, upper, lower);
      });
  __syncthreads();

  // 5. Sixteen features a step. dA's β-weighted entries below the
  // diagonal, dBm's on and below it.
  auto aB = [&](int i, int j) { return j < i ? pairs[j * C + i] : 0.f; };
  auto bm = [&](int i, int j) { return pairs[i * C + j]; };
  float *stepGamma = shared->stepGamma(), *stepDGamma = shared->stepDGamma();
  auto consume = [&](int step, int stage) {
    const int d0 = step * F;
    const typename Shared::StateRows state = shared->state(stage),
                                     dStateEnd = shared->dStateEnd(stage);
    const typename Shared::Columns queries = shared->queries(stage),
                                   keys = shared->keyColumns(stage);
    auto qAt = [&](int i, int d) { return to_float(queries(i, d - d0)); };
    auto kAt = [&](int i, int d) { return to_float(keys(i, d - d0)); };
    const GammaRows<F> gammaAt{stepGamma, d0};
    // Γ of the step's features, summed in chunk_decay's order.
    if (threadIdx.x < F) {
      const auto gates = shared->template gates<TGate>(stage);
      float running = 0.f;
      for (int i = 0; i < L; ++i) {
        running += to_float(gates(i, threadIdx.x));
        stepGamma[i * F + threadIdx.x] = running;
      }
    }
    // e^Γlast's share of dΓ: Σ_j dS_end S0 for each of the step's features.
    const int lane = threadIdx.x % 32;
    for (int r = warp; r < F && d0 + r < K; r += kGradientsWarps) {
      float x = 0.f;
      for (int j = lane; j < V; j += 32)
        x += to_float(dStateEnd(r, j)) * to_float(state(r, j));
      x = warp_sum(x);
      if (lane == 0)
        shared->lastTerm[d0 + r] = x;
    }
    __syncthreads(); // the step's Γ
    const int tasks = 2 * ((L + 15) / 16);
    for (int task = warp; task < tasks; task += kGradientsWarps) {
      const int i0 = task / 2 * 16, half = task % 2;
      Tile16 dQd, dKd, dRw;
      dQd.clear();
      dKd.clear();
      dRw.clear();
      for (int v0 = 0; v0 < V; v0 += 16) {
        dQd.template mma<tile::BLayout::NK>(dO, i0, v0, state, 0, v0);
        dKd.template mma<tile::BLayout::NK>(U, i0, v0, dStateEnd, 0, v0);
        dRw.template mma<tile::BLayout::NK>(dRu, i0, v0, state, 0, v0);
      }
      float upper = 0.f, lower = 0.f; // Σ_d dRw k e^Γ, dβ's share
      const int dh = d0 + 8 * half;
      // The warp's half of the dense products, selected in registers.
      float qd[4], kd[4], rw[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        qd[e] = half ? dQd.acc[0][1][e] : dQd.acc[0][0][e];
        kd[e] = half ? dKd.acc[0][1][e] : dKd.acc[0][0][e];
        rw[e] = half ? -dRw.acc[0][1][e] : -dRw.acc[0][0][e];
      }
      float rowsA[4] = {0.f, 0.f, 0.f, 0.f}, rowsB[4] = {0.f, 0.f, 0.f, 0.f},
            columns[4] = {0.f, 0.f, 0.f, 0.f};
      decayed_rows<TIn, K>(rowsA, rowsB, L, i0, dh, gammaAt, aB, bm, kAt);
      decayed_columns<TIn, K>(columns, L, i0, dh, gammaAt, aB, kAt, bm, qAt);
      float dq[4], dk[4], dG[4], kdTerm[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int t = i0 + tile::accumulator_row(e),
                  d = dh + tile::accumulator_col(e);
        dq[e] = dk[e] = dG[e] = kdTerm[e] = 0.f;
        if (t >= L || d >= K)
          continue;
        const float g = gammaAt(t, d), eg = fast_exp(g);
        const float eLast = fast_exp(gammaAt(L - 1, d) - g);
        const float qv = qAt(t, d), kv = kAt(t, d);
        const float throughKd = kd[e] * eLast;
        // The right-hand side β k e^Γ of W.
        const float w = rw[e] * beta(t) * eg;
        dq[e] = f.scale * qd[e] * eg + rowsB[e];
        dk[e] = throughKd + rowsA[e] + w + columns[e];
        dG[e] = dq[e] * qv + kv * (rowsA[e] + w - throughKd - columns[e]);
        kdTerm[e] = throughKd * kv;
        (e < 2 ? upper : lower) += rw[e] * kv * eg;
      }
#pragma unroll
      for (int e = 0; e < 4; e += 2) {
        const int t = i0 + tile::accumulator_row(e),
                  d = dh + tile::accumulator_col(e);
        if (t >= L || d >= K)
          continue;
        const bool both = d + 1 < K;
        tile::store_pair(p.dq + p.dq_strides.offset(b, t0 + t, h) + d, dq[e],
                         dq[e + 1], both);
        tile::store_pair(p.dk + p.dk_strides.offset(b, t0 + t, h) + d, dk[e],
                         dk[e + 1], both);
        stepDGamma[t * F + d - d0] = dG[e];
        if (both)
          stepDGamma[t * F + d + 1 - d0] = dG[e + 1];
      }
      add_column_sums(shared->columnPartials[warp], dh, K - dh,
                      kdTerm[0] + kdTerm[2], kdTerm[1] + kdTerm[3]);
      add_row_sums(rowSums, i0, upper, lower);
    }
    __syncthreads(); // the step's dΓ and its features' partial sums
    // dg: Γ's last row feeds Kd and e^Γlast of every row, then the reverse
    // cumulative sum of dΓ down each feature.
    for (int r = warp; r < F && d0 + r < K; r += kGradientsWarps) {
      const int d = d0 + r;
      float start = fast_exp(gammaAt(L - 1, d)) * shared->lastTerm[d];
      for (int w = 0; w < kGradientsWarps; ++w)
        start += shared->columnPartials[w][d];
      reverse_cumulative_sum<C>(
          L, start, [&](int t) { return stepDGamma[t * F + r]; },
          [&](int t, float x) {
            p.dg[p.dg_strides.offset(b, t0 + t, h) + d] = x;
          });
    }
  };
  tile::two_stage_pipeline_from_issued((K + F - 1) / F, issue, consume);

  // 6. dβ from its per-row partial sums.
  for (int i = threadIdx.x; i < L; i += blockDim.x) {
    float db = 0.f;
    for (int w = 0; w < kGradientsWarps; ++w)
      db += shared->rowPartials[w][i];
    p.dbeta[p.dbeta_strides.offset(b, t0 + i, h)] = from_float<TBeta>(db);
  }
}

/// grid (ceil(T / C), B·H): each chunk's gradients (see for_each_chunk).
template <int K, int V, int C, tile::Alignment Views = tile::Alignment::Checked,
          typename TIn, typename TGate, typename TBeta>
__device__ void gradients(const BackwardParams<TIn, TGate, TBeta> &p) {
  for_each_chunk<C>(p.forward, [&](const ChunkAt &at) {
    gradients_chunk<K, V, C, Views>(p, at);
  });
}

} // namespace kda
} // namespace rudnn
