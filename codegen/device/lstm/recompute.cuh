//===- lstm/recompute.cuh - A layer's gates again, for its backward -------===//
//
// When the forward saved its states but not its gates, the backward needs
// them back. Every step's hidden state before it is known (the saved
// outputs), so all steps' gates come from one GEMM per direction over the
// T·B rows, the depth running over the input and then the hidden state:
//
//   gates[d, t, b] = act([input_t | h_prev] · [W_ih | W_hh]ᵀ + b_ih + b_hh)
//
// with σ for i, f, o and tanh for g, as the forward applied them.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/lstm/products.cuh"
#include "rudnn/lstm/recurrence.cuh"
#include "rudnn/tile/gemm.cuh"

namespace rudnn {
namespace lstm {

template <typename T> struct RecomputeParams {
  const T *input; // the layer's input, [T, B, In] or [B, T, In]
  TimeBatch input_at;
  const T *hidden; // [L, T, B, D·H]: the forward's saved outputs
  const T *h0;     // [L·D, B, H], or null
  LayerStates h0_at;
  const int *lengths;
  const T *weight_ih[2], *weight_hh[2];
  long long ih_row[2], hh_row[2];
  const T *bias_ih[2], *bias_hh[2]; // or null
  float *gates;                     // [D, T, B, 4H], dense
  int steps, batch, layer;
};

/// Grid (⌈T/8⌉, ⌈4H/64⌉, D), as the input projection's.
template <typename T, int In, int Hidden, int Directions>
__device__ void recompute_gates(const RecomputeParams<T> &p) {
  using Gemm = tile::BlockGemm<T, tile::ALayout::MK, tile::BLayout::NK>;
  constexpr int kGates = 4 * Hidden;
  constexpr int kInputSteps = (In + Gemm::kDepth - 1) / Gemm::kDepth;
  constexpr int kSteps =
      kInputSteps + (Hidden + Gemm::kDepth - 1) / Gemm::kDepth;
  const int d = blockIdx.z, col0 = blockIdx.y * Gemm::kCols;
  const int cols = kGates - col0 < Gemm::kCols ? kGates - col0 : Gemm::kCols;
  const PreviousHidden<T, Hidden, Directions> previous{
      p.hidden, p.h0, p.h0_at, p.lengths, p.steps, p.batch, p.layer, d};
  const bool input_vectors = rows_aligned16(p.input, p.input_at.time) &&
                             p.input_at.batch * sizeof(T) % 16 == 0;
  const bool hidden_vectors = previous.aligned();
  const T *bias_ih = of_direction(p.bias_ih, d),
          *bias_hh = of_direction(p.bias_hh, d);
  const long long rows = static_cast<long long>(p.steps) * p.batch;
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
                    recurrent
                        ? previous.row(m)
                        : p.input + p.input_at.offset(m / p.batch, m % p.batch);
                return row ? row + k0 : nullptr;
              },
              depth, recurrent ? hidden_vectors : input_vectors,
              recurrent ? p.hidden : p.input);
        },
        [&](typename Gemm::BTile tile, int step) {
          int k0;
          const int depth = depth_at(step, k0);
          const bool recurrent = step >= kInputSteps;
          const long long row =
              recurrent ? of_direction(p.hh_row, d) : of_direction(p.ih_row, d);
          const T *weight = recurrent ? of_direction(p.weight_hh, d)
                                      : of_direction(p.weight_ih, d);
          tile::load_tile_async(tile, weight + col0 * row + k0, row, cols,
                                depth);
        });
    product.for_each_pair([&](int r, int c, float first, float second) {
      const long long m = row0 + Gemm::warp_row() + r;
      const int g = col0 + Gemm::warp_col() + c;
      if (m >= rows || g >= kGates)
        return;
      auto activated = [&](int at, float sum) {
        sum += (bias_ih ? to_float(bias_ih[at]) : 0.0f) +
               (bias_hh ? to_float(bias_hh[at]) : 0.0f);
        return at / Hidden == 2 ? tanhf(sum) : sigmoid(sum);
      };
      tile::store_pair(p.gates + (d * rows + m) * kGates + g,
                       activated(g, first), activated(g + 1, second), true);
    });
  }
}

} // namespace lstm
} // namespace rudnn
