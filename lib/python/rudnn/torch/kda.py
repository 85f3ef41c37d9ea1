"""Kimi Delta Attention as flash-linear-attention's chunk_kda: per token,
the state decays per key channel, S ← diag(exp(g_t)) S, takes the delta
rule's update S ← S + k_t (beta_t (v_t − Sᵀk_t))ᵀ, and o_t = scale · Sᵀq_t.
Batched ([B, T, H, ·]) or packed sequences (B = 1 with `cu_seqlens`); the
inputs as models produce them (L2-normalised q and k, beta as logits, the
gate from A_log and dt_bias) transformed inside; gradients through
torch.autograd."""

import torch

from rudnn.errors import Unsupported, invalid
from rudnn.torch._common import (
    call,
    check_dim,
    check_offsets,
    check_tensor,
    dense,
    float_option,
    operator_name,
    packed_offsets,
)

# What the KDA custom ops' schemas share, spelled once: every op takes the
# five inputs first, its own tensors, the gate's operands, then the options
# _transforms returns (which the ops' functions take as `*options`).
_INPUTS_SCHEMA = "Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta"
_GATE_SCHEMA = "Tensor? a_log, Tensor? dt_bias"
_OPTIONS_SCHEMA = "float scale, bool qk_l2norm, bool beta_logits, float? lower_bound"
# chunk_kda's inputs, which its backward takes (and saves) as they are.
_CHUNK_INPUTS_SCHEMA = (
    f"{_INPUTS_SCHEMA}, Tensor? initial_state, Tensor? cu_seqlens, {_GATE_SCHEMA}"
)


def _attributes(q, v, scale, qk_l2norm, beta_logits, lower_bound):
    """The operators' attributes: grouped heads when q has fewer heads than
    v, the transforms asked for, the gate's lower bound when given."""
    return dict(
        scale=scale,
        grouped_heads=q.shape[2] != v.shape[2],
        qk_l2norm=qk_l2norm,
        beta_logits=beta_logits,
        gate_lower_bound=lower_bound,
    )


def _tensors(q, k, v, g, beta, a_log, dt_bias, **more):
    """What every KDA operator reads, by contract name, and `more` (None:
    absent)."""
    return dict(q=q, k=k, v=v, g=g, beta=beta, a_log=a_log, dt_bias=dt_bias, **more)


def _nothing_to_compute(q, v, cu_seqlens):
    """Whether there is no token or no value channel (B, T, H or V is 0),
    so every result is known without a kernel: o is empty, and each
    sequence's final state is its initial one. Packed offsets are checked
    as a call would check them."""
    if v.numel():
        return False
    if cu_seqlens is not None:
        check_offsets("cu_seqlens", cu_seqlens, q.shape[1], "T")
    return True


@torch.library.custom_op(
    "rudnn::chunk_kda",
    mutates_args=(),
    schema=f"({_CHUNK_INPUTS_SCHEMA}, {_OPTIONS_SCHEMA}) -> (Tensor, Tensor)",
)
def _chunk_kda(q, k, v, g, beta, initial_state, cu_seqlens, a_log, dt_bias, *options):
    if _nothing_to_compute(q, v, cu_seqlens):
        states = _states(q, v, cu_seqlens)
        final_state = initial_state.clone() if initial_state is not None else states.zero_()
        return v.new_zeros(v.shape), final_state
    return call(
        operator_name("kda", cu_seqlens),
        _tensors(
            q, k, v, g, beta, a_log, dt_bias, cu_seqlens=cu_seqlens, initial_state=initial_state
        ),
        ("output", "final_state"),
        **_attributes(q, v, *options),
    )


def _states(q, v, cu_seqlens):
    sequences = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
    return q.new_empty(sequences, v.shape[2], q.shape[3], v.shape[3], dtype=torch.float32)


@_chunk_kda.register_fake
def _(q, k, v, g, beta, initial_state, cu_seqlens, a_log, dt_bias, *options):
    return v.new_empty(v.shape), _states(q, v, cu_seqlens)


def _like_or_empty(tensor, like):
    return tensor.new_empty(tensor.shape) if tensor is not None else like.new_empty(0)


@torch.library.custom_op(
    "rudnn::chunk_kda_backward",
    mutates_args=(),
    schema=f"({_CHUNK_INPUTS_SCHEMA}, Tensor d_output, Tensor? d_final_state, {_OPTIONS_SCHEMA})"
    " -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
)
def _chunk_kda_backward(
    q, k, v, g, beta, initial_state, cu_seqlens, a_log, dt_bias, d_output, d_final_state, *options
):
    """dq, dk, dv, dg, dbeta, then d_initial_state, d_a_log, d_dt_bias
    (empty where the input is absent)."""
    if _nothing_to_compute(q, v, cu_seqlens):
        # The final state is the initial one; nothing else reads an input.
        grads = [t.new_zeros(t.shape) for t in (q, k, v, g, beta)]
        if initial_state is None:
            d_initial_state = q.new_empty(0)
        elif d_final_state is None:
            d_initial_state = initial_state.new_zeros(initial_state.shape)
        else:
            d_initial_state = d_final_state.clone()
        gate = [t.new_zeros(t.shape) if t is not None else q.new_empty(0) for t in (a_log, dt_bias)]
        return (*grads, d_initial_state, *gate)
    optional = {"d_initial_state": initial_state, "d_a_log": a_log, "d_dt_bias": dt_bias}
    grads = call(
        operator_name("kda", cu_seqlens) + "_backward",
        _tensors(
            q,
            k,
            v,
            g,
            beta,
            a_log,
            dt_bias,
            cu_seqlens=cu_seqlens,
            initial_state=initial_state,
            d_output=d_output,
            d_final_state=d_final_state,
        ),
        ("dq", "dk", "dv", "dg", "dbeta") + tuple(n for n, t in optional.items() if t is not None),
        **_attributes(q, v, *options),
    )
    present = iter(grads[5:])
    return (
        *grads[:5],
        *(next(present) if t is not None else q.new_empty(0) for t in optional.values()),
    )


@_chunk_kda_backward.register_fake
def _(q, k, v, g, beta, initial_state, cu_seqlens, a_log, dt_bias, *rest):
    return tuple(t.new_empty(t.shape) for t in (q, k, v, g, beta)) + tuple(
        _like_or_empty(t, q) for t in (initial_state, a_log, dt_bias)
    )


def _setup(ctx, inputs, output):
    q, k, v, g, beta, initial_state, cu_seqlens, a_log, dt_bias, *options = inputs
    ctx.save_for_backward(q, k, v, g, beta, initial_state, cu_seqlens, a_log, dt_bias)
    ctx.options = options
    # An unused final state then has no gradient, and the backward reads none.
    ctx.set_materialize_grads(False)


def _backward(ctx, d_output, d_final_state):
    q, k, v, g, beta, initial_state, cu_seqlens, a_log, dt_bias = ctx.saved_tensors
    if d_output is None:  # only the final state is used
        d_output = v.new_zeros(v.shape)
    if d_final_state is not None:
        d_final_state = dense(d_final_state)
    # The saved tensors are the forward's inputs, in the order both ops take.
    grads = _chunk_kda_backward(*ctx.saved_tensors, dense(d_output), d_final_state, *ctx.options)
    optional = [
        d if t is not None else None for d, t in zip(grads[5:], (initial_state, a_log, dt_bias))
    ]
    d_initial_state, d_a_log, d_dt_bias = optional
    return (*grads[:5], d_initial_state, None, d_a_log, d_dt_bias, None, None, None, None)


torch.library.register_autograd("rudnn::chunk_kda", _backward, setup_context=_setup)


def _check_inputs(q, k, v, g, beta):
    """The value heads H, after checking q, k [B, T, Q, K], v [B, T, H, V],
    g [B, T, H, K] and beta [B, T, H] (Q = H, or Q dividing H: grouped value
    heads)."""
    check_tensor("q", q, 4)
    for name, tensor in (("k", k), ("v", v), ("g", g)):
        check_tensor(name, tensor, 4, like=q)
        for dim, what in ((0, "batch"), (1, "tokens")):
            check_dim(name, tensor, dim, q.shape[dim], what)
    check_dim("k", k, 2, q.shape[2], "query and key heads")
    heads = v.shape[2]
    if (q.shape[2] == 0 and heads) or (q.shape[2] and heads % q.shape[2]):
        raise invalid("v", f"{heads} value heads are not a multiple of q's {q.shape[2]} heads")
    # A key dim of 0 still defines o (0), which the kernels do not compute.
    if q.shape[3] == 0:
        raise invalid("q", f"key dim K is 0 (shape {tuple(q.shape)}): at least 1")
    check_dim("g", g, 2, heads, "value heads H")
    check_dim("k", k, 3, q.shape[3], "key dim K")
    check_dim("g", g, 3, q.shape[3], "key dim K")
    check_tensor("beta", beta, 3, like=q)
    if tuple(beta.shape) != tuple(v.shape[:3]):
        raise invalid("beta", f"shape {tuple(beta.shape)}, expected {tuple(v.shape[:3])}")
    return heads


def _check_gate(q, v, A_log, dt_bias, lower_bound):
    """A_log [H] and dt_bias [H·K] or [H, K] as the f32 operands rudnn takes."""
    if A_log is None:
        raise invalid("A_log", "use_gate_in_kernel=True needs A_log [H]")
    heads, keys = v.shape[2], q.shape[3]
    check_tensor("A_log", A_log, 1, like=q)
    check_dim("A_log", A_log, 0, heads, "heads")
    A_log = dense(A_log.float())
    if dt_bias is not None:
        check_tensor("dt_bias", dt_bias, like=q)
        if dt_bias.numel() != heads * keys or dt_bias.dim() not in (1, 2):
            raise invalid(
                "dt_bias",
                f"shape {tuple(dt_bias.shape)}, expected [{heads * keys}] or [{heads}, {keys}]",
            )
        dt_bias = dense(dt_bias.float().reshape(heads, keys))
    if lower_bound is not None:
        float_option("lower_bound", lower_bound, "negative")
    return A_log, dt_bias


def _transforms(q, v, scale, qk_l2norm, use_gate, A_log, dt_bias, lower_bound, beta_logits):
    """The gate's operands (None without the in-kernel gate, whose parameters
    fla ignores then too) and the options every KDA program takes: scale
    (default K^-0.5), qk_l2norm, beta_logits, lower_bound."""
    if use_gate:
        A_log, dt_bias = _check_gate(q, v, A_log, dt_bias, lower_bound)
    else:
        A_log = dt_bias = lower_bound = None
    scale = q.shape[-1] ** -0.5 if scale is None else float_option("scale", scale, "positive")
    bound = None if lower_bound is None else float(lower_bound)
    return A_log, dt_bias, (scale, bool(qk_l2norm), bool(beta_logits), bound)


def _apply(
    op, inputs, own_tensors, scale, qk_l2norm, use_gate, A_log, dt_bias, lower_bound, beta_logits
):
    """The KDA custom op `op` on the five checked `inputs` (q, k, v, g,
    beta) made dense, its own checked tensors, then the gate's operands and
    the options _transforms makes of the rest (checking them last, so the
    tensors' errors come first)."""
    q, _, v, _, _ = inputs
    A_log, dt_bias, options = _transforms(
        q, v, scale, qk_l2norm, use_gate, A_log, dt_bias, lower_bound, beta_logits
    )
    return op(*(dense(t) for t in inputs), *own_tensors, A_log, dt_bias, *options)


def chunk_kda(
    q,
    k,
    v,
    g,
    beta,
    scale=None,
    initial_state=None,
    output_final_state=False,
    use_qk_l2norm_in_kernel=False,
    use_gate_in_kernel=False,
    use_beta_sigmoid_in_kernel=False,
    allow_neg_eigval=False,
    safe_gate=False,
    lower_bound=None,
    disable_recompute=False,
    return_intermediate_states=False,
    state_v_first=False,
    cu_seqlens=None,
    cu_seqlens_cpu=None,
    cp_context=None,
    use_graph=False,
    max_num_seqs=None,
    **kwargs,
):
    """flash-linear-attention's chunk_kda. q, k, g [B, T, H, K]; v
    [B, T, H, V]; beta [B, T, H]; g the per-channel log decay (≤ 0); scale
    default K^-0.5; initial_state [N, H, K, V] f32 (N = B, or the number of
    sequences with cu_seqlens [N + 1], for which B must be 1). Returns
    (o [B, T, H, V], final_state [N, H, K, V] f32 or None). q and k may
    have fewer heads Q dividing H (grouped value heads): value head h reads
    q and k head h // (H / Q).

    As fla's: `use_qk_l2norm_in_kernel` normalises q and k rows (eps 1e-6);
    `use_beta_sigmoid_in_kernel` takes beta as logits; `use_gate_in_kernel`
    takes g as the raw gate projections, the decay being
    −exp(A_log[h]) · softplus(g + dt_bias) (A_log [H], dt_bias [H·K] or
    [H, K], optional), or with `lower_bound` (negative)
    lower_bound · sigmoid(exp(A_log[h]) · (g + dt_bias)). Gradients reach
    A_log and dt_bias too.

    cu_seqlens may be int32 or int64; an int64 offset beyond int32 is
    refused (InvalidArgument naming it) on CPU; on CUDA, where reading it
    would synchronise, it becomes -1, a negative offset, which the operator
    refuses, rather than wrapping to another token. No token (B, T or H 0)
    or no value channel (V 0) needs no kernel: o is empty and the final
    state the initial one (or 0).

    The signature is fla-core 0.6.0's, names, order and defaults, checked
    as it checks them: `A_log` and `dt_bias` come in `kwargs`, as does
    `chunk_size` (32 or 64; the chunk is the policy's either way);
    `allow_neg_eigval` (with `use_beta_sigmoid_in_kernel`) takes beta as
    2·sigmoid(beta); `safe_gate` (with `use_gate_in_kernel`) asks for a
    `lower_bound` in [-5, 0); `state_v_first` (or its deprecated name
    `transpose_state_layout`) holds the states as [N, H, V, K];
    `initial_state` may be in any floating dtype (summed in f32, the final
    state f32); `disable_recompute`, `cu_seqlens_cpu`, `use_graph` and
    `max_num_seqs` change nothing here. `return_intermediate_states` and
    `cp_context` are refused by name (Unsupported, a NotImplementedError)
    unless at their neutral values."""
    if return_intermediate_states:
        raise Unsupported(
            "return_intermediate_states: rudnn's chunk_kda returns no per-chunk states"
        )
    if cp_context is not None:
        raise Unsupported("cp_context: rudnn's chunk_kda has no context parallelism")
    A_log, dt_bias = kwargs.pop("A_log", None), kwargs.pop("dt_bias", None)
    if "transpose_state_layout" in kwargs:
        if state_v_first:
            raise invalid("transpose_state_layout", "is state_v_first's old name: pass one")
        state_v_first = kwargs.pop("transpose_state_layout")
    if kwargs.get("chunk_size", 64) not in (32, 64):
        raise invalid("chunk_size", f"must be 32 or 64, got {kwargs['chunk_size']!r}")
    if safe_gate and use_gate_in_kernel:
        if lower_bound is None:
            raise invalid("lower_bound", "safe_gate with use_gate_in_kernel needs one")
        if not -5 <= lower_bound < 0:
            raise invalid("lower_bound", f"must be in safe_gate's [-5, 0), got {lower_bound}")
    if allow_neg_eigval and not use_beta_sigmoid_in_kernel:
        raise invalid("allow_neg_eigval", "needs use_beta_sigmoid_in_kernel=True")
    heads = _check_inputs(q, k, v, g, beta)
    if allow_neg_eigval:  # beta in [0, 2): the logits' sigmoid, doubled
        beta = (2 * torch.sigmoid(beta.float())).to(beta.dtype)
        use_beta_sigmoid_in_kernel = False
    if cu_seqlens is not None:
        check_tensor("cu_seqlens", cu_seqlens, 1, dtypes=(torch.int32, torch.int64), like=q)
        if q.shape[0] != 1:
            raise invalid("q", f"batch {q.shape[0]}: packed sequences (cu_seqlens) need batch 1")
        cu_seqlens = packed_offsets("cu_seqlens", cu_seqlens)
    sequences = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
    if initial_state is not None:
        check_tensor("initial_state", initial_state, 4, like=q)
        if state_v_first:
            initial_state = initial_state.transpose(-1, -2)
        initial_state = initial_state.float()
        expected = (sequences, heads, q.shape[3], v.shape[3])
        if tuple(initial_state.shape) != expected:
            raise invalid(
                "initial_state", f"shape {tuple(initial_state.shape)}, expected {expected}"
            )
        initial_state = dense(initial_state)
    o, final_state = _apply(
        _chunk_kda,
        (q, k, v, g, beta),
        (initial_state, cu_seqlens),
        scale,
        use_qk_l2norm_in_kernel,
        use_gate_in_kernel,
        A_log,
        dt_bias,
        lower_bound,
        use_beta_sigmoid_in_kernel,
    )
    if not output_final_state:
        return o, None
    return o, final_state.transpose(-1, -2) if state_v_first else final_state


def fused_recurrent_kda(
    q,
    k,
    v,
    g,
    beta,
    A_log=None,
    dt_bias=None,
    scale=None,
    initial_state=None,
    output_final_state=False,
    use_qk_l2norm_in_kernel=False,
    use_gate_in_kernel=False,
    use_beta_sigmoid_in_kernel=False,
    allow_neg_eigval=False,
    lower_bound=None,
    state_v_first=False,
    cu_seqlens=None,
    **kwargs,
):
    """fla-core 0.6.0's fused_recurrent_kda, its signature (names, order,
    defaults): the same recurrence as chunk_kda, token by token there,
    computed here by chunk_kda's kernels (with gradients). Returns
    (o, final_state or None). A pool of states indexed per entry
    (`ssm_state_indices`, `num_accepted_tokens`, as serving engines pass
    them) is kda_decode's: refused here by name. fla-core 0.6.0's
    fused_recurrent_kda takes them into **kwargs and drops them (only its
    internal fused_recurrent_kda_fwd reads them), so a caller passing them
    there gets states read from initial_state[i] for sequence i, not from
    the pool's slots; refusing says so instead of computing that."""
    for name in ("ssm_state_indices", "num_accepted_tokens"):
        if kwargs.get(name) is not None:
            raise Unsupported(f"{name}: a pool of states indexed per entry is kda_decode's")
    return chunk_kda(
        q,
        k,
        v,
        g,
        beta,
        scale,
        initial_state,
        output_final_state,
        use_qk_l2norm_in_kernel,
        use_gate_in_kernel,
        use_beta_sigmoid_in_kernel,
        allow_neg_eigval,
        lower_bound=lower_bound,
        state_v_first=state_v_first,
        cu_seqlens=cu_seqlens,
        A_log=A_log,
        dt_bias=dt_bias,
        **kwargs,
    )
