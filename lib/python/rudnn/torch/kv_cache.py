"""One decoding step over a K/V cache, as FlashAttention's
flash_attn_with_kvcache: the new tokens' keys and values (when given) are
written into the caches (contiguous or paged) in place at each entry's
length, then each query attends to its entry's cache at its diagonal,
with FlashAttention's options (left padding, causal or not, a window, a
softcap, ALiBi)."""

import math
from typing import Optional

import torch
from torch import Tensor

from rudnn.errors import invalid
from rudnn.torch._common import (
    call,
    check_dim,
    check_tensor,
    check_updatable,
    dense,
    float_option,
    int32_indices,
)
from rudnn.torch.attention import _slopes, _window


def _capacity(k_cache, block_table):
    """The tokens an entry's cache can hold: S, or M pages of Z (none when
    there are no pages at all)."""
    if block_table is None:
        return k_cache.shape[1]
    return block_table.shape[1] * k_cache.shape[1] if k_cache.shape[0] else 0


@torch.library.custom_op("rudnn::kv_cache_attention", mutates_args=("k_cache", "v_cache"))
def _kv_cache_attention(
    q: Tensor,
    k: Optional[Tensor],
    v: Optional[Tensor],
    k_cache: Tensor,
    v_cache: Tensor,
    block_table: Optional[Tensor],
    cache_lengths: Tensor,
    cache_leftpad: Optional[Tensor],
    cache_batch_idx: Optional[Tensor],
    alibi_slopes: Optional[Tensor],
    rotary_cos: Optional[Tensor],
    rotary_sin: Optional[Tensor],
    rotary_interleaved: bool,
    scale: float,
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
) -> tuple[Tensor, Tensor, Tensor]:
    capacity = _capacity(k_cache, block_table)
    if q.numel() == 0 or capacity == 0:
        # No query (o and lse empty), or no cache at all: an entry that
        # would hold a token is refused (o 0, lse −inf), an empty one
        # attends to nothing; no cache changes.
        appended = q.shape[1] if k is not None else 0
        refused = (cache_lengths < 0) | (cache_lengths + appended > capacity)
        if cache_leftpad is not None:
            refused |= (cache_leftpad < 0) | (cache_leftpad > cache_lengths)
        if cache_batch_idx is not None:
            refused |= (cache_batch_idx < 0) | (cache_batch_idx >= k_cache.shape[0])
        if rotary_cos is not None:
            refused |= cache_lengths + appended > rotary_cos.shape[0]
        lse = q.new_full((q.shape[0], q.shape[2], q.shape[1]), -math.inf, dtype=torch.float32)
        return q.new_zeros(*q.shape[:-1], v_cache.shape[-1]), lse, refused.to(torch.int32)
    if block_table is None:
        operator, caches = "rudnn.kv_cache_attention", dict(k_cache=k_cache, v_cache=v_cache)
    else:
        operator = "rudnn.kv_cache_attention_paged"
        caches = dict(k_pages=k_cache, v_pages=v_cache, block_table=block_table)
    attributes = dict(scale=scale)
    if not causal:
        attributes["non_causal"] = True
    if rotary_cos is not None and rotary_interleaved:
        attributes["rotary_interleaved"] = True
    if (window_left, window_right) != (-1, -1):
        attributes.update(window_left=window_left, window_right=window_right)
    if softcap > 0:
        attributes["softcap"] = softcap
    # The status is always asked for: with it the kernel also refuses an
    # entry appending to a page another entry uses.
    return call(
        operator,
        dict(
            q=q, k=k, v=v, **caches, cache_lengths=cache_lengths, cache_leftpad=cache_leftpad,
            cache_batch_idx=cache_batch_idx, alibi_slopes=alibi_slopes, rotary_cos=rotary_cos,
            rotary_sin=rotary_sin,
        ),
        ("o", "lse", "status"),
        **attributes,
    )


@_kv_cache_attention.register_fake
def _(q, k, v, k_cache, v_cache, block_table, cache_lengths, cache_leftpad, cache_batch_idx,
      alibi_slopes, rotary_cos, rotary_sin, rotary_interleaved, scale, causal, window_left,
      window_right, softcap):
    return (
        q.new_empty(*q.shape[:-1], v_cache.shape[-1]),
        q.new_empty(q.shape[0], q.shape[2], q.shape[1], dtype=torch.float32),
        q.new_empty(q.shape[0], dtype=torch.int32),
    )


def _cache_lengths(cache_seqlens, q):
    """cache_seqlens (a tensor [B] of int32 or int64, or an int: every
    entry's) checked and as the operators take it: int32 on q's device."""
    if isinstance(cache_seqlens, int) and not isinstance(cache_seqlens, bool):
        cache_seqlens = torch.full((q.shape[0],), cache_seqlens, dtype=torch.int64)
    check_tensor("cache_seqlens", cache_seqlens, 1, dtypes=(torch.int32, torch.int64))
    check_dim("cache_seqlens", cache_seqlens, 0, q.shape[0], "batch")
    return int32_indices("cache_seqlens", cache_seqlens, device=q.device)


def kv_cache_attention(
    q,
    k_cache,
    v_cache,
    k,
    v,
    cache_seqlens,
    softmax_scale=None,
    return_lse=False,
    block_table=None,
    *,
    return_status=False,
    cache_leftpad=None,
    alibi_slopes=None,
    causal=True,
    window_size=(-1, -1),
    softcap=0.0,
    rotary_cos=None,
    rotary_sin=None,
    rotary_interleaved=True,
    cache_batch_idx=None,
):
    """q [B, T, H, D]; the caches k_cache [B, S, G, D] and v_cache
    [B, S, G, E], updated in place, or with `block_table` [B, M] (int32)
    pages k_cache [P, Z, G, D] and v_cache [P, Z, G, E] (entry b's token t
    on page block_table[b, t // Z], row t % Z); the new tokens' k
    [B, T, G, D] and v [B, T, G, E], or both None (attend only: nothing is
    appended, the T queries are the entry's last cached tokens);
    cache_seqlens [B] (int32 or int64: the tokens each entry holds before
    this step, which the caller advances by T afterwards). Query i of entry
    b has the diagonal d = L_b + i (attend only, L_b − T + i) and attends
    to cache positions P_b … d (P_b the entry's `cache_leftpad`, 0 without
    it), or to the last with `causal=False`, within `window_size` (left,
    right) of d (-1: unbounded), its scores capped to
    softcap · tanh(s / softcap) with a `softcap` and given −slope · |d − j|
    with `alibi_slopes` ((H,) or (B, H) f32). `rotary_cos` and
    `rotary_sin` (R, Q) in q's dtype (with k and v) turn the new keys at
    positions L_b + i and the queries at L_b + i (causal or windowed) or
    all at L_b, the first 2Q features in pairs (2p, 2p + 1) with
    `rotary_interleaved`, else (p, p + Q), as flash-attn turns them;
    `cache_batch_idx` [B] (int32 or int64) makes entry b use row
    cache_batch_idx[b] of a contiguous cache [N, S, G, ·] (distinct rows
    when appending). Returns o [B, T, H, E] and,
    with `return_lse`, lse [B, H, T] (f32). An entry whose append would
    pass its capacity (S, or M·Z) or the R rotary positions, whose left
    padding is outside [0, L_b], whose cache row is outside [0, N) or
    another appending entry's, or whose pages up to its last key include
    one outside the
    pool or one it appends to that another entry uses (the pages an entry
    appends to must be its own; pages only read may be shared), is
    refused: its cache is left as it was, its o is 0 and its lse −inf; so
    is every entry of an empty cache (S = 0, or no pages) that would hold
    a token. The call then raises InvalidArgument naming the refused
    entries (after serving the others), unless `return_status`: a status
    [B] (int32: 0 served, 1 refused) then comes last in the results, so a
    caller learns of refusals without the host reading the status (no
    synchronisation; under CUDA-graph capture it is the only report).
    `cache_seqlens` may be an int, every entry's length.

    An int64 length beyond int32 is refused (InvalidArgument naming
    cache_seqlens) on CPU; on CUDA, where reading it would synchronise, it
    becomes -1, a negative length, whose entry the operator refuses as
    above, rather than wrapping to a short length whose append would
    overwrite the cache."""
    paged = block_table is not None
    if (k is None) != (v is None):
        raise invalid("k" if k is None else "v", "k and v come together, or neither")
    fresh = () if k is None else (("k", k), ("v", v))
    check_tensor("q", q, 4)
    for name, tensor in (("k_cache", k_cache), ("v_cache", v_cache)) + fresh:
        check_tensor(name, tensor, 4, dtypes=None, like=q)
    # A paged cache's first dim counts pages, a contiguous one's the batch.
    check_dim("v_cache", v_cache, 0, k_cache.shape[0], "pages" if paged else "batch")
    check_dim("v_cache", v_cache, 1, k_cache.shape[1], "page size Z" if paged else "capacity S")
    rows = () if paged or cache_batch_idx is not None else (("k_cache", k_cache),)
    for name, tensor in rows + fresh:
        check_dim(name, tensor, 0, q.shape[0], "batch")
    for name, tensor in (("k_cache", k_cache),) + fresh[:1]:
        check_dim(name, tensor, 3, q.shape[3], "head dim D")
    for name, tensor in (("v_cache", v_cache),) + fresh:
        check_dim(name, tensor, 2, k_cache.shape[2], "key heads G")
    for name, tensor in fresh[1:]:
        check_dim(name, tensor, 3, v_cache.shape[3], "value dim E")
    for name, tensor in fresh:
        check_dim(name, tensor, 1, q.shape[1], "new tokens T")
    # Dims of 0 the kernels cannot take, whose result is not empty either:
    # the new tokens would still be appended.
    for name, tensor, dim, what in (
        ("q", q, 3, "head dim D"),
        ("v_cache", v_cache, 3, "value dim E"),
        ("q", q, 2, "query heads H"),
        ("k_cache", k_cache, 2, "key heads G"),
    ):
        if tensor.shape[dim] == 0:
            raise invalid(name, f"{what} is 0 (shape {tuple(tensor.shape)}): at least 1")
    if q.shape[2] % k_cache.shape[2]:
        raise invalid(
            "k_cache", f"{k_cache.shape[2]} key heads do not divide q's {q.shape[2]} heads"
        )
    check_updatable("k_cache", k_cache)
    check_updatable("v_cache", v_cache)
    if paged:
        check_tensor("block_table", block_table, 2, dtypes=(torch.int32,))
        check_dim("block_table", block_table, 0, q.shape[0], "batch")
        if block_table.device != q.device:
            raise invalid("block_table", f"is on {block_table.device}, q on {q.device}")
        block_table = block_table.contiguous()
    lengths = _cache_lengths(cache_seqlens, q)
    leftpad = _entry_indices("cache_leftpad", cache_leftpad, q)
    batch_idx = _entry_indices("cache_batch_idx", cache_batch_idx, q)
    if paged and batch_idx is not None:
        raise invalid("cache_batch_idx", "maps entries to a contiguous cache's rows; pages have "
                      "their block table")
    cos, sin = _rotary(rotary_cos, rotary_sin, q, k)
    if softmax_scale is None:
        scale = q.shape[-1] ** -0.5
    else:
        scale = float_option("softmax_scale", softmax_scale, "positive")
    left, right = _window(window_size)
    # A side reaching past every key bounds nothing: one program serves
    # every such window.
    capacity = _capacity(k_cache, block_table)
    left = -1 if left >= capacity else left
    right = -1 if right >= capacity else right
    softcap = float_option("softcap", softcap, "non-negative")
    if softcap:
        float_option("softcap", softcap, "positive")  # not so small it is 0 as a float32
    o, lse, status = _kv_cache_attention(
        dense(q), None if k is None else dense(k), None if v is None else dense(v), k_cache,
        v_cache, block_table, lengths, leftpad, batch_idx,
        _slopes(alibi_slopes, q, batch=q.shape[0]), cos, sin, bool(rotary_interleaved), scale,
        bool(causal), left, right, softcap,
    )
    if not return_status:
        _raise_on_refusals(status, 0 if k is None else q.shape[1])
    results = (o,) + ((lse,) if return_lse else ()) + ((status,) if return_status else ())
    return results if len(results) > 1 else o


def _entry_indices(name, indices, q):
    """An optional [B] int32 or int64 tensor of one index an entry, as the
    operators take it: int32 on q's device."""
    if indices is None:
        return None
    check_tensor(name, indices, 1, dtypes=(torch.int32, torch.int64))
    check_dim(name, indices, 0, q.shape[0], "batch")
    return int32_indices(name, indices, device=q.device)


def _rotary(cos, sin, q, k):
    """flash-attn's rotary tables (R, Q), both or neither, in q's dtype on
    its device, with new keys to turn, 2Q at most D: dense."""
    if cos is None and sin is None:
        return None, None
    if cos is None or sin is None:
        raise invalid("rotary_cos" if cos is None else "rotary_sin",
                      "rotary_cos and rotary_sin come together")
    if k is None:
        raise invalid("rotary_cos", "turns the new tokens' keys: an attend-only call "
                      "(k and v None) takes none")
    for name, table in (("rotary_cos", cos), ("rotary_sin", sin)):
        check_tensor(name, table, 2, dtypes=(q.dtype,))
        if table.device != q.device:
            raise invalid(name, f"is on {table.device}, q on {q.device}")
    check_dim("rotary_sin", sin, 0, cos.shape[0], "rotary positions")
    check_dim("rotary_sin", sin, 1, cos.shape[1], "rotary pairs")
    if 2 * cos.shape[1] > q.shape[-1] or cos.shape[1] == 0:
        raise invalid("rotary_cos", f"{cos.shape[1]} pairs a position: 1 to D / 2 = "
                      f"{q.shape[-1] // 2}")
    return cos.contiguous(), sin.contiguous()


def _raise_on_refusals(status, new_tokens):
    """Raises InvalidArgument naming the refused entries, after the call
    (the entries served are appended and attended), where the status can be
    read: not while torch.compile traces the call nor while a CUDA graph
    captures it, when only `return_status` tells."""
    if torch.compiler.is_compiling() or status.is_meta:
        return
    if status.is_cuda and torch.cuda.is_current_stream_capturing():
        return
    refused = status.nonzero().flatten().tolist()
    if refused:
        step = f"the append of {new_tokens} token(s)" if new_tokens else "the attend-only call"
        raise invalid(
            "cache_seqlens",
            f"{step} was refused for entries {refused} (past the cache's capacity or the "
            "rotary positions, a left padding outside the length, a cache row outside "
            "the cache or shared, a page outside the pool, or a page another entry "
            "uses): their caches are unchanged, their o 0 and lse -inf; "
            "the other entries were served (return_status=True reports refusals "
            "without raising)",
        )


def flash_attn_with_kvcache(
    q,
    k_cache,
    v_cache,
    k=None,
    v=None,
    rotary_cos=None,
    rotary_sin=None,
    cache_seqlens=None,
    cache_batch_idx=None,
    cache_leftpad=None,
    block_table=None,
    softmax_scale=None,
    causal=False,
    window_size=(-1, -1),
    softcap=0.0,
    rotary_interleaved=True,
    alibi_slopes=None,
    num_splits=0,
    return_softmax_lse=False,
):
    """flash-attn 2.8's flash_attn_with_kvcache, its parameters in its
    order, over kv_cache_attention: the new tokens' k and v (when given)
    appended to the caches (contiguous, or pages through `block_table`) at
    `cache_seqlens` (a tensor or an int), then attended from
    `cache_leftpad` (0 without it), causal or not, with a window, a softcap
    and ALiBi slopes as flash_attn_func takes them; without k and v
    (attend only) the queries are each entry's last cached tokens. o, or
    (o, lse [B, H, T]) with `return_softmax_lse`. A refused entry raises
    as kv_cache_attention does. The rotary embedding (`rotary_cos`,
    `rotary_sin`, `rotary_interleaved`) turns the new keys and the queries
    in the kernel, and `cache_batch_idx` picks each entry's row of a
    contiguous cache, as kv_cache_attention says. `num_splits` is a hint
    rudnn does not need (it chooses the split on the device)."""
    if cache_seqlens is None:
        raise invalid("cache_seqlens", "the tokens each entry's cache holds are needed")
    if not isinstance(num_splits, int) or num_splits < 0:
        raise invalid("num_splits", f"a hint of 0 or more splits, got {num_splits!r}")
    return kv_cache_attention(
        q,
        k_cache,
        v_cache,
        k,
        v,
        cache_seqlens,
        softmax_scale=softmax_scale,
        return_lse=bool(return_softmax_lse),
        block_table=block_table,
        cache_leftpad=cache_leftpad,
        alibi_slopes=alibi_slopes,
        causal=causal,
        window_size=window_size,
        softcap=softcap,
        rotary_cos=rotary_cos,
        rotary_sin=rotary_sin,
        rotary_interleaved=rotary_interleaved,
        cache_batch_idx=cache_batch_idx,
    )
