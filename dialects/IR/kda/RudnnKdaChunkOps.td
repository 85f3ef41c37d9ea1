//===- RudnnKdaChunkOps.td - KDA's chunk primitives --------*- tablegen -*-===//
//
// What `rudnn-decompose` turns a KDA forward into. Chunk tiles are
// [B, H, N, C, *] fp32 tensors (N = ceil(T / C) chunks of C tokens);
// sequence tensors keep the operator's [B, T, H, *] form. With the
// optional `cu_seqlens` [S + 1] i32 the kernel-ending primitives take
// packed sequences (B = 1): N counts every sequence's chunks in turn
// (dynamic), and states are [S, H, K, V]. Within a chunk, Γ
// is the inclusive cumulative sum of g, and every decay factor is
// exp(Γ_i − Γ_j) with j ≤ i, never positive in its exponent.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_KDA_CHUNK_OPS_TD
#define RUDNN_KDA_CHUNK_OPS_TD

include "dialects/IR/RudnnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"

class Rudnn_ChunkOp<string mnemonic, list<Trait> traits = []>
    : Rudnn_Op<mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

def Rudnn_ChunkDecayOp : Rudnn_ChunkOp<"chunk_decay"> {
  let summary = "In-chunk cumulative decay Γ";
  let description = [{
    `gamma[b, h, n, i, d] = Σ_{j ≤ i} g[b, n·C + j, h, d]`, the inclusive
    cumulative sum of the log-decay within each chunk of `chunk` tokens (rows
    past the end of a tail chunk are unspecified).

    ```mlir
    %gamma = rudnn.chunk_decay %g chunk 64
        : tensor<?x?x?x64xf32> -> tensor<?x?x?x64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$g, I64Attr:$chunk);
  let results = (outs AnyRankedTensor:$gamma);
  let assemblyFormat = [{
    $g `chunk` $chunk attr-dict `:` type($g) `->` type($gamma)
  }];
}

def Rudnn_ChunkPairwiseOp : Rudnn_ChunkOp<"chunk_pairwise"> {
  let summary = "Pairwise chunk matrices of the delta rule";
  let description = [{
    Per chunk, with e_ij = exp(Γ_i − Γ_j) (j ≤ i):
    `strict[i, j] = β_i Σ_d k_id k_jd e_ijd` for j < i (0 elsewhere), and
    `pairwise[i, j] = Σ_d q_id k_jd e_ijd` for j ≤ i (0 elsewhere).

    ```mlir
    %strict, %pairwise = rudnn.chunk_pairwise %q, %k, %beta, %gamma chunk 64
        : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>,
          tensor<?x?x?x64x64xf32>
        -> tensor<?x?x?x64x64xf32>, tensor<?x?x?x64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$k,
                       AnyRankedTensor:$beta, AnyRankedTensor:$gamma,
                       I64Attr:$chunk);
  let results = (outs AnyRankedTensor:$strict, AnyRankedTensor:$pairwise);
  let assemblyFormat = [{
    $q `,` $k `,` $beta `,` $gamma `chunk` $chunk attr-dict `:`
    type($q) `,` type($k) `,` type($beta) `,` type($gamma) `->`
    type($strict) `,` type($pairwise)
  }];
}

def Rudnn_ChunkSolveOp : Rudnn_ChunkOp<"chunk_solve"> {
  let summary = "Unit lower-triangular solve of a chunk";
  let description = [{
    Solves `(I + strict) X = R` per chunk (as products by the inverse of the
    unit lower-triangular `I + strict`) for the right-hand sides `β ⊙ (k ⊙ e^Γ)` (giving `w`, [.., C, K]) and `β ⊙ v`
    (giving `u0`, [.., C, V]): the state-free parts of the chunk's updates,
    `U = u0 − w S0` for the state S0 at the chunk start. With `for_backward`
    the chunk's Γ, decayed queries, inverse and `u0` stay for the backward's
    kernels too (a backward decomposition sets it); with `keep_queries` the
    decayed queries alone, for a wgmma walk that forms the outputs. With
    `tma` (sm_90a) the kernel loads q's, k's and v's rows by TMA where
    their views allow it (16-bit rows promised 16-byte aligned, K and V
    multiples of 64), else by cp.async.

    ```mlir
    %w, %u0 = rudnn.chunk_solve %strict, %k, %v, %beta, %gamma chunk 64
        : tensor<?x?x?x64x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
          tensor<?x?x?xf32>, tensor<?x?x?x64x64xf32>
        -> tensor<?x?x?x64x64xf32>, tensor<?x?x?x64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$strict, AnyRankedTensor:$k,
                       AnyRankedTensor:$v, AnyRankedTensor:$beta,
                       AnyRankedTensor:$gamma,
                       Optional<AnyRankedTensor>:$cu_seqlens, I64Attr:$chunk,
                       UnitAttr:$for_backward, UnitAttr:$keep_queries,
                       UnitAttr:$tma);
  let results = (outs AnyRankedTensor:$w, AnyRankedTensor:$u0);
  let assemblyFormat = [{
    $strict `,` $k `,` $v `,` $beta `,` $gamma
    (`cu_seqlens` $cu_seqlens^)? `chunk` $chunk
    (`for_backward` $for_backward^)? (`keep_queries` $keep_queries^)?
    (`tma` $tma^)? attr-dict `:`
    type($strict) `,` type($k) `,` type($v) `,` type($beta) `,` type($gamma)
    (`,` type($cu_seqlens)^)? `->` type($w) `,` type($u0)
  }];
}

def Rudnn_ChunkPropagateOp : Rudnn_ChunkOp<"chunk_propagate",
                                           [AttrSizedOperandSegments]> {
  let summary = "State propagation across chunks";
  let description = [{
    Walks the chunks in order from the initial state (or zero): records the
    state at each chunk start (`boundaries`, [N, B, H, K, V]), forms the
    chunk's updates `u = u0 − w S`, and advances
    `S ← diag(e^Γ_last) S + (k ⊙ e^(Γ_last − Γ))ᵀ u`. Sequential over chunks,
    parallel over batch, heads and blocks of V. With `wgmma` (16-bit
    inputs on sm_90a) the state stays in wgmma accumulators.

    ```mlir
    %u, %boundaries, %final = rudnn.chunk_propagate %w, %u0, %k, %gamma
        initial_state %s0 chunk 64
        : tensor<?x?x?x64x64xf32>, tensor<?x?x?x64x64xf32>,
          tensor<?x?x?x64xf32>, tensor<?x?x?x64x64xf32>, tensor<?x?x64x64xf32>
        -> tensor<?x?x?x64x64xf32>, tensor<?x?x?x64x64xf32>,
           tensor<?x?x64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$w, AnyRankedTensor:$u0,
                       AnyRankedTensor:$k, AnyRankedTensor:$gamma,
                       Optional<AnyRankedTensor>:$initial_state,
                       Optional<AnyRankedTensor>:$cu_seqlens,
                       I64Attr:$chunk, UnitAttr:$wgmma);
  let results = (outs AnyRankedTensor:$u, AnyRankedTensor:$boundaries,
                      AnyRankedTensor:$final_state);
  let assemblyFormat = [{
    $w `,` $u0 `,` $k `,` $gamma (`initial_state` $initial_state^)?
    (`cu_seqlens` $cu_seqlens^)? `chunk` $chunk (`wgmma` $wgmma^)? attr-dict `:`
    type(operands) `->` type(results)
  }];
}

def Rudnn_ChunkRestoreOp : Rudnn_ChunkOp<"chunk_restore"> {
  let summary = "Chunk updates from saved boundary states";
  let description = [{
    The updates `u = u0 − w S_c` of each chunk c from the forward's saved
    `boundaries` [N, B, H, K, V]: what `chunk_propagate` forms on its walk,
    without the walk, so chunk-parallel. A backward given the boundaries
    uses it in place of `chunk_propagate`.

    ```mlir
    %u = rudnn.chunk_restore %w, %u0, %boundaries chunk 64
        : tensor<?x?x?x64x64xf32>, tensor<?x?x?x64x64xf32>,
          tensor<?x?x?x64x64xf32> -> tensor<?x?x?x64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$w, AnyRankedTensor:$u0,
                       AnyRankedTensor:$boundaries, I64Attr:$chunk);
  let results = (outs AnyRankedTensor:$u);
  let assemblyFormat = [{
    $w `,` $u0 `,` $boundaries `chunk` $chunk attr-dict `:` type(operands)
    `->` type(results)
  }];
}

def Rudnn_ChunkOutputOp : Rudnn_ChunkOp<"chunk_output"> {
  let summary = "Chunk output";
  let description = [{
    `o_i = scale (q_i ⊙ e^Γ_i)ᵀ S_c + scale Σ_{j ≤ i} pairwise[i, j] u_j` for
    each token i of chunk c, with S_c its boundary state and Γ the in-chunk
    cumulative sum of `g`, which the output forms again rather than reading
    it from the tiles. Chunk-parallel.

    ```mlir
    %o = rudnn.chunk_output %q, %g, %pairwise, %u, %boundaries chunk 64
        scale 1.250000e-01
        : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xf32>,
          tensor<?x?x?x64x64xf32>, tensor<?x?x?x64x64xf32>,
          tensor<?x?x?x64x64xf32> -> tensor<?x?x?x64xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$g,
                       AnyRankedTensor:$pairwise, AnyRankedTensor:$u,
                       AnyRankedTensor:$boundaries,
                       Optional<AnyRankedTensor>:$cu_seqlens, I64Attr:$chunk,
                       F32Attr:$scale);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = [{
    $q `,` $g `,` $pairwise `,` $u `,` $boundaries
    (`cu_seqlens` $cu_seqlens^)? `chunk` $chunk `scale` $scale attr-dict `:`
    type(operands) `->` type($output)
  }];
}

def Rudnn_KdaRecurrentOp : Rudnn_ChunkOp<"kda_recurrent",
                                         [AttrSizedOperandSegments]> {
  let summary = "KDA forward token by token (decode)";
  let description = [{
    The recurrence of `rudnn.kda` evaluated one token at a time by one fused
    kernel, for short sequences (T = 1 decode). Same operands, attributes and
    results as `rudnn.kda`, with chunk and scale fixed; the boundaries, when
    produced, are the states before tokens 0, chunk, 2·chunk, ….

    ```mlir
    %o, %s = rudnn.kda_recurrent %q, %k, %v, %g, %beta initial_state %s0
        chunk 64 scale 1.250000e-01
        : (tensor<?x1x?x64xf32>, tensor<?x1x?x64xf32>, tensor<?x1x?x64xf32>,
           tensor<?x1x?x64xf32>, tensor<?x1x?xf32>, tensor<?x?x64x64xf32>)
        -> (tensor<?x1x?x64xf32>, tensor<?x?x64x64xf32>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$k,
                       AnyRankedTensor:$v, AnyRankedTensor:$g,
                       AnyRankedTensor:$beta,
                       Optional<AnyRankedTensor>:$initial_state,
                       Optional<AnyRankedTensor>:$cu_seqlens,
                       I64Attr:$chunk, F32Attr:$scale);
  let results = (outs AnyRankedTensor:$output, AnyRankedTensor:$final_state,
                      Optional<AnyRankedTensor>:$boundaries);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g `,` $beta (`initial_state` $initial_state^)?
    (`cu_seqlens` $cu_seqlens^)? `chunk` $chunk `scale` $scale attr-dict `:`
    functional-type(operands, results)
  }];
}

def Rudnn_ChunkStateGradientOp : Rudnn_ChunkOp<"chunk_state_gradient",
                                               [AttrSizedOperandSegments]> {
  let summary = "State gradient across chunks, in reverse";
  let description = [{
    Walks the chunks from the last: records the gradient of the state at each
    chunk end (`d_state_end`, [N, B, H, K, V]), forms the gradient of the
    chunk's updates `du = scale pairwiseᵀ dO + (k ⊙ e^(Γlast − Γ)) dS`, and
    carries `dS ← e^Γlast ⊙ dS + scale (q ⊙ e^Γ)ᵀ dO − wᵀ du` to the chunk
    start, from `d_final_state` (or zero); the last is `d_initial_state`.
    With `wgmma` (16-bit inputs on sm_90a) dS stays in wgmma accumulators.

    ```mlir
    %du, %dse, %ds0 = rudnn.chunk_state_gradient %q, %k, %gamma, %pairwise,
        %w, %do chunk 64 scale 1.250000e-01 : ... -> ...
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$k,
                       AnyRankedTensor:$gamma, AnyRankedTensor:$pairwise,
                       AnyRankedTensor:$w, AnyRankedTensor:$d_output,
                       Optional<AnyRankedTensor>:$d_final_state,
                       Optional<AnyRankedTensor>:$cu_seqlens,
                       I64Attr:$chunk, F32Attr:$scale, UnitAttr:$wgmma);
  let results = (outs AnyRankedTensor:$du, AnyRankedTensor:$d_state_end,
                      AnyRankedTensor:$d_initial_state);
  let assemblyFormat = [{
    $q `,` $k `,` $gamma `,` $pairwise `,` $w `,` $d_output
    (`d_final_state` $d_final_state^)? (`cu_seqlens` $cu_seqlens^)?
    `chunk` $chunk `scale` $scale (`wgmma` $wgmma^)? attr-dict `:`
    type(operands) `->` type(results)
  }];
}

def Rudnn_ChunkGradientsOp : Rudnn_ChunkOp<"chunk_gradients"> {
  let summary = "Input gradients of each chunk";
  let description = [{
    From the chunk's inputs, its tiles (`pairwise`: the memory of the chunk
    tiles and of what a backward's `chunk_solve` keeps, the decayed queries
    and (I + A)⁻¹; `u`), its start state (`boundaries`), and the gradient of
    its end state and of its updates, the gradients of q, k, v, g and beta,
    chunk-parallel: through the output, the triangular solve (a product by
    (I + A)⁻ᵀ), the pairwise matrices and the decays. Γ is summed again from
    g; W and U0 are not needed, since dRw Wᵀ + dRu U0ᵀ = dRu Uᵀ. dg is the
    reverse cumulative sum of dΓ within the chunk.

    ```mlir
    %dq, %dk, %dv, %dg, %dbeta = rudnn.chunk_gradients %q, %k, %v, %g,
        %beta, %pairwise, %u, %boundaries, %do, %du, %dse
        chunk 64 scale 1.250000e-01 : ... -> ...
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$k,
                       AnyRankedTensor:$v, AnyRankedTensor:$g,
                       AnyRankedTensor:$beta, AnyRankedTensor:$pairwise,
                       AnyRankedTensor:$u, AnyRankedTensor:$boundaries,
                       AnyRankedTensor:$d_output, AnyRankedTensor:$du,
                       AnyRankedTensor:$d_state_end,
                       Optional<AnyRankedTensor>:$cu_seqlens, I64Attr:$chunk,
                       F32Attr:$scale);
  let results = (outs AnyRankedTensor:$dq, AnyRankedTensor:$dk,
                      AnyRankedTensor:$dv, AnyRankedTensor:$dg,
                      AnyRankedTensor:$dbeta);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g `,` $beta `,` $pairwise `,` $u `,` $boundaries
    `,` $d_output `,` $du `,` $d_state_end (`cu_seqlens` $cu_seqlens^)?
    `chunk` $chunk `scale` $scale attr-dict `:` type(operands) `->`
    type(results)
  }];
}

def Rudnn_KdaPoolStepOp : Rudnn_ChunkOp<"kda_pool_step"> {
  let summary = "KDA token by token over a state pool (decode)";
  let description = [{
    The kernel of `rudnn.kda_decode`: its operands, results and rules, with
    the scale fixed. Each (entry, head, block of value columns) carries one
    state from the pool through the entry's tokens and writes it back.

    ```mlir
    %o, %pool2, %status = rudnn.kda_pool_step %q, %k, %v, %g, %beta
        pool(%pool, %slots) scale 1.250000e-01
        : (...) -> (...)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$k,
                       AnyRankedTensor:$v, AnyRankedTensor:$g,
                       AnyRankedTensor:$beta, AnyRankedTensor:$state_pool,
                       AnyRankedTensor:$slots, F32Attr:$scale);
  let results = (outs AnyRankedTensor:$output,
                      AnyRankedTensor:$state_pool_out,
                      AnyRankedTensor:$status);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $g `,` $beta `pool` `(` $state_pool `,` $slots `)`
    `scale` $scale attr-dict `:` functional-type(operands, results)
  }];
}

def Rudnn_HeadGroupSumOp : Rudnn_ChunkOp<"head_group_sum"> {
  let summary = "Sums over groups of consecutive heads";
  let description = [{
    `sum[b, t, q, d] = Σ_{j < G} x[b, t, q·G + j, d]`, j in order, with
    G = H / Q the heads of `x` [B, T, H, D] per head of `like`
    [B, T, Q, D], whose shape the result takes (in `x`'s element type): the
    gradient of a query or key head that G value heads share (grouped value
    heads), from each value head's, in a fixed order.

    ```mlir
    %dq = rudnn.head_group_sum %dq_per_value_head like %q
        : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
        -> tensor<?x?x?x64xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$like);
  let results = (outs AnyRankedTensor:$sum);
  let assemblyFormat = [{
    $x `like` $like attr-dict `:` type($x) `,` type($like) `->` type($sum)
  }];
}

def Rudnn_ChunkTilesExportOp : Rudnn_ChunkOp<"chunk_tiles_export", [
    DeclareOpInterfaceMethods<ViewLikeOpInterface>]> {
  let summary = "A forward's chunk tiles as one tensor for its backward";
  let description = [{
    Views the memory the chunk tiles of a forward share (`gamma`, and with it
    `pairwise`, `w` and the updates `u` its walk formed; the solve must keep
    the backward's tiles too, `for_backward`) as `tiles`
    [N, B, H, W] f32, W words per chunk and head in a layout private to the
    kernels. No kernel: the memory becomes the tensor, so a forward returns
    it and its backward takes it (`chunk_tiles_import`) instead of computing
    the tiles again.

    ```mlir
    %tiles = rudnn.chunk_tiles_export %gamma, %pairwise, %w, %u chunk 64
        : tensor<?x?x?x64x128xf32>, tensor<?x?x?x64x64xf32>,
          tensor<?x?x?x64x128xf32>, tensor<?x?x?x64x128xf32>
        -> tensor<?x?x?x20608xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$gamma, AnyRankedTensor:$pairwise,
                       AnyRankedTensor:$w, AnyRankedTensor:$u,
                       I64Attr:$chunk);
  let results = (outs AnyRankedTensor:$tiles);
  let assemblyFormat = [{
    $gamma `,` $pairwise `,` $w `,` $u `chunk` $chunk attr-dict `:`
    type(operands) `->` type($tiles)
  }];
}

def Rudnn_ChunkTilesImportOp : Rudnn_ChunkOp<"chunk_tiles_import", [
    DeclareOpInterfaceMethods<ViewLikeOpInterface>]> {
  let summary = "A backward's chunk tiles from the tensor its forward saved";
  let description = [{
    The inverse view of `chunk_tiles_export`: the chunk tiles `gamma`,
    `pairwise`, `w` and `u` (with what the backward keeps besides) in the
    memory of the saved `tiles` [N, B, H, W] f32. No kernel.

    ```mlir
    %gamma, %pairwise, %w, %u = rudnn.chunk_tiles_import %tiles chunk 64
        : tensor<?x?x?x20608xf32> -> tensor<?x?x?x64x128xf32>,
          tensor<?x?x?x64x64xf32>, tensor<?x?x?x64x128xf32>,
          tensor<?x?x?x64x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tiles, I64Attr:$chunk);
  let results = (outs AnyRankedTensor:$gamma, AnyRankedTensor:$pairwise,
                      AnyRankedTensor:$w, AnyRankedTensor:$u);
  let assemblyFormat = [{
    $tiles `chunk` $chunk attr-dict `:` type($tiles) `->` type(results)
  }];
}

#endif // RUDNN_KDA_CHUNK_OPS_TD
