"""Empty batches, sequences, key sets, caches and pools give their
mathematically correct results, shaped as for any size, without a kernel
(no compiled function is even looked up) and with in-place tensors left as
they were; offsets are still checked. Direct calls on meta tensors give
meta results of the right shapes."""

import math

import pytest
import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt
from conftest import gradients


@pytest.fixture
def no_program_used():
    """Asserts that the test looked up no compiled function."""
    before = rt.program_cache_info()
    yield
    after = rt.program_cache_info()
    assert (after["hits"], after["misses"]) == (before["hits"], before["misses"])


@pytest.mark.parametrize(
    "B,T,S,H", [(0, 3, 5, 2), (2, 0, 5, 2), (2, 3, 0, 2), (2, 3, 5, 0)], ids=["B", "T", "S", "H"]
)
def test_flash_attn_func_empty(B, T, S, H, no_program_used):
    G = 1 if H else 0
    q, k, v = torch.randn(B, T, H, 8), torch.randn(B, S, G or 1, 8), torch.randn(B, S, G or 1, 4)
    o, lse = rt.flash_attn_func(q, k, v, causal=True, return_lse=True)
    assert o.shape == (B, T, H, 4) and lse.shape == (B, H, T) and lse.dtype == torch.float32
    # With no key, each query's o is 0 and its lse −inf.
    assert torch.all(o == 0) and torch.all(lse == -math.inf)
    d_out = torch.randn(B, T, H, 4)
    for leaf, grad in zip((q, k, v), gradients(rt.flash_attn_func, [q, k, v], d_out)):
        assert grad.shape == leaf.shape and torch.all(grad == 0)


@pytest.mark.parametrize(
    "cu_q,cu_k",
    [([0, 0, 0], [0, 2, 5]), ([0, 1, 3], [0, 0, 0]), ([0], [0])],
    ids=["no-queries", "no-keys", "no-sequences"],
)
def test_flash_attn_varlen_empty(cu_q, cu_k, no_program_used):
    q, k = torch.randn(cu_q[-1], 2, 8), torch.randn(cu_k[-1], 1, 8)
    v = torch.randn(cu_k[-1], 1, 4)
    cu_q, cu_k = torch.tensor(cu_q), torch.tensor(cu_k, dtype=torch.int32)
    o, lse = rt.flash_attn_varlen_func(q, k, v, cu_q, cu_k, return_lse=True)
    assert o.shape == (q.shape[0], 2, 4) and lse.shape == (2, q.shape[0])
    assert torch.all(o == 0) and torch.all(lse == -math.inf)


def test_flash_attn_varlen_empty_still_checks_offsets(no_program_used):
    q, k = torch.randn(0, 2, 8), torch.randn(3, 1, 8)
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.flash_attn_varlen_func(q, k, k, torch.tensor([0, 0]), torch.tensor([0, 4]))
    assert error.value.argument == "cu_seqlens_k" and "entry 1 is 4" in str(error.value)
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.flash_attn_varlen_func(q, k, k, torch.tensor([0, 1]), torch.tensor([0, 3]))
    assert error.value.argument == "cu_seqlens_q"


@pytest.mark.parametrize(
    "B,T,S,paged", [(0, 1, 8, False), (2, 0, 8, False), (2, 1, 0, False), (2, 1, 0, True)]
)
def test_kv_cache_attention_empty(B, T, S, paged, no_program_used):
    # No entry, no new token, or no room (S = 0; no pages in the table):
    # nothing is written; an append with no room is refused (o 0, lse −inf).
    q, new = torch.randn(B, T, 2, 8), torch.randn(B, T, 1, 8)
    if paged:
        k_cache, v_cache = torch.randn(3, 4, 1, 8), torch.randn(3, 4, 1, 8)
        table = torch.zeros(B, S, dtype=torch.int32)
    else:
        k_cache, v_cache, table = torch.randn(B, S, 1, 8), torch.randn(B, S, 1, 8), None
    before = k_cache.clone(), v_cache.clone()
    lengths = torch.zeros(B, dtype=torch.int64)
    o, lse, status = rt.kv_cache_attention(
        q, k_cache, v_cache, new, new, lengths, return_lse=True, block_table=table,
        return_status=True,
    )
    assert o.shape == (B, T, 2, 8) and lse.shape == (B, 2, T)
    assert status.tolist() == [int(T > 0)] * B
    assert torch.all(o == 0) and torch.all(lse == -math.inf)
    assert torch.equal(k_cache, before[0]) and torch.equal(v_cache, before[1])


@pytest.mark.parametrize("B,T,H,V", [(0, 3, 2, 4), (2, 0, 2, 4), (2, 3, 2, 0)], ids="BTV")
def test_chunk_kda_empty(B, T, H, V, no_program_used):
    # No token: the final state is the initial one, and its gradient flows
    # straight through; no value channel: every result is empty.
    K = 8
    q, k, g = torch.randn(B, T, H, K), torch.randn(B, T, H, K), -torch.rand(B, T, H, K)
    v, beta, s0 = torch.randn(B, T, H, V), torch.rand(B, T, H), torch.randn(B, H, K, V)
    o, final = rt.chunk_kda(q, k, v, g, beta, initial_state=s0, output_final_state=True)
    assert o.shape == (B, T, H, V) and torch.equal(final, s0)
    if s0.numel():  # a result of its own, not the input (torch.library's rule)
        assert final.data_ptr() != s0.data_ptr()
    _, zero_start = rt.chunk_kda(q, k, v, g, beta, output_final_state=True)
    assert zero_start.shape == (B, H, K, V) and torch.all(zero_start == 0)

    d_final = torch.randn(B, H, K, V)
    grads = gradients(
        lambda *t: rt.chunk_kda(*t, output_final_state=True)[1], [q, k, v, g, beta], d_final
    )
    for leaf, grad in zip((q, k, v, g, beta), grads):
        assert grad.shape == leaf.shape and torch.all(grad == 0)
    (d_s0,) = gradients(
        lambda s: rt.chunk_kda(q, k, v, g, beta, initial_state=s, output_final_state=True)[1],
        [s0],
        d_final,
    )
    assert torch.equal(d_s0, d_final)


def test_chunk_kda_packed_empty_sequences(no_program_used):
    q, k, g = torch.randn(1, 0, 2, 8), torch.randn(1, 0, 2, 8), torch.randn(1, 0, 2, 8)
    v, beta, s0 = torch.randn(1, 0, 2, 4), torch.rand(1, 0, 2), torch.randn(3, 2, 8, 4)
    cu_seqlens = torch.tensor([0, 0, 0, 0])
    o, final = rt.chunk_kda(
        q, k, v, g, beta, initial_state=s0, output_final_state=True, cu_seqlens=cu_seqlens
    )
    assert o.shape == (1, 0, 2, 4) and torch.equal(final, s0)
    _, final = rt.chunk_kda(q, k, v, g, beta, output_final_state=True, cu_seqlens=cu_seqlens)
    assert final.shape == (3, 2, 8, 4) and torch.all(final == 0)
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.chunk_kda(q, k, v, g, beta, cu_seqlens=torch.tensor([0, 2]))
    assert error.value.argument == "cu_seqlens"


@pytest.mark.parametrize("B,T,P", [(0, 1, 3), (2, 0, 3), (2, 1, 0)], ids="BTP")
def test_kda_decode_empty(B, T, P, no_program_used):
    # No entry or token: the pool stays as it was; no slot in the pool: each
    # entry is refused (o 0).
    q, k = torch.randn(B, T, 2, 8), F.normalize(torch.randn(B, T, 2, 8), dim=-1)
    v, g, beta = torch.randn(B, T, 2, 4), -torch.rand(B, T, 2, 8), torch.rand(B, T, 2)
    pool = torch.randn(P, 2, 8, 4)
    before = pool.clone()
    o = rt.kda_decode(q, k, v, g, beta, pool, torch.arange(B))
    assert o.shape == (B, T, 2, 4) and torch.all(o == 0)
    assert torch.equal(pool, before)


@pytest.mark.parametrize("shape,normalized", [((0, 5), (5,)), ((3, 0), (0,)), ((2, 0, 3), (3,))])
@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
def test_norms_empty(shape, normalized, kind, no_program_used):
    x, residual = torch.randn(shape), torch.randn(shape)
    weight = torch.randn(normalized)
    norm = getattr(rt, kind)
    assert norm(x, normalized, weight).shape == shape
    y, h = norm(x, normalized, weight, residual=residual)
    assert y.shape == shape and h.shape == shape
    d_x, d_weight = gradients(lambda x, w: norm(x, normalized, w), [x, weight], torch.randn(shape))
    assert d_x.shape == shape and d_weight.shape == normalized and torch.all(d_weight == 0)


@pytest.mark.parametrize("T,B", [(0, 2), (4, 0)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm_empty(T, B, batch_first, no_program_used):
    lstm = rt.LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=batch_first)
    x = torch.randn(B, T, 3) if batch_first else torch.randn(T, B, 3)
    h0, c0 = torch.randn(4, B, 5), torch.randn(4, B, 5)
    out, (h_n, c_n) = lstm(x, (h0, c0))
    assert out.shape == x.shape[:2] + (10,)
    assert torch.equal(h_n, h0) and torch.equal(c_n, c0)  # no step taken
    _, (h_n, c_n) = lstm(x)
    assert h_n.shape == (4, B, 5) and torch.all(h_n == 0) and torch.all(c_n == 0)


@pytest.mark.parametrize("T,B", [(0, 2), (4, 0)])
def test_gru_empty(T, B, no_program_used):
    gru = rt.GRU(3, 5, num_layers=2, bidirectional=True)
    x, h0 = torch.randn(T, B, 3), torch.randn(4, B, 5)
    out, h_n = gru(x, h0)
    assert out.shape == (T, B, 10) and torch.equal(h_n, h0)  # no step taken
    assert torch.all(gru(x)[1] == 0)


def test_meta_tensors_give_meta_results():
    # Outside torch.compile, meta tensors reach the fake implementations;
    # index values beyond int32 cannot be read there and are not refused.
    def meta(*shape, dtype=torch.float32):
        return torch.empty(shape, device="meta", dtype=dtype)

    big = torch.tensor([0, 2**32 + 1], device="meta")
    q, k, v = meta(2, 3, 4, 8), meta(2, 5, 2, 8), meta(2, 5, 2, 6)
    o, lse = rt.flash_attn_func(q, k, v, return_lse=True)
    assert o.device.type == "meta" and o.shape == (2, 3, 4, 6) and lse.shape == (2, 4, 3)
    o = rt.flash_attn_varlen_func(q[0], k[0], v[0], big, big)
    assert o.shape == (3, 4, 6)
    o = rt.kv_cache_attention(q, meta(2, 9, 2, 8), meta(2, 9, 2, 6), k[:, :3], v[:, :3], big)
    assert o.device.type == "meta" and o.shape == (2, 3, 4, 6)
    kq, kv = meta(2, 1, 2, 8), meta(2, 1, 2, 6)
    o = rt.kda_decode(kq, kq, kv, kq, meta(2, 1, 2), meta(3, 2, 8, 6), big)
    assert o.device.type == "meta" and o.shape == (2, 1, 2, 6)
    o, final = rt.chunk_kda(
        kq[:1], kq[:1], kv[:1], kq[:1], meta(1, 1, 2), cu_seqlens=big, output_final_state=True
    )
    assert o.shape == (1, 1, 2, 6) and final.shape == (1, 2, 8, 6)
    assert rt.layer_norm(meta(3, 7), (7,), eps=1e-3).shape == (3, 7)
    out, (h_n, _) = rt.LSTM(4, 3, device="meta")(meta(5, 2, 4))
    assert out.device.type == "meta" and out.shape == (5, 2, 3) and h_n.shape == (1, 2, 3)


def test_empty_results_agree_with_the_fake_implementations():
    # torch.library's check: what torch.compile traces (the fake
    # implementations) is what the empty calls return, shapes and dtypes.
    checks = ("test_schema", "test_faketensor")
    attention = torch.ops.rudnn.attention.default
    for q, k in (
        (torch.randn(0, 3, 2, 8), torch.randn(0, 5, 1, 8)),
        (torch.randn(2, 3, 2, 8), torch.randn(2, 0, 1, 8)),
    ):
        torch.library.opcheck(
            attention, (q, k, k, None, None, None, 0.3, True, -1, -1, 0.0, False),
            test_utils=checks,
        )
    x, v, offsets = (
        torch.randn(1, 0, 2, 8),
        torch.randn(1, 0, 2, 4),
        torch.zeros(4, dtype=torch.int32),
    )
    arguments = (x, x, v, x, torch.rand(1, 0, 2), torch.randn(3, 2, 8, 4), offsets, None, None)
    torch.library.opcheck(
        torch.ops.rudnn.chunk_kda.default, arguments + (0.3, False, False, None), test_utils=checks
    )
    x, v = torch.randn(2, 0, 2, 8), torch.randn(2, 0, 2, 4)
    slots = torch.arange(2, dtype=torch.int32)
    arguments = (x, x, v, x, torch.rand(2, 0, 2), torch.randn(3, 2, 8, 4), slots, None, None)
    torch.library.opcheck(
        torch.ops.rudnn.kda_decode.default, arguments + (0.3, False, False, None), test_utils=checks
    )
    q, k, caches = torch.randn(2, 0, 2, 8), torch.randn(2, 0, 1, 8), torch.randn(2, 2, 4, 1, 8)
    options = (0.3, True, -1, -1, 0.0)  # scale, causal, window, softcap
    rotary = (torch.ones(4, 2), torch.zeros(4, 2), True)
    torch.library.opcheck(
        torch.ops.rudnn.kv_cache_attention.default,
        (q, k, k, caches[0], caches[1], None, slots, None, slots, None) + rotary + options,
        test_utils=checks,
    )
    # Attend only, with a left padding and ALiBi slopes.
    torch.library.opcheck(
        torch.ops.rudnn.kv_cache_attention.default,
        (q, None, None, caches[0], caches[1], None, slots, slots, None, torch.ones(2, 2))
        + (None, None, False) + options,
        test_utils=checks,
    )
    rows = torch.randn(0, 5)
    torch.library.opcheck(
        torch.ops.rudnn.layer_norm.default, (rows, None, None, rows, 1e-5), test_utils=checks
    )
    torch.library.opcheck(
        torch.ops.rudnn.rms_norm.default, (torch.randn(3, 0), None, None, 1e-5), test_utils=checks
    )
    weights = [p.detach() for p in rt.LSTM(4, 3).parameters()]
    state = torch.randn(1, 2, 3)
    for save in (0, 2):  # nothing saved, or the states and gates
        torch.library.opcheck(
            torch.ops.rudnn.lstm.default,
            (torch.randn(0, 2, 4), state, state, None, weights, 1, False, False, False,
             save),
            test_utils=checks,
        )
    # No step: the final states' gradients are the initial ones'.
    nothing = torch.randn(0)
    torch.library.opcheck(
        torch.ops.rudnn.lstm_backward.default,
        (torch.randn(0, 2, 4), state, state, None, weights, nothing, nothing, None,
         torch.randn(0, 2, 3), state, state, 1, False, False, False),
        test_utils=checks,
    )
    gru_weights = [p.detach() for p in rt.GRU(4, 3).parameters()]
    for save in (False, True):
        torch.library.opcheck(
            torch.ops.rudnn.gru.default,
            (torch.randn(0, 2, 4), state, None, gru_weights, 1, False, False, False, save),
            test_utils=checks,
        )
    torch.library.opcheck(
        torch.ops.rudnn.gru_backward.default,
        (torch.randn(0, 2, 4), state, None, gru_weights, nothing, nothing,
         torch.randn(0, 2, 3), state, 1, False, False, False),
        test_utils=checks,
    )
