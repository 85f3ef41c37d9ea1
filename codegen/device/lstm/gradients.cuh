//===- lstm/gradients.cuh - A recurrent layer's weight, input gradients ---===//
//
// After a layer's backward recurrence, everything left is a GEMM over its
// gate gradients (the T·B rows of each direction; the input side's dA and
// the recurrent side's dR, one for the LSTM, apart for the GRU):
//
//   dW_ih[d] = dA[d]ᵀ · input        dW_hh[d] = dR[d]ᵀ · h_prev[d]
//   d_input  = Σ_d dA[d] · W_ih[d]   (the directions in order)
//
// where h_prev[d] holds each row's hidden state before its step (the
// saved outputs one step back in the direction's time, h0 at its first
// step, zeros past the length). Where the weights alone give too few
// blocks, the rows are split in `Splits` fixed ranges: each block writes
// its partial tile, and the last of a tile's blocks to arrive adds them in
// split order, so the sums are the same on every run. The bias gradients
// (summed by the recurrence) are copied out beside.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/global.cuh"
#include "rudnn/lstm/cells.cuh"
#include "rudnn/lstm/recurrence.cuh"
#include "rudnn/lstm/state.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/gemm.cuh"

namespace rudnn {
namespace lstm {

template <typename T> struct WeightGradientParams {
  const T *d_gates; // [D, T, B, C·H], dense (the backward recurrence's)
  const T *input;   // the layer's input, [T, B, In] or [B, T, In]
  TimeBatch input_at;
  const T *hidden; // [L, T, B, D·H]: the forward's saved outputs
  const T *h0;     // [L·D, B, H], or null
  LayerStates h0_at;
  const int *lengths;                 // [B], or null
  const float *d_bias;                // [D, 4H]: the recurrence's sums
  T *d_weight_ih[2], *d_weight_hh[2]; // dense, per direction
  T *d_bias_ih[2], *d_bias_hh[2];     // or null (no biases)
  // With splits: each split's partial 64 x 64 tiles, [Splits, grid x·y·z
  // / Splits, 64, 64] fp32, and a counter a tile (zeroed before the call).
  float *partials;
  int *arrivals;
  int steps, batch, layer;
};

/// Adds the tile's `Splits` partials in split order into its gradient, in
/// the last of its blocks to arrive (each block's partial written first).
template <typename T, int Splits, typename Product>
__device__ __forceinline__ void
add_partials(const Product &product, float *partials, int *arrival,
             long long tile, long long tiles, int split, T *to, int rows,
             int cols, int width, int warp_row, int warp_col) {
  constexpr int kTile = 64 * 64;
  float *mine = partials + (split * tiles + tile) * kTile;
  product.for_each_pair([&](int r, int c, float first, float second) {
    mine[(warp_row + r) * 64 + warp_col + c] = first;
    mine[(warp_row + r) * 64 + warp_col + c + 1] = second;
  });
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0)
    last = arch::arrive(arrival) == Splits - 1;
  __syncthreads();
  if (!last)
    return;
  for (int e = threadIdx.x; e < kTile; e += blockDim.x) {
    const int r = e / 64, c = e % 64;
    if (r >= rows || c >= cols)
      continue;
    float sum = 0.0f;
    for (int s = 0; s < Splits; ++s)
      sum += __ldcg(partials + (s * tiles + tile) * kTile + e);
    to[static_cast<long long>(r) * width + c] = from_float<T>(sum);
  }
}

/// Grid (⌈4H/64⌉, ⌈max(In, H)/64⌉, 2·D·Splits): block (x, y, 2D·s + 2d + w)
/// computes gate rows 64x of dW_ih[d] (w = 0) or dW_hh[d] (w = 1), columns
/// 64y, over split s of the rows.
template <typename T, int In, int Hidden, int Directions, int Splits,
          typename Cell = LstmCell, bool Tf32 = false>
__device__ void weight_gradients(const WeightGradientParams<T> &p) {
  using Gemm = tile::BlockGemm<T, tile::ALayout::KM, tile::BLayout::KN, Tf32>;
  constexpr int kGates = Cell::kGates * Hidden;
  constexpr int kRow = Cell::kGradientColumns * Hidden;
  const int split = blockIdx.z / (2 * Directions),
            z = blockIdx.z % (2 * Directions);
  const int d = z / 2, recurrent = z % 2;
  const int width = recurrent ? Hidden : In;
  const int m0 = blockIdx.x * Gemm::kRows, n0 = blockIdx.y * Gemm::kCols;
  if (!recurrent && blockIdx.y == 0 && split == 0) {
    T *ih = of_direction(p.d_bias_ih, d), *hh = of_direction(p.d_bias_hh, d);
    for (int g = m0 + threadIdx.x; ih && g < kGates && g < m0 + Gemm::kRows;
         g += Gemm::kThreads) {
      const float *sums = p.d_bias + d * 4 * Hidden;
      ih[g] = from_float<T>(sums[g]);
      hh[g] = from_float<T>(sums[Cell::hidden_bias_sum(g, Hidden)]);
    }
  }
  if (n0 >= width)
    return;
  const long long rows = static_cast<long long>(p.steps) * p.batch;
  // The input side's columns first, the recurrent side's last.
  const T *d_gates =
      p.d_gates + d * rows * kRow + (recurrent ? kRow - kGates : 0);
  const PreviousHidden<T, Hidden, Directions> previous{
      p.hidden, p.h0, p.h0_at, p.lengths, p.steps, p.batch, p.layer, d};
  // Row k of the second operand: the input's, or the hidden state before
  // the step.
  auto operand_row = [&](long long k) -> const T * {
    if (recurrent)
      return previous.row(k);
    return p.input + p.input_at.offset(k / p.batch, k % p.batch);
  };
  const bool vectors = recurrent ? previous.aligned()
                                 : rows_aligned16(p.input, p.input_at.time) &&
                                       p.input_at.batch * sizeof(T) % 16 == 0;
  // The split's rows: whole stages, the last split taking what is left.
  const long long stages = (rows + Gemm::kDepth - 1) / Gemm::kDepth;
  const long long first_stage = stages * split / Splits;
  const int steps =
      static_cast<int>(stages * (split + 1) / Splits - first_stage);
  typename Gemm::Product product;
  product.clear();
  Gemm::run(
      product, steps,
      [&](typename Gemm::ATile tile, int step) {
        const long long k0 = (first_stage + step) * Gemm::kDepth;
        tile::gather_tile_async(
            tile,
            [&](int r) -> const T * {
              return k0 + r < rows ? d_gates + (k0 + r) * kRow + m0 : nullptr;
            },
            kGates - m0 < Gemm::kRows ? kGates - m0 : Gemm::kRows,
            kRow * sizeof(T) % 16 == 0 && kGates * sizeof(T) % 16 == 0,
            p.d_gates);
      },
      [&](typename Gemm::BTile tile, int step) {
        const long long k0 = (first_stage + step) * Gemm::kDepth;
        tile::gather_tile_async(
            tile,
            [&](int r) -> const T * {
              const T *row = k0 + r < rows ? operand_row(k0 + r) : nullptr;
              return row ? row + n0 : nullptr;
            },
            width - n0 < Gemm::kCols ? width - n0 : Gemm::kCols, vectors,
            p.d_gates);
      });
  T *to = recurrent ? of_direction(p.d_weight_hh, d)
                    : of_direction(p.d_weight_ih, d);
  if constexpr (Splits > 1) {
    const long long tiles =
        static_cast<long long>(gridDim.x) * gridDim.y * 2 * Directions;
    const long long tile =
        (static_cast<long long>(z) * gridDim.y + blockIdx.y) * gridDim.x +
        blockIdx.x;
    add_partials<T, Splits>(product, p.partials, p.arrivals + tile, tile, tiles,
                            split, to + static_cast<long long>(m0) * width + n0,
                            kGates - m0 < Gemm::kRows ? kGates - m0
                                                      : Gemm::kRows,
                            width - n0 < Gemm::kCols ? width - n0 : Gemm::kCols,
                            width, Gemm::warp_row(), Gemm::warp_col());
    return;
  }
  product.for_each_pair([&](int r, int c, float first, float second) {
    const int g = m0 + Gemm::warp_row() + r, f = n0 + Gemm::warp_col() + c;
    if (g < kGates && f < width)
      tile::store_pair(to + static_cast<long long>(g) * width + f, first,
                       second, f + 1 < width);
  });
}

/// `O`: the gradient's type (the caller's for x, fp32 for a layer below).
template <typename T, typename O> struct InputGradientParams {
  const T *d_gates;   // [D, T, B, C·H], dense
  const T *weight[2]; // W_ih per direction, [G·H, In]
  long long weight_row[2];
  O *d_input; // [T, B, In] or [B, T, In]
  TimeBatch d_input_at;
  int steps, batch;
};

/// Grid (⌈T/8⌉, ⌈In/64⌉): the blocks take the ⌈T·B/64⌉ row tiles in turn,
/// the depth running over both directions' gates.
template <typename T, typename O, int In, int Hidden, int Directions,
          typename Cell = LstmCell, bool Tf32 = false>
__device__ void input_gradient(const InputGradientParams<T, O> &p) {
  using Gemm = tile::BlockGemm<T, tile::ALayout::MK, tile::BLayout::KN, Tf32>;
  constexpr int kGates = Cell::kGates * Hidden;
  constexpr int kRow = Cell::kGradientColumns * Hidden;
  constexpr int kStepsADirection = (kGates + Gemm::kDepth - 1) / Gemm::kDepth;
  const int n0 = blockIdx.y * Gemm::kCols;
  const int cols = In - n0 < Gemm::kCols ? In - n0 : Gemm::kCols;
  const long long rows = static_cast<long long>(p.steps) * p.batch;
  for (long long row0 = static_cast<long long>(blockIdx.x) * Gemm::kRows;
       row0 < rows; row0 += static_cast<long long>(gridDim.x) * Gemm::kRows) {
    typename Gemm::Product product;
    product.clear();
    auto depth_of = [](int k0) {
      return kGates - k0 < Gemm::kDepth ? kGates - k0 : Gemm::kDepth;
    };
    Gemm::run(
        product, Directions * kStepsADirection,
        [&](typename Gemm::ATile tile, int step) {
          const int d = step / kStepsADirection,
                    k0 = step % kStepsADirection * Gemm::kDepth;
          const T *d_gates = p.d_gates + d * rows * kRow + k0;
          tile::gather_tile_async(
              tile,
              [&](int r) -> const T * {
                return row0 + r < rows ? d_gates + (row0 + r) * kRow : nullptr;
              },
              depth_of(k0), kRow * sizeof(T) % 16 == 0, p.d_gates);
        },
        [&](typename Gemm::BTile tile, int step) {
          const int d = step / kStepsADirection,
                    k0 = step % kStepsADirection * Gemm::kDepth;
          const long long row = of_direction(p.weight_row, d);
          tile::load_tile_async(tile, of_direction(p.weight, d) + k0 * row + n0,
                                row, depth_of(k0), cols);
        });
    product.for_each_pair([&](int r, int c, float first, float second) {
      const long long m = row0 + Gemm::warp_row() + r;
      const int f = n0 + Gemm::warp_col() + c;
      if (m < rows && f < In)
        tile::store_pair(p.d_input +
                             p.d_input_at.offset(m / p.batch, m % p.batch) + f,
                         first, second, f + 1 < In);
    });
  }
}

} // namespace lstm
} // namespace rudnn
