//===- RudnnLstmOps.td - Multi-layer bidirectional LSTM ----*- tablegen -*-===//
//
// torch.nn.LSTM as an operator: the state_dict's tensors as operands, the
// same numbers as results. Each layer becomes two primitives: the input
// projection of every time step (a GEMM per direction, biases folded in)
// and the recurrence (a persistent cooperative grid, one barrier a step).
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LSTM_OPS_TD
#define RUDNN_LSTM_OPS_TD

include "dialects/IR/RudnnBase.td"
include "dialects/IR/RudnnInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Rudnn_LstmOp : Rudnn_Op<"lstm", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getContractOperand",
                               "getContractResult", "getCallContract",
                               "buildFromContract"]>]> {
  let summary = "A stacked, optionally bidirectional LSTM as torch.nn.LSTM";
  let description = [{
    `num_layers` layers of D directions (2 with `bidirectional`). With gates
    in PyTorch's order i, f, g, o, layer l, direction d computes at each
    step from its input x_t and its previous state:

    ```
    z = W_ih x_t + b_ih + W_hh h + b_hh
    i, f, o = σ(z_i), σ(z_f), σ(z_o);  g = tanh(z_g)
    c' = f c + i g;  h' = o tanh(c')
    ```

    Layer 0 reads `x` `[T, B, I]` (`[B, T, I]` with `batch_first`); layer
    l > 0 reads the previous layer's output `[T, B, D·H]`. `weights` are
    the state_dict's tensors in its order: for each layer, for each
    direction, `weight_ih` `[4H, in]`, `weight_hh` `[4H, H]` and, when
    given, `bias_ih` and `bias_hh` `[4H]` (all directions with biases or
    none). `h0`, `c0` `[L·D, B, H]` are zero when absent. With `lengths`
    `[B]` i32, packed-sequence semantics: entry b runs its first
    `lengths[b]` steps (the reverse direction from its last valid step),
    its outputs past them are 0, and `h_n`, `c_n` are taken at its last
    valid step.

    Results: `out` `[T, B, D·H]` (batch first likewise), `h_n`, `c_n`
    `[L·D, B, H]`, all of x's element type; gate math and states are fp32.
    I and H are static, T and B may be dynamic.

    What `rudnn.lstm_backward` takes, when asked for (training): with
    `save_states`, `hidden` `[L, T, B, D·H]` in x's type (every layer's
    outputs, time major) and `cells` `[L·D, T, B, H]` f32 (each step's cell
    state), from which the backward recomputes the gates with one GEMM a
    layer; with `save_gates` too, `gates` `[L·D, T, B, 4H]` f32 (the
    activations i, f, g, o of each step), which it then reads instead:
    16 more bytes per hidden unit and step for no recomputation. All are
    0 past an entry's length.

    `rudnn-specialize` chooses how the recurrence runs: `units`, the hidden
    units each block owns; `weights_on_chip`, whether each block keeps its
    W_hh rows in shared memory (for all steps, or with `per_step` loaded
    once a launch for every batch entry; if they fit the target) or reads
    them from L2 each pass of entries; `per_step`, whether one persistent
    cooperative grid runs every step or each step is its own launch (the
    launches recorded in a CUDA graph), chosen where W_hh does not fit on
    chip for all steps; `wgmma_projection`, whether the input projection
    runs on wgmma in 128 x 128 tiles (16-bit inputs, or f32 in TF32, on
    sm_90) or on mma.sync; `allow_tf32` (f32 inputs), whether the products run on tensor
    cores with their operands rounded to TF32 (10 fraction bits), as
    PyTorch lets cuDNN by default (`torch.backends.cudnn.allow_tf32`), or
    exactly on FMA: true unless given. Any of them given is kept.

    ```mlir
    %out, %h_n, %c_n = rudnn.lstm %x h0 %h0 c0 %c0
        weights(%w_ih, %w_hh, %b_ih, %b_hh) layers 1
        : (tensor<?x?x32xf32>, tensor<1x?x48xf32>, tensor<1x?x48xf32>,
           tensor<192x32xf32>, tensor<192x48xf32>, tensor<192xf32>,
           tensor<192xf32>)
        -> (tensor<?x?x48xf32>, tensor<1x?x48xf32>, tensor<1x?x48xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$x,
    Optional<AnyRankedTensor>:$h0,
    Optional<AnyRankedTensor>:$c0,
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
    UnitAttr:$save_states,
    UnitAttr:$save_gates);
  let results = (outs AnyRankedTensor:$out, AnyRankedTensor:$h_n,
                      AnyRankedTensor:$c_n, Variadic<AnyRankedTensor>:$saved);

  let assemblyFormat = [{
    $x (`h0` $h0^)? (`c0` $c0^)? (`lengths` $lengths^)?
    `weights` `(` $weights `)` `layers` $num_layers
    (`bidirectional` $bidirectional^)? (`batch_first` $batch_first^)?
    (`units` $units^)? (`weights_on_chip` $weights_on_chip^)?
    (`per_step` $per_step^)?
    (`wgmma_projection` $wgmma_projection^)?
    (`allow_tf32` $allow_tf32^)? (`save_states` $save_states^)?
    (`save_gates` $save_gates^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// D: 2 when bidirectional.
    int64_t getDirections() { return getBidirectional() ? 2 : 1; }
    /// Whether the weights include biases (four tensors a layer and
    /// direction, else two).
    bool hasBiases() {
      return getWeights().size() == 4 * getNumLayers() * getDirections();
    }
    /// Weight `which` (0 weight_ih, 1 weight_hh, 2 bias_ih, 3 bias_hh) of
    /// layer `layer`, direction `direction`; null for an absent bias.
    ::mlir::Value getWeight(int64_t layer, int64_t direction, int which);
  }];
}

/// The recurrent cell a primitive of the LSTM and GRU layers runs: "lstm"
/// (gates i, f, g, o and a cell state; G = 4) or "gru" (gates r, z, n;
/// G = 3).
def Rudnn_CellAttr : DefaultValuedStrAttr<StrAttr, "lstm">;

def Rudnn_RnnProjectionOp : Rudnn_Op<"rnn_projection", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "A recurrent layer's input projection and initial state";
  let description = [{
    `gates` `[D, T, B, G·H]` f32: for every step t and entry b, `input[t,
    b] · weight_ih[d]ᵀ + bias_ih[d] + bias_hh[d]` (one weight per direction,
    biases optional; with `cell "gru"` bias_hh of r and z only, b_hn
    staying inside the reset product). `state` `[D, 3, B, H]` f32 receives
    the recurrence's
    initial state: layer `layer`'s slices of `h0` and `c0`, or zeros (its
    memory also holds the recurrence's grid barrier, zeroed here). The
    input is `[T, B, F]`, or `[B, T, F]` with `batch_first`. With `wgmma`
    (16-bit inputs, or f32 with `tf32`; sm_90a) the GEMM runs in 128 x 128
    tiles on wgmma (f32 as TF32, each operand's low 13 bits ignored), else
    in 64 x 64 tiles on mma.sync (f32: on FMA, or with `tf32` on tensor
    cores, the operands rounded to TF32).

    ```mlir
    %gates, %state = rudnn.rnn_projection %x weights(%w_ih)
        biases(%b_ih, %b_hh) h0 %h0 c0 %c0 layer 0 hidden 48 : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Variadic<AnyRankedTensor>:$weights,
    Variadic<AnyRankedTensor>:$biases,
    Optional<AnyRankedTensor>:$h0,
    Optional<AnyRankedTensor>:$c0,
    I64Attr:$layer,
    I64Attr:$hidden,
    UnitAttr:$batch_first,
    Rudnn_CellAttr:$cell,
    UnitAttr:$wgmma,
    UnitAttr:$tf32);
  let results = (outs AnyRankedTensor:$gates, AnyRankedTensor:$state);
  let assemblyFormat = [{
    $input `weights` `(` $weights `)` (`biases` `(` $biases^ `)`)?
    (`h0` $h0^)? (`c0` $c0^)? `layer` $layer `hidden` $hidden
    (`batch_first` $batch_first^)? (`cell` $cell^)? (`wgmma` $wgmma^)?
    (`tf32` $tf32^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_RnnRecurrenceOp : Rudnn_Op<"rnn_recurrence", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "A recurrent layer's recurrence, all steps or one a launch";
  let description = [{
    Runs every step of layer `layer` of `cell` from its projected `gates`
    and initial `state` (`rudnn.rnn_projection`'s results), both directions
    at once: `out` `[T, B, D·H]` (batch first with `batch_first`) and the
    layer's slices of `h_n` and `c_n` `[L·D, B, H]` (a GRU has no cell
    state: its `c_n` is never written, and nothing uses it). Given `h_n_in`
    and `c_n_in` (the previous layer's), its `h_n` and `c_n` are their
    memory, the other layers' slices kept. A GRU takes `biases`, b_hh per
    direction, for the b_hn its cell adds inside the reset product. Blocks of `units` hidden units each, W_hh kept in
    shared memory with `weights_on_chip` (f32 rows on chip with `tf32`: on
    tensor cores, rounded to TF32). One cooperative grid runs every
    step, a grid barrier between them; with `per_step` the kernel runs one
    step and the plan launches it T times (`rudnn.launch ... repeat`), each
    launch loading its rows on chip once (with `weights_on_chip`) for all
    passes of batch entries.
    With `saved` (`rudnn.lstm`'s `hidden`, `cells` and, optionally, `gates`;
    `rudnn.gru`'s `hidden` and `gates`), the layer writes its slices of
    them; `saved_in` are the previous layer's, whose memory they then are.

    ```mlir
    %out, %h_n, %c_n = rudnn.rnn_recurrence %gates, %state
        weights(%w_hh) layer 0 units 1 weights_on_chip true : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$gates,
    AnyRankedTensor:$state,
    Variadic<AnyRankedTensor>:$weights,
    Variadic<AnyRankedTensor>:$biases,
    Optional<AnyRankedTensor>:$lengths,
    Optional<AnyRankedTensor>:$h_n_in,
    Optional<AnyRankedTensor>:$c_n_in,
    Variadic<AnyRankedTensor>:$saved_in,
    I64Attr:$layer,
    I64Attr:$units,
    BoolAttr:$weights_on_chip,
    UnitAttr:$per_step,
    UnitAttr:$batch_first,
    Rudnn_CellAttr:$cell,
    UnitAttr:$tf32);
  let results = (outs AnyRankedTensor:$out, AnyRankedTensor:$h_n,
                      AnyRankedTensor:$c_n, Variadic<AnyRankedTensor>:$saved);
  let assemblyFormat = [{
    $gates `,` $state `weights` `(` $weights `)` (`biases` `(` $biases^ `)`)?
    (`lengths` $lengths^)? (`h_n` $h_n_in^)? (`c_n` $c_n_in^)?
    (`saved` `(` $saved_in^ `)`)? `layer` $layer `units` $units
    `weights_on_chip` $weights_on_chip (`per_step` $per_step^)?
    (`batch_first` $batch_first^)? (`cell` $cell^)? (`tf32` $tf32^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

include "dialects/IR/lstm/RudnnLstmBackwardOps.td"

#endif // RUDNN_LSTM_OPS_TD
