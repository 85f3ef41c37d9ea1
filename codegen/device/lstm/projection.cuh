//===- lstm/projection.cuh - A recurrent layer's input projection ---------===//
//
// Before a layer's recurrence, the part of its gates that does not depend
// on the hidden state is computed for every time step at once, as one GEMM
// per direction on the tile layer: gates[d, t, b] = input[t, b] · W_ih[d]ᵀ
// + b_ih[d] + b_hh[d] (b_hh of the gates the cell lets fold in).
// The same kernel lays out the recurrence's initial state (h0 and c0, or
// zeros), so the recurrent kernel starts without a barrier.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/global.cuh"
#include "rudnn/lstm/cells.cuh"
#include "rudnn/lstm/state.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/gemm.cuh"
#include "rudnn/tile/warpgroup_gemm.cuh"

namespace rudnn {
namespace lstm {

/// A block's tile of the GEMM: 64 rows (steps × entries, flattened) by 64
/// gate columns, 32 input features a pipeline stage; four warps of 32 x 32.
inline constexpr int kProjectionRows = 64;
inline constexpr int kProjectionCols = 64;
inline constexpr int kProjectionThreads = 128;

template <typename T> struct ProjectionParams {
  const T *input; // [T, B, In] or [B, T, In]
  TimeBatch input_at;
  const T *weight[2]; // W_ih per direction, [G·H, In]
  long long weight_row[2];
  const T *bias_ih[2], *bias_hh[2]; // [G·H] each, or null
  const T *h0, *c0;                 // [L·D, B, H], or null
  LayerStates h0_at, c0_at;
  float *gates; // [D, T, B, G·H], dense
  float *state; // StateLayout
  int steps, batch, layer;
};

/// Lays out direction d's initial state (and clears the recurrence's grid
/// barrier): h0 and c0's slices of this layer, or zeros.
template <typename T, int Hidden, int Directions>
__device__ void initial_state(const ProjectionParams<T> &p, int d) {
  const StateLayout layout{p.state, p.batch, Hidden};
  if (d == 0 && threadIdx.x == 0)
    *layout.barrier(Directions) = 0;
  const int n = p.layer * Directions + d;
  for (long long e = threadIdx.x; e < static_cast<long long>(p.batch) * Hidden;
       e += blockDim.x) {
    const int b = static_cast<int>(e / Hidden),
              j = static_cast<int>(e % Hidden);
    layout.hidden(d, 0)[e] =
        p.h0 ? to_float(p.h0[p.h0_at.offset(n, b) + j]) : 0.0f;
    layout.cell(d)[e] = p.c0 ? to_float(p.c0[p.c0_at.offset(n, b) + j]) : 0.0f;
  }
}

/// The bias a gate column adds: b_ih, and b_hh for the first `Folded`
/// gates (the ones the cell folds into the projection).
template <int Hidden, int Folded, typename T>
__device__ __forceinline__ float gate_bias(const T *bias_ih, const T *bias_hh,
                                           int at) {
  return (bias_ih ? to_float(bias_ih[at]) : 0.0f) +
         (bias_hh && at < Folded * Hidden ? to_float(bias_hh[at]) : 0.0f);
}

/// Whether every row of a [T, B, In] or [B, T, In] view starts on 16
/// bytes (then cp.async moves it).
template <typename T>
__device__ __forceinline__ bool rows_aligned16(const T *input, TimeBatch at) {
  return rudnn::rows_aligned16(input, at.time) &&
         at.batch * sizeof(T) % 16 == 0;
}

/// The rows before each step when a GEMM has none (the input projection).
template <typename T> struct NoPreviousHidden {
  const T *hidden = nullptr;
  __device__ __forceinline__ const T *row(long long) const { return nullptr; }
  __device__ __forceinline__ bool aligned() const { return false; }
};

/// For direction d and the block's 64 gate columns from col0, over the row
/// tiles the block takes (⌈M/64⌉ of M = T·B in turn, grid x apart):
/// [input | h_prev] · [W_ih | W_hh]ᵀ + b_ih + b_hh of every row m = t·B + b
/// (b_hh of the first `Folded` of the `Gates` gates),
/// handed to store(m, g, first, second) for gates g and g + 1 (g + 1 may
/// be past the last gate: then `second` is none). The depth
/// runs over the input's In features, then, with `Recurrent`, over the
/// Hidden features of each row's hidden state before its step
/// (`previous.row(m)`). Both operands go through two-stage cp.async
/// pipelines into swizzled shared tiles read by ldmatrix, on tensor cores
/// (f32: on FMA, or with `Tf32` on tensor cores in TF32).
template <typename T, int In, int Hidden, bool Recurrent, int Gates, int Folded,
          bool Tf32, typename Previous, typename Store>
__device__ __forceinline__ void
gate_sums(const T *input, TimeBatch input_at, const Previous &previous,
          const T *weight_ih, long long ih_row, const T *weight_hh,
          long long hh_row, const T *bias_ih, const T *bias_hh, int steps,
          int batch, Store store) {
  using Gemm = tile::BlockGemm<T, tile::ALayout::MK, tile::BLayout::NK, Tf32>;
  constexpr int kGates = Gates * Hidden;
  constexpr int kInputSteps = (In + Gemm::kDepth - 1) / Gemm::kDepth;
  constexpr int kSteps =
      kInputSteps +
      (Recurrent ? (Hidden + Gemm::kDepth - 1) / Gemm::kDepth : 0);
  const int col0 = blockIdx.y * Gemm::kCols;
  const int cols = kGates - col0 < Gemm::kCols ? kGates - col0 : Gemm::kCols;
  // Rows are whole 16-byte chunks where strides and starts allow: then
  // cp.async moves them, else elements.
  const bool input_vectors = rows_aligned16(input, input_at);
  const bool hidden_vectors = previous.aligned();
  const long long rows = static_cast<long long>(steps) * batch;
  // Stage `step`'s depth: the input's features, then the hidden state's.
  auto depth_at = [](int step, int &k0) {
    const bool recurrent = step >= kInputSteps;
    k0 = (recurrent ? step - kInputSteps : step) * Gemm::kDepth;
    const int width = recurrent ? Hidden : In;
    return width - k0 < Gemm::kDepth ? width - k0 : Gemm::kDepth;
  };
  for (long long row0 = static_cast<long long>(blockIdx.x) * Gemm::kRows;
       row0 < rows; row0 += static_cast<long long>(gridDim.x) * Gemm::kRows) {
    typename Gemm::Product product;
    product.clear();
    Gemm::run(
        product, kSteps,
        [&](typename Gemm::ATile tile, int step) {
          int k0;
          const int depth = depth_at(step, k0);
          const bool recurrent = step >= kInputSteps;
          tile::gather_tile_async(
              tile,
              [&](int r) -> const T * {
                const long long m = row0 + r;
                if (m >= rows)
                  return nullptr;
                const T *row =
                    recurrent ? previous.row(m)
                              : input + input_at.offset(m / batch, m % batch);
                return row ? row + k0 : nullptr;
              },
              depth, recurrent ? hidden_vectors : input_vectors,
              recurrent ? previous.hidden : input);
        },
        [&](typename Gemm::BTile tile, int step) {
          int k0;
          const int depth = depth_at(step, k0);
          const bool recurrent = step >= kInputSteps;
          const long long row = recurrent ? hh_row : ih_row;
          const T *weight = recurrent ? weight_hh : weight_ih;
          tile::load_tile_async(tile, weight + col0 * row + k0, row, cols,
                                depth);
        });
    product.for_each_pair([&](int r, int c, float first, float second) {
      const long long m = row0 + Gemm::warp_row() + r;
      const int g = col0 + Gemm::warp_col() + c;
      if (m >= rows || g >= kGates)
        return;
      auto bias = [&](int at) {
        return gate_bias<Hidden, Folded>(bias_ih, bias_hh, at);
      };
      // An odd gate count (the GRU's 3H) leaves a last pair of one.
      store(m, g, first + bias(g),
            g + 1 < kGates ? second + bias(g + 1) : 0.0f);
    });
  }
}

/// gates = input · W_ihᵀ + b_ih + b_hh over all M = T·B rows (gate_sums).
/// Grid (⌈T/8⌉, ⌈G·H/64⌉, D).
template <typename T, int In, int Hidden, int Directions,
          typename Cell = LstmCell, bool Tf32 = false>
__device__ void project_inputs(const ProjectionParams<T> &p) {
  using Gemm = tile::BlockGemm<T, tile::ALayout::MK, tile::BLayout::NK, Tf32>;
  static_assert(Gemm::kRows == kProjectionRows &&
                Gemm::kCols == kProjectionCols &&
                Gemm::kThreads == kProjectionThreads);
  constexpr int kGates = Cell::kGates * Hidden;
  const int d = blockIdx.z;
  const long long rows = static_cast<long long>(p.steps) * p.batch;
  gate_sums<T, In, Hidden, false, Cell::kGates, Cell::kFoldedGates, Tf32>(
      p.input, p.input_at, NoPreviousHidden<T>{}, of_direction(p.weight, d),
      of_direction(p.weight_row, d), nullptr, 0, of_direction(p.bias_ih, d),
      of_direction(p.bias_hh, d), p.steps, p.batch,
      [&](long long m, int g, float first, float second) {
        tile::store_pair(p.gates + (d * rows + m) * kGates + g, first, second,
                         g + 1 < kGates);
      });

  if (blockIdx.x == 0 && blockIdx.y == 0)
    initial_state<T, Hidden, Directions>(p, d);
}

/// project_inputs on wgmma (sm_90a; 16-bit inputs, or f32 multiplied in
/// TF32): 128 x 128 tiles of the same GEMM (tile::WarpgroupGemm), two
/// warpgroups, the stages in the
/// dynamic shared memory; each thread stores runs of four gate columns as
/// 16-byte vectors where rows of G·H floats allow. Grid
/// (⌈T/16⌉·⌈B/8⌉, ⌈G·H/128⌉, D): about one row tile a block.
template <typename T, int In, int Hidden, int Directions,
          typename Cell = LstmCell>
__device__ void project_inputs_wgmma(const ProjectionParams<T> &p) {
  using Gemm = tile::WarpgroupGemm<T>;
  constexpr int kGates = Cell::kGates * Hidden;
  constexpr int kSteps = (In + Gemm::kDepth - 1) / Gemm::kDepth;
  typename Gemm::Shared &shared = tile::aligned_shared<typename Gemm::Shared>();
  const int d = blockIdx.z;
  const T *weight = of_direction(p.weight, d);
  const T *bias_ih = of_direction(p.bias_ih, d),
          *bias_hh = of_direction(p.bias_hh, d);
  const long long pitch = of_direction(p.weight_row, d);
  const long long rows = static_cast<long long>(p.steps) * p.batch;
  const int col0 = blockIdx.y * Gemm::kCols;
  const int cols = kGates - col0 < Gemm::kCols ? kGates - col0 : Gemm::kCols;
  const bool input_vectors = rows_aligned16(p.input, p.input_at);
  float *gates = p.gates + d * rows * kGates;
  // The block's columns' biases, read once (the pipeline's first barrier
  // publishes them).
  __shared__ __align__(16) float bias[Gemm::kCols];
  for (int c = threadIdx.x; c < Gemm::kCols; c += Gemm::kThreads)
    bias[c] =
        col0 + c < kGates
            ? gate_bias<Hidden, Cell::kFoldedGates>(bias_ih, bias_hh, col0 + c)
            : 0.0f;
  for (long long row0 = static_cast<long long>(blockIdx.x) * Gemm::kRows;
       row0 < rows; row0 += static_cast<long long>(gridDim.x) * Gemm::kRows) {
    typename Gemm::Product product;
    product.clear();
    Gemm::run(
        product, shared, kSteps,
        [&](typename Gemm::ATile tile, int step) {
          const int k0 = step * Gemm::kDepth;
          tile::gather_tile_async(
              tile,
              [&](int r) -> const T * {
                const long long m = row0 + r;
                return m < rows
                           ? p.input +
                                 p.input_at.offset(m / p.batch, m % p.batch) +
                                 k0
                           : nullptr;
              },
              In - k0, input_vectors, p.input);
        },
        [&](typename Gemm::BTile tile, int step) {
          const int k0 = step * Gemm::kDepth;
          tile::load_tile_async(tile, weight + col0 * pitch + k0, pitch, cols,
                                In - k0);
        });
    product.for_each_quad([&](int r, int c, const float(&v)[4]) {
      const long long m = row0 + r;
      const int g = col0 + c;
      if (m >= rows || g >= kGates)
        return;
      const float4 b = *reinterpret_cast<const float4 *>(&bias[c]);
      const float sums[4] = {v[0] + b.x, v[1] + b.y, v[2] + b.z, v[3] + b.w};
      float *to = gates + m * kGates + g;
      if constexpr (kGates % 4 == 0) {
        arch::store_global16(
            to, make_uint4(__float_as_uint(sums[0]), __float_as_uint(sums[1]),
                           __float_as_uint(sums[2]), __float_as_uint(sums[3])));
      } else {
        for (int e = 0; e < 4 && g + e < kGates; ++e)
          to[e] = sums[e];
      }
    });
  }

  if (blockIdx.x == 0 && blockIdx.y == 0)
    initial_state<T, Hidden, Directions>(p, d);
}

} // namespace lstm
} // namespace rudnn
