//===- lstm/cells.cuh - The recurrent cells the layer kernels run ---------===//
//
// What differs between torch.nn.LSTM and torch.nn.GRU inside the shared
// kernels (projection, recurrence, backward, gradients): a cell's gate
// count, which of its hidden-side biases the input projection may fold in,
// what a step saves for the backward, and the step's math both ways.
// Everything else (the grid, the products, the GEMMs) is the same.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/lstm/products.cuh"

namespace rudnn {
namespace lstm {

/// torch.nn.LSTM: gates i, f, g, o; a cell state carried beside h.
struct LstmCell {
  static constexpr int kGates = 4;
  /// Gates whose b_hh the input projection adds (all: z = W x + W h + b).
  static constexpr int kFoldedGates = 4;
  static constexpr bool kCellState = true;
  /// Gate-gradient columns a row of the backward writes (input and
  /// recurrent side are one: dz feeds both).
  static constexpr int kGradientColumns = 4;

  /// One step of a unit from its projected gates (`projected`, biases in)
  /// and W_hh·h (`recurrent`): updates `cell`, returns h and the four
  /// values the backward takes (the activations i, f, g, o).
  static __device__ __forceinline__ float forward(const float (&projected)[4],
                                                  const float (&recurrent)[4],
                                                  float, float, float &cell,
                                                  float (&saved)[4]) {
    const float in = sigmoid(projected[0] + recurrent[0]),
                forget = sigmoid(projected[1] + recurrent[1]),
                candidate = tanhf(projected[2] + recurrent[2]),
                out = sigmoid(projected[3] + recurrent[3]);
    cell = forget * cell + in * candidate;
    saved[0] = in, saved[1] = forget, saved[2] = candidate, saved[3] = out;
    return out * tanhf(cell);
  }

  /// A step backwards: from the saved activations, the cell state c and
  /// the one before, dh and the cell gradient handed back (`carry`), the
  /// pre-activations' gradients dz; returns the cell gradient to hand on.
  static __device__ __forceinline__ float backward(const float (&saved)[4],
                                                   float dh, float carry,
                                                   float c, float c_prev,
                                                   float (&dz)[4]) {
    const float in = saved[0], forget = saved[1], candidate = saved[2],
                out = saved[3];
    const float tanh_c = tanhf(c);
    const float dc = carry + dh * out * (1.0f - tanh_c * tanh_c);
    dz[0] = dc * candidate * in * (1.0f - in);
    dz[1] = dc * c_prev * forget * (1.0f - forget);
    dz[2] = dc * in * (1.0f - candidate * candidate);
    dz[3] = dh * tanh_c * out * (1.0f - out);
    return dc * forget;
  }

  /// Bias sum q of 4 a unit keeps: b_ih and b_hh both take all four.
  static __device__ __forceinline__ float bias_sum(const float (&dz)[4],
                                                   int q) {
    return dz[q];
  }

  /// Where b_hh's gradient row g sits among the [4H] bias sums.
  static __device__ __forceinline__ int hidden_bias_sum(int g, int) {
    return g;
  }
};

/// torch.nn.GRU: gates r, z, n; b_hn stays inside the reset product.
///   r = σ(W_ir x + b_ir + W_hr h + b_hr)    z likewise
///   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn));  h' = (1 − z) n + z h
struct GruCell {
  static constexpr int kGates = 3;
  static constexpr int kFoldedGates = 2;
  static constexpr bool kCellState = false;
  /// The input side's dz (r, z, n) then the recurrent side's (r, z, r·dn).
  static constexpr int kGradientColumns = 6;

  /// As LstmCell's, with b_hn and the unit's previous h; saves r, z, n and
  /// W_hn h + b_hn.
  static __device__ __forceinline__ float forward(const float (&projected)[3],
                                                  const float (&recurrent)[3],
                                                  float bias_hn, float h_prev,
                                                  float &, float (&saved)[4]) {
    const float reset = sigmoid(projected[0] + recurrent[0]),
                update = sigmoid(projected[1] + recurrent[1]);
    const float hidden_n = recurrent[2] + bias_hn;
    const float candidate = tanhf(projected[2] + reset * hidden_n);
    saved[0] = reset, saved[1] = update, saved[2] = candidate,
    saved[3] = hidden_n;
    return (1.0f - update) * candidate + update * h_prev;
  }

  /// A step backwards from the saved r, z, n, W_hn h + b_hn, the whole dh
  /// (what the step after handed back already in) and the unit's previous
  /// h: the input side's dz then the recurrent side's; returns z ⊙ dh, the
  /// part of the previous h's gradient that skips the weights.
  static __device__ __forceinline__ float backward(const float (&saved)[4],
                                                   float dh, float,
                                                   float h_prev, float,
                                                   float (&dz)[6]) {
    const float reset = saved[0], update = saved[1], candidate = saved[2],
                hidden_n = saved[3];
    const float dn = dh * (1.0f - update) * (1.0f - candidate * candidate);
    const float dr = dn * hidden_n * reset * (1.0f - reset);
    const float du = dh * (h_prev - candidate) * update * (1.0f - update);
    dz[0] = dr, dz[1] = du, dz[2] = dn;
    dz[3] = dr, dz[4] = du, dz[5] = dn * reset;
    return dh * update;
  }

  /// The bias sums: b_ih's r, z, n, then b_hn's (r ⊙ dn).
  static __device__ __forceinline__ float bias_sum(const float (&dz)[6],
                                                   int q) {
    return q < 3 ? dz[q] : dz[5];
  }

  static __device__ __forceinline__ int hidden_bias_sum(int g, int hidden) {
    return g < 2 * hidden ? g : g + hidden;
  }
};

} // namespace lstm
} // namespace rudnn
