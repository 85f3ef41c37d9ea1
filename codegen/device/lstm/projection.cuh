//===- lstm/projection.cuh - An LSTM layer's input projection -------------===//
//
// Before a layer's recurrence, the part of its gates that does not depend
// on the hidden state is computed for every time step at once, as one GEMM
// per direction on the tile layer: gates[d, t, b] = input[t, b] · W_ih[d]ᵀ
// + b_ih[d] + b_hh[d].
// The same kernel lays out the recurrence's initial state (h0 and c0, or
// zeros), so the recurrent kernel starts without a barrier.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/lstm/state.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/gemm.cuh"

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
  const T *weight[2]; // W_ih per direction, [4H, In]
  long long weight_row[2];
  const T *bias_ih[2], *bias_hh[2]; // [4H] each, or null
  const T *h0, *c0;                 // [L·D, B, H], or null
  LayerStates h0_at, c0_at;
  float *gates; // [D, T, B, 4H], dense
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
       e += kProjectionThreads) {
    const int b = static_cast<int>(e / Hidden),
              j = static_cast<int>(e % Hidden);
    layout.hidden(d, 0)[e] =
        p.h0 ? to_float(p.h0[p.h0_at.offset(n, b) + j]) : 0.0f;
    layout.cell(d)[e] = p.c0 ? to_float(p.c0[p.c0_at.offset(n, b) + j]) : 0.0f;
  }
}

/// gates = input · W_ihᵀ + b_ih + b_hh over all M = T·B rows, on tensor
/// cores (FMA for f32): both operands through two-stage cp.async pipelines
/// into swizzled shared tiles, read by ldmatrix. Grid (⌈T/8⌉, ⌈4H/64⌉, D):
/// the blocks take the ⌈M/64⌉ row tiles in turn.
template <typename T, int In, int Hidden, int Directions>
__device__ void project_inputs(const ProjectionParams<T> &p) {
  using Gemm = tile::BlockGemm<T, tile::ALayout::MK, tile::BLayout::NK>;
  static_assert(Gemm::kRows == kProjectionRows &&
                Gemm::kCols == kProjectionCols &&
                Gemm::kThreads == kProjectionThreads);
  constexpr int kGates = 4 * Hidden;
  constexpr int kSteps = (In + Gemm::kDepth - 1) / Gemm::kDepth;
  const int d = blockIdx.z, col0 = blockIdx.y * kProjectionCols;
  const T *weight = of_direction(p.weight, d);
  const T *bias_ih = of_direction(p.bias_ih, d),
          *bias_hh = of_direction(p.bias_hh, d);
  const long long weight_row = of_direction(p.weight_row, d);
  const long long rows = static_cast<long long>(p.steps) * p.batch;
  // Rows of the input are whole 16-byte chunks when its strides and start
  // allow: then cp.async moves them, else elements.
  const bool vectors =
      reinterpret_cast<unsigned long long>(p.input) % 16 == 0 &&
      p.input_at.time * sizeof(T) % 16 == 0 &&
      p.input_at.batch * sizeof(T) % 16 == 0;

  for (long long row0 = static_cast<long long>(blockIdx.x) * kProjectionRows;
       row0 < rows;
       row0 += static_cast<long long>(gridDim.x) * kProjectionRows) {
    typename Gemm::Product product;
    product.clear();
    auto depth_of = [](int step) {
      const int k0 = step * Gemm::kDepth;
      return In - k0 < Gemm::kDepth ? In - k0 : Gemm::kDepth;
    };
    Gemm::run(
        product, kSteps,
        [&](typename Gemm::ATile tile, int step) {
          const int k0 = step * Gemm::kDepth;
          tile::gather_tile_async(
              tile,
              [&](int r) -> const T * {
                const long long m = row0 + r;
                if (m >= rows)
                  return nullptr;
                return p.input + p.input_at.offset(m / p.batch, m % p.batch) +
                       k0;
              },
              depth_of(step), vectors, p.input);
        },
        [&](typename Gemm::BTile tile, int step) {
          tile::load_tile_async(
              tile, weight + col0 * weight_row + step * Gemm::kDepth,
              weight_row,
              kGates - col0 < kProjectionCols ? kGates - col0 : kProjectionCols,
              depth_of(step));
        });
    product.for_each_pair([&](int r, int c, float first, float second) {
      const long long m = row0 + Gemm::warp_row() + r;
      const int g = col0 + Gemm::warp_col() + c;
      if (m >= rows || g >= kGates)
        return;
      auto bias = [&](int at) {
        return (bias_ih ? to_float(bias_ih[at]) : 0.0f) +
               (bias_hh ? to_float(bias_hh[at]) : 0.0f);
      };
      tile::store_pair(p.gates + (d * rows + m) * kGates + g, first + bias(g),
                       second + bias(g + 1), true);
    });
  }

  if (blockIdx.x == 0 && blockIdx.y == 0)
    initial_state<T, Hidden, Directions>(p, d);
}

} // namespace lstm
} // namespace rudnn
