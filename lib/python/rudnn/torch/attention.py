"""Exact attention as FlashAttention's flash_attn_func and
flash_attn_varlen_func: q [B, T, H, D], k [B, S, G, D], v [B, S, G, E]
(H a multiple of G), causal masks aligned bottom-right, sliding windows,
softcapping, ALiBi; gradients through torch.autograd. Empty batches, sequences
or key sets need no kernel: their outputs are returned directly (a query
with no key has o = 0 and lse = −inf)."""

import inspect
import math
from typing import Optional

import torch
from torch import Tensor

from rudnn.errors import Unsupported, invalid
from rudnn.torch._common import (
    INT32_MAX,
    call,
    check_dim,
    check_offsets,
    check_tensor,
    dense,
    float_option,
    integer_option,
    operator_name,
    packed_offsets,
)


def _attributes(scale, causal, window_left, window_right, softcap, deterministic=False):
    """The operators' attributes (a window only when bounded, a softcap only
    when positive; `deterministic` the backward's alone)."""
    attributes = dict(scale=scale, causal=causal)
    if deterministic:
        attributes["deterministic"] = True
    if (window_left, window_right) != (-1, -1):
        attributes.update(window_left=window_left, window_right=window_right)
    if softcap > 0:
        attributes["softcap"] = softcap
    return attributes


def _nothing_to_compute(q, k, cu_seqlens_q, cu_seqlens_k):
    """Whether q or k has no rows (an empty batch, sequence or head set, or
    no keys at all), so the results are known without a kernel; packed
    offsets are checked as a call would check them."""
    if q.numel() and k.numel():
        return False
    if cu_seqlens_q is not None:
        check_offsets("cu_seqlens_q", cu_seqlens_q, q.shape[0], "T")
        check_offsets("cu_seqlens_k", cu_seqlens_k, k.shape[0], "S")
    return True


def _lse_shape(q, packed):
    return (q.shape[1], q.shape[0]) if packed else (q.shape[0], q.shape[2], q.shape[1])


@torch.library.custom_op("rudnn::attention", mutates_args=())
def _attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    cu_seqlens_q: Optional[Tensor],
    cu_seqlens_k: Optional[Tensor],
    alibi_slopes: Optional[Tensor],
    scale: float,
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
    deterministic: bool,
) -> tuple[Tensor, Tensor]:
    packed = cu_seqlens_q is not None
    if _nothing_to_compute(q, k, cu_seqlens_q, cu_seqlens_k):
        # Every query (if any) has no key: o = 0, lse = −inf.
        o = q.new_zeros(*q.shape[:-1], v.shape[-1])
        return o, q.new_full(_lse_shape(q, packed), -math.inf, dtype=torch.float32)
    return call(
        operator_name("attention", cu_seqlens_q),
        dict(
            q=q, k=k, v=v, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
            alibi_slopes=alibi_slopes,
        ),
        ("o", "lse"),
        **_attributes(scale, causal, window_left, window_right, softcap),
    )


@_attention.register_fake
def _(
    q, k, v, cu_seqlens_q, cu_seqlens_k, alibi_slopes, scale, causal, window_left, window_right,
    softcap, deterministic,
):
    o = q.new_empty(*q.shape[:-1], v.shape[-1])
    return o, q.new_empty(_lse_shape(q, cu_seqlens_q is not None), dtype=torch.float32)


@torch.library.custom_op("rudnn::attention_backward", mutates_args=())
def _attention_backward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    cu_seqlens_q: Optional[Tensor],
    cu_seqlens_k: Optional[Tensor],
    alibi_slopes: Optional[Tensor],
    o: Tensor,
    lse: Tensor,
    d_output: Tensor,
    scale: float,
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
    deterministic: bool,
) -> tuple[Tensor, Tensor, Tensor]:
    if _nothing_to_compute(q, k, cu_seqlens_q, cu_seqlens_k):
        # No query saw a key: nothing depends on q, k or v.
        return q.new_zeros(q.shape), k.new_zeros(k.shape), v.new_zeros(v.shape)
    tensors = dict(
        q=q, k=k, v=v, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
        alibi_slopes=alibi_slopes,
    )
    return call(
        operator_name("attention", cu_seqlens_q) + "_backward",
        dict(tensors, o=o, lse=lse, d_output=d_output),
        ("dq", "dk", "dv"),
        **_attributes(scale, causal, window_left, window_right, softcap, deterministic),
    )


@_attention_backward.register_fake
def _(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_k,
    alibi_slopes,
    o,
    lse,
    d_output,
    scale,
    causal,
    window_left,
    window_right,
    softcap,
    deterministic,
):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup(ctx, inputs, output):
    q, k, v, cu_q, cu_k, slopes, *attributes = inputs
    ctx.save_for_backward(q, k, v, cu_q, cu_k, slopes, *output)
    ctx.attributes = attributes


def _backward(ctx, d_output, d_lse):
    q, k, v, cu_q, cu_k, slopes, o, lse = ctx.saved_tensors
    dq, dk, dv = _attention_backward(
        q, k, v, cu_q, cu_k, slopes, o, lse, dense(d_output), *ctx.attributes
    )
    # The slopes are constants, as flash-attn takes them: no gradient.
    return dq, dk, dv, None, None, None, None, None, None, None, None, None


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
    # A head dim of 0 still defines o (the mean of v), which the kernels do
    # not compute; a value dim of 0 leaves lse to compute.
    if q.shape[-1] == 0:
        raise invalid("q", f"head dim D is 0 (shape {tuple(q.shape)}): at least 1")
    if v.shape[-1] == 0:
        raise invalid("v", f"value dim E is 0 (shape {tuple(v.shape)}): at least 1")
    heads, key_heads = q.shape[-2], k.shape[-2]
    if (key_heads == 0 and heads) or (key_heads and heads % key_heads):
        raise invalid("k", f"{key_heads} key heads do not divide q's {heads} heads")


def _window(window_size):
    """(left, right), each -1 (unbounded) or a distance the kernels take
    (int32)."""
    if not isinstance(window_size, (tuple, list)) or len(window_size) != 2:
        raise invalid("window_size", f"expected a pair (left, right), got {window_size!r}")
    return tuple(
        integer_option("window_size", side, minimum=-1, maximum=INT32_MAX) for side in window_size
    )


def _options(q, k, softmax_scale, causal, window_size, softcap, dropout_p, deterministic):
    """The attributes as the custom op takes them, each checked: the
    operator's scale and softcap are positive float32 (softcap 0: none);
    `deterministic` asks the backward for the same dq bits every call.

    A window side reaching past every key bounds nothing, and is passed as
    -1: query i (of T, or T rows packed) sees keys j with
    j − i − (S − T) ≤ T − 1 and i + (S − T) − j ≤ S − 1 anyway, so the
    result is the same, one program serves every such window, and no bound
    near int32's limit reaches the kernels' index arithmetic."""
    if dropout_p:
        raise Unsupported("dropout_p: rudnn's attention has no dropout (pass 0.0)")
    left, right = _window(window_size)
    queries, keys = q.shape[-3], k.shape[-3]
    left = -1 if left >= keys else left
    right = -1 if right >= queries else right
    softcap = float_option("softcap", softcap, "non-negative")
    if softcap:
        float_option("softcap", softcap, "positive")  # not so small it is 0 as a float32
    if softmax_scale is None:
        scale = q.shape[-1] ** -0.5
    else:
        scale = float_option("softmax_scale", softmax_scale, "positive")
    return scale, bool(causal), left, right, softcap, bool(deterministic)


def _offsets(name, offsets, like):
    check_tensor(name, offsets, 1, dtypes=(torch.int32, torch.int64))
    if offsets.device != like.device:
        raise invalid(name, f"is on {offsets.device}, q on {like.device}")
    return packed_offsets(name, offsets)


def _slopes(alibi_slopes, q, batch=None):
    """flash-attn's ALiBi slopes, (H,) or (B, H) f32, as the operator takes
    them: [B, H] padded (one row of (H,) shared through a batch stride of
    0), [H] packed (`batch` None), where one slope a head serves every
    entry."""
    if alibi_slopes is None:
        return None
    heads = q.shape[-2]
    check_tensor("alibi_slopes", alibi_slopes, None, dtypes=(torch.float32,))
    if alibi_slopes.device != q.device:
        raise invalid("alibi_slopes", f"is on {alibi_slopes.device}, q on {q.device}")
    shape = tuple(alibi_slopes.shape)
    if batch is None:
        if shape != (heads,):
            raise Unsupported(
                f"alibi_slopes of shape {shape}: packed batches take one slope a head "
                f"({heads},), not one an entry"
            )
        return alibi_slopes.contiguous()
    if shape == (heads,):
        return alibi_slopes.expand(batch, heads)
    if shape != (batch, heads):
        raise invalid("alibi_slopes", f"expected ({heads},) or ({batch}, {heads}), got {shape}")
    return dense(alibi_slopes)


def _unsupported(block_table):
    """flash-attn's options rudnn cannot honour yet, refused by name."""
    if block_table is not None:
        raise Unsupported("block_table: use kv_cache_attention_paged for paged keys")


def _results(o, lse, return_attn_probs, return_lse):
    """flash-attn's return convention: o, or (o, lse, None) with
    `return_attn_probs` (the probabilities exist only with dropout there);
    rudnn's `return_lse` gives (o, lse)."""
    if return_attn_probs:
        return o, lse, None
    return (o, lse) if return_lse else o


def flash_attn_func(
    q,
    k,
    v,
    dropout_p=0.0,
    softmax_scale=None,
    causal=False,
    window_size=(-1, -1),
    softcap=0.0,
    alibi_slopes=None,
    deterministic=False,
    return_attn_probs=False,
    *,
    return_lse=False,
):
    """flash-attn 2.8's flash_attn_func, its parameters in its order: the
    output [B, T, H, E]; with `return_attn_probs`, (o, lse [B, H, T] f32,
    None) as flash-attn returns without dropout; with rudnn's `return_lse`,
    (o, lse). `dropout_p` must be 0 (Unsupported, a NotImplementedError,
    naming it). `alibi_slopes` (H,) or (B, H) float32: each allowed score
    less slope·|i + S − T − j|, as flash-attn biases it (no gradient flows
    to the slopes). `deterministic`: the backward gives the same dq bits
    every call (its f32 additions ordered)."""
    _check(q, k, v, packed=False)
    slopes = _slopes(alibi_slopes, q, batch=q.shape[0])
    options = _options(q, k, softmax_scale, causal, window_size, softcap, dropout_p, deterministic)
    o, lse = _attention(dense(q), dense(k), dense(v), None, None, slopes, *options)
    return _results(o, lse, return_attn_probs, return_lse)


def flash_attn_varlen_func(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_k,
    max_seqlen_q=None,
    max_seqlen_k=None,
    dropout_p=0.0,
    softmax_scale=None,
    causal=False,
    window_size=(-1, -1),
    softcap=0.0,
    alibi_slopes=None,
    deterministic=False,
    return_attn_probs=False,
    block_table=None,
    *,
    return_lse=False,
):
    """flash-attn 2.8's flash_attn_varlen_func, its parameters in its
    order: sequences packed along the first dim (q [T, H, D], k [S, G, D],
    v [S, G, E]), entry b's rows from cu_seqlens[b] to cu_seqlens[b + 1];
    the output [T, H, E], and the log-sum-exp [H, T] as flash_attn_func
    returns it. The maximal lengths are not needed (flash-attn requires
    them; here they may be left out), but must be None or sizes;
    `block_table` must be None. `alibi_slopes` as flash_attn_func takes
    them, one a head (H,): per-entry slopes (B, H) are refused by name.

    cu_seqlens may be int32 or int64; an int64 offset beyond int32 is
    refused (InvalidArgument naming it) on CPU; on CUDA, where reading it
    would synchronise, it becomes -1, a negative offset, which the operator
    refuses, rather than wrapping to another row."""
    _unsupported(block_table)
    for name, size in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if size is not None:
            integer_option(name, size, minimum=0)
    _check(q, k, v, packed=True)
    cu_q = _offsets("cu_seqlens_q", cu_seqlens_q, q)
    cu_k = _offsets("cu_seqlens_k", cu_seqlens_k, q)
    if cu_q.shape != cu_k.shape:
        raise invalid("cu_seqlens_k", f"{cu_k.shape[0]} offsets, cu_seqlens_q has {cu_q.shape[0]}")
    slopes = _slopes(alibi_slopes, q)
    options = _options(q, k, softmax_scale, causal, window_size, softcap, dropout_p, deterministic)
    o, lse = _attention(dense(q), dense(k), dense(v), cu_q, cu_k, slopes, *options)
    return _results(o, lse, return_attn_probs, return_lse)


def _packed(tensor, name, dim, parts):
    """The `parts` views of `tensor` along its packing dim `dim` (flash-attn's
    qkv [..., 3, H, D] or kv [..., 2, G, D])."""
    check_tensor(name, tensor, None)
    if tensor.dim() <= dim or tensor.shape[dim] != parts:
        raise invalid(name, f"expected {parts} along dim {dim}, got shape {tuple(tensor.shape)}")
    return tensor.unbind(dim)


def _packed_form(name, leading, unpack, base, doc):
    """A flash-attn packed form: its `leading` tensors (no defaults), then
    `base`'s options from dropout_p to return_attn_probs, so the signature
    reads as flash-attn's; `unpack` turns the leading arguments into
    `base`'s."""
    options = list(inspect.signature(flash_attn_func).parameters.values())[3:-1]
    signature = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in leading] + options
    )

    def form(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        return base(*unpack(*values[: len(leading)]), *values[len(leading) :])

    form.__name__ = form.__qualname__ = name
    form.__signature__ = signature
    form.__doc__ = doc
    return form


flash_attn_qkvpacked_func = _packed_form(
    "flash_attn_qkvpacked_func",
    ("qkv",),
    lambda qkv: _packed(qkv, "qkv", 2, 3),
    flash_attn_func,
    """flash-attn's flash_attn_qkvpacked_func: qkv [B, T, 3, H, D], as
    flash_attn_func on its three parts (gradients reach qkv).""",
)

flash_attn_kvpacked_func = _packed_form(
    "flash_attn_kvpacked_func",
    ("q", "kv"),
    lambda q, kv: (q, *_packed(kv, "kv", 2, 2)),
    flash_attn_func,
    """flash-attn's flash_attn_kvpacked_func: kv [B, S, 2, G, D], as
    flash_attn_func on q and kv's two parts.""",
)

flash_attn_varlen_qkvpacked_func = _packed_form(
    "flash_attn_varlen_qkvpacked_func",
    ("qkv", "cu_seqlens", "max_seqlen"),
    lambda qkv, cu, size: (*_packed(qkv, "qkv", 1, 3), cu, cu, size, size),
    flash_attn_varlen_func,
    """flash-attn's flash_attn_varlen_qkvpacked_func: qkv [T, 3, H, D]
    packed, the same offsets for queries and keys.""",
)

flash_attn_varlen_kvpacked_func = _packed_form(
    "flash_attn_varlen_kvpacked_func",
    ("q", "kv", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k"),
    lambda q, kv, *sizes: (q, *_packed(kv, "kv", 1, 2), *sizes),
    flash_attn_varlen_func,
    """flash-attn's flash_attn_varlen_kvpacked_func: kv [S, 2, G, D] packed.""",
)
