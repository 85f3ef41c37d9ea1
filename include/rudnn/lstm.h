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

/// out [T, B, D·H] ([B, T, D·H] with batchFirst); optionally h_n and c_n
/// [L·D, B, H]; x's dtype. No output may overlap another or an input.
struct LstmOutputs {
  TensorView out;
  std::optional<TensorView> hN, cN;
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
  /// does not fit on chip; it reads W_hh each step, so not with
  /// `weightsOnChip`).
  int64_t units = 0;
  std::optional<bool> weightsOnChip, perStep;
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

} // namespace rudnn

#endif // RUDNN_LSTM_H
