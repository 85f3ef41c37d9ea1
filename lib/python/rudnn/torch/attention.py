"""Exact attention as FlashAttention's flash_attn_func and
flash_attn_varlen_func: q [B, T, H, D], k [B, S, G, D], v [B, S, G, E]
(H a multiple of G), causal masks aligned bottom-right, sliding windows,
softcapping; gradients through torch.autograd."""

from typing import Optional

import torch
from torch import Tensor

from rudnn.errors import Unsupported, invalid
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


def _attributes(scale, causal, window_left, window_right, softcap):
    text = " causal" if causal else ""
    if (window_left, window_right) != (-1, -1):
        text += f" window ({window_left}, {window_right})"
    if softcap > 0:
        text += f" softcap {float_attr(softcap)}"
    return text + f" scale {float_attr(scale)}"


def _operands(q, k, v, packed):
    """The q, k, v operands and the offsets (packed), as (name, type)."""
    lead = (None,) * (q.dim() - 1)
    operands = [
        ("q", tensor_type(lead + (q.shape[-1],), element_type(q))),
        ("k", tensor_type(lead + (k.shape[-1],), element_type(q))),
        ("v", tensor_type(lead + (v.shape[-1],), element_type(q))),
    ]
    syntax = "%q, %k, %v"
    if packed:
        operands += [
            ("cu_seqlens_q", tensor_type((None,), "i32")),
            ("cu_seqlens_k", tensor_type((None,), "i32")),
        ]
        syntax += " cu_seqlens(%cu_seqlens_q, %cu_seqlens_k)"
    return operands, syntax


def _forward_program(q, k, v, packed, attributes):
    key = ("attention", packed, q.dtype, q.shape[-1], v.shape[-1], attributes)

    def build():
        operands, syntax = _operands(q, k, v, packed)
        lead = (None,) * (q.dim() - 1)
        results = [
            ("o", tensor_type(lead + (v.shape[-1],), element_type(q))),
            ("lse", tensor_type(lead, "f32")),
        ]
        name = "rudnn.attention_varlen" if packed else "rudnn.attention"
        return function_text(name, syntax + attributes, operands, results)

    return program(key, build)


def _backward_program(q, k, v, packed, attributes):
    key = ("attention_backward", packed, q.dtype, q.shape[-1], v.shape[-1], attributes)

    def build():
        operands, syntax = _operands(q, k, v, packed)
        lead = (None,) * (q.dim() - 1)
        output = tensor_type(lead + (v.shape[-1],), element_type(q))
        operands += [("o", output), ("lse", tensor_type(lead, "f32")), ("d_output", output)]
        syntax += " output(%o, %lse) gradient %d_output"
        results = [("d" + name, type) for name, type in operands[:3]]
        name = "rudnn.attention_varlen_backward" if packed else "rudnn.attention_backward"
        return function_text(name, syntax + attributes, operands, results)

    return program(key, build)


@torch.library.custom_op("rudnn::attention", mutates_args=())
def _attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    cu_seqlens_q: Optional[Tensor],
    cu_seqlens_k: Optional[Tensor],
    scale: float,
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
) -> tuple[Tensor, Tensor]:
    packed = cu_seqlens_q is not None
    attributes = _attributes(scale, causal, window_left, window_right, softcap)
    offsets = [cu_seqlens_q, cu_seqlens_k] if packed else []
    return _forward_program(q, k, v, packed, attributes)(q, k, v, *offsets)


@_attention.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, scale, causal, window_left, window_right, softcap):
    o = q.new_empty(*q.shape[:-1], v.shape[-1])
    if cu_seqlens_q is not None:
        return o, q.new_empty(q.shape[1], q.shape[0], dtype=torch.float32)
    return o, q.new_empty(q.shape[0], q.shape[2], q.shape[1], dtype=torch.float32)


@torch.library.custom_op("rudnn::attention_backward", mutates_args=())
def _attention_backward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    cu_seqlens_q: Optional[Tensor],
    cu_seqlens_k: Optional[Tensor],
    o: Tensor,
    lse: Tensor,
    d_output: Tensor,
    scale: float,
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
) -> tuple[Tensor, Tensor, Tensor]:
    packed = cu_seqlens_q is not None
    attributes = _attributes(scale, causal, window_left, window_right, softcap)
    offsets = [cu_seqlens_q, cu_seqlens_k] if packed else []
    return _backward_program(q, k, v, packed, attributes)(q, k, v, *offsets, o, lse, d_output)


@_attention_backward.register_fake
def _(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_k,
    o,
    lse,
    d_output,
    scale,
    causal,
    window_left,
    window_right,
    softcap,
):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup(ctx, inputs, output):
    q, k, v, cu_q, cu_k, *attributes = inputs
    ctx.save_for_backward(q, k, v, cu_q, cu_k, *output)
    ctx.attributes = attributes


def _backward(ctx, d_output, d_lse):
    q, k, v, cu_q, cu_k, o, lse = ctx.saved_tensors
    dq, dk, dv = _attention_backward(q, k, v, cu_q, cu_k, o, lse, dense(d_output), *ctx.attributes)
    return dq, dk, dv, None, None, None, None, None, None, None


torch.library.register_autograd("rudnn::attention", _backward, setup_context=_setup)


def _check(q, k, v, packed):
    rank = 3 if packed else 4
    check_tensor("q", q, rank)
    check_tensor("k", k, rank, dtypes=None, like=q)
    check_tensor("v", v, rank, dtypes=None, like=q)
    check_dim("k", k, -1, q.shape[-1], "head dim D")
    check_dim("v", v, -2, k.shape[-2], "key heads G")
    check_dim("v", v, -3, k.shape[-3], "keys")
    if not packed:
        check_dim("k", k, 0, q.shape[0], "batch")
    if q.shape[-2] % k.shape[-2]:
        raise invalid("k", f"{k.shape[-2]} key heads do not divide q's {q.shape[-2]} heads")


def _options(q, softmax_scale, causal, window_size, softcap, dropout_p):
    if dropout_p:
        raise Unsupported("dropout_p: rudnn's attention has no dropout (pass 0.0)")
    left, right = (int(w) for w in window_size)
    if left < -1 or right < -1:
        raise invalid("window_size", f"{window_size}: each side is -1 (unbounded) or ≥ 0")
    if softcap < 0:
        raise invalid("softcap", f"{softcap} is negative")
    scale = q.shape[-1] ** -0.5 if softmax_scale is None else float(softmax_scale)
    return scale, bool(causal), left, right, float(softcap)


def _offsets(name, offsets, like):
    check_tensor(name, offsets, 1, dtypes=(torch.int32, torch.int64))
    if offsets.device != like.device:
        raise invalid(name, f"is on {offsets.device}, q on {like.device}")
    return dense(offsets.to(torch.int32))


def flash_attn_func(
    q,
    k,
    v,
    softmax_scale=None,
    causal=False,
    window_size=(-1, -1),
    softcap=0.0,
    return_lse=False,
    *,
    dropout_p=0.0,
):
    """FlashAttention's flash_attn_func: the output [B, T, H, E], and the
    log-sum-exp [B, H, T] (f32) with `return_lse`."""
    _check(q, k, v, packed=False)
    options = _options(q, softmax_scale, causal, window_size, softcap, dropout_p)
    o, lse = _attention(dense(q), dense(k), dense(v), None, None, *options)
    return (o, lse) if return_lse else o


def flash_attn_varlen_func(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_k,
    max_seqlen_q=None,
    max_seqlen_k=None,
    softmax_scale=None,
    causal=False,
    window_size=(-1, -1),
    softcap=0.0,
    return_lse=False,
    *,
    dropout_p=0.0,
):
    """FlashAttention's flash_attn_varlen_func: sequences packed along the
    first dim (q [T, H, D], k [S, G, D], v [S, G, E]), entry b's rows from
    cu_seqlens[b] to cu_seqlens[b + 1]; the output [T, H, E] and, with
    `return_lse`, the log-sum-exp [H, T]. The maximal lengths are not
    needed (accepted for compatibility)."""
    _check(q, k, v, packed=True)
    cu_q = _offsets("cu_seqlens_q", cu_seqlens_q, q)
    cu_k = _offsets("cu_seqlens_k", cu_seqlens_k, q)
    if cu_q.shape != cu_k.shape:
        raise invalid("cu_seqlens_k", f"{cu_k.shape[0]} offsets, cu_seqlens_q has {cu_q.shape[0]}")
    options = _options(q, softmax_scale, causal, window_size, softcap, dropout_p)
    o, lse = _attention(dense(q), dense(k), dense(v), cu_q, cu_k, *options)
    return (o, lse) if return_lse else o
