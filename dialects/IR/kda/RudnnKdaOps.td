//===- RudnnKdaOps.td - Kimi Delta Attention operator ops --*- tablegen -*-===//
//
// The KDA operators users write: the chunked forward and backward, their
// packed-sequence forms, and the decoding step over a state pool. Value
// semantics on builtin tensors; every shape, dtype and attribute rule is
// checked by the verifiers (RudnnKdaOps.cpp), which name the operand at
// fault and the value expected.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_KDA_OPS_TD
#define RUDNN_KDA_OPS_TD

include "dialects/IR/RudnnBase.td"
include "dialects/IR/RudnnInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Element types and ranks are checked by the verifiers, whose diagnostics name
// the operand; ODS only requires ranked tensors (AnyRankedTensor).

// A chunked KDA operator: the family specializes and decomposes it
// (KdaInterfaces.cpp). `contract` names its contract's function, which also
// takes the query heads a key head serves; each op verifies itself.
class Rudnn_KdaOperatorOp<string mnemonic, string contract,
                          list<Trait> traits>
    : Rudnn_FamilyOperatorOp<mnemonic, "Kda", "::rudnn::" # contract # "()",
                             traits> {
  let familyVerifies = 0;
  let familyDefinitions = [{
    const ::rudnn::OperatorContract &$cppClass::getOperatorContract() {
      return ::rudnn::}] # contract # [{(getGroupedHeads());
    }
  }];
}

def Rudnn_KdaOp : Rudnn_KdaOperatorOp<"kda", "kdaContract", [
    Pure, AttrSizedOperandSegments, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                                    ["getContractResult",
                                     "getOperatorContract", "getCallContract",
                                     "buildFromContract"]>]> {
  let summary = "Kimi Delta Attention forward (chunked gated delta rule)";
  let description = [{
    For each batch `b` and head `h`, with state `S` (K×V, fp32) starting at
    `initial_state` (or zero), for `t = 0 … T-1`:

    ```
    S   ← diag(exp(g_t)) · S
    u_t = beta_t · (v_t − Sᵀ k_t)
    S   ← S + k_t · u_tᵀ
    o_t = Sᵀ (scale · q_t)
    ```

    Operands: `q`, `k`, `g` `[B, T, H, K]`, `v` `[B, T, H, V]`, `beta`
    `[B, T, H]` and the optional `initial_state` `[B, H, K, V]` (f32). `q`,
    `k` and `v` share one element type among f32, f16 and bf16; `g` and `beta`
    may be any of them (f32 is recommended for `g`). K and V are static and
    at most 256; B, T and H may be dynamic.

    Results: `output` `[B, T, H, V]` in `v`'s element type, `final_state`
    `[B, H, K, V]` f32 and, with `save_boundaries`, `boundaries`
    `[ceil(T / chunk), B, H, K, V]` in `q`'s element type: the state before
    token `c · chunk`, rounded as every product by it rounds it (a backward
    given them takes them as tensor-core operands); with `save_tiles` too,
    `tiles` `[ceil(T / chunk), B, H, W]` f32: what the backward would
    otherwise compute again of each chunk (its decay, pairwise matrix, its
    inverse, W and the updates U), in a layout private to the kernels. W is
    fixed by K, V, the chunk and `q`'s type (the verifier names it; 20608 at
    K = V = 128, chunk 64, bf16: 904 + 384 bytes per token and head).

    Attributes: `scale` (default K^-0.5), `chunk` (16, 32 or 64; chosen
    by `rudnn-specialize` when absent; `save_tiles` needs it given),
    `save_boundaries`, `save_tiles` (only with `save_boundaries`), `wgmma`
    (whether the state walk keeps the state in wgmma accumulators: 16-bit
    inputs on sm_90a; chosen by `rudnn-specialize` when absent), and
    `grouped_heads` (GVA): `q` and `k` then have Q heads `[B, T, Q, K]`,
    each shared by H / Q value heads (H a multiple of Q), while `v`, `g`,
    `beta`, the output and the states keep H; the backward sums the shared
    heads' gradients over their groups in a fixed order.

    Inputs as models produce them, transformed inside (as
    flash-linear-attention's `chunk_kda` does): `qk_l2norm` divides each
    row of q and k by its L2 norm (`sqrt(Σ x² + 1e-6)`); `beta_logits` takes
    `beta` as logits, `sigmoid(beta)` used; with `a_log` `[H]` f32 (and the
    optional `dt_bias` `[H, K]` f32) `g` holds the raw gate projections and
    the log-decay is Kimi Linear's `−exp(a_log[h]) · softplus(g + dt_bias)`,
    or with `gate_lower_bound` (negative)
    `gate_lower_bound · sigmoid(exp(a_log[h]) · (g + dt_bias))`.

    ```mlir
    %o, %s = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0 chunk 64
        : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
           tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x64x64xf32>)
        -> (tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    AnyRankedTensor:$g,
    AnyRankedTensor:$beta,
    Optional<AnyRankedTensor>:$initial_state,
    Optional<AnyRankedTensor>:$a_log,
    Optional<AnyRankedTensor>:$dt_bias,
    OptionalAttr<I64Attr>:$chunk,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$save_boundaries,
    UnitAttr:$save_tiles,
    UnitAttr:$grouped_heads,
    UnitAttr:$qk_l2norm,
    UnitAttr:$beta_logits,
    OptionalAttr<F32Attr>:$gate_lower_bound,
    OptionalAttr<BoolAttr>:$wgmma);
  let results = (outs
    AnyRankedTensor:$output,
    AnyRankedTensor:$final_state,
    Variadic<AnyRankedTensor>:$saved);

  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g `,` $beta (`initial_state` $initial_state^)?
    (`a_log` $a_log^)? (`dt_bias` $dt_bias^)?
    (`chunk` $chunk^)? (`scale` $scale^)? (`save_boundaries` $save_boundaries^)?
    (`save_tiles` $save_tiles^)? (`grouped_heads` $grouped_heads^)?
    (`qk_l2norm` $qk_l2norm^)? (`beta_logits` $beta_logits^)?
    (`gate_lower_bound` $gate_lower_bound^)? (`wgmma` $wgmma^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    // Derives the result types from `q` and `v`; chunk and scale stay open
    // unless `save_tiles_chunk` (non-zero: save the tiles) fixes the chunk.
    OpBuilder<(ins "Value":$q, "Value":$k, "Value":$v, "Value":$g,
                   "Value":$beta, CArg<"Value", "{}">:$initial_state,
                   CArg<"bool", "false">:$save_boundaries,
                   CArg<"int64_t", "0">:$save_tiles_chunk)>
  ];
  let extraClassDeclaration = [{
    /// What the forward saves for its backward, in this order, each null
    /// unless asked for.
    ::mlir::Value getBoundaries() {
      return getSaved().empty() ? ::mlir::Value() : getSaved().front();
    }
    ::mlir::Value getTiles() {
      return getSaved().size() < 2 ? ::mlir::Value() : getSaved()[1];
    }
  }];
  let hasVerifier = 1;
}

def Rudnn_KdaBackwardOp : Rudnn_KdaOperatorOp<"kda_backward", "kdaBackwardContract", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getContractResult",
                               "getCallContract", "buildFromContract"]>]> {
  let summary = "Kimi Delta Attention backward: the six input gradients";
  let description = [{
    Gradients of `⟨d_output, output⟩ + ⟨d_final_state, final_state⟩` with
    respect to `q`, `k`, `v`, `g`, `beta` and `initial_state`, where `output`
    and `final_state` are the results of `rudnn.kda` on the same inputs and
    attributes.

    Operands: the forward's inputs (`q`, `k`, `v`, `g`, `beta`, optional
    `initial_state`); optionally the forward's saved `boundaries`
    `[ceil(T / chunk), B, H, K, V]` (which then require an explicit `chunk`,
    the forward's; without them the boundary states are recomputed) and,
    with them, its saved `tiles` `[ceil(T / chunk), B, H, W]` f32 (then
    nothing of the forward is computed again: the backward is the reverse
    walk and the chunk-parallel gradients alone); `d_output` `[B, T, H, V]` in `v`'s element type and the optional
    `d_final_state` `[B, H, K, V]` f32.

    Results: `dq`, `dk` (`q`'s type), `dv` (`v`'s type), `dg` `[B, T, H, K]`
    f32, `dbeta` (`beta`'s type) and, exactly when `initial_state` is given,
    `d_initial_state` `[B, H, K, V]` f32; with the forward's input
    transforms (`qk_l2norm`, `beta_logits`, `a_log`, `dt_bias`) the
    gradients are of its raw inputs, and exactly when `a_log` (`dt_bias`) is
    given `d_a_log` `[H]` (`d_dt_bias` `[H, K]`) f32, summed in a fixed
    order.

    `wgmma`: whether the reverse walk keeps the state's gradient in wgmma
    accumulators (16-bit inputs on sm_90a; chosen by `rudnn-specialize`
    when absent).

    ```mlir
    %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta
        d_output %do chunk 64
        : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
           tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?x64xf32>)
        -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
            tensor<?x?x?x64xf32>, tensor<?x?x?xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    AnyRankedTensor:$g,
    AnyRankedTensor:$beta,
    Optional<AnyRankedTensor>:$initial_state,
    Optional<AnyRankedTensor>:$boundaries,
    Optional<AnyRankedTensor>:$tiles,
    AnyRankedTensor:$d_output,
    Optional<AnyRankedTensor>:$d_final_state,
    Optional<AnyRankedTensor>:$a_log,
    Optional<AnyRankedTensor>:$dt_bias,
    OptionalAttr<I64Attr>:$chunk,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$grouped_heads,
    UnitAttr:$qk_l2norm,
    UnitAttr:$beta_logits,
    OptionalAttr<F32Attr>:$gate_lower_bound,
    OptionalAttr<BoolAttr>:$wgmma);
  let results = (outs
    AnyRankedTensor:$dq,
    AnyRankedTensor:$dk,
    AnyRankedTensor:$dv,
    AnyRankedTensor:$dg,
    AnyRankedTensor:$dbeta,
    Variadic<AnyRankedTensor>:$optional_gradients);

  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g `,` $beta (`initial_state` $initial_state^)?
    (`boundaries` $boundaries^)? (`tiles` $tiles^)? `d_output` $d_output
    (`d_final_state` $d_final_state^)? (`a_log` $a_log^)?
    (`dt_bias` $dt_bias^)? (`chunk` $chunk^)? (`scale` $scale^)?
    (`grouped_heads` $grouped_heads^)?
    (`qk_l2norm` $qk_l2norm^)? (`beta_logits` $beta_logits^)?
    (`gate_lower_bound` $gate_lower_bound^)? (`wgmma` $wgmma^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The gradients returned exactly when their input is given, in this
    /// order: d_initial_state, d_a_log, d_dt_bias (null when absent).
    ::mlir::Value getDInitialState() { return optionalGradient(0); }
    ::mlir::Value getDALog() { return optionalGradient(1); }
    ::mlir::Value getDDtBias() { return optionalGradient(2); }
    ::mlir::Value optionalGradient(unsigned which) {
      const bool present[] = {static_cast<bool>(getInitialState()),
                              static_cast<bool>(getALog()),
                              static_cast<bool>(getDtBias())};
      if (!present[which])
        return {};
      unsigned index = 0;
      for (unsigned i = 0; i < which; ++i)
        index += present[i];
      auto gradients = getOptionalGradients();
      return index < gradients.size() ? gradients[index] : ::mlir::Value();
    }
  }];
  let hasVerifier = 1;
}

def Rudnn_KdaVarlenOp : Rudnn_KdaOperatorOp<"kda_varlen", "kdaVarlenContract", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getContractResult",
                               "getCallContract", "buildFromContract"]>]> {
  let summary = "Kimi Delta Attention forward over packed sequences";
  let description = [{
    `rudnn.kda` for S sequences of their own lengths packed along T, as
    flash-linear-attention's `chunk_kda(..., cu_seqlens=...)` takes them:
    `q`, `k`, `g` `[1, T, H, K]`, `v` `[1, T, H, V]` and `beta` `[1, T, H]`
    hold every sequence's tokens in turn, sequence n the tokens
    `cu_seqlens[n]` to `cu_seqlens[n + 1]` (`[S + 1]` i32, from 0 to T, never
    decreasing). Each sequence starts from its own `initial_state` `[S, H,
    K, V]` f32 (or zero) and ends in its own `final_state` `[S, H, K, V]`;
    chunks never straddle two sequences. Changing the lengths never
    recompiles, and the kernels never read the offsets on the host.

    Attributes: `scale` (default K^-0.5), `chunk` (16, 32 or 64, chosen
    by `rudnn-specialize` when absent), and as for `rudnn.kda`
    `save_boundaries`, `save_tiles` (with `chunk`) and `wgmma`. Saved per chunk slot:
    `boundaries` `[ceil(T / chunk) + S + 1, 1, H, K, V]`, sequence n's chunk
    j in slot `Σ_{i<n} ceil(len_i / chunk) + j` (its state before token
    `cu_seqlens[n] + j · chunk`; the slots past the last are not written),
    and `tiles` `[ceil(T / chunk) + S + 1, 1, H, W]` likewise.

    ```mlir
    %o, %s = rudnn.kda_varlen %q, %k, %v, %g, %beta cu_seqlens %cu
        initial_state %s0
        : (tensor<1x?x?x64xf32>, tensor<1x?x?x64xf32>, tensor<1x?x?x64xf32>,
           tensor<1x?x?x64xf32>, tensor<1x?x?xf32>, tensor<?xi32>,
           tensor<?x?x64x64xf32>)
        -> (tensor<1x?x?x64xf32>, tensor<?x?x64x64xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    AnyRankedTensor:$g,
    AnyRankedTensor:$beta,
    AnyRankedTensor:$cu_seqlens,
    Optional<AnyRankedTensor>:$initial_state,
    Optional<AnyRankedTensor>:$a_log,
    Optional<AnyRankedTensor>:$dt_bias,
    OptionalAttr<I64Attr>:$chunk,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$save_boundaries,
    UnitAttr:$save_tiles,
    UnitAttr:$grouped_heads,
    UnitAttr:$qk_l2norm,
    UnitAttr:$beta_logits,
    OptionalAttr<F32Attr>:$gate_lower_bound,
    OptionalAttr<BoolAttr>:$wgmma);
  let results = (outs
    AnyRankedTensor:$output,
    AnyRankedTensor:$final_state,
    Variadic<AnyRankedTensor>:$saved);

  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g `,` $beta `cu_seqlens` $cu_seqlens
    (`initial_state` $initial_state^)? (`a_log` $a_log^)?
    (`dt_bias` $dt_bias^)? (`chunk` $chunk^)? (`scale` $scale^)?
    (`save_boundaries` $save_boundaries^)? (`save_tiles` $save_tiles^)?
    (`grouped_heads` $grouped_heads^)?
    (`qk_l2norm` $qk_l2norm^)? (`beta_logits` $beta_logits^)?
    (`gate_lower_bound` $gate_lower_bound^)? (`wgmma` $wgmma^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// What the forward saves for its backward, as rudnn.kda's.
    ::mlir::Value getBoundaries() {
      return getSaved().empty() ? ::mlir::Value() : getSaved().front();
    }
    ::mlir::Value getTiles() {
      return getSaved().size() < 2 ? ::mlir::Value() : getSaved()[1];
    }
  }];
  let hasVerifier = 1;
}

def Rudnn_KdaVarlenBackwardOp : Rudnn_KdaOperatorOp<"kda_varlen_backward", "kdaVarlenBackwardContract", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getContractResult",
                               "getCallContract", "buildFromContract"]>]> {
  let summary = "Kimi Delta Attention backward over packed sequences";
  let description = [{
    `rudnn.kda_backward` for `rudnn.kda_varlen`: the forward's operands
    (with `cu_seqlens` and the optional `initial_state` `[S, H, K, V]`),
    `d_output` `[1, T, H, V]` and the optional `d_final_state`
    `[S, H, K, V]` f32; results `dq`, `dk`, `dv`, `dg`, `dbeta` and, exactly
    when `initial_state` is given, `d_initial_state` `[S, H, K, V]` f32.
    Given the forward's saved `boundaries` (and `tiles`), with its `chunk`,
    it reads them instead of computing them again.

    ```mlir
    %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_varlen_backward %q, %k, %v, %g,
        %beta cu_seqlens %cu d_output %do chunk 64
        : (tensor<1x?x?x64xf32>, tensor<1x?x?x64xf32>, tensor<1x?x?x64xf32>,
           tensor<1x?x?x64xf32>, tensor<1x?x?xf32>, tensor<?xi32>,
           tensor<1x?x?x64xf32>)
        -> (tensor<1x?x?x64xf32>, tensor<1x?x?x64xf32>, tensor<1x?x?x64xf32>,
            tensor<1x?x?x64xf32>, tensor<1x?x?xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    AnyRankedTensor:$g,
    AnyRankedTensor:$beta,
    AnyRankedTensor:$cu_seqlens,
    Optional<AnyRankedTensor>:$initial_state,
    Optional<AnyRankedTensor>:$boundaries,
    Optional<AnyRankedTensor>:$tiles,
    AnyRankedTensor:$d_output,
    Optional<AnyRankedTensor>:$d_final_state,
    Optional<AnyRankedTensor>:$a_log,
    Optional<AnyRankedTensor>:$dt_bias,
    OptionalAttr<I64Attr>:$chunk,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$grouped_heads,
    UnitAttr:$qk_l2norm,
    UnitAttr:$beta_logits,
    OptionalAttr<F32Attr>:$gate_lower_bound,
    OptionalAttr<BoolAttr>:$wgmma);
  let results = (outs
    AnyRankedTensor:$dq,
    AnyRankedTensor:$dk,
    AnyRankedTensor:$dv,
    AnyRankedTensor:$dg,
    AnyRankedTensor:$dbeta,
    Variadic<AnyRankedTensor>:$optional_gradients);

  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g `,` $beta `cu_seqlens` $cu_seqlens
    (`initial_state` $initial_state^)? (`boundaries` $boundaries^)?
    (`tiles` $tiles^)? `d_output` $d_output
    (`d_final_state` $d_final_state^)? (`a_log` $a_log^)?
    (`dt_bias` $dt_bias^)? (`chunk` $chunk^)? (`scale` $scale^)?
    (`grouped_heads` $grouped_heads^)?
    (`qk_l2norm` $qk_l2norm^)? (`beta_logits` $beta_logits^)?
    (`gate_lower_bound` $gate_lower_bound^)? (`wgmma` $wgmma^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The gradients returned exactly when their input is given, in this
    /// order: d_initial_state, d_a_log, d_dt_bias (null when absent).
    ::mlir::Value getDInitialState() { return optionalGradient(0); }
    ::mlir::Value getDALog() { return optionalGradient(1); }
    ::mlir::Value getDDtBias() { return optionalGradient(2); }
    ::mlir::Value optionalGradient(unsigned which) {
      const bool present[] = {static_cast<bool>(getInitialState()),
                              static_cast<bool>(getALog()),
                              static_cast<bool>(getDtBias())};
      if (!present[which])
        return {};
      unsigned index = 0;
      for (unsigned i = 0; i < which; ++i)
        index += present[i];
      auto gradients = getOptionalGradients();
      return index < gradients.size() ? gradients[index] : ::mlir::Value();
    }
  }];
  let hasVerifier = 1;
}

def Rudnn_KdaDecodeOp : Rudnn_Op<"kda_decode", [
    Pure, AttrSizedOperandSegments, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                                    ["getOperatorContract",
                                     "getCallContract"]>]> {
  let summary = "KDA decoding step over a pool of per-request states";
  let description = [{
    One decoding step of `rudnn.kda` as serving engines run it, each
    request's state kept in a pool: entry b's T new tokens (T = 1, or a few
    for speculative decoding) start from `state_pool[slots[b]]` and leave
    their final state there, in place. `state_pool` `[P, H, K, V]` is f32,
    f16 or bf16 (the recurrence runs in f32; the state is rounded to the
    pool's type once a step); `slots` `[B]` i32 on the device.

    Results: `output` `[B, T, H, V]` in `v`'s type, `state_pool_out` (the
    pool's memory, updated) and `status` `[B]` i32: 0 done, 1 refused. An
    entry whose slot lies outside the pool or is shared with another entry
    of the call is refused: its state untouched, its output 0. Nothing reads
    the slots on the host. `scale` defaults to K^-0.5; `grouped_heads` and
    the input transforms (`qk_l2norm`, `beta_logits`, the gate from `a_log`,
    `dt_bias` and `gate_lower_bound`) as for `rudnn.kda`.

    ```mlir
    %o, %pool2, %status = rudnn.kda_decode %q, %k, %v, %g, %beta
        pool(%pool, %slots)
        : (tensor<?x1x?x128xbf16>, tensor<?x1x?x128xbf16>,
           tensor<?x1x?x128xbf16>, tensor<?x1x?x128xf32>, tensor<?x1x?xbf16>,
           tensor<?x?x128x128xbf16>, tensor<?xi32>)
        -> (tensor<?x1x?x128xbf16>, tensor<?x?x128x128xbf16>, tensor<?xi32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    AnyRankedTensor:$g,
    AnyRankedTensor:$beta,
    AnyRankedTensor:$state_pool,
    AnyRankedTensor:$slots,
    Optional<AnyRankedTensor>:$a_log,
    Optional<AnyRankedTensor>:$dt_bias,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$grouped_heads,
    UnitAttr:$qk_l2norm,
    UnitAttr:$beta_logits,
    OptionalAttr<F32Attr>:$gate_lower_bound);
  let results = (outs AnyRankedTensor:$output,
                      AnyRankedTensor:$state_pool_out,
                      AnyRankedTensor:$status);

  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g `,` $beta `pool` `(` $state_pool `,` $slots `)`
    (`a_log` $a_log^)? (`dt_bias` $dt_bias^)? (`scale` $scale^)?
    (`grouped_heads` $grouped_heads^)? (`qk_l2norm` $qk_l2norm^)?
    (`beta_logits` $beta_logits^)? (`gate_lower_bound` $gate_lower_bound^)?
    attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

// The primitives a KDA operator decomposes into, and its input transforms.
include "dialects/IR/kda/RudnnKdaChunkOps.td"
include "dialects/IR/kda/RudnnKdaInputOps.td"

#endif // RUDNN_KDA_OPS_TD
