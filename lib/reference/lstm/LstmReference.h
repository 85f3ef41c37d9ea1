//===- LstmReference.h - A multi-layer LSTM in float64 ----------*- C++ -*-===//
//
// torch.nn.LSTM's forward in double precision: gate order i, f, g, o, both
// biases added, layers stacked (a layer past the first reads the previous
// one's outputs, both directions concatenated), the reverse direction
// running backwards in time, and packed sequences as
// pack_padded_sequence gives them (each entry over its own steps); and its
// backward through time. The reference the LSTM kernels are checked
// against.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_LSTM_LSTMREFERENCE_H
#define RUDNN_LIB_REFERENCE_LSTM_LSTMREFERENCE_H

#include <cstdint>
#include <vector>

namespace rudnn::reference {

/// T steps of B entries, input size I, hidden size H, `layers` layers of
/// `directions` (1, or 2 when bidirectional) directions.
struct LstmShape {
  int64_t steps = 1, batch = 1, inputSize = 1, hiddenSize = 1, layers = 1,
          directions = 1;
  /// x and out are [B, T, *] rather than [T, B, *].
  bool batchFirst = false;
};

/// One layer and direction's state_dict tensors, dense row-major:
/// weight_ih [4H, in] (in = I for the first layer, directions·H after),
/// weight_hh [4H, H], bias_ih and bias_hh [4H] (empty: none).
struct LstmWeights {
  std::vector<double> weightIh, weightHh, biasIh, biasHh;
};

/// x [T, B, I] (or [B, T, I]); h0 and c0 [layers·directions, B, H] (empty:
/// zeros); lengths [B] (empty: every entry T steps; an entry of length ℓ
/// runs steps 0 … ℓ − 1, its reverse direction from ℓ − 1 down); weights
/// of layer l, direction d at l·directions + d.
struct LstmInputs {
  std::vector<double> x, h0, c0, lengths;
  std::vector<LstmWeights> weights;
};

/// out [T, B, directions·H] (or [B, T, ·]; zero past an entry's length),
/// hN and cN [layers·directions, B, H]: each direction's state after its
/// last step. What a forward saves for its backward, time-major and zero
/// past an entry's length: `hidden` [layers, T, B, directions·H] (every
/// layer's outputs), `cells` [layers·directions, T, B, H] and `gates`
/// [layers·directions, T, B, 4H] (the activations i, f, g, o).
struct LstmOutputs {
  std::vector<double> out, hN, cN, hidden, cells, gates;
};

LstmOutputs lstmForward(const LstmShape &shape, const LstmInputs &inputs);

/// The gradients of a loss with respect to the forward's outputs: out like
/// out (what lies past an entry's length is read as zero), hN and cN like
/// hN and cN (empty: zero).
struct LstmOutputGradients {
  std::vector<double> out, hN, cN;
};

/// The gradients of that loss with respect to every input: x like x (zero
/// past each length), h0 and c0 [layers·directions, B, H] (whether or not
/// the forward took them), and each layer and direction's state_dict
/// tensors like `weights` (biases empty where the forward had none; both
/// biases get the same gradient).
struct LstmGradients {
  std::vector<double> x, h0, c0;
  std::vector<LstmWeights> weights;
};

/// Backpropagation through time: each layer from the last, each direction
/// over its steps backwards, the forward's gates recomputed in float64.
LstmGradients lstmBackward(const LstmShape &shape, const LstmInputs &inputs,
                           const LstmOutputGradients &gradients);

/// [first, second, width] -> [second, first, width] ([B, T, ·] <-> [T, B,
/// ·]).
std::vector<double> swapLeading(const std::vector<double> &x, int64_t first,
                                int64_t second, int64_t width);

/// State `state`'s slice of `size` values of a [layers·directions, B, H]
/// tensor, or zeros when it is empty.
std::vector<double> stateOf(const std::vector<double> &states, int64_t state,
                            int64_t size);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_LSTM_LSTMREFERENCE_H
