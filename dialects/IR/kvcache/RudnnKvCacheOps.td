//===- RudnnKvCacheOps.td - Decoder attention over a cache -*- tablegen -*-===//
//
// The decoding step of a transformer: the new tokens' keys and values
// appended to a cache in place, then each new token attending to the cache
// so far. Two primitives carry it: the partial attention of each split of
// the keys (which also appends), and the combination of the splits. How
// many splits an entry takes is decided on the device, from the lengths.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_KV_CACHE_OPS_TD
#define RUDNN_KV_CACHE_OPS_TD

include "dialects/IR/RudnnBase.td"
include "dialects/IR/RudnnInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Rudnn_KvCacheAttentionOp : Rudnn_FamilyOperatorOp<"kv_cache_attention", "KvCache",
    "::rudnn::kvCacheAttentionContract()", [
    Pure, AttrSizedOperandSegments, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface>]> {
  let summary = "One decoding step over a K/V cache appended in place";
  let description = [{
    For each batch entry `b` with `L = cache_lengths[b]` tokens cached, the
    T new tokens' keys and values are written to the cache at positions
    `L … L + T − 1`; then new token `i` of query head `h` (reading key and
    value head `h / (H / G)`) attends to cache positions `P … L + i`, `P`
    the entry's `cache_leftpad` (0 without it):

    ```
    o[b, i, h] = Σ_j softmax_j(scale · q[b, i, h] · k_cache[b, j]) · v_cache[b, j]
    ```

    T = 1 is a decoding step; T > 1 a speculative step or a chunk of a
    prefill. Without `k` and `v` nothing is appended: the T queries are
    the entry's last cached tokens, `L − T + i` the diagonal of query `i`
    (an attend-only call). The options are FlashAttention's, aligned at
    that diagonal `d`: `non_causal` lets every query see every key from `P`
    to the last; a `window (left, right)` keeps keys `d − left … d + right`
    (−1: unbounded on that side); a `softcap` caps the scores to
    `softcap · tanh(s / softcap)`; `alibi_slopes` `[B, H]` f32 adds
    `−slope · |d − j|` after it. `rotary (cos, sin)` `[R, Q]` (q's type)
    rotates the new keys (before they are appended) at positions `L + i`
    and the queries at `L + i` (causal or windowed) or all at `L`, as
    FlashAttention does: the first 2Q features in pairs `(2p, 2p + 1)`
    with `interleaved`, else `(p, p + Q)`, by the angle whose cosine and
    sine are row `L + i`'s entry p. `cache_batch_idx` `[B]` i32 maps entry
    b to cache row `cache_batch_idx[b]` of N (distinct rows when
    appending). An entry whose append would pass the capacity S (or the R
    rotary positions), whose length is negative, whose left padding is
    outside `[0, L]`, or whose cache row is outside `[0, N)` or another
    appending entry's is refused: its caches are untouched, its `o` is 0,
    its `lse` −inf and its `status` 1. Nothing is ever written outside the
    cache.

    Operands: `q` `[B, T, H, D]`, `k` `[B, T, G, D]`, `v` `[B, T, G, E]`,
    `k_cache` `[N, S, G, D]`, `v_cache` `[N, S, G, E]` (N = B without
    `cache_batch_idx`; one element type among f32, f16 and bf16),
    `alibi_slopes` `[B, H]` f32 (any strides), `cache_lengths`,
    `cache_leftpad` and `cache_batch_idx` `[B]` i32 (read on the device
    only). D and E are static, 1 to 256; the rest may be dynamic.

    Results: `o` `[B, T, H, E]`, the caches (the operands' memory, updated
    in place: a function returns them under the operands' names), `lse`
    `[B, H, T]` f32 and `status` `[B]` i32 (written only when used).

    Attributes: `scale` (default D^-0.5); `splits` forces the number of
    parts each entry's keys are split into (1 to 64; by default the device
    picks it from B·G and the lengths); `blocks`, the persistent grid, and
    `warps`, the warps of a block (4, 2 or 1: how many 16-key tiles a
    pipeline stage holds), which `rudnn-specialize` sizes to the target.

    ```mlir
    %o, %k_cache2, %v_cache2, %lse, %status = rudnn.kv_cache_attention
        %q, %k, %v cache(%k_cache, %v_cache) lengths %lengths
        : (tensor<?x1x32x128xbf16>, tensor<?x1x8x128xbf16>,
           tensor<?x1x8x128xbf16>, tensor<?x?x8x128xbf16>,
           tensor<?x?x8x128xbf16>, tensor<?xi32>)
        -> (tensor<?x1x32x128xbf16>, tensor<?x?x8x128xbf16>,
            tensor<?x?x8x128xbf16>, tensor<?x32x1xf32>, tensor<?xi32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    Optional<AnyRankedTensor>:$k,
    Optional<AnyRankedTensor>:$v,
    AnyRankedTensor:$k_cache,
    AnyRankedTensor:$v_cache,
    AnyRankedTensor:$cache_lengths,
    Optional<AnyRankedTensor>:$cache_leftpad,
    Optional<AnyRankedTensor>:$cache_batch_idx,
    Optional<AnyRankedTensor>:$alibi_slopes,
    Optional<AnyRankedTensor>:$rotary_cos,
    Optional<AnyRankedTensor>:$rotary_sin,
    UnitAttr:$rotary_interleaved,
    UnitAttr:$non_causal,
    OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<I64Attr>:$splits,
    OptionalAttr<I64Attr>:$blocks,
    OptionalAttr<I64Attr>:$warps);
  let results = (outs AnyRankedTensor:$o, AnyRankedTensor:$k_cache_out,
                      AnyRankedTensor:$v_cache_out, AnyRankedTensor:$lse,
                      AnyRankedTensor:$status);

  let assemblyFormat = [{
    $q (`,` $k^ `,` $v)? `cache` `(` $k_cache `,` $v_cache `)`
    `lengths` $cache_lengths (`leftpad` $cache_leftpad^)?
    (`batch_index` $cache_batch_idx^)? (`alibi` $alibi_slopes^)?
    (`rotary` `(` $rotary_cos^ `,` $rotary_sin `)`)?
    (`interleaved` $rotary_interleaved^)? (`non_causal` $non_causal^)?
    (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` $softcap^)? (`scale` $scale^)? (`splits` $splits^)?
    (`blocks` $blocks^)? (`warps` $warps^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_KvCacheAttentionPagedOp : Rudnn_FamilyOperatorOp<"kv_cache_attention_paged", "KvCache",
    "::rudnn::kvCacheAttentionPagedContract()", [
    Pure, AttrSizedOperandSegments, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface>]> {
  let summary = "One decoding step over a paged K/V cache";
  let description = [{
    `rudnn.kv_cache_attention` over a cache held in pages of Z tokens, as
    serving engines keep it: entry b's token t lives on page
    `block_table[b, t / Z]`, row `t % Z`, of `k_pages` `[P, Z, G, D]` and
    `v_pages` `[P, Z, G, E]`. An entry may hold M·Z tokens; one whose
    append would pass that, or whose pages up to `L + T` include one out of
    `[0, P)`, is refused (status 1, pages untouched). The pages an entry
    appends to must be its own (pages only read may be shared): with a
    `status` result, an entry appending to a page another entry uses is
    refused too; without one, the caller checks. The page size Z is
    static, 1 to 256. Attend-only calls (no `k`, `v`), `cache_leftpad`,
    `alibi_slopes`, `rotary`, `non_causal`, `window` and `softcap` mean
    what they mean there.

    ```mlir
    %o, %kp, %vp, %lse, %status = rudnn.kv_cache_attention_paged
        %q, %k, %v pages(%k_pages, %v_pages) block_table %table
        lengths %lengths
        : (tensor<?x1x32x128xbf16>, tensor<?x1x8x128xbf16>,
           tensor<?x1x8x128xbf16>, tensor<?x16x8x128xbf16>,
           tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>)
        -> (tensor<?x1x32x128xbf16>, tensor<?x16x8x128xbf16>,
            tensor<?x16x8x128xbf16>, tensor<?x32x1xf32>, tensor<?xi32>)
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$q,
    Optional<AnyRankedTensor>:$k,
    Optional<AnyRankedTensor>:$v,
    AnyRankedTensor:$k_pages,
    AnyRankedTensor:$v_pages,
    AnyRankedTensor:$block_table,
    AnyRankedTensor:$cache_lengths,
    Optional<AnyRankedTensor>:$cache_leftpad,
    Optional<AnyRankedTensor>:$alibi_slopes,
    Optional<AnyRankedTensor>:$rotary_cos,
    Optional<AnyRankedTensor>:$rotary_sin,
    UnitAttr:$rotary_interleaved,
    UnitAttr:$non_causal,
    OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<I64Attr>:$splits,
    OptionalAttr<I64Attr>:$blocks,
    OptionalAttr<I64Attr>:$warps);
  let results = (outs AnyRankedTensor:$o, AnyRankedTensor:$k_pages_out,
                      AnyRankedTensor:$v_pages_out, AnyRankedTensor:$lse,
                      AnyRankedTensor:$status);

  let assemblyFormat = [{
    $q (`,` $k^ `,` $v)? `pages` `(` $k_pages `,` $v_pages `)`
    `block_table` $block_table `lengths` $cache_lengths
    (`leftpad` $cache_leftpad^)? (`alibi` $alibi_slopes^)?
    (`rotary` `(` $rotary_cos^ `,` $rotary_sin `)`)?
    (`interleaved` $rotary_interleaved^)? (`non_causal` $non_causal^)?
    (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` $softcap^)? (`scale` $scale^)? (`splits` $splits^)?
    (`blocks` $blocks^)? (`warps` $warps^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_DecodePartialsOp : Rudnn_Op<"decode_partials", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "Append the new tokens, then attend over each split of the keys";
  let description = [{
    The cache operands' memory becomes the `k_cache_out` and `v_cache_out`
    results, the new tokens appended (`block_table` given: pages). Each
    entry's keys (`P … L + T − 1`, from the window's first key when later;
    `L − 1` attend-only) are split into parts (`splits`, else the
    device's choice from B·G, the lengths and `blocks`); for each part and
    query row, the softmax-normalised partial output (masked, capped and
    biased as the operator says) and its log-sum-exp
    go to `o_partial` `[B, H, T, 64, E]` and `lse_partial` `[B, H, T, 64]`,
    or, for an entry of one part, straight to `o` and `lse`. A kernel of
    `blocks` persistent blocks computes it, all the query heads of one key
    head (and all new tokens) sharing one read of each key and value.

    ```mlir
    %kc, %vc, %o1, %lse1, %op, %lp, %status = rudnn.decode_partials
        %q, %k, %v cache(%k_cache, %v_cache) lengths %lengths
        scale 8.838835e-02 blocks 396 warps 4 : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$q,
    Optional<AnyRankedTensor>:$k,
    Optional<AnyRankedTensor>:$v,
    AnyRankedTensor:$k_cache,
    AnyRankedTensor:$v_cache,
    Optional<AnyRankedTensor>:$block_table,
    AnyRankedTensor:$cache_lengths,
    Optional<AnyRankedTensor>:$cache_leftpad,
    Optional<AnyRankedTensor>:$cache_batch_idx,
    Optional<AnyRankedTensor>:$alibi_slopes,
    Optional<AnyRankedTensor>:$rotary_cos,
    Optional<AnyRankedTensor>:$rotary_sin,
    UnitAttr:$rotary_interleaved,
    UnitAttr:$non_causal,
    OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right,
    OptionalAttr<F32Attr>:$softcap,
    F32Attr:$scale,
    I64Attr:$blocks,
    I64Attr:$warps,
    OptionalAttr<I64Attr>:$splits);
  let results = (outs AnyRankedTensor:$k_cache_out,
                      AnyRankedTensor:$v_cache_out, AnyRankedTensor:$o,
                      AnyRankedTensor:$lse, AnyRankedTensor:$o_partial,
                      AnyRankedTensor:$lse_partial, AnyRankedTensor:$status);
  let assemblyFormat = [{
    $q (`,` $k^ `,` $v)? `cache` `(` $k_cache `,` $v_cache `)`
    (`block_table` $block_table^)? `lengths` $cache_lengths
    (`leftpad` $cache_leftpad^)? (`batch_index` $cache_batch_idx^)?
    (`alibi` $alibi_slopes^)? (`rotary` `(` $rotary_cos^ `,` $rotary_sin `)`)?
    (`interleaved` $rotary_interleaved^)? (`non_causal` $non_causal^)?
    (`window` ` ` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` $softcap^)? `scale` $scale `blocks` $blocks `warps` $warps
    (`splits` $splits^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_DecodeCombineOp : Rudnn_Op<"decode_combine", [Pure]> {
  let summary = "Combine the splits' partial outputs by their log-sum-exp";
  let description = [{
    For each query row of an entry of more than one part (the same choice
    as `rudnn.decode_partials` with the same `blocks` and `splits`):

    ```
    lse = log Σ_s exp(lse_partial[s]),  o = Σ_s exp(lse_partial[s] − lse) · o_partial[s]
    ```

    written over `o` and `lse` (its results are their memory); an entry of
    one part keeps what the partials wrote. A row whose parts are all
    empty gives 0 and −inf. The left padding, `attend_only` and
    `window_left` are the partials': they decide where the keys start.

    ```mlir
    %o, %lse = rudnn.decode_combine %op, %lp into(%o1, %lse1)
        lengths %lengths blocks 396 : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$o_partial,
    AnyRankedTensor:$lse_partial,
    AnyRankedTensor:$o_single,
    AnyRankedTensor:$lse_single,
    AnyRankedTensor:$cache_lengths,
    Optional<AnyRankedTensor>:$cache_leftpad,
    UnitAttr:$attend_only,
    OptionalAttr<I64Attr>:$window_left,
    I64Attr:$blocks,
    OptionalAttr<I64Attr>:$splits);
  let results = (outs AnyRankedTensor:$o, AnyRankedTensor:$lse);
  let assemblyFormat = [{
    $o_partial `,` $lse_partial `into` `(` $o_single `,` $lse_single `)`
    `lengths` $cache_lengths (`leftpad` $cache_leftpad^)?
    (`attend_only` $attend_only^)? (`window_left` $window_left^)?
    `blocks` $blocks (`splits` $splits^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // RUDNN_KV_CACHE_OPS_TD
