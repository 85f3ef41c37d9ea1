//===- RudnnGruOps.td - Multi-layer bidirectional GRU ------*- tablegen -*-===//
//
// torch.nn.GRU as an operator and its backward: the state_dict's tensors as
// operands, the same numbers as results. Each layer becomes the recurrent
// family's primitives (dialects/IR/lstm) with `cell "gru"`.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_GRU_OPS_TD
#define RUDNN_GRU_OPS_TD

include "dialects/IR/RudnnBase.td"
include "dialects/IR/RudnnInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Rudnn_GruOp : Rudnn_Op<"gru", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getContractOperand",
                               "getContractResult", "getCallContract",
                               "buildFromContract"]>]> {
  let summary = "A stacked, optionally bidirectional GRU as torch.nn.GRU";
  let description = [{
    `num_layers` layers of D directions (2 with `bidirectional`). With gates
    in PyTorch's order r, z, n, layer l, direction d computes at each step
    from its input x_t and its previous state h:

    ```
    r = σ(W_ir x_t + b_ir + W_hr h + b_hr)
    z = σ(W_iz x_t + b_iz + W_hz h + b_hz)
    n = tanh(W_in x_t + b_in + r ⊙ (W_hn h + b_hn))
    h' = (1 − z) ⊙ n + z ⊙ h
    ```

    Operands and results are `rudnn.lstm`'s without the cell states: `x`
    `[T, B, I]` (`[B, T, I]` with `batch_first`), optional `h0` `[L·D, B,
    H]` and `lengths` `[B]` i32 (packed sequences), then the state_dict's
    tensors in its order, `weight_ih` `[3H, in]`, `weight_hh` `[3H, H]`
    and, when given, `bias_ih`, `bias_hh` `[3H]`; `out` `[T, B, D·H]` and
    `h_n` `[L·D, B, H]` of x's element type. Gate math and states are fp32.

    With `save_states` (training), also what `rudnn.gru_backward` takes:
    `hidden` `[L, T, B, D·H]` in x's type (every layer's outputs) and
    `gates` `[L·D, T, B, 4H]` f32 (r, z, n and W_hn h + b_hn of each step,
    the last being what the reset gate's gradient needs and no product of
    saved values gives back). All are 0 past an entry's length.

    `units`, `weights_on_chip` and `per_step` say how the recurrence runs,
    `wgmma_projection` how the input projection does and `allow_tf32`
    whether f32 products may round their operands to TF32, chosen by
    `rudnn-specialize` as for `rudnn.lstm`.

    ```mlir
    %out, %h_n = rudnn.gru %x h0 %h0 weights(%w_ih, %w_hh, %b_ih, %b_hh)
        layers 1
        : (tensor<?x?x32xf32>, tensor<1x?x48xf32>, tensor<144x32xf32>,
           tensor<144x48xf32>, tensor<144xf32>, tensor<144xf32>)
        -> (tensor<?x?x48xf32>, tensor<1x?x48xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$x,
    Optional<AnyRankedTensor>:$h0,
    Optional<AnyRankedTensor>:$lengths,
    Variadic<AnyRankedTensor>:$weights,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_layers,
    UnitAttr:$bidirectional,
    UnitAttr:$batch_first,
    OptionalAttr<I64Attr>:$units,
    OptionalAttr<BoolAttr>:$weights_on_chip,
    OptionalAttr<BoolAttr>:$per_step,
    OptionalAttr<BoolAttr>:$wgmma_projection,
    OptionalAttr<BoolAttr>:$allow_tf32,
    UnitAttr:$save_states);
  let results = (outs AnyRankedTensor:$out, AnyRankedTensor:$h_n,
                      Variadic<AnyRankedTensor>:$saved);

  let assemblyFormat = [{
    $x (`h0` $h0^)? (`lengths` $lengths^)?
    `weights` `(` $weights `)` `layers` $num_layers
    (`bidirectional` $bidirectional^)? (`batch_first` $batch_first^)?
    (`units` $units^)? (`weights_on_chip` $weights_on_chip^)?
    (`per_step` $per_step^)? (`wgmma_projection` $wgmma_projection^)?
    (`allow_tf32` $allow_tf32^)?
    (`save_states` $save_states^)? attr-dict `:`
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

def Rudnn_GruBackwardOp : Rudnn_Op<"gru_backward", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getContractOperand",
                               "getContractResult", "getCallContract",
                               "buildFromContract"]>]> {
  let summary = "The gradients of rudnn.gru: backpropagation through time";
  let description = [{
    Gradients of `⟨d_out, out⟩ + ⟨d_h_n, h_n⟩` with respect to every input
    of `rudnn.gru` with the same operands and attributes: `x`, `h0` and each
    weight and bias of each layer and direction.

    Operands: the forward's (`x`, optional `h0`, `lengths`, the state_dict's
    tensors as one group, last); what it saved with `save_states`, `hidden`
    `[L, T, B, D·H]` and `gates` `[L·D, T, B, 4H]` f32; `d_out` like `out`
    and optional `d_h_n` `[L·D, B, H]` (zero when absent).

    Results: `d_x` like `x` (0 past each length), `d_h0` `[L·D, B, H]`
    (whether or not h0 was given) and the gradient of each of the
    state_dict's tensors in its order. `bias_ih` and `bias_hh` share their
    r and z rows' gradients; their n rows differ (`b_hn`'s is scaled by r).
    Every sum runs in a fixed order: reruns are bit-identical.

    ```mlir
    %dx, %dh0, %dw_ih, %dw_hh = rudnn.gru_backward %x
        saved(%hidden, %gates) d_out %dout weights(%w_ih, %w_hh) layers 1
        : (tensor<?x?x32xf32>, tensor<1x?x?x48xf32>, tensor<1x?x?x192xf32>,
           tensor<?x?x48xf32>, tensor<144x32xf32>, tensor<144x48xf32>)
        -> (tensor<?x?x32xf32>, tensor<1x?x48xf32>, tensor<144x32xf32>,
            tensor<144x48xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$x,
    Optional<AnyRankedTensor>:$h0,
    Optional<AnyRankedTensor>:$lengths,
    AnyRankedTensor:$hidden,
    AnyRankedTensor:$gates,
    AnyRankedTensor:$d_out,
    Optional<AnyRankedTensor>:$d_h_n,
    Variadic<AnyRankedTensor>:$weights,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_layers,
    UnitAttr:$bidirectional,
    UnitAttr:$batch_first,
    OptionalAttr<I64Attr>:$units,
    OptionalAttr<BoolAttr>:$weights_on_chip,
    OptionalAttr<BoolAttr>:$allow_tf32);
  let results = (outs AnyRankedTensor:$d_x, AnyRankedTensor:$d_h0,
                      Variadic<AnyRankedTensor>:$d_weights);

  let assemblyFormat = [{
    $x (`h0` $h0^)? (`lengths` $lengths^)?
    `saved` `(` $hidden `,` $gates `)` `d_out` $d_out (`d_h_n` $d_h_n^)?
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
    ::mlir::Value getWeight(int64_t layer, int64_t direction, int which);
  }];
}

#endif // RUDNN_GRU_OPS_TD
