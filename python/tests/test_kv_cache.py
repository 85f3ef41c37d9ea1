"""kv_cache_attention against PyTorch: the caches appended in place, each
new token attending to its entry's cache so far, refused appends left
untouched."""

import math

import pytest
import torch

import rudnn
import rudnn.torch as rt
from conftest import assert_close


def test_kv_cache_attention_appends_and_attends():
    B, T, H, G, D, S = 3, 2, 4, 2, 16, 24
    lengths = torch.tensor([5, 0, 22])  # the last entry's append would pass S
    k_cache, v_cache = torch.randn(B, S, G, D), torch.randn(B, S, G, D)
    before_k, before_v = k_cache.clone(), v_cache.clone()
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, D)
    o, lse = rt.kv_cache_attention(q, k_cache, v_cache, k, v, lengths, return_lse=True)
    for b in range(B):
        L = int(lengths[b])
        if L + T > S:  # refused: nothing written, o 0, lse −inf
            assert torch.equal(k_cache[b], before_k[b]) and torch.equal(v_cache[b], before_v[b])
            assert torch.all(o[b] == 0) and torch.all(lse[b] == -math.inf)
            continue
        assert torch.equal(k_cache[b, L:L + T], k[b]) and torch.equal(v_cache[b, L:L + T], v[b])
        assert torch.equal(k_cache[b, :L], before_k[b, :L])
        keys = k_cache[b, :L + T].double().repeat_interleave(H // G, dim=1)
        values = v_cache[b, :L + T].double().repeat_interleave(H // G, dim=1)
        scores = torch.einsum("thd,shd->hts", q[b].double(), keys) * D ** -0.5
        allowed = torch.arange(L + T)[None, :] <= (L + torch.arange(T))[:, None]
        scores = scores.masked_fill(~allowed, -math.inf)
        expected = torch.einsum("hts,she->the", torch.softmax(scores, -1), values)
        assert_close(o[b], expected, 1e-5, f"o[{b}]")
        assert_close(lse[b], torch.logsumexp(scores, -1), 1e-5, f"lse[{b}]")


def test_kv_cache_bad_inputs_name_the_argument():
    q = torch.randn(2, 1, 2, 16)
    cache = torch.zeros(2, 8, 1, 16)
    new = torch.randn(2, 1, 1, 16)
    with pytest.raises(rudnn.InvalidArgument, match="'cache_seqlens'"):
        rt.kv_cache_attention(q, cache, cache.clone(), new, new, torch.tensor([1, 2, 3]))
    with pytest.raises(rudnn.InvalidArgument, match="'v_cache'"):
        rt.kv_cache_attention(q, cache, torch.zeros(2, 9, 1, 16), new, new, torch.tensor([1, 2]))
    with pytest.raises(rudnn.InvalidArgument, match="'k_cache'"):
        rt.kv_cache_attention(q, cache.transpose(1, 3), cache, new, new, torch.tensor([1, 2]))
