//===- RudnnLstmBackwardOps.td - The LSTM's gradients ------*- tablegen -*-===//
//
// rudnn.lstm's backward as an operator, and the three primitives each layer
// becomes (from the last layer down): the recurrence backwards through
// time, then the weight gradients and the input gradient as GEMMs over the
// gate gradients it leaves.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LSTM_BACKWARD_OPS_TD
#define RUDNN_LSTM_BACKWARD_OPS_TD

include "dialects/IR/RudnnBase.td"
include "dialects/IR/RudnnInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Rudnn_LstmBackwardOp : Rudnn_Op<"lstm_backward", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getContractOperand",
                               "getContractResult", "getCallContract",
                               "buildFromContract"]>]> {
  let summary = "The gradients of rudnn.lstm: backpropagation through time";
  let description = [{
    Gradients of `⟨d_out, out⟩ + ⟨d_h_n, h_n⟩ + ⟨d_c_n, c_n⟩` with respect
    to every input of `rudnn.lstm` with the same operands and attributes:
    `x`, `h0`, `c0` and each weight and bias of each layer and direction.

    Operands: the forward's (`x`, optional `h0`, `c0`, `lengths`, the
    state_dict's tensors as one group, last); what the forward saved with
    `save_states`: `hidden` `[L, T, B, D·H]` and `cells` `[L·D, T, B, H]`
    f32, and, when it saved them (`save_gates`), `gates` `[L·D, T, B, 4H]`
    f32 (without them each layer's gates are recomputed, one GEMM a layer);
    `d_out` like `out`, optional `d_h_n`, `d_c_n` `[L·D, B, H]` (zero when
    absent).

    Results: `d_x` like `x` (0 past each length), `d_h0`, `d_c0` `[L·D, B,
    H]` (the gradients with respect to the initial states, whether or not
    they were given) and the gradient of each of the state_dict's tensors,
    in its order (both biases of a layer and direction get the same one).
    Every sum runs in a fixed order: reruns are bit-identical. `units` and
    `weights_on_chip` say how the recurrence runs, as `rudnn.lstm`'s;
    `allow_tf32` (f32, true unless given) whether the GEMMs (the gates
    again, the weight and input gradients) round their operands to TF32
    on tensor cores; the recurrence's products stay exact fp32.

    ```mlir
    %dx, %dh0, %dc0, %dw_ih, %dw_hh = rudnn.lstm_backward %x
        saved(%hidden, %cells) d_out %dout weights(%w_ih, %w_hh) layers 1
        : (tensor<?x?x32xf32>, tensor<1x?x?x48xf32>, tensor<1x?x?x48xf32>,
           tensor<?x?x48xf32>, tensor<192x32xf32>, tensor<192x48xf32>)
        -> (tensor<?x?x32xf32>, tensor<1x?x48xf32>, tensor<1x?x48xf32>,
            tensor<192x32xf32>, tensor<192x48xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$x,
    Optional<AnyRankedTensor>:$h0,
    Optional<AnyRankedTensor>:$c0,
    Optional<AnyRankedTensor>:$lengths,
    AnyRankedTensor:$hidden,
    AnyRankedTensor:$cells,
    Optional<AnyRankedTensor>:$gates,
    AnyRankedTensor:$d_out,
    Optional<AnyRankedTensor>:$d_h_n,
    Optional<AnyRankedTensor>:$d_c_n,
    Variadic<AnyRankedTensor>:$weights,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_layers,
    UnitAttr:$bidirectional,
    UnitAttr:$batch_first,
    OptionalAttr<I64Attr>:$units,
    OptionalAttr<BoolAttr>:$weights_on_chip,
    OptionalAttr<BoolAttr>:$allow_tf32);
  let results = (outs AnyRankedTensor:$d_x, AnyRankedTensor:$d_h0,
                      AnyRankedTensor:$d_c0,
                      Variadic<AnyRankedTensor>:$d_weights);

  let assemblyFormat = [{
    $x (`h0` $h0^)? (`c0` $c0^)? (`lengths` $lengths^)?
    `saved` `(` $hidden `,` $cells (`,` $gates^)? `)` `d_out` $d_out
    (`d_h_n` $d_h_n^)? (`d_c_n` $d_c_n^)?
    `weights` `(` $weights `)` `layers` $num_layers
    (`bidirectional` $bidirectional^)? (`batch_first` $batch_first^)?
    (`units` $units^)? (`weights_on_chip` $weights_on_chip^)?
    (`allow_tf32` $allow_tf32^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    int64_t getDirections() { return getBidirectional() ? 2 : 1; }
    bool hasBiases() {
      return getWeights().size() == 4 * getNumLayers() * getDirections();
    }
    /// As rudnn.lstm's getWeight.
    ::mlir::Value getWeight(int64_t layer, int64_t direction, int which);
  }];
}

def Rudnn_LstmRecomputeGatesOp : Rudnn_Op<"lstm_recompute_gates", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "An LSTM layer's gate activations again, from its states";
  let description = [{
    `gates` `[D, T, B, 4H]` f32: the activations i, f, g, o of every step of
    layer `layer` as its forward computed them, `σ` or `tanh` of
    `input · weight_ih[d]ᵀ + h_prev · weight_hh[d]ᵀ + bias_ih[d] +
    bias_hh[d]`, one GEMM per direction over the T·B rows: `h_prev` is each
    row's hidden state before its step (`hidden`'s outputs of the layer one
    step back in the direction's time, `h0`'s slice at its first step).
    `input` is `x` (batch first with `batch_first`) for layer 0, `hidden`
    (its layer `layer − 1`) after.

    ```mlir
    %gates = rudnn.lstm_recompute_gates %x, %hidden weights(%w_ih)
        recurrent(%w_hh) layer 0 : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    AnyRankedTensor:$hidden,
    Optional<AnyRankedTensor>:$h0,
    Optional<AnyRankedTensor>:$lengths,
    Variadic<AnyRankedTensor>:$weights,
    Variadic<AnyRankedTensor>:$recurrent_weights,
    Variadic<AnyRankedTensor>:$biases,
    I64Attr:$layer,
    UnitAttr:$batch_first,
    UnitAttr:$tf32);
  let results = (outs AnyRankedTensor:$gates);
  let assemblyFormat = [{
    $input `,` $hidden (`h0` $h0^)? (`lengths` $lengths^)?
    `weights` `(` $weights `)` `recurrent` `(` $recurrent_weights `)`
    (`biases` `(` $biases^ `)`)? `layer` $layer (`batch_first` $batch_first^)?
    (`tf32` $tf32^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_RnnBackwardRecurrenceOp : Rudnn_Op<"rnn_backward_recurrence", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "A recurrent layer's recurrence backwards through time";
  let description = [{
    Walks each entry's steps of layer `layer` of `cell` in reverse, both
    directions at once, on a persistent cooperative grid of blocks of
    `units` hidden units (W_hh's columns of them in shared memory with
    `weights_on_chip`): `d_gates` `[D, T, B, C]` (the gradients of the
    gates' pre-activations, in the weights' type; 0 past each length: the
    LSTM's C = 4H serve both weights, the GRU's C = 6H are W_ih's r, z, n
    then W_hh's), `d_bias` `[D, 4H]` f32 (their sums over steps and entries:
    the LSTM's for both biases, the GRU's b_ih's then b_hn's) and the
    layer's slices of `d_h0`, `d_c0` `[L·D, B, H]` (chained through
    `d_h0_in`, `d_c0_in` like `rudnn.rnn_recurrence`'s states; a GRU never
    writes `d_c0`). Reads what the forward saved, `gates` `[L·D, T, B, 4H]`
    (or an LSTM layer's `[D, T, B, 4H]` recomputed), the LSTM's `cells`
    `[L·D, T, B, H]` and `c0`, the GRU's `hidden` `[L, T, B, D·H]` and `h0`,
    and the output's gradient `d_out` `[T, B, D·H]` (batch first with
    `batch_first`; the layer above's input gradient in f32 for any layer
    but the last).

    ```mlir
    %dg, %db, %dh0, %dc0 = rudnn.rnn_backward_recurrence %gates, %dout
        weights(%w_hh) cells %cells layer 0 units 8 weights_on_chip true
        : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$gates,
    AnyRankedTensor:$d_out,
    Variadic<AnyRankedTensor>:$weights,
    Optional<AnyRankedTensor>:$cells,
    Optional<AnyRankedTensor>:$hidden,
    Optional<AnyRankedTensor>:$lengths,
    Optional<AnyRankedTensor>:$c0,
    Optional<AnyRankedTensor>:$h0,
    Optional<AnyRankedTensor>:$d_h_n,
    Optional<AnyRankedTensor>:$d_c_n,
    Optional<AnyRankedTensor>:$d_h0_in,
    Optional<AnyRankedTensor>:$d_c0_in,
    I64Attr:$layer,
    I64Attr:$units,
    BoolAttr:$weights_on_chip,
    UnitAttr:$batch_first,
    Rudnn_CellAttr:$cell);
  let results = (outs AnyRankedTensor:$d_gates, AnyRankedTensor:$d_bias,
                      AnyRankedTensor:$d_h0, AnyRankedTensor:$d_c0);
  let assemblyFormat = [{
    $gates `,` $d_out `weights` `(` $weights `)` (`cells` $cells^)?
    (`hidden` $hidden^)? (`lengths` $lengths^)? (`c0` $c0^)? (`h0` $h0^)?
    (`d_h_n` $d_h_n^)? (`d_c_n` $d_c_n^)? (`d_h0` $d_h0_in^)?
    (`d_c0` $d_c0_in^)? `layer` $layer `units` $units
    `weights_on_chip` $weights_on_chip (`batch_first` $batch_first^)?
    (`cell` $cell^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_RnnWeightGradientOp : Rudnn_Op<"rnn_weight_gradient", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "A recurrent layer's weight and bias gradients";
  let description = [{
    For each direction d: `d_weight_ih = A[d]ᵀ · input`,
    `d_weight_hh = R[d]ᵀ · h_prev[d]` (each row's hidden state before
    its step: `hidden`'s outputs of layer `layer` one step back in the
    direction's time, `h0`'s slice at its first step) and, with biases,
    `d_bias_ih`, `d_bias_hh` from `d_bias[d]`: `d_weights` in the
    state_dict's order (2 or 4 a direction). A and R are `d_gates`'s input
    and recurrent sides (`rudnn.rnn_backward_recurrence`'s, by `cell`). `input` is the layer's: `x` `[T, B, I]`
    (batch first with `batch_first`) for layer 0, `hidden` for the others
    (its layer `layer − 1`). The T·B rows are split in `splits` fixed
    ranges (1 to 8; chosen so the blocks fill the target), whose partial
    sums are added in order: the same on every run.

    ```mlir
    %dw_ih, %dw_hh = rudnn.rnn_weight_gradient %dg, %x, %hidden
        d_bias %db layer 0 : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$d_gates,
    AnyRankedTensor:$input,
    AnyRankedTensor:$hidden,
    Optional<AnyRankedTensor>:$h0,
    Optional<AnyRankedTensor>:$lengths,
    AnyRankedTensor:$d_bias,
    I64Attr:$layer,
    DefaultValuedAttr<I64Attr, "1">:$splits,
    UnitAttr:$batch_first,
    Rudnn_CellAttr:$cell,
    UnitAttr:$tf32);
  let results = (outs Variadic<AnyRankedTensor>:$d_weights);
  let assemblyFormat = [{
    $d_gates `,` $input `,` $hidden (`h0` $h0^)? (`lengths` $lengths^)?
    `d_bias` $d_bias `layer` $layer (`splits` $splits^)?
    (`batch_first` $batch_first^)? (`cell` $cell^)? (`tf32` $tf32^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_RnnInputGradientOp : Rudnn_Op<"rnn_input_gradient", [Pure]> {
  let summary = "A recurrent layer's input gradient";
  let description = [{
    `d_input = Σ_d A[d] · weight_ih[d]`, the directions in order, A being
    `d_gates`'s input side (by `cell`):
    `[T, B, F]` (batch first with `batch_first`), in the weights' type for
    the first layer (the caller's `d_x`) or f32 (the layer below's output
    gradient). With `tf32`, f32 products on tensor cores, the operands
    rounded to TF32 (as `rudnn.rnn_weight_gradient`'s and
    `rudnn.lstm_recompute_gates`' with it).

    ```mlir
    %dx = rudnn.rnn_input_gradient %dg weights(%w_ih) : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$d_gates,
    Variadic<AnyRankedTensor>:$weights,
    UnitAttr:$batch_first,
    Rudnn_CellAttr:$cell,
    UnitAttr:$tf32);
  let results = (outs AnyRankedTensor:$d_input);
  let assemblyFormat = [{
    $d_gates `weights` `(` $weights `)` (`batch_first` $batch_first^)?
    (`cell` $cell^)? (`tf32` $tf32^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // RUDNN_LSTM_BACKWARD_OPS_TD
