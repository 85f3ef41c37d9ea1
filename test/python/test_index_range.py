"""Slots, lengths and offsets given as int64 reach the operators as int32
without wrapping: on CPU a value beyond int32 is refused, naming the
argument, the entry and its value, with nothing written; where the host
does not read the values (CUDA, torch.compile's tracing, meta tensors)
such a value becomes -1, which the operator refuses by its own rule."""

import math

import pytest
import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt
from rudnn.torch import _common

WRAPS_TO_1 = 2**32 + 1  # as int32: 1


def decode_inputs(B=2, H=2, K=16, V=16):
    q, k = torch.randn(B, 1, H, K), F.normalize(torch.randn(B, 1, H, K), dim=-1)
    return q, k, torch.randn(B, 1, H, V), -torch.rand(B, 1, H, K), torch.rand(B, 1, H)


def assert_refused(error, argument, entry, value):
    assert error.value.argument == argument
    message = str(error.value)
    assert f"'{argument}'" in message and f"entry {entry} is {value}" in message, message


def test_kda_decode_refuses_a_slot_beyond_int32():
    # 2**32 + 1 would land on slot 1: another request's state.
    pool = torch.randn(3, 2, 16, 16)
    before = pool.clone()
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.kda_decode(*decode_inputs(), pool, torch.tensor([0, WRAPS_TO_1]))
    assert_refused(error, "slots", 1, WRAPS_TO_1)
    assert torch.equal(pool, before)


def test_kv_cache_attention_refuses_a_length_beyond_int32():
    # 2**32 + 5 would append at row 5, over the tokens held there.
    q, new = torch.randn(2, 1, 2, 16), torch.randn(2, 1, 1, 16)
    k_cache, v_cache = torch.randn(2, 8, 1, 16), torch.randn(2, 8, 1, 16)
    before = k_cache.clone(), v_cache.clone()
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.kv_cache_attention(q, k_cache, v_cache, new, new, torch.tensor([2, 2**32 + 5]))
    assert_refused(error, "cache_seqlens", 1, 2**32 + 5)
    assert torch.equal(k_cache, before[0]) and torch.equal(v_cache, before[1])


@pytest.mark.parametrize("which", ["cu_seqlens_q", "cu_seqlens_k"])
def test_flash_attn_varlen_refuses_an_offset_beyond_int32(which):
    # 4 + 2**32 would read as 4: a valid end for 4 rows.
    q = torch.randn(4, 2, 16)
    offsets = {"cu_seqlens_q": torch.tensor([0, 4]), "cu_seqlens_k": torch.tensor([0, 4])}
    offsets[which] = torch.tensor([0, 4 + 2**32])
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.flash_attn_varlen_func(q, q, q, offsets["cu_seqlens_q"], offsets["cu_seqlens_k"])
    assert_refused(error, which, 1, 4 + 2**32)


def test_chunk_kda_refuses_an_offset_below_int32():
    # −2**32 + 4 would read as 4 too.
    q, k, v, g, beta = (t.expand(1, 4, *t.shape[2:]).contiguous() for t in decode_inputs(1))
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.chunk_kda(q, k, v, g, beta, cu_seqlens=torch.tensor([0, 4 - 2**32, 4]))
    assert_refused(error, "cu_seqlens", 1, 4 - 2**32)


def test_index_conversion_checks_on_the_host_and_saturates_elsewhere():
    # The conversion LSTM lengths and every other index go through.
    with pytest.raises(rudnn.InvalidArgument) as error:
        _common.int32_indices("lengths", torch.tensor([3, 2**31]))
    assert_refused(error, "lengths", 1, 2**31)
    edges = torch.tensor([2**31 - 1, -(2**31), 7])
    assert _common.int32_indices("lengths", edges).tolist() == edges.tolist()
    converted = _common.int32_indices("lengths", torch.tensor([3, 2**31], device="meta"))
    assert converted.dtype == torch.int32 and converted.device.type == "meta"
    # What a CUDA tensor gets, without reading it on the host.
    saturated = torch.compile(lambda t: _common.int32_indices("lengths", t), fullgraph=True)(
        torch.tensor([3, 2**31, -(2**31) - 1, WRAPS_TO_1])
    )
    assert saturated.dtype == torch.int32 and saturated.tolist() == [3, -1, -1, -1]


def test_traced_calls_refuse_the_entry_instead_of_wrapping():
    # Under torch.compile the values are not read while tracing: the slot
    # and the length beyond int32 become -1, and each operator refuses that
    # entry (o 0, its state and cache untouched) while serving the other.
    q, k, v, g, beta = decode_inputs()
    slots = torch.tensor([WRAPS_TO_1, 0])
    lengths = torch.tensor([2**32 + 5, 3])

    def step(pool, k_cache, v_cache):
        o = rt.kda_decode(q, k, v, g, beta, pool, slots)
        o_cache, lse = rt.kv_cache_attention(q, k_cache, v_cache, k, v, lengths, return_lse=True)
        return o, o_cache, lse

    pool, k_cache, v_cache = (
        torch.randn(3, 2, 16, 16),
        torch.randn(2, 8, 2, 16),
        torch.randn(2, 8, 2, 16),
    )
    before = pool.clone(), k_cache.clone(), v_cache.clone()
    o, o_cache, lse = torch.compile(step, fullgraph=True)(pool, k_cache, v_cache)

    assert torch.all(o[0] == 0) and torch.all(o_cache[0] == 0)
    assert torch.all(lse[0] == -math.inf)
    assert torch.equal(pool[1:], before[0][1:]), "slot 1 (the wrapped slot) was written"
    assert torch.equal(k_cache[0], before[1][0]) and torch.equal(v_cache[0], before[2][0])
    # The valid entries ran as eagerly.
    pool_eager = before[0].clone()
    o_eager = rt.kda_decode(q[1:], k[1:], v[1:], g[1:], beta[1:], pool_eager, slots[1:])
    assert torch.equal(o[1:], o_eager) and torch.equal(pool, pool_eager)
    assert torch.equal(k_cache[1, 3:4], k[1]) and torch.equal(v_cache[1, 3:4], v[1])
