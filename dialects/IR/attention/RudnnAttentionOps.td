//===- RudnnAttentionOps.td - Tiled attention --------------*- tablegen -*-===//
//
// The attention operator and the tiled-attention primitives it decomposes
// into. The primitives state their results as whole tensors (the scores of
// every query against every key); their kernel computes them a query tile
// against a key tile at a time and never stores the scores: `rudnn-plan`
// outlines the five into one kernel, the finalize its last.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_ATTENTION_OPS_TD
#define RUDNN_ATTENTION_OPS_TD

include "dialects/IR/RudnnBase.td"
include "dialects/IR/RudnnInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Rudnn_AttentionOp : Rudnn_FamilyOperatorOp<"attention", "Attention",
    "::rudnn::attentionContract()", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface>]> {
  let summary = "Exact attention, tile by tile with an online softmax";
  let description = [{
    For each batch entry `b`, query head `h` (reading key and value head
    `h / (H / G)`) and query `i`, with `s_ij = scale · q_i · k_j` (then
    `softcap · tanh(s_ij / softcap)` with a `softcap`):

    ```
    o_i   = Σ_j∈allowed(i) exp(s_ij − lse_i) · v_j
    lse_i = log Σ_j∈allowed(i) exp(s_ij)
    ```

    Key `j` is allowed for query `i` when `j < L_b` (the entry's
    `key_lengths`, else S), `key_mask[b, j]` is true (when given), and, with
    `off = L_b − T` (bottom-right aligned), `j ≤ i + off` when `causal`,
    `i + off − left ≤ j ≤ i + off + right` with a `window (left, right)` (−1:
    unbounded on that side). A query with no allowed key gives `o_i = 0` and
    `lse_i = −inf`.

    Operands: `q` `[B, T, H, D]`, `k` `[B, S, G, D]`, `v` `[B, S, G, E]`
    (one element type among f32, f16 and bf16; H a multiple of G: MHA, GQA,
    MQA), the optional `key_lengths` `[B]` i32 and `key_mask` `[B, S]` i1,
    and the optional `alibi_slopes` `[B, H]` f32 (ALiBi, as FlashAttention
    takes it: an allowed score gains `−alibi_slopes[b, h] · |i + L_b − T −
    j|` after the softcap; the packed forms take `[H]`).
    D and E are static, 1 to 256; the rest may be dynamic.

    Results: `o` `[B, T, H, E]` in `q`'s type, `lse` `[B, H, T]` f32.

    Attributes: `scale` (default D^-0.5), `softcap`, `causal`, `window`,
    and the kernel's tiles, which `rudnn-specialize` chooses from D, E, the
    type and the target when absent: `block_q` (query rows of a block: 64
    or 128) and `block_k` (keys per tile: 16, 32 or 64). `wgmma` asks for
    the Hopper kernel (16-bit inputs; a TMA producer and consumer
    warpgroups on wgmma), whose `block_q` is 128 or 192 (three consumer
    warpgroups, D and E to 64), `block_k` follows D and E, and `blocks` is
    the persistent grid (one block an SM, each taking query tiles in turn;
    the target's SM count when absent).

    `decode_split (n, blocks)`: a call of at most `n` queries (a decoding
    step's shape, which leaves most SMs idle at one block a query tile)
    splits each row's keys into parts taken by different blocks, as many as
    bring the grid near `blocks` (a part at least 256 keys), and combines
    the parts by their log-sum-exp. `rudnn-specialize` sets `(16, 4 × the
    blocks the device holds at once)` where T may be that small; `n` is 1
    to 64, 0 turns it off.

    ```mlir
    %o, %lse = rudnn.attention %q, %k, %v key_lengths %lengths causal
        : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
           tensor<?x?x?x64xbf16>, tensor<?xi32>)
        -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    Optional<AnyRankedTensor>:$key_lengths,
    Optional<AnyRankedTensor>:$key_mask,
    Optional<AnyRankedTensor>:$alibi_slopes,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<I64Attr>:$block_q,
    OptionalAttr<I64Attr>:$block_k,
    OptionalAttr<I64Attr>:$blocks,
    UnitAttr:$wgmma,
    OptionalAttr<I64Attr>:$decode_queries,
    OptionalAttr<I64Attr>:$decode_blocks);
  let results = (outs AnyRankedTensor:$o, AnyRankedTensor:$lse);

  let assemblyFormat = [{
    $q `,` $k `,` $v (`key_lengths` $key_lengths^)? (`key_mask` $key_mask^)?
    (`alibi` $alibi_slopes^)? (`causal` $causal^)?
    (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` $softcap^)? (`scale` $scale^)?
    (`block_q` $block_q^)? (`block_k` $block_k^)? (`blocks` $blocks^)?
    (`wgmma` $wgmma^)?
    (`decode_split` ` ` `(` $decode_queries^ `,` $decode_blocks `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_AttentionVarlenOp : Rudnn_FamilyOperatorOp<"attention_varlen", "Attention",
    "::rudnn::attentionVarlenContract()", [
    Pure, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface>]> {
  let summary = "Attention over packed variable-length batches";
  let description = [{
    `rudnn.attention` for B sequences of their own lengths packed along
    one dim, as FlashAttention's `flash_attn_varlen_func` takes them: q
    `[T, H, D]`, k `[S, G, D]`, v `[S, G, E]` hold every entry's rows in
    turn, entry b's queries the rows `cu_seqlens_q[b]` to
    `cu_seqlens_q[b + 1]` and its keys likewise (`[B + 1]` i32 each, from
    0 to the total). Entry b's queries attend to its keys alone, under the
    same `causal`, `window`, `softcap` and `scale`, aligned bottom-right to
    the entry's own lengths; an entry with no keys gives zeros and −inf.

    Results: `o` `[T, H, E]` in `q`'s type, `lse` `[H, T]` f32. Changing
    the lengths never recompiles, and the kernels never read the offsets on
    the host.

    ```mlir
    %o, %lse = rudnn.attention_varlen %q, %k, %v
        cu_seqlens(%cu_q, %cu_k) causal
        : (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>,
           tensor<?xi32>, tensor<?xi32>)
        -> (tensor<?x?x64xbf16>, tensor<?x?xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    AnyRankedTensor:$cu_seqlens_q,
    AnyRankedTensor:$cu_seqlens_k,
    Optional<AnyRankedTensor>:$alibi_slopes,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<I64Attr>:$block_q,
    OptionalAttr<I64Attr>:$block_k,
    OptionalAttr<I64Attr>:$blocks,
    UnitAttr:$wgmma);
  let results = (outs AnyRankedTensor:$o, AnyRankedTensor:$lse);

  let assemblyFormat = [{
    $q `,` $k `,` $v `cu_seqlens` `(` $cu_seqlens_q `,` $cu_seqlens_k `)`
    (`alibi` $alibi_slopes^)? (`causal` $causal^)?
    (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` $softcap^)? (`scale` $scale^)?
    (`block_q` $block_q^)? (`block_k` $block_k^)? (`blocks` $blocks^)?
    (`wgmma` $wgmma^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Rudnn_AttentionPrimitive<string mnemonic, list<Trait> traits = []>
    : Rudnn_Op<mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

def Rudnn_AttentionScoresOp : Rudnn_AttentionPrimitive<"attention_scores"> {
  let summary = "Scaled (and soft-capped) scores of queries against keys";
  let description = [{
    `scores[b, h, i, j] = scale · q[b, i, h] · k[b, j, h / (H / G)]`, then
    `softcap · tanh(scores / softcap)` with a `softcap`. Packed batches
    (q `[T, H, D]`, k `[S, G, D]`) give `scores[h, i, j]` [H, T, S] over
    every packed query and key, the mask keeping each entry's block. Its
    kernel forms it a `block_q` x `block_k` tile at a time from shared
    tiles of q and k: on wgmma (the Hopper kernel) with `wgmma`, on a
    persistent grid of `blocks` when given. With `split_keys n`, each row's
    keys are split into parts taken by different blocks, as many as bring
    the grid near `n` blocks: the chain's finalize writes the parts' partial
    results, which a `rudnn.attention_combine` merges.

    ```mlir
    %s = rudnn.attention_scores %q, %k scale 1.250000e-01 block_q 64
        block_k 64 : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
        -> tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$k, F32Attr:$scale,
                       OptionalAttr<F32Attr>:$softcap, I64Attr:$block_q,
                       I64Attr:$block_k, OptionalAttr<I64Attr>:$blocks,
                       UnitAttr:$wgmma, OptionalAttr<I64Attr>:$split_keys);
  let results = (outs AnyRankedTensor:$scores);
  let assemblyFormat = [{
    $q `,` $k `scale` $scale (`softcap` $softcap^)? `block_q` $block_q
    `block_k` $block_k (`blocks` $blocks^)? (`wgmma` $wgmma^)?
    (`split_keys` $split_keys^)? attr-dict `:` type($q) `,` type($k) `->`
    type($scores)
  }];
}

def Rudnn_AttentionMaskOp : Rudnn_AttentionPrimitive<"attention_mask", [
    AttrSizedOperandSegments]> {
  let summary = "Scores with the disallowed keys at −inf";
  let description = [{
    `masked[b, h, i, j] = scores[b, h, i, j]` where key j is allowed for
    query i (within `key_lengths[b]`, true in `key_mask[b, j]`, and the
    `causal` and `window` bounds, bottom-right aligned as `rudnn.attention`
    states them), −inf elsewhere. Packed scores [H, T, S] take the
    entries' offsets (`cu_seqlens`) instead of lengths and mask: query i
    and key j of one entry only, bounds aligned to the entry's lengths. Its kernel skips the key tiles no query of
    its block may see and masks element by element only the tiles the
    bounds cross.

    ```mlir
    %m = rudnn.attention_mask %s key_lengths %lengths causal
        : tensor<?x?x?x?xf32>, tensor<?xi32> -> tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$scores,
                       Optional<AnyRankedTensor>:$key_lengths,
                       Optional<AnyRankedTensor>:$key_mask,
                       Optional<AnyRankedTensor>:$cu_seqlens_q,
                       Optional<AnyRankedTensor>:$cu_seqlens_k,
                       Optional<AnyRankedTensor>:$alibi_slopes,
                       UnitAttr:$causal, OptionalAttr<I64Attr>:$window_left,
                       OptionalAttr<I64Attr>:$window_right);
  let results = (outs AnyRankedTensor:$masked);
  let assemblyFormat = [{
    $scores (`key_lengths` $key_lengths^)? (`key_mask` $key_mask^)?
    (`cu_seqlens` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `)`)?
    (`alibi` $alibi_slopes^)?
    (`causal` $causal^)? (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    attr-dict `:` type(operands) `->` type($masked)
  }];
}

def Rudnn_AttentionSoftmaxOp : Rudnn_AttentionPrimitive<"attention_softmax"> {
  let summary = "Row maxima, exponentials and row sums, online";
  let description = [{
    Per row: `row_max = max_j masked[.., j]`, `p[.., j] = exp(masked[.., j] −
    row_max)` and `row_sum = Σ_j p[.., j]` (a row of −inf only: row_max
    −inf, p and row_sum 0). Its kernel updates them a key tile at a time
    (the online softmax: a new maximum rescales what was summed), the
    device library's building block shared with the K/V-cache and backward
    kernels.

    ```mlir
    %p, %max, %sum = rudnn.attention_softmax %m
        : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>, tensor<?x?x?xf32>,
          tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$masked);
  let results = (outs AnyRankedTensor:$p, AnyRankedTensor:$row_max,
                      AnyRankedTensor:$row_sum);
  let assemblyFormat = [{
    $masked attr-dict `:` type($masked) `->` type(results)
  }];
}

def Rudnn_AttentionAccumulateOp
    : Rudnn_AttentionPrimitive<"attention_accumulate"> {
  let summary = "Probabilities times values, unnormalised";
  let description = [{
    `acc[b, h, i, e] = Σ_j p[b, h, i, j] · v[b, j, h / (H / G), e]`. Its
    kernel adds each key tile's product into accumulators the online
    softmax rescales, the probabilities rounded to the input type for the
    tensor cores.

    ```mlir
    %acc = rudnn.attention_accumulate %p, %v
        : tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$p, AnyRankedTensor:$v);
  let results = (outs AnyRankedTensor:$acc);
  let assemblyFormat = [{
    $p `,` $v attr-dict `:` type($p) `,` type($v) `->` type($acc)
  }];
}

def Rudnn_AttentionFinalizeOp
    : Rudnn_AttentionPrimitive<"attention_finalize"> {
  let summary = "Normalised output and log-sum-exp";
  let description = [{
    `o[b, i, h, e] = acc[b, h, i, e] / row_sum[b, h, i]` and
    `lse[b, h, i] = row_max + log(row_sum)` (packed: o [T, H, E] and lse
    [H, T] from acc [H, T, E]); a row whose sum is 0 gives
    `o = 0` and `lse = −inf`. The last primitive of the attention kernel,
    which emits it. When the chain's scores split the keys (`split_keys`),
    the results are each part's: o `[B, H, T, P, E]` and lse `[B, H, T, P]`,
    both f32, for `rudnn.attention_combine`.

    ```mlir
    %o, %lse = rudnn.attention_finalize %acc, %max, %sum
        : tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
        -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$acc, AnyRankedTensor:$row_max,
                       AnyRankedTensor:$row_sum);
  let results = (outs AnyRankedTensor:$o, AnyRankedTensor:$lse);
  let assemblyFormat = [{
    $acc `,` $row_max `,` $row_sum attr-dict `:` type(operands) `->`
    type(results)
  }];
}

def Rudnn_AttentionCombineOp
    : Rudnn_AttentionPrimitive<"attention_combine"> {
  let summary = "The key parts' partial results merged by their log-sum-exp";
  let description = [{
    For each row (b, h, i) over its P parts (a part with no allowed key has
    lse −inf and o 0):

    ```
    lse = log Σ_p exp(lse_p),  o = Σ_p exp(lse_p − lse) · o_p
    ```

    o `[B, T, H, E]` in the inputs' type and lse `[B, H, T]`; a row whose
    parts are all empty gives 0 and −inf. Its kernel takes a warp a row.

    ```mlir
    %o, %lse = rudnn.attention_combine %o_parts, %lse_parts
        : tensor<?x?x?x?x64xf32>, tensor<?x?x?x?xf32>
        -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$o_parts, AnyRankedTensor:$lse_parts);
  let results = (outs AnyRankedTensor:$o, AnyRankedTensor:$lse);
  let assemblyFormat = [{
    $o_parts `,` $lse_parts attr-dict `:` type(operands) `->` type(results)
  }];
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

def Rudnn_AttentionBackwardOp : Rudnn_FamilyOperatorOp<"attention_backward", "AttentionBackward",
    "::rudnn::attentionBackwardContract()", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface>]> {
  let summary = "Gradients of attention with respect to q, k and v";
  let description = [{
    For `rudnn.attention`'s operands and attributes, its results `o` and
    `lse`, and `d_output` `[B, T, H, E]` (in `q`'s type): the gradients of
    `⟨d_output, o⟩`, with `P_ij = exp(s_ij − lse_i)` over the allowed keys,
    `dP_ij = d_output_i · v_j`, `D_i = Σ_e d_output_ie o_ie` and
    `dS_ij = P_ij (dP_ij − D_i)` (times the softcap's derivative
    `1 − tanh²(s_ij / softcap)` with one):

    ```
    dq_i = scale · Σ_j dS_ij k_j
    dk_j = scale · Σ_i dS_ij q_i     (summed over a key head's query heads)
    dv_j = Σ_i P_ij d_output_i       (likewise)
    ```

    Results `dq`, `dk`, `dv` in the layouts and type of `q`, `k`, `v`. A
    query with no allowed key (lse −inf) contributes nothing; a key no query
    sees gets zeros. `wgmma` and `block_rows` (chosen by `rudnn-specialize`)
    are the kernel and the keys of its blocks, which walk the query tiles in
    one pass over each key tile and add dQ to an f32 accumulator with
    atomics (the sum's order varies from run to run): without `wgmma`, the
    cp.async and mma.sync kernel, 128 keys a block for 16-bit inputs to
    D = E = 128 where its shared memory fits, else 64; with it, the Hopper
    kernel (TMA and wgmma; 16-bit inputs, head dims up to 256), 128 keys a
    block up to D = E = 128 and 64 past that. `deterministic` orders those
    additions: each query tile takes its key tiles' shares in ascending
    order (per-tile semaphores), on a cooperative persistent grid of
    `blocks` (the target's SM count when absent), so every run gives the
    same bits.

    ```mlir
    %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v
        output(%o, %lse) gradient %do causal
        : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
           tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?x64xf32>)
        -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    Optional<AnyRankedTensor>:$key_lengths,
    Optional<AnyRankedTensor>:$key_mask,
    Optional<AnyRankedTensor>:$alibi_slopes,
    AnyRankedTensor:$o,
    AnyRankedTensor:$lse,
    AnyRankedTensor:$d_output,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<I64Attr>:$block_rows,
    UnitAttr:$wgmma,
    UnitAttr:$deterministic,
    OptionalAttr<I64Attr>:$blocks);
  let results = (outs AnyRankedTensor:$dq, AnyRankedTensor:$dk,
                      AnyRankedTensor:$dv);

  let assemblyFormat = [{
    $q `,` $k `,` $v (`key_lengths` $key_lengths^)? (`key_mask` $key_mask^)?
    (`alibi` $alibi_slopes^)?
    `output` `(` $o `,` $lse `)` `gradient` $d_output
    (`causal` $causal^)?
    (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` $softcap^)? (`scale` $scale^)? (`block_rows` $block_rows^)?
    (`wgmma` $wgmma^)? (`deterministic` $deterministic^)? (`blocks` $blocks^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_AttentionVarlenBackwardOp : Rudnn_FamilyOperatorOp<"attention_varlen_backward", "AttentionBackward",
    "::rudnn::attentionVarlenBackwardContract()", [
    Pure, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface>]> {
  let summary = "Gradients of packed variable-length attention";
  let description = [{
    `rudnn.attention_backward` for `rudnn.attention_varlen`: its operands
    (q `[T, H, D]`, k `[S, G, D]`, v `[S, G, E]` and the entries' offsets
    `cu_seqlens_q`, `cu_seqlens_k` `[B + 1]` i32) and attributes, its
    results `o` `[T, H, E]` and `lse` `[H, T]`, and `d_output`
    `[T, H, E]`. Each entry's gradients come from its own queries and keys
    alone. Results `dq`, `dk`, `dv` in the layouts and type of `q`, `k`,
    `v` (computed as `rudnn.attention_backward`'s), and changing the offsets
    never recompiles.

    ```mlir
    %dq, %dk, %dv = rudnn.attention_varlen_backward %q, %k, %v
        cu_seqlens(%cu_q, %cu_k) output(%o, %lse) gradient %do causal
        : (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>,
           tensor<?xi32>, tensor<?xi32>, tensor<?x?x64xbf16>,
           tensor<?x?xf32>, tensor<?x?x64xbf16>)
        -> (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    AnyRankedTensor:$cu_seqlens_q,
    AnyRankedTensor:$cu_seqlens_k,
    Optional<AnyRankedTensor>:$alibi_slopes,
    AnyRankedTensor:$o,
    AnyRankedTensor:$lse,
    AnyRankedTensor:$d_output,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<I64Attr>:$block_rows,
    UnitAttr:$wgmma,
    UnitAttr:$deterministic,
    OptionalAttr<I64Attr>:$blocks);
  let results = (outs AnyRankedTensor:$dq, AnyRankedTensor:$dk,
                      AnyRankedTensor:$dv);

  let assemblyFormat = [{
    $q `,` $k `,` $v `cu_seqlens` `(` $cu_seqlens_q `,` $cu_seqlens_k `)`
    (`alibi` $alibi_slopes^)?
    `output` `(` $o `,` $lse `)` `gradient` $d_output
    (`causal` $causal^)?
    (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` $softcap^)? (`scale` $scale^)? (`block_rows` $block_rows^)?
    (`wgmma` $wgmma^)? (`deterministic` $deterministic^)? (`blocks` $blocks^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_AttentionRowTermsOp
    : Rudnn_AttentionPrimitive<"attention_row_terms"> {
  let summary = "The backward's row terms D_i = d_output_i · o_i";
  let description = [{
    `terms[b, h, i] = Σ_e d_output[b, i, h, e] · o[b, i, h, e]` in f32, the
    term each query's score gradients subtract (packed batches: `o` and
    `d_output` `[T, H, E]`, `terms` `[H, T]`). Its own kernel, a warp a
    row.

    ```mlir
    %terms = rudnn.attention_row_terms %o, %do
        : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$o, AnyRankedTensor:$d_output);
  let results = (outs AnyRankedTensor:$terms);
  let assemblyFormat = [{
    $o `,` $d_output attr-dict `:` type($o) `,` type($d_output) `->`
    type($terms)
  }];
}

class Rudnn_AttentionGradientPrimitive<string mnemonic>
    : Rudnn_AttentionPrimitive<mnemonic, [AttrSizedOperandSegments]> {
  let arguments = (ins
    AnyRankedTensor:$q, AnyRankedTensor:$k, AnyRankedTensor:$v,
    Optional<AnyRankedTensor>:$key_lengths,
    Optional<AnyRankedTensor>:$key_mask,
    Optional<AnyRankedTensor>:$cu_seqlens_q,
    Optional<AnyRankedTensor>:$cu_seqlens_k,
    Optional<AnyRankedTensor>:$alibi_slopes,
    AnyRankedTensor:$lse, AnyRankedTensor:$terms,
    AnyRankedTensor:$d_output,
    UnitAttr:$causal, OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right, OptionalAttr<F32Attr>:$softcap,
    F32Attr:$scale, OptionalAttr<I64Attr>:$block_rows, UnitAttr:$wgmma,
    UnitAttr:$deterministic, OptionalAttr<I64Attr>:$blocks);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`key_lengths` $key_lengths^)? (`key_mask` $key_mask^)?
    (`cu_seqlens` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `)`)?
    (`alibi` $alibi_slopes^)? `lse` $lse `terms` $terms `gradient` $d_output
    (`causal` $causal^)?
    (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` $softcap^)? `scale` $scale (`block_rows` $block_rows^)?
    (`wgmma` $wgmma^)? (`deterministic` $deterministic^)?
    (`blocks` $blocks^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Rudnn_AttentionGradientsOp
    : Rudnn_AttentionGradientPrimitive<"attention_gradients"> {
  let summary = "The attention backward's gradients in one pass over each key tile";
  let description = [{
    `dk`, `dv` (k's and v's layouts and type) and `dq_accum` (q's layout,
    f32: `dq` before rounding) as `rudnn.attention_backward` defines them,
    in one pass over each key tile: a block per `block_rows` keys of one
    key head walks the query tiles that see them, over each query head of
    its group, forms S and dP once, accumulates dK and dV in registers and
    adds each step's dS·K to `dq_accum` with atomic reductions. Two
    kernels: `wgmma`, FlashAttention-3's organisation on Hopper (16-bit
    inputs through TMA; `block_rows` 128 up to D = E = 128, 64 past that);
    else FlashAttention-2's on sm_80 (`block_rows` 128 for 16-bit inputs
    to D = E = 128 where its shared memory fits, else 64; past 256 columns
    of dK and dV together, S is formed twice, once for each). `dq_accum`
    starts at zero (the plan zeroes its workspace before each call);
    `rudnn.attention_dq_convert` rounds it. `deterministic`: a cooperative
    grid of `blocks` takes the key tiles in turn, and each query tile's
    additions come in ascending key tile order (semaphores in zeroed
    workspace).

    ```mlir
    %dk, %dv, %acc = rudnn.attention_gradients %q, %k, %v lse %lse
        terms %terms gradient %do causal scale 1.250000e-01 block_rows 128
        wgmma : (...) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
                    tensor<?x?x?x64xf32>)
    ```
  }];
  let results = (outs AnyRankedTensor:$dk, AnyRankedTensor:$dv,
                      AnyRankedTensor:$dq_accum);
}

def Rudnn_AttentionDqConvertOp
    : Rudnn_AttentionPrimitive<"attention_dq_convert"> {
  let summary = "dq rounded from its f32 accumulator";
  let description = [{
    `dq` (the accumulator's shape, q's type) from `dq_accum`, the f32 sum
    `rudnn.attention_gradients` adds to. Its own kernel, a warp a row.

    ```mlir
    %dq = rudnn.attention_dq_convert %acc
        : tensor<?x?x?x64xf32> -> tensor<?x?x?x64xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$dq_accum);
  let results = (outs AnyRankedTensor:$dq);
  let assemblyFormat = [{
    $dq_accum attr-dict `:` type($dq_accum) `->` type($dq)
  }];
}

#endif // RUDNN_ATTENTION_OPS_TD
