//===- RudnnKdaInputOps.td - KDA's in-kernel input transforms -*- tablegen -*-===//
//
// What a KDA operator applies to its inputs before the recurrence when asked
// (as flash-linear-attention's chunk_kda does in its kernels): q and k
// L2-normalised, the gate formed from raw projections, beta from logits;
// and their gradients. Sequence tensors are [B, T, H, *] views.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_KDA_INPUT_OPS_TD
#define RUDNN_KDA_INPUT_OPS_TD

include "dialects/IR/RudnnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Rudnn_KdaInputOp<string mnemonic>
    : Rudnn_Op<mnemonic, [Pure]> {
  let hasVerifier = 1;
}

def Rudnn_L2NormalizeOp : Rudnn_KdaInputOp<"l2_normalize"> {
  let summary = "Rows divided by their L2 norm";
  let description = [{
    `y = x / sqrt(Σ_d x_d² + eps)` along the innermost dim of `x`
    [B, T, H, D] (f32, f16 or bf16; `y` dense, in `x`'s type).

    ```mlir
    %qn = rudnn.l2_normalize %q eps 1.0e-06
        : tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, F32Attr:$eps);
  let results = (outs AnyRankedTensor:$y);
  let assemblyFormat = [{
    $x `eps` $eps attr-dict `:` type($x) `->` type($y)
  }];
}

def Rudnn_L2NormalizeBackwardOp : Rudnn_KdaInputOp<"l2_normalize_backward"> {
  let summary = "Gradient of rudnn.l2_normalize";
  let description = [{
    `dx = (dy − y (y · dy)) / sqrt(Σ x² + eps)` per row, `y` the normalised
    `x` (formed again), `dx` dense in `x`'s type.

    ```mlir
    %dq = rudnn.l2_normalize_backward %q, %dqn eps 1.0e-06
        : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
        -> tensor<?x?x?x128xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$dy, F32Attr:$eps);
  let results = (outs AnyRankedTensor:$dx);
  let assemblyFormat = [{
    $x `,` $dy `eps` $eps attr-dict `:` type($x) `,` type($dy) `->` type($dx)
  }];
}

def Rudnn_KdaGateOp : Rudnn_KdaInputOp<"kda_gate"> {
  let summary = "KDA's log-decay from raw gate projections";
  let description = [{
    With `x = g_raw + dt_bias[h, d]` (no bias: `g_raw`):
    `g = −exp(a_log[h]) · softplus(x)` (softplus linear past 20), or, with
    `lower_bound` (negative), `g = lower_bound · sigmoid(exp(a_log[h]) · x)`,
    keeping every step's decay above e^lower_bound. `g_raw` [B, T, H, K],
    `a_log` [H] f32, `dt_bias` [H, K] f32; `g` dense f32.

    ```mlir
    %g = rudnn.kda_gate %g_raw a_log %a bias %dt
        : tensor<?x?x?x128xbf16>, tensor<?xf32>, tensor<?x128xf32>
        -> tensor<?x?x?x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$g_raw, AnyRankedTensor:$a_log,
                       Optional<AnyRankedTensor>:$dt_bias,
                       OptionalAttr<F32Attr>:$lower_bound);
  let results = (outs AnyRankedTensor:$g);
  let assemblyFormat = [{
    $g_raw `a_log` $a_log (`bias` $dt_bias^)?
    (`lower_bound` $lower_bound^)? attr-dict `:` type(operands) `->`
    type($g)
  }];
}

def Rudnn_KdaGateBackwardOp : Rudnn_KdaInputOp<"kda_gate_backward"> {
  let summary = "Gradient of rudnn.kda_gate with respect to g_raw";
  let description = [{
    `dg_raw = dg · ∂g/∂x` (f32, `g_raw`'s shape) and, in `partials`
    [ceil(T / 64), B, H, 2, K] f32, per block of 64 tokens the sums over
    its tokens of `dg_raw` (for `dt_bias`) and of `dg · ∂g/∂a_log` (for
    `a_log`), which `rudnn.kda_gate_sums` adds up in a fixed order.

    ```mlir
    %dg_raw, %partials = rudnn.kda_gate_backward %g_raw a_log %a bias %dt
        gradient %dg : ... -> ...
    ```
  }];
  let arguments = (ins AnyRankedTensor:$g_raw, AnyRankedTensor:$a_log,
                       Optional<AnyRankedTensor>:$dt_bias,
                       AnyRankedTensor:$dg,
                       OptionalAttr<F32Attr>:$lower_bound);
  let results = (outs AnyRankedTensor:$dg_raw, AnyRankedTensor:$partials);
  let assemblyFormat = [{
    $g_raw `a_log` $a_log (`bias` $dt_bias^)? `gradient` $dg
    (`lower_bound` $lower_bound^)? attr-dict `:` type(operands) `->`
    type(results)
  }];
}

def Rudnn_KdaGateSumsOp : Rudnn_KdaInputOp<"kda_gate_sums"> {
  let summary = "The gate parameters' gradients from per-block partials";
  let description = [{
    `d_a_log[h]` [H] and `d_dt_bias[h, d]` [H, K] (f32): the partial sums of
    `rudnn.kda_gate_backward` added over blocks and batch entries in order,
    so they are the same bits on every run.

    ```mlir
    %da, %ddt = rudnn.kda_gate_sums %partials
        : tensor<?x?x?x2x128xf32> -> tensor<?xf32>, tensor<?x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$partials);
  let results = (outs AnyRankedTensor:$d_a_log, AnyRankedTensor:$d_dt_bias);
  let assemblyFormat = [{
    $partials attr-dict `:` type($partials) `->` type(results)
  }];
}

def Rudnn_SigmoidOp : Rudnn_KdaInputOp<"sigmoid"> {
  let summary = "Logistic function of [B, T, H] values";
  let description = [{
    `y = 1 / (1 + e^−x)`, `y` dense f32: beta from its logits.

    ```mlir
    %beta = rudnn.sigmoid %logits : tensor<?x?x?xbf16> -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x);
  let results = (outs AnyRankedTensor:$y);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($y)";
}

def Rudnn_SigmoidBackwardOp : Rudnn_KdaInputOp<"sigmoid_backward"> {
  let summary = "Gradient of rudnn.sigmoid";
  let description = [{
    `dx = dy · s (1 − s)`, `s = sigmoid(x)` formed again; `dx` dense in
    `x`'s type.

    ```mlir
    %dlogits = rudnn.sigmoid_backward %logits, %dbeta
        : tensor<?x?x?xbf16>, tensor<?x?x?xf32> -> tensor<?x?x?xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$dy);
  let results = (outs AnyRankedTensor:$dx);
  let assemblyFormat = [{
    $x `,` $dy attr-dict `:` type($x) `,` type($dy) `->` type($dx)
  }];
}

#endif // RUDNN_KDA_INPUT_OPS_TD
