//===- RudnnNormOps.td - Moments, LayerNorm, RMSNorm --------*- tablegen -*-===//
//
// Normalisations over the last dim C of x [N, C] or [M, N, C]: the moments
// (mean and population variance, by Welford and Chan), LayerNorm and
// RMSNorm, each optionally over h = x + residual (pre-norm blocks), h
// returned too. C is static; the rows are run-time. Each becomes one
// kernel (a warp or a block a row, the row in registers), or for very long
// rows two: every chunk's moments, then their merge and the normalisation.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_NORM_OPS_TD
#define RUDNN_NORM_OPS_TD

include "dialects/IR/RudnnBase.td"
include "dialects/IR/RudnnInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// How rudnn-specialize lays a row over the threads; shared by the
// operators and their primitives.
defvar NormFormArguments = (ins
    OptionalAttr<I64Attr>:$threads,
    OptionalAttr<I64Attr>:$rows_per_block,
    OptionalAttr<I64Attr>:$chunk);

// A normalisation operator of `family` ("Norm" or "NormBackward", whose
// functions NormInterfaces.cpp and NormBackwardInterfaces.cpp define): its
// contract is `contract`'s function of the operator kind and of x's rank.
class Rudnn_NormOperatorOp<string mnemonic, string family, string contract,
                           string kind, list<Trait> traits>
    : Rudnn_FamilyOperatorOp<mnemonic, family,
          "::rudnn::" # contract # "(::rudnn::NormOperator::" # kind #
          ", false)", traits> {
  code kindArgument = "::rudnn::NormOperator::" # kind;
  let familyDefinitions = [{
    const ::rudnn::OperatorContract &
    $cppClass::getCallContract(const ::rudnn::CallDescription &call) {
      return ::rudnn::}] # contract # [{(}] # kindArgument # [{,
                                          call.rank("x") == 3);
    }
    const ::rudnn::OperatorContract &$cppClass::getOperatorContract() {
      return ::rudnn::}] # contract # [{(}] # kindArgument # [{,
                                          norm::hasOuterRows(getX()));
    }
  }];
}

def Rudnn_MomentsOp : Rudnn_NormOperatorOp<"moments", "Norm", "normContract", "Moments", [
    Pure, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                                    ["getOperatorContract", "getCallContract"]>]> {
  let summary = "Mean and population variance over the last dim";
  let description = [{
    For each row of x `[N, C]` or `[M, N, C]` (f32, f16 or bf16): `mean`
    and `var` `[N]` (or `[M, N]`) f32, the variance the population's
    (divided by C), computed in one pass by Welford's update and Chan's
    merge around a pivot (the row's first element), so data far from zero
    keeps its variance.

    `rudnn-specialize` chooses `threads` (32: a warp a row, `rows_per_block`
    rows a block; more: a block a row) and, for rows longer than a block
    holds, `chunk`, the elements a block summarises (the rows split).

    ```mlir
    %mean, %var = rudnn.moments %x
        : (tensor<?x777xf32>) -> (tensor<?xf32>, tensor<?xf32>)
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$x), NormFormArguments);
  let results = (outs AnyRankedTensor:$mean, AnyRankedTensor:$var);
  let assemblyFormat = [{
    $x (`threads` $threads^)? (`rows_per_block` $rows_per_block^)?
    (`chunk` $chunk^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_LayerNormOp : Rudnn_NormOperatorOp<"layer_norm", "Norm", "normContract", "LayerNorm", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getCallContract"]>]> {
  let summary = "LayerNorm over the last dim, with an optional residual";
  let description = [{
    For each row of h = x + `residual` (x alone without it), x `[N, C]` or
    `[M, N, C]`:

    ```
    y = (h − mean) · rstd · gamma + beta,  rstd = 1 / sqrt(var + eps)
    ```

    with the population variance; `gamma` and `beta` `[C]` are optional
    (1 and 0). Results: `y` (x's type), `mean` and `rstd` `[N]` (or
    `[M, N]`) f32, and `h` (x's type: the sum a pre-norm block carries on).
    Moments as `rudnn.moments`; `threads`, `rows_per_block`, `chunk` as
    there.

    ```mlir
    %y, %mean, %rstd, %h = rudnn.layer_norm %x gamma %g beta %b eps 1.0e-05
        : (tensor<?x1000xf32>, tensor<1000xf32>, tensor<1000xf32>)
        -> (tensor<?x1000xf32>, tensor<?xf32>, tensor<?xf32>,
            tensor<?x1000xf32>)
    ```
  }];
  let arguments = !con((ins
    AnyRankedTensor:$x,
    Optional<AnyRankedTensor>:$residual,
    Optional<AnyRankedTensor>:$gamma,
    Optional<AnyRankedTensor>:$beta,
    DefaultValuedAttr<F32Attr, "1.0e-5f">:$eps), NormFormArguments);
  let results = (outs AnyRankedTensor:$y, AnyRankedTensor:$mean,
                      AnyRankedTensor:$rstd, AnyRankedTensor:$h);
  let assemblyFormat = [{
    $x (`residual` $residual^)? (`gamma` $gamma^)? (`beta` $beta^)?
    `eps` $eps (`threads` $threads^)? (`rows_per_block` $rows_per_block^)?
    (`chunk` $chunk^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_RmsNormOp : Rudnn_NormOperatorOp<"rms_norm", "Norm", "normContract", "RmsNorm", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                              ["getOperatorContract", "getCallContract"]>]> {
  let summary = "RMSNorm over the last dim, with an optional residual";
  let description = [{
    For each row of h = x + `residual` (x alone without it):

    ```
    y = h · rstd · gamma,  rstd = 1 / sqrt(mean(h²) + eps)
    ```

    `gamma` `[C]` optional. Results: `y`, `rstd` `[N]` (or `[M, N]`) f32
    and `h`. `threads`, `rows_per_block`, `chunk` as in `rudnn.moments`.

    ```mlir
    %y, %rstd, %h = rudnn.rms_norm %x gamma %g eps 1.0e-06
        : (tensor<?x4096xbf16>, tensor<4096xbf16>)
        -> (tensor<?x4096xbf16>, tensor<?xf32>, tensor<?x4096xbf16>)
    ```
  }];
  let arguments = !con((ins
    AnyRankedTensor:$x,
    Optional<AnyRankedTensor>:$residual,
    Optional<AnyRankedTensor>:$gamma,
    DefaultValuedAttr<F32Attr, "1.0e-5f">:$eps), NormFormArguments);
  let results = (outs AnyRankedTensor:$y, AnyRankedTensor:$rstd,
                      AnyRankedTensor:$h);
  let assemblyFormat = [{
    $x (`residual` $residual^)? (`gamma` $gamma^)? `eps` $eps
    (`threads` $threads^)? (`rows_per_block` $rows_per_block^)?
    (`chunk` $chunk^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_NormPartialsOp : Rudnn_Op<"norm_partials", [Pure]> {
  let summary = "Each chunk's moments of a split row";
  let description = [{
    Rows of x (+ `residual`) split into chunks of `chunk` elements, S =
    ⌈C / chunk⌉ of them (`kind`: "moments", "layer_norm" or "rms_norm"):
    `partials` `[N, S, 3]` (or `[M, N, S, 3]`) f32
    holds each chunk's summary of h − pivot (count, mean, M2; the pivot the
    row's first element), or for `rms_norm` its sum of squares. A block of
    `threads` a chunk.

    ```mlir
    %partials = rudnn.norm_partials %x kind "layer_norm" chunk 8192
        threads 256 : (tensor<?x65536xf32>) -> tensor<?x8x3xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$x,
    Optional<AnyRankedTensor>:$residual,
    StrAttr:$kind,
    I64Attr:$chunk,
    I64Attr:$threads);
  let results = (outs AnyRankedTensor:$partials);
  let assemblyFormat = [{
    $x (`residual` $residual^)? `kind` $kind `chunk` $chunk `threads` $threads
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_NormRowsOp : Rudnn_Op<"norm_rows", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "A normalisation of rows, or its second pass over chunks";
  let description = [{
    `kind`'s results for every row of x (+ `residual`): `y` (none for
    moments: a null result), `mean` (moments and LayerNorm), `second` (the
    variance for moments, rstd otherwise) and `h`. Without `partials`,
    `threads` threads share a row (32: a warp a row, `rows_per_block` rows
    a block) and compute its moments; with them (`rudnn.norm_partials`'s,
    `chunk` given), each chunk's block merges the row's summaries in one
    order and normalises its chunk.

    ```mlir
    %y, %mean, %second, %h = rudnn.norm_rows %x gamma %g kind "layer_norm"
        eps 1.0e-05 threads 32 rows_per_block 4 : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$x,
    Optional<AnyRankedTensor>:$residual,
    Optional<AnyRankedTensor>:$gamma,
    Optional<AnyRankedTensor>:$beta,
    Optional<AnyRankedTensor>:$partials,
    StrAttr:$kind,
    F32Attr:$eps,
    I64Attr:$threads,
    OptionalAttr<I64Attr>:$rows_per_block,
    OptionalAttr<I64Attr>:$chunk);
  let results = (outs AnyRankedTensor:$y, AnyRankedTensor:$mean,
                      AnyRankedTensor:$second, AnyRankedTensor:$h);
  let assemblyFormat = [{
    $x (`residual` $residual^)? (`gamma` $gamma^)? (`beta` $beta^)?
    (`partials` $partials^)? `kind` $kind `eps` $eps `threads` $threads
    (`rows_per_block` $rows_per_block^)? (`chunk` $chunk^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

// The backward's form: the forward's, and the blocks that walk the rows.
defvar NormBackwardFormArguments = !con(NormFormArguments,
    (ins OptionalAttr<I64Attr>:$blocks));

def Rudnn_LayerNormBackwardOp : Rudnn_NormOperatorOp<"layer_norm_backward", "NormBackward", "normBackwardContract", "LayerNorm", [
    Pure, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                                    ["getOperatorContract", "getCallContract"]>]> {
  let summary = "LayerNorm's gradients from the saved mean and rstd";
  let description = [{
    With x̂ = (x − mean)·rstd and g = dy·gamma, over each row of x (the
    rows the forward normalised: h when it added a residual, whose
    gradient is then dx too):

    ```
    dx = rstd · (g − mean(g) − x̂ · mean(g·x̂)),  dgamma = Σ dy·x̂,  dbeta = Σ dy
    ```

    dy and x `[N, C]` or `[M, N, C]`, `mean` and `rstd` `[N]` (`[M, N]`)
    f32, `gamma` `[C]` optional. The column sums are deterministic: each
    of `blocks` blocks sums its rows' terms, then the blocks' sums are
    added in a fixed order (no atomics). `threads`, `rows_per_block`,
    `chunk` as in the forward.

    ```mlir
    %dx, %dgamma, %dbeta = rudnn.layer_norm_backward %dy, %x, %mean, %rstd
        gamma %g : (tensor<?x1000xf32>, tensor<?x1000xf32>, tensor<?xf32>,
                    tensor<?xf32>, tensor<1000xf32>)
        -> (tensor<?x1000xf32>, tensor<1000xf32>, tensor<1000xf32>)
    ```
  }];
  let arguments = !con((ins
    AnyRankedTensor:$dy,
    AnyRankedTensor:$x,
    AnyRankedTensor:$mean,
    AnyRankedTensor:$rstd,
    Optional<AnyRankedTensor>:$gamma), NormBackwardFormArguments);
  let results = (outs AnyRankedTensor:$dx, AnyRankedTensor:$dgamma,
                      AnyRankedTensor:$dbeta);
  let assemblyFormat = [{
    $dy `,` $x `,` $mean `,` $rstd (`gamma` $gamma^)? (`threads` $threads^)?
    (`rows_per_block` $rows_per_block^)? (`chunk` $chunk^)?
    (`blocks` $blocks^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_RmsNormBackwardOp : Rudnn_NormOperatorOp<"rms_norm_backward", "NormBackward", "normBackwardContract", "RmsNorm", [
    Pure, DeclareOpInterfaceMethods<Rudnn_OperatorOpInterface,
                                    ["getOperatorContract", "getCallContract"]>]> {
  let summary = "RMSNorm's gradients from the saved rstd";
  let description = [{
    With x̂ = x·rstd and g = dy·gamma: `dx = rstd · (g − x̂ · mean(g·x̂))`,
    `dgamma = Σ dy·x̂`, deterministic as in `rudnn.layer_norm_backward`.

    ```mlir
    %dx, %dgamma = rudnn.rms_norm_backward %dy, %x, %rstd gamma %g : ...
    ```
  }];
  let arguments = !con((ins
    AnyRankedTensor:$dy,
    AnyRankedTensor:$x,
    AnyRankedTensor:$rstd,
    Optional<AnyRankedTensor>:$gamma), NormBackwardFormArguments);
  let results = (outs AnyRankedTensor:$dx, AnyRankedTensor:$dgamma);
  let assemblyFormat = [{
    $dy `,` $x `,` $rstd (`gamma` $gamma^)? (`threads` $threads^)?
    (`rows_per_block` $rows_per_block^)? (`chunk` $chunk^)?
    (`blocks` $blocks^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_NormGradientSumsOp : Rudnn_Op<"norm_gradient_sums", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "Each chunk's Σ g and Σ g·x̂ of a split row";
  let description = [{
    For rows split into chunks of `chunk` (S = ⌈C / chunk⌉): `sums`
    `[N, S, 2]` (or `[M, N, S, 2]`) f32, each chunk's Σ dy·gamma and
    Σ dy·gamma·x̂, which every chunk of the row needs for its dx.

    ```mlir
    %sums = rudnn.norm_gradient_sums %dy, %x, %rstd mean %mean
        kind "layer_norm" chunk 8192 threads 256 : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$dy,
    AnyRankedTensor:$x,
    AnyRankedTensor:$rstd,
    Optional<AnyRankedTensor>:$mean,
    Optional<AnyRankedTensor>:$gamma,
    StrAttr:$kind,
    I64Attr:$chunk,
    I64Attr:$threads);
  let results = (outs AnyRankedTensor:$sums);
  let assemblyFormat = [{
    $dy `,` $x `,` $rstd (`mean` $mean^)? (`gamma` $gamma^)? `kind` $kind
    `chunk` $chunk `threads` $threads attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_NormGradientRowsOp : Rudnn_Op<"norm_gradient_rows", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "dx of every row, and each block's column sums";
  let description = [{
    `blocks` blocks walk the rows (`threads` sharing one, `rows_per_block`
    a block for warps; with `sums`, the chunks of split rows): `dx` as x,
    and `partials` `[blocks, 2, C]` f32, each block's Σ dy·x̂ and Σ dy of
    every column.

    ```mlir
    %dx, %partials = rudnn.norm_gradient_rows %dy, %x, %rstd mean %mean
        gamma %g kind "layer_norm" threads 32 rows_per_block 8 blocks 264
        : ...
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$dy,
    AnyRankedTensor:$x,
    AnyRankedTensor:$rstd,
    Optional<AnyRankedTensor>:$mean,
    Optional<AnyRankedTensor>:$gamma,
    Optional<AnyRankedTensor>:$sums,
    StrAttr:$kind,
    I64Attr:$threads,
    OptionalAttr<I64Attr>:$rows_per_block,
    OptionalAttr<I64Attr>:$chunk,
    I64Attr:$blocks);
  let results = (outs AnyRankedTensor:$dx, AnyRankedTensor:$partials);
  let assemblyFormat = [{
    $dy `,` $x `,` $rstd (`mean` $mean^)? (`gamma` $gamma^)?
    (`sums` $sums^)? `kind` $kind `threads` $threads
    (`rows_per_block` $rows_per_block^)? (`chunk` $chunk^)? `blocks` $blocks
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Rudnn_NormGradientColumnsOp : Rudnn_Op<"norm_gradient_columns", [Pure]> {
  let summary = "dgamma and dbeta: the blocks' column sums added in order";
  let description = [{
    `dgamma[c] = Σ_b partials[b, 0, c]`, `dbeta[c] = Σ_b partials[b, 1, c]`,
    b in order: the same bits every call.

    ```mlir
    %dgamma, %dbeta = rudnn.norm_gradient_columns %partials
        : (tensor<264x2x1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$partials);
  let results = (outs AnyRankedTensor:$dgamma, AnyRankedTensor:$dbeta);
  let assemblyFormat = [{
    $partials attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // RUDNN_NORM_OPS_TD
