"""Kimi Delta Attention as flash-linear-attention's chunk_kda: per token,
the state decays per key channel, S ← diag(exp(g_t)) S, takes the delta
rule's update S ← S + k_t (beta_t (v_t − Sᵀk_t))ᵀ, and o_t = scale · Sᵀq_t.
Batched ([B, T, H, ·]) or packed sequences (B = 1 with `cu_seqlens`);
gradients through torch.autograd."""

from typing import Optional

import torch
from torch import Tensor

from rudnn.errors import invalid
from rudnn.torch._common import (
    check_dim,
    check_tensor,
    dense,
    element_type,
    float_attr,
    function_text,
    program,
    tensor_type,
)


def _operands(q, k, v, g, beta, initial_state, packed):
    keys, values = q.shape[-1], v.shape[-1]
    lead = (1, None, None) if packed else (None, None, None)
    operands = [
        ("q", tensor_type(lead + (keys,), element_type(q))),
        ("k", tensor_type(lead + (keys,), element_type(k))),
        ("v", tensor_type(lead + (values,), element_type(v))),
        ("g", tensor_type(lead + (keys,), element_type(g))),
        ("beta", tensor_type(lead, element_type(beta))),
    ]
    syntax = "%q, %k, %v, %g, %beta"
    if packed:
        operands.append(("cu_seqlens", tensor_type((None,), "i32")))
        syntax += " cu_seqlens %cu_seqlens"
    state = tensor_type((None, None, keys, values), "f32")
    if initial_state is not None:
        operands.append(("initial_state", state))
        syntax += " initial_state %initial_state"
    return operands, syntax, state


def _attributes(scale, qk_l2norm):
    return f" scale {float_attr(scale)}" + (" qk_l2norm" if qk_l2norm else "")


def _key(q, k, v, g, beta, initial_state, packed, *rest):
    return (
        packed,
        q.dtype,
        k.dtype,
        v.dtype,
        g.dtype,
        beta.dtype,
        q.shape[-1],
        v.shape[-1],
        initial_state is not None,
        *rest,
    )


def _forward_program(q, k, v, g, beta, initial_state, packed, scale, qk_l2norm):
    def build():
        operands, syntax, state = _operands(q, k, v, g, beta, initial_state, packed)
        lead = (1, None, None) if packed else (None, None, None)
        results = [
            ("o", tensor_type(lead + (v.shape[-1],), element_type(v))),
            ("final_state", state),
        ]
        operation = "rudnn.kda_varlen" if packed else "rudnn.kda"
        return function_text(operation, syntax + _attributes(scale, qk_l2norm), operands, results)

    return program(
        ("kda",) + _key(q, k, v, g, beta, initial_state, packed, scale, qk_l2norm), build
    )


def _backward_program(q, k, v, g, beta, initial_state, packed, d_final_state, scale, qk_l2norm):
    def build():
        operands, syntax, state = _operands(q, k, v, g, beta, initial_state, packed)
        results = [("d" + name, type) for name, type in operands[:5]]
        operands.append(("d_output", operands[2][1]))
        syntax += " d_output %d_output"
        if d_final_state is not None:
            operands.append(("d_final_state", state))
            syntax += " d_final_state %d_final_state"
        if initial_state is not None:
            results.append(("d_initial_state", state))
        operation = "rudnn.kda_varlen_backward" if packed else "rudnn.kda_backward"
        return function_text(operation, syntax + _attributes(scale, qk_l2norm), operands, results)

    key = ("kda_backward",) + _key(
        q, k, v, g, beta, initial_state, packed, d_final_state is not None, scale, qk_l2norm
    )
    return program(key, build)


@torch.library.custom_op("rudnn::chunk_kda", mutates_args=())
def _chunk_kda(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    g: Tensor,
    beta: Tensor,
    initial_state: Optional[Tensor],
    cu_seqlens: Optional[Tensor],
    scale: float,
    qk_l2norm: bool,
) -> tuple[Tensor, Tensor]:
    packed = cu_seqlens is not None
    args = [q, k, v, g, beta] + [t for t in (cu_seqlens, initial_state) if t is not None]
    return _forward_program(q, k, v, g, beta, initial_state, packed, scale, qk_l2norm)(*args)


def _states(q, v, cu_seqlens):
    sequences = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
    return q.new_empty(sequences, q.shape[2], q.shape[3], v.shape[3], dtype=torch.float32)


@_chunk_kda.register_fake
def _(q, k, v, g, beta, initial_state, cu_seqlens, scale, qk_l2norm):
    return v.new_empty(*q.shape[:-1], v.shape[-1]), _states(q, v, cu_seqlens)


@torch.library.custom_op("rudnn::chunk_kda_backward", mutates_args=())
def _chunk_kda_backward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    g: Tensor,
    beta: Tensor,
    initial_state: Optional[Tensor],
    cu_seqlens: Optional[Tensor],
    d_output: Tensor,
    d_final_state: Optional[Tensor],
    scale: float,
    qk_l2norm: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    packed = cu_seqlens is not None
    args = [q, k, v, g, beta] + [t for t in (cu_seqlens, initial_state) if t is not None]
    args += [d_output] + ([d_final_state] if d_final_state is not None else [])
    grads = _backward_program(
        q, k, v, g, beta, initial_state, packed, d_final_state, scale, qk_l2norm
    )(*args)
    return grads if initial_state is not None else grads + (q.new_empty(0),)


@_chunk_kda_backward.register_fake
def _(q, k, v, g, beta, initial_state, cu_seqlens, d_output, d_final_state, scale, qk_l2norm):
    d_state = (
        initial_state.new_empty(initial_state.shape)
        if initial_state is not None
        else q.new_empty(0)
    )
    return tuple(t.new_empty(t.shape) for t in (q, k, v, g, beta)) + (d_state,)


def _setup(ctx, inputs, output):
    q, k, v, g, beta, initial_state, cu_seqlens, scale, qk_l2norm = inputs
    ctx.save_for_backward(q, k, v, g, beta, initial_state, cu_seqlens)
    ctx.options = (scale, qk_l2norm)
    # An unused final state then has no gradient, and the backward reads none.
    ctx.set_materialize_grads(False)


def _backward(ctx, d_output, d_final_state):
    q, k, v, g, beta, initial_state, cu_seqlens = ctx.saved_tensors
    if d_output is None:  # only the final state is used
        d_output = v.new_zeros(*q.shape[:-1], v.shape[-1])
    grads = _chunk_kda_backward(
        q,
        k,
        v,
        g,
        beta,
        initial_state,
        cu_seqlens,
        dense(d_output),
        None if d_final_state is None else dense(d_final_state),
        *ctx.options,
    )
    d_initial_state = grads[5] if initial_state is not None else None
    return (*grads[:5], d_initial_state, None, None, None)


torch.library.register_autograd("rudnn::chunk_kda", _backward, setup_context=_setup)


def chunk_kda(
    q,
    k,
    v,
    g,
    beta,
    scale=None,
    initial_state=None,
    output_final_state=False,
    cu_seqlens=None,
    use_qk_l2norm_in_kernel=False,
):
    """flash-linear-attention's chunk_kda. q, k, g [B, T, H, K]; v
    [B, T, H, V]; beta [B, T, H]; g the per-channel log decay (≤ 0); scale
    default K^-0.5; initial_state [N, H, K, V] f32 (N = B, or the number of
    sequences with cu_seqlens [N + 1], for which B must be 1). Returns
    (o [B, T, H, V], final_state [N, H, K, V] f32 or None)."""
    check_tensor("q", q, 4)
    for name, tensor in (("k", k), ("v", v), ("g", g)):
        check_tensor(name, tensor, 4, like=q)
        for dim, what in ((0, "batch"), (1, "tokens"), (2, "heads")):
            check_dim(name, tensor, dim, q.shape[dim], what)
    check_dim("k", k, 3, q.shape[3], "key dim K")
    check_dim("g", g, 3, q.shape[3], "key dim K")
    check_tensor("beta", beta, 3, like=q)
    if tuple(beta.shape) != tuple(q.shape[:3]):
        raise invalid("beta", f"shape {tuple(beta.shape)}, expected {tuple(q.shape[:3])}")
    if cu_seqlens is not None:
        check_tensor("cu_seqlens", cu_seqlens, 1, dtypes=(torch.int32, torch.int64), like=q)
        if q.shape[0] != 1:
            raise invalid("q", f"batch {q.shape[0]}: packed sequences (cu_seqlens) need batch 1")
        cu_seqlens = dense(cu_seqlens.to(torch.int32))
    sequences = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
    if initial_state is not None:
        check_tensor("initial_state", initial_state, 4, dtypes=(torch.float32,), like=q)
        expected = (sequences, q.shape[2], q.shape[3], v.shape[3])
        if tuple(initial_state.shape) != expected:
            raise invalid(
                "initial_state", f"shape {tuple(initial_state.shape)}, expected {expected}"
            )
        initial_state = dense(initial_state)
    scale = q.shape[-1] ** -0.5 if scale is None else float(scale)
    o, final_state = _chunk_kda(
        dense(q),
        dense(k),
        dense(v),
        dense(g),
        dense(beta),
        initial_state,
        cu_seqlens,
        scale,
        bool(use_qk_l2norm_in_kernel),
    )
    return o, (final_state if output_final_state else None)
