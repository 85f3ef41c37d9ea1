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
#include "rudnn/lstm/projection.cuh"
#include "rudnn/lstm/recurrence.cuh"

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

/// Grid (⌈T/8⌉, ⌈4H/64⌉, D), as the input projection's (gate_sums, over
/// the input and then the hidden state before each step).
template <typename T, int In, int Hidden, int Directions, bool Tf32 = false>
__device__ void recompute_gates(const RecomputeParams<T> &p) {
  constexpr int kGates = 4 * Hidden;
  const int d = blockIdx.z;
  const long long rows = static_cast<long long>(p.steps) * p.batch;
  const PreviousHidden<T, Hidden, Directions> previous{
      p.hidden, p.h0, p.h0_at, p.lengths, p.steps, p.batch, p.layer, d};
  gate_sums<T, In, Hidden, true, 4, 4, Tf32>(
      p.input, p.input_at, previous, of_direction(p.weight_ih, d),
      of_direction(p.ih_row, d), of_direction(p.weight_hh, d),
      of_direction(p.hh_row, d), of_direction(p.bias_ih, d),
      of_direction(p.bias_hh, d), p.steps, p.batch,
      [&](long long m, int g, float first, float second) {
        // σ for i, f and o; tanh for g, as the forward applied them.
        auto activated = [](int at, float sum) {
          return at / Hidden == 2 ? tanhf(sum) : sigmoid(sum);
        };
        tile::store_pair(p.gates + (d * rows + m) * kGates + g,
                         activated(g, first), activated(g + 1, second), true);
      });
}

} // namespace lstm
} // namespace rudnn
