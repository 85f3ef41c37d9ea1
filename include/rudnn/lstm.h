//===- rudnn/lstm.h - A stacked, bidirectional LSTM -------------*- C++ -*-===//

#ifndef RUDNN_LSTM_H
#define RUDNN_LSTM_H

#include "rudnn/context.h"

#include <map>
#include <optional>
#include <string>

namespace rudnn {

/// x [T, B, I] ([B, T, I] with batchFirst), optional h0 and c0 [L·D, B, H],
/// and the weights under their torch.nn.LSTM state_dict keys: for each
/// layer l and direction ("" or "_reverse"), "weight_ih_l<l>" [4H, in],
/// "weight_hh_l<l>" [4H, H] and, for a model with biases, "bias_ih_l<l>"
/// and "bias_hh_l<l>" [4H] (in = I for layer 0, D·H after). All one dtype
/// (f32, f16 or bf16). `lengths` [B] (i32, dense, device memory): packed
/// sequences, entry b running its first lengths[b] steps. Views may have
/// any outer strides; the innermost dim must be contiguous.
struct LstmInputs {
  TensorView x;
  std::optional<TensorView> h0, c0;
  std::map<std::string, TensorView> weights;
  std::optional<TensorView> lengths;
};

/// What a training forward keeps for lstmBackward, dense: `hidden` [L, T,
/// B, D·H] in x's dtype (every layer's outputs) and `cells` [L·D, T, B, H]
/// f32 (each step's cell states); optionally `gates` [L·D, T, B, 4H] f32
/// (the activations i, f, g, o), 16 bytes more per hidden unit and step,
/// which spare the backward one GEMM a layer that recomputes them.
struct LstmSaved {
  TensorView hidden, cells;
  std::optional<TensorView> gates;
};

/// out [T, B, D·H] ([B, T, D·H] with batchFirst); optionally h_n and c_n
/// [L·D, B, H]; x's dtype; and, for training, what the backward takes. No
/// output may overlap another or an input.
struct LstmOutputs {
  TensorView out;
  std::optional<TensorView> hN, cN;
  std::optional<LstmSaved> saved;
};

struct LstmOptions {
  int64_t numLayers = 1;
  bool bidirectional = false, batchFirst = false;
  /// Reads `lengths` back (a synchronising copy) and throws InvalidArgument
  /// for one outside [0, T] before anything runs. Off (as for a CUDA-graph
  /// capture), such lengths are clamped to [0, T] on the device.
  bool checkLengths = true;
  /// How the recurrence runs; unset (or 0), the target's policy decides.
  /// `units`: hidden units a block owns. `weightsOnChip`: each block keeps
  /// its W_hh rows in shared memory for all steps (chosen wherever they
  /// fit). `perStep`: one launch a step, recorded in a CUDA graph on the
  /// GPU, instead of one persistent cooperative grid (chosen where W_hh
  /// does not fit on chip; each launch then loads its rows on chip once
  /// where they fit).
  int64_t units = 0;
  std::optional<bool> weightsOnChip, perStep;
  /// f32 only: whether the products (the input projection, W_hh times the
  /// state where W_hh is on chip) may run on tensor cores with their
  /// operands rounded to TF32 (10 fraction bits, about 1e-3 relative), as
  /// PyTorch lets cuDNN by default (`torch.backends.cudnn.allow_tf32`).
  /// Unset: true. False: exact fp32 products on FMA.
  std::optional<bool> allowTf32;
};

/// torch.nn.LSTM(I, H, num_layers, bias, batch_first, bidirectional)'s
/// forward: gates i, f, g, o; c' = f c + i g, h' = o tanh(c'). With
/// lengths, packed-sequence semantics: each direction runs over the entry's
/// own steps (the reverse one from its last), outputs past them are 0 and
/// h_n, c_n are taken at its last valid step. Gate math and states in fp32.
/// One compile per signature (dtype, I, H, layers, directions, biases,
/// layout, which optional tensors); T, B and the lengths never recompile.
/// Throws InvalidArgument naming the bad argument (a weight's shape, a
/// missing or unknown weight, a length past T) before anything is written.
void lstmForward(Context &context, const LstmInputs &inputs,
                 const LstmOutputs &outputs, const LstmOptions &options = {},
                 Stream stream = nullptr);

/// The gradients of a loss with respect to the forward's results: dOut
/// like out; optionally dHN and dCN like h_n and c_n (zero when absent).
struct LstmResultGradients {
  TensorView dOut;
  std::optional<TensorView> dHN, dCN;
};

/// The gradients lstmBackward writes, each like its input: dX like x (0
/// past each length), optionally dH0 and dC0 [L·D, B, H] (whether or not
/// the forward took h0 and c0), and the weights' under their state_dict
/// keys (any subset: those absent are not returned).
struct LstmGradients {
  TensorView dX;
  std::optional<TensorView> dH0, dC0;
  std::map<std::string, TensorView> dWeights;
};

/// The backward of lstmForward(inputs, options) through time: the
/// gradients of every input of that call from `saved` (its LstmSaved) and
/// the results' gradients. Every layer, from the last, runs its recurrence
/// backwards on one persistent cooperative grid, then its weight and input
/// gradients as GEMMs (recomputing the layer's gates first when `saved`
/// has none). Each sum runs in a fixed order: reruns are bit-identical.
/// Both biases of a layer and direction get the same gradient. `units`
/// and `weightsOnChip` say how the backward recurrence runs (`perStep` is
/// refused: it is always persistent). Throws InvalidArgument naming the bad
/// argument before anything is written.
void lstmBackward(Context &context, const LstmInputs &inputs,
                  const LstmSaved &saved, const LstmResultGradients &gradients,
                  const LstmGradients &outputs, const LstmOptions &options = {},
                  Stream stream = nullptr);

} // namespace rudnn

#endif // RUDNN_LSTM_H
