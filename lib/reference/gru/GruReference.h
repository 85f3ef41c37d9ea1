//===- GruReference.h - A multi-layer GRU in float64 ------------*- C++ -*-===//
//
// torch.nn.GRU's forward in double precision (gate order r, z, n; b_hn
// inside the reset product), stacked, bidirectional and packed as the
// LSTM's reference is (lstm/LstmReference.h, whose shape and weight types
// it shares: weight_ih [3H, in], weight_hh [3H, H], biases [3H]); and its
// backward through time. The reference the GRU kernels are checked
// against.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_GRU_GRUREFERENCE_H
#define RUDNN_LIB_REFERENCE_GRU_GRUREFERENCE_H

#include "lib/reference/lstm/LstmReference.h"

namespace rudnn::reference {

/// x, h0, lengths and weights as LstmInputs' (no c0).
struct GruInputs {
  std::vector<double> x, h0, lengths;
  std::vector<LstmWeights> weights;
};

/// out [T, B, D·H] (or batch first; zero past each length) and hN
/// [L·D, B, H]; what the backward takes, time-major and zero past each
/// length: `hidden` [L, T, B, D·H] and `gates` [L·D, T, B, 4H] (r, z, n
/// and W_hn h + b_hn of each step).
struct GruOutputs {
  std::vector<double> out, hN, hidden, gates;
};

GruOutputs gruForward(const LstmShape &shape, const GruInputs &inputs);

/// The loss's gradients with respect to out and hN (empty: zero).
struct GruOutputGradients {
  std::vector<double> out, hN;
};

/// Its gradients with respect to x (zero past each length), h0 [L·D, B,
/// H] (whether or not given) and every state_dict tensor.
struct GruGradients {
  std::vector<double> x, h0;
  std::vector<LstmWeights> weights;
};

GruGradients gruBackward(const LstmShape &shape, const GruInputs &inputs,
                         const GruOutputGradients &gradients);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_GRU_GRUREFERENCE_H
