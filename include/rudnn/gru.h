//===- rudnn/gru.h - A stacked, bidirectional GRU ---------------*- C++ -*-===//

#ifndef RUDNN_GRU_H
#define RUDNN_GRU_H

#include "rudnn/lstm.h"

namespace rudnn {

/// x [T, B, I] ([B, T, I] with batchFirst), optional h0 [L·D, B, H], and
/// the weights under their torch.nn.GRU state_dict keys: "weight_ih_l<l>"
/// [3H, in], "weight_hh_l<l>" [3H, H] and, for a model with biases,
/// "bias_ih_l<l>", "bias_hh_l<l>" [3H] (rows r, z, n; "_reverse" for the
/// second direction). Dtypes, layouts and `lengths` as LstmInputs'.
struct GruInputs {
  TensorView x;
  std::optional<TensorView> h0;
  std::map<std::string, TensorView> weights;
  std::optional<TensorView> lengths;
};

/// What a training forward keeps for gruBackward, dense: `hidden` [L, T,
/// B, D·H] in x's dtype (every layer's outputs) and `gates` [L·D, T, B,
/// 4H] f32 (r, z, n and W_hn h + b_hn of each step).
struct GruSaved {
  TensorView hidden, gates;
};

/// out [T, B, D·H] ([B, T, D·H] with batchFirst), optionally h_n [L·D, B,
/// H], x's dtype; and, for training, what the backward takes.
struct GruOutputs {
  TensorView out;
  std::optional<TensorView> hN;
  std::optional<GruSaved> saved;
};

/// The LSTM's options mean the same for the GRU.
using GruOptions = LstmOptions;

/// torch.nn.GRU(I, H, num_layers, bias, batch_first, bidirectional)'s
/// forward: r = σ(W_ir x + b_ir + W_hr h + b_hr), z likewise,
/// n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 − z) n + z h.
/// Packed sequences, compiles and errors as lstmForward's.
void gruForward(Context &context, const GruInputs &inputs,
                const GruOutputs &outputs, const GruOptions &options = {},
                Stream stream = nullptr);

/// The loss's gradients with respect to out and (optionally) h_n.
struct GruResultGradients {
  TensorView dOut;
  std::optional<TensorView> dHN;
};

/// dX like x (0 past each length), optionally dH0 [L·D, B, H], and the
/// weights' gradients under "d_" and their keys (any subset).
struct GruGradients {
  TensorView dX;
  std::optional<TensorView> dH0;
  std::map<std::string, TensorView> dWeights;
};

/// The backward of gruForward(inputs, options) through time from `saved`,
/// as lstmBackward's: one persistent grid a layer backwards, then the
/// weight and input gradients as GEMMs, every sum in a fixed order
/// (bit-identical reruns). bias_ih and bias_hh share their r and z rows'
/// gradients; b_hn's is r ⊙ b_in's.
void gruBackward(Context &context, const GruInputs &inputs,
                 const GruSaved &saved, const GruResultGradients &gradients,
                 const GruGradients &outputs, const GruOptions &options = {},
                 Stream stream = nullptr);

} // namespace rudnn

#endif // RUDNN_GRU_H
