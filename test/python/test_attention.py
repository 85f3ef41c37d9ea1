"""flash_attn_func and flash_attn_varlen_func against PyTorch's
scaled_dot_product_attention in float64 (FlashAttention's conventions:
causal masks aligned bottom-right, sliding windows): outputs, log-sum-exp
and gradients, with grouped heads and odd sizes."""

import math

import pytest
import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt
from conftest import assert_close, flash_attn_signature, gradients


def reference(q, k, v, scale, causal=False, window=(-1, -1), softcap=0.0, alibi=None):
    """o [B, T, H, E] and lse [B, H, T] from q [B, T, H, D], k/v [B, S, G, ·];
    `alibi` slopes (H,) or (B, H): scores less slope·|i + S − T − j|."""
    heads, key_heads = q.shape[2], k.shape[2]
    k = k.repeat_interleave(heads // key_heads, dim=2)
    v = v.repeat_interleave(heads // key_heads, dim=2)
    T, S = q.shape[1], k.shape[1]
    i = torch.arange(T)[:, None] + (S - T)
    j = torch.arange(S)[None, :]
    allowed = torch.ones(T, S, dtype=torch.bool)
    if causal:
        allowed &= j <= i
    if window[0] >= 0:
        allowed &= j >= i - window[0]
    if window[1] >= 0:
        allowed &= j <= i + window[1]
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    scores = (q @ k.transpose(-1, -2)) * scale
    if softcap:
        scores = softcap * torch.tanh(scores / softcap)
    if alibi is not None:
        slopes = alibi.double().expand(q.shape[0], q.shape[1])[:, :, None, None]
        scores = scores - slopes * (i - j).abs()
    scores = scores.masked_fill(~allowed, -math.inf)
    lse = torch.logsumexp(scores, dim=-1)
    if softcap or alibi is not None:
        o = torch.softmax(scores, dim=-1).nan_to_num(0.0) @ v
    else:
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, scale=scale)
        o = o.masked_fill(~allowed.any(-1)[:, None], 0.0)
    return o.transpose(1, 2), lse


CASES = [
    # (B, T, S, H, G, D, E, options)
    (2, 19, 19, 4, 2, 24, 24, dict(causal=True)),
    (1, 7, 33, 2, 1, 16, 8, dict(causal=True, window_size=(9, 0))),
    (2, 21, 13, 2, 2, 16, 16, dict(softcap=3.0)),
]


@pytest.mark.parametrize("case", CASES, ids=["causal-gqa", "window-cross", "softcap"])
def test_flash_attn_func_matches_torch(case):
    B, T, S, H, G, D, E, options = case
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, S, G, D), torch.randn(B, S, G, E)
    scale = 0.3
    o, lse = rt.flash_attn_func(q, k, v, softmax_scale=scale, return_lse=True, **options)
    window = options.get("window_size", (-1, -1))
    ref = dict(
        causal=options.get("causal", False), window=window, softcap=options.get("softcap", 0.0)
    )
    o_ref, lse_ref = reference(q.double(), k.double(), v.double(), scale, **ref)
    assert_close(o, o_ref, 1e-5, "o")
    finite = torch.isfinite(lse_ref)
    assert torch.equal(torch.isfinite(lse), finite)
    assert_close(lse[finite], lse_ref[finite], 1e-5, "lse")

    d_out = torch.randn(B, T, H, E)
    ours = gradients(
        lambda q, k, v: rt.flash_attn_func(q, k, v, softmax_scale=scale, **options), [q, k, v], d_out
    )
    theirs = gradients(
        lambda q, k, v: reference(q, k, v, scale, **ref)[0],
        [q.double(), k.double(), v.double()],
        d_out.double(),
    )
    for got, want, name in zip(ours, theirs, "qkv"):
        assert_close(got, want, 1e-5, "d" + name)


def test_flash_attn_bf16_output():
    q, k, v = (torch.randn(1, 17, 2, 32, dtype=torch.bfloat16) for _ in range(3))
    o = rt.flash_attn_func(q, k, v, causal=True)
    o_ref, _ = reference(q.double(), k.double(), v.double(), 32**-0.5, causal=True)
    assert o.dtype == torch.bfloat16
    assert_close(o, o_ref, 2e-2, "o")


def test_deterministic_backward_matches_torch_and_repeats_bit_for_bit():
    # bf16 at D = 64: the Hopper kernel, dq's shares added in a fixed order.
    q, k, v = (torch.randn(1, 70, 2, 64, dtype=torch.bfloat16) for _ in range(3))
    d_out = torch.randn(1, 70, 2, 64, dtype=torch.bfloat16)
    run = lambda q, k, v: rt.flash_attn_func(q, k, v, causal=True, deterministic=True)
    first, second = gradients(run, [q, k, v], d_out), gradients(run, [q, k, v], d_out)
    theirs = gradients(
        lambda q, k, v: reference(q, k, v, 64**-0.5, causal=True)[0],
        [q.double(), k.double(), v.double()],
        d_out.double(),
    )
    for a, b, want, name in zip(first, second, theirs, "qkv"):
        assert torch.equal(a, b), "d" + name
        assert_close(a, want, 3e-2, "d" + name)


def test_flash_attn_varlen_matches_each_sequence():
    lengths_q, lengths_k = [5, 1, 12], [9, 4, 12]
    cu_q = torch.tensor([0] + list(torch.tensor(lengths_q).cumsum(0)), dtype=torch.int32)
    cu_k = torch.tensor([0] + list(torch.tensor(lengths_k).cumsum(0)), dtype=torch.int64)
    q = torch.randn(sum(lengths_q), 4, 16)
    k, v = torch.randn(sum(lengths_k), 2, 16), torch.randn(sum(lengths_k), 2, 16)
    d_out = torch.randn_like(q)

    def ours(q, k, v):
        return rt.flash_attn_varlen_func(
            q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k), causal=True
        )

    expect_each_sequence(ours, [q, k, v], cu_q, cu_k, d_out, 0.25, causal=True)


def expect_each_sequence(ours, inputs, cu_q, cu_k, d_out, scale, **ref):
    """`ours` on packed inputs matches the reference of each sequence alone,
    forward and gradients, within 1e-5."""

    def theirs(q, k, v):
        outputs = []
        for b in range(len(cu_q) - 1):
            rows_q, rows_k = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
            o, _ = reference(q[None, rows_q], k[None, rows_k], v[None, rows_k], scale, **ref)
            outputs.append(o[0])
        return torch.cat(outputs)

    assert_close(ours(*inputs), theirs(*[t.double() for t in inputs]), 1e-5, "o")
    for got, want, name in zip(
        gradients(ours, inputs, d_out),
        gradients(theirs, [t.double() for t in inputs], d_out.double()),
        "qkv",
    ):
        assert_close(got, want, 1e-5, "d" + name)


def test_attention_bad_inputs_name_the_argument():
    q, k, v = torch.randn(1, 8, 4, 16), torch.randn(1, 8, 3, 16), torch.randn(1, 8, 3, 16)
    with pytest.raises(rudnn.InvalidArgument, match="'k'"):
        rt.flash_attn_func(q, k, v)  # 3 key heads do not divide 4
    with pytest.raises(rudnn.InvalidArgument, match="'v'"):
        rt.flash_attn_func(q, q, q.half())
    with pytest.raises(rudnn.InvalidArgument, match="'window_size'"):
        rt.flash_attn_func(q, q, q, window_size=(-2, 0))
    with pytest.raises(rudnn.Unsupported, match="dropout"):
        rt.flash_attn_func(q, q, q, dropout_p=0.1)
    with pytest.raises(rudnn.InvalidArgument, match="'cu_seqlens_q'"):
        rt.flash_attn_varlen_func(q[0], q[0], q[0], torch.tensor([0.0, 8.0]), torch.tensor([0, 8]))


@pytest.mark.parametrize(
    "window",
    [(7, 5), (6, 4), (2**31 - 1, -1), (-1, 2**31 - 1), (2**31 - 1, 2**31 - 1)],
    ids=["past-every-key", "just-reaching", "int32-left", "int32-right", "int32-both"],
)
def test_windows_as_wide_as_int32_allows(window):
    # Any window up to int32's limit works, as wide as the keys it reaches:
    # a side reaching past every key (T = 5 queries, S = 7 keys) bounds nothing.
    q, k, v = torch.randn(1, 5, 2, 16), torch.randn(1, 7, 2, 16), torch.randn(1, 7, 2, 16)
    o = rt.flash_attn_func(q, k, v, window_size=window)
    o_ref, _ = reference(q.double(), k.double(), v.double(), 16**-0.5, window=window)
    assert_close(o, o_ref, 1e-5, "o")


def parameter_list(function):
    import inspect

    return [(p.name, p.default) for p in inspect.signature(function).parameters.values()]


# flash-attn 2.8.3's functions, as its own interface file defines them (its
# max_seqlen_q and max_seqlen_k have no default; rudnn lets them be left
# out), and what rudnn adds after them: the keyword-only return_lse.
@pytest.mark.parametrize(
    "ours, theirs, added",
    [
        (rt.flash_attn_func, "flash_attn_func", [("return_lse", False)]),
        (rt.flash_attn_varlen_func, "flash_attn_varlen_func", [("return_lse", False)]),
        (rt.flash_attn_qkvpacked_func, "flash_attn_qkvpacked_func", []),
        (rt.flash_attn_kvpacked_func, "flash_attn_kvpacked_func", []),
        (rt.flash_attn_varlen_qkvpacked_func, "flash_attn_varlen_qkvpacked_func", []),
        (rt.flash_attn_varlen_kvpacked_func, "flash_attn_varlen_kvpacked_func", []),
    ],
)
def test_flash_attn_signatures_are_flash_attns(ours, theirs, added):
    import inspect

    got = [
        (name, None if default is inspect.Parameter.empty else default)
        for name, default in parameter_list(ours)
    ]
    assert got == flash_attn_signature(theirs) + added


def test_flash_attn_packed_forms_refuse_unknown_keywords():
    qkv = torch.randn(1, 5, 3, 2, 16)
    with pytest.raises(TypeError, match="dropout"):
        rt.flash_attn_qkvpacked_func(qkv, 0.0, dropout=0.1)
    with pytest.raises(TypeError):
        rt.flash_attn_kvpacked_func(qkv[:, :, 0])  # kv missing


def test_flash_attn_positional_call_and_return_convention():
    torch.manual_seed(11)
    q, k, v = (torch.randn(1, 9, 2, 16) for _ in range(3))
    # flash-attn's positional order: dropout_p, softmax_scale, causal.
    o, lse, probabilities = rt.flash_attn_func(q, k, v, 0.0, 0.3, True, return_attn_probs=True)
    o_ref, lse_ref = reference(q.double(), k.double(), v.double(), 0.3, causal=True)
    assert probabilities is None
    assert_close(o, o_ref, 1e-5, "o")
    assert_close(lse, lse_ref, 1e-5, "lse")
    cu = torch.tensor([0, 9], dtype=torch.int32)
    o_var, lse_var, none = rt.flash_attn_varlen_func(
        q[0], k[0], v[0], cu, cu, 9, 9, 0.0, 0.3, True, return_attn_probs=True
    )
    assert none is None
    assert_close(o_var, o_ref[0], 1e-5, "o (packed)")
    assert_close(lse_var, lse_ref[0], 1e-5, "lse (packed)")


def test_flash_attn_varlen_refuses_block_tables_and_per_entry_slopes_by_name():
    q = torch.randn(9, 2, 16)
    cu = torch.tensor([0, 9], dtype=torch.int32)
    with pytest.raises(NotImplementedError, match="block_table"):
        rt.flash_attn_varlen_func(q, q, q, cu, cu, 9, 9, block_table=torch.ones(2))
    with pytest.raises(NotImplementedError, match="alibi_slopes"):
        rt.flash_attn_varlen_func(q, q, q, cu, cu, 9, 9, alibi_slopes=torch.ones(1, 2))
    with pytest.raises(rudnn.InvalidArgument, match="alibi_slopes"):
        rt.flash_attn_func(q[None], q[None], q[None], alibi_slopes=torch.ones(3))


ALIBI_CASES = [
    # (B, T, S, H, G, D, slopes' shape, dtype, options): one slope a head,
    # broadcast over the batch; one a (batch, head); causal GQA, a window
    # with a softcap, more queries than keys; bf16 on the Hopper kernels.
    (2, 19, 26, 4, 2, 24, (4,), torch.float32, dict(causal=True)),
    (2, 21, 13, 2, 1, 16, (2, 2), torch.float32, dict(window_size=(5, 2), softcap=4.0)),
    (1, 40, 33, 2, 2, 64, (2,), torch.bfloat16, dict(causal=True)),
]


@pytest.mark.parametrize("case", ALIBI_CASES, ids=["heads-causal", "batch-heads-window", "bf16"])
def test_flash_attn_alibi_matches_torch(case):
    B, T, S, H, G, D, shape, dtype, options = case
    q, k, v = (torch.randn(B, n, h, D, dtype=dtype) for n, h in ((T, H), (S, G), (S, G)))
    slopes = torch.rand(shape) * 0.5  # as ALiBi's geometric slopes, in (0, 0.5)
    ref = dict(
        causal=options.get("causal", False),
        window=options.get("window_size", (-1, -1)),
        softcap=options.get("softcap", 0.0),
        alibi=slopes,
    )
    tolerance = 1e-5 if dtype == torch.float32 else 3e-2
    o, lse = rt.flash_attn_func(q, k, v, alibi_slopes=slopes, return_lse=True, **options)
    o_ref, lse_ref = reference(q.double(), k.double(), v.double(), D**-0.5, **ref)
    assert_close(o, o_ref, tolerance, "o")
    finite = torch.isfinite(lse_ref)
    assert_close(lse[finite], lse_ref[finite], tolerance, "lse")
    d_out = torch.randn(B, T, H, D, dtype=dtype)
    ours = gradients(
        lambda q, k, v: rt.flash_attn_func(q, k, v, alibi_slopes=slopes, **options), [q, k, v], d_out
    )
    theirs = gradients(
        lambda q, k, v: reference(q, k, v, D**-0.5, **ref)[0],
        [q.double(), k.double(), v.double()],
        d_out.double(),
    )
    for got, want, name in zip(ours, theirs, "qkv"):
        assert_close(got, want, tolerance, "d" + name)


def test_flash_attn_varlen_alibi_matches_each_sequence():
    lengths_q, lengths_k = [5, 1, 12], [9, 4, 12]
    cu_q = torch.tensor([0, 5, 6, 18], dtype=torch.int32)
    cu_k = torch.tensor([0, 9, 13, 25], dtype=torch.int32)
    q = torch.randn(18, 4, 16)
    k, v = torch.randn(25, 2, 16), torch.randn(25, 2, 16)
    slopes = torch.rand(4) * 0.5
    d_out = torch.randn_like(q)

    def ours(q, k, v):
        return rt.flash_attn_varlen_func(q, k, v, cu_q, cu_k, causal=True, alibi_slopes=slopes)

    expect_each_sequence(ours, [q, k, v], cu_q, cu_k, d_out, 0.25, causal=True, alibi=slopes)


def test_flash_attn_packed_forms_match_the_unpacked_call():
    torch.manual_seed(13)
    qkv = torch.randn(2, 7, 3, 2, 16, requires_grad=True)
    o = rt.flash_attn_qkvpacked_func(qkv, 0.0, None, True)
    q, k, v = qkv.unbind(2)
    assert_close(o, rt.flash_attn_func(q, k, v, causal=True), 0.0, "o (qkv packed)")
    # Gradients reach the packed tensor: those of the three parts.
    d_out = torch.randn_like(o)
    (d_packed,) = torch.autograd.grad(o, qkv, d_out)
    d_parts = torch.autograd.grad(rt.flash_attn_func(q, k, v, causal=True), (q, k, v), d_out)
    assert_close(d_packed, torch.stack(d_parts, 2), 0.0, "dqkv")
    q1 = torch.randn(2, 5, 2, 16)
    kv = torch.randn(2, 7, 2, 1, 16)
    assert_close(
        rt.flash_attn_kvpacked_func(q1, kv),
        rt.flash_attn_func(q1, kv[:, :, 0], kv[:, :, 1]),
        0.0,
        "o (kv packed)",
    )
    cu = torch.tensor([0, 3, 7], dtype=torch.int32)
    packed = qkv.detach()[0]
    assert_close(
        rt.flash_attn_varlen_qkvpacked_func(packed, cu, 4),
        rt.flash_attn_varlen_func(*packed.unbind(1), cu, cu, 4, 4),
        0.0,
        "o (varlen qkv packed)",
    )
    assert_close(
        rt.flash_attn_varlen_kvpacked_func(packed[:, 0], kv[0], cu, cu, 4, 4),
        rt.flash_attn_varlen_func(packed[:, 0], kv[0, :, 0], kv[0, :, 1], cu, cu, 4, 4),
        0.0,
        "o (varlen kv packed)",
    )
    with pytest.raises(rudnn.InvalidArgument, match="'qkv'"):
        rt.flash_attn_qkvpacked_func(torch.randn(2, 7, 2, 2, 16))
