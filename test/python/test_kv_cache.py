"""kv_cache_attention against PyTorch: the caches appended in place, each
new token attending to its entry's cache so far, refused appends left
untouched."""

import math

import pytest
import torch

import rudnn
import rudnn.torch as rt
from conftest import assert_close, flash_attn_signature


def test_kv_cache_attention_appends_and_attends():
    B, T, H, G, D, S = 3, 2, 4, 2, 16, 24
    lengths = torch.tensor([5, 0, 23])  # the last entry's append would pass S
    k_cache, v_cache = torch.randn(B, S, G, D), torch.randn(B, S, G, D)
    before_k, before_v = k_cache.clone(), v_cache.clone()
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, D)
    o, lse, status = rt.kv_cache_attention(
        q, k_cache, v_cache, k, v, lengths, return_lse=True, return_status=True
    )
    assert status.tolist() == [0, 0, 1]
    for b in range(B):
        L = int(lengths[b])
        if L + T > S:  # refused: nothing written, o 0, lse −inf
            assert torch.equal(k_cache[b], before_k[b]) and torch.equal(v_cache[b], before_v[b])
            assert torch.all(o[b] == 0) and torch.all(lse[b] == -math.inf)
            continue
        assert torch.equal(k_cache[b, L : L + T], k[b]) and torch.equal(v_cache[b, L : L + T], v[b])
        assert torch.equal(k_cache[b, :L], before_k[b, :L])
        keys = k_cache[b, : L + T].double().repeat_interleave(H // G, dim=1)
        values = v_cache[b, : L + T].double().repeat_interleave(H // G, dim=1)
        scores = torch.einsum("thd,shd->hts", q[b].double(), keys) * D**-0.5
        allowed = torch.arange(L + T)[None, :] <= (L + torch.arange(T))[:, None]
        scores = scores.masked_fill(~allowed, -math.inf)
        expected = torch.einsum("hts,she->the", torch.softmax(scores, -1), values)
        assert_close(o[b], expected, 1e-5, f"o[{b}]")
        assert_close(lse[b], torch.logsumexp(scores, -1), 1e-5, f"lse[{b}]")


def test_a_refused_append_raises_after_serving_the_others():
    B, T, G, D, S = 3, 2, 1, 16, 8
    k_cache, v_cache = torch.randn(B, S, G, D), torch.randn(B, S, G, D)
    before_k = k_cache.clone()
    q, k, v = torch.randn(B, T, 2, D), torch.randn(B, T, G, D), torch.randn(B, T, G, D)
    # Every entry holds 7 tokens but the second, which has room; an int
    # length is every entry's.
    lengths = torch.tensor([7, 1, 7], dtype=torch.int32)
    with pytest.raises(rudnn.InvalidArgument, match=r"'cache_seqlens'.*entries \[0, 2\]"):
        rt.kv_cache_attention(q, k_cache, v_cache, k, v, lengths)
    assert torch.equal(k_cache[0], before_k[0]) and torch.equal(k_cache[2], before_k[2])
    assert torch.equal(k_cache[1, 1 : 1 + T], k[1])  # served
    k_cache.copy_(before_k)
    o_int = rt.kv_cache_attention(q, k_cache, v_cache, k, v, 3)
    k_cache.copy_(before_k)
    o_tensor = rt.kv_cache_attention(q, k_cache, v_cache, k, v, torch.tensor([3, 3, 3]))
    assert_close(o_int, o_tensor, 0.0, "o with an int length")


def test_kv_cache_bad_inputs_name_the_argument():
    q = torch.randn(2, 1, 2, 16)
    cache = torch.zeros(2, 8, 1, 16)
    new = torch.randn(2, 1, 1, 16)
    with pytest.raises(rudnn.InvalidArgument, match="'cache_seqlens'"):
        rt.kv_cache_attention(q, cache, cache.clone(), new, new, torch.tensor([1, 2, 3]))
    with pytest.raises(rudnn.InvalidArgument, match="'v_cache'"):
        rt.kv_cache_attention(q, cache, torch.zeros(2, 9, 1, 16), new, new, torch.tensor([1, 2]))
    # The right shape, but every other float of its rows: not writable in place.
    strided = torch.zeros(2, 8, 1, 32)[..., ::2]
    with pytest.raises(rudnn.InvalidArgument, match="'k_cache'.*contiguous"):
        rt.kv_cache_attention(q, strided, cache, new, new, torch.tensor([1, 2]))


def test_paged_cache_matches_the_contiguous_one():
    # The same caches cut into pages of 8 tokens, the pages shuffled.
    B, T, H, G, D, S, Z = 2, 3, 2, 1, 16, 32, 8
    pages_per_entry = S // Z
    k_cache, v_cache = torch.randn(B, S, G, D), torch.randn(B, S, G, D)
    order = torch.randperm(B * pages_per_entry)
    block_table = order.view(B, pages_per_entry).to(torch.int32)
    k_pages, v_pages = (
        torch.empty(B * pages_per_entry, Z, G, D),
        torch.empty(B * pages_per_entry, Z, G, D),
    )
    for b in range(B):
        for m in range(pages_per_entry):
            k_pages[block_table[b, m]] = k_cache[b, m * Z : (m + 1) * Z]
            v_pages[block_table[b, m]] = v_cache[b, m * Z : (m + 1) * Z]
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, D)
    lengths = torch.tensor([6, 20], dtype=torch.int32)
    o_paged = rt.kv_cache_attention(q, k_pages, v_pages, k, v, lengths, block_table=block_table)
    o = rt.kv_cache_attention(q, k_cache, v_cache, k, v, lengths)
    assert_close(o_paged, o, 1e-6, "o")
    for b in range(B):
        for t in range(int(lengths[b]), int(lengths[b]) + T):
            page, row = block_table[b, t // Z], t % Z
            assert torch.equal(k_pages[page, row], k_cache[b, t])
            assert torch.equal(v_pages[page, row], v_cache[b, t])


def test_an_append_to_a_page_another_entry_uses_is_refused_and_reported():
    # Pages of 4 tokens; entry 1's append lands on the page entry 0 reads
    # its first tokens from, so entry 1 is refused and says so; entry 0 runs.
    B, T, H, G, D, Z = 2, 1, 2, 1, 16, 4
    k_pages, v_pages = torch.randn(6, Z, G, D), torch.randn(6, Z, G, D)
    block_table = torch.tensor([[0, 1, 2], [0, 4, 5]], dtype=torch.int32)
    lengths = torch.tensor([6, 2], dtype=torch.int32)
    before_k, before_v = k_pages.clone(), v_pages.clone()
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, D)
    o, lse, status = rt.kv_cache_attention(
        q,
        k_pages,
        v_pages,
        k,
        v,
        lengths,
        block_table=block_table,
        return_lse=True,
        return_status=True,
    )
    assert status.tolist() == [0, 1]
    assert torch.equal(k_pages[0], before_k[0]) and torch.equal(v_pages[0], before_v[0])
    assert torch.all(o[1] == 0) and torch.all(lse[1] == -math.inf)
    # Entry 0 appended at token 6 (page 1, row 2) and attended to 0 … 6.
    assert torch.equal(k_pages[1, 2], k[0, 0]) and torch.equal(v_pages[1, 2], v[0, 0])
    keys = torch.cat([k_pages[0], k_pages[1, :3]]).double().repeat_interleave(H // G, dim=1)
    values = torch.cat([v_pages[0], v_pages[1, :3]]).double().repeat_interleave(H // G, dim=1)
    scores = torch.einsum("thd,shd->hts", q[0].double(), keys) * D**-0.5
    expected = torch.einsum("hts,she->the", torch.softmax(scores, -1), values)
    assert_close(o[0], expected, 1e-5, "o[0]")


def test_flash_attn_with_kvcache_is_flash_attns_over_kv_cache_attention():
    import inspect

    got = [
        (p.name, None if p.default is inspect.Parameter.empty else p.default)
        for p in inspect.signature(rt.flash_attn_with_kvcache).parameters.values()
    ]
    assert got == flash_attn_signature("flash_attn_with_kvcache")
    torch.manual_seed(19)
    B, T, H, G, D, S = 2, 3, 4, 2, 16, 12
    caches = torch.randn(B, S, G, D), torch.randn(B, S, G, D)
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, D)
    lengths = torch.tensor([4, 9], dtype=torch.int32)
    ours = [c.clone() for c in caches]
    o, lse = rt.flash_attn_with_kvcache(
        q, *ours, k, v, cache_seqlens=lengths, causal=True, num_splits=2,
        return_softmax_lse=True,
    )
    theirs = [c.clone() for c in caches]
    o_ref, lse_ref = rt.kv_cache_attention(q, *theirs, k, v, lengths, return_lse=True)
    assert_close(o, o_ref, 0.0, "o")
    assert_close(lse, lse_ref, 0.0, "lse")
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))


def rotate(x, cos, sin, positions, interleaved):
    """x [T, G, D] turned (float64) at `positions` [T] by flash-attn's rotary
    embedding: the first 2Q features in pairs (2p, 2p + 1) when
    interleaved, else (p, p + Q)."""
    pairs = cos.shape[1]
    c, s = cos[positions][:, None].double(), sin[positions][:, None].double()
    x = x.double().clone()
    first, second = (
        (slice(0, 2 * pairs, 2), slice(1, 2 * pairs, 2)) if interleaved
        else (slice(0, pairs), slice(pairs, 2 * pairs))
    )  # fmt: skip
    a, b = x[..., first].clone(), x[..., second].clone()
    x[..., first], x[..., second] = a * c - b * s, a * s + b * c
    return x


@pytest.mark.parametrize("interleaved, causal", [(True, True), (False, False)])
def test_rotary_embedding_and_cache_rows_as_flash_attn_takes_them(interleaved, causal):
    # Three entries over five cache rows; rotary over 8 of 16 features.
    B, T, H, G, D, E, S, N, R = 3, 2, 4, 2, 16, 8, 12, 5, 20
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, E)
    k_cache, v_cache = torch.randn(N, S, G, D), torch.randn(N, S, G, E)
    rows, lengths = torch.tensor([4, 0, 2]), torch.tensor([5, 0, S - T], dtype=torch.int32)
    angles = torch.arange(R)[:, None] * (10000.0 ** (-torch.arange(4) / 4))[None]
    cos, sin = torch.cos(angles), torch.sin(angles)
    before = k_cache.clone(), v_cache.clone()
    o, lse = rt.flash_attn_with_kvcache(
        q, k_cache, v_cache, k, v, rotary_cos=cos, rotary_sin=sin, cache_seqlens=lengths,
        cache_batch_idx=rows, causal=causal, rotary_interleaved=interleaved,
        return_softmax_lse=True,
    )
    n = lengths.tolist()
    turned = [rotate(k[b], cos, sin, torch.arange(n[b], n[b] + T), interleaved) for b in range(B)]
    for b, row in enumerate(rows.tolist()):
        assert_close(k_cache[row, n[b] : n[b] + T], turned[b], 1e-6, f"appended k of entry {b}")
        assert torch.equal(v_cache[row, n[b] : n[b] + T], v[b])
        assert torch.equal(k_cache[row, : n[b]], before[0][row, : n[b]])
    untouched = sorted(set(range(N)) - set(rows.tolist()))
    assert torch.equal(k_cache[untouched], before[0][untouched])
    # flash-attn turns each query at its own position when causal, else
    # every one at the cached length.
    positions = [torch.arange(n[b], n[b] + T) if causal else torch.full((T,), n[b])
                 for b in range(B)]  # fmt: skip
    queries = torch.stack([rotate(q[b], cos, sin, positions[b], interleaved) for b in range(B)])
    expect_each_entry(
        queries, o, lse, dict(causal=causal),
        lambda b: torch.cat([before[0][rows[b] : rows[b] + 1, : n[b]], turned[b][None]], 1),
        lambda b: torch.cat([before[1][rows[b] : rows[b] + 1, : n[b]], v[b : b + 1]], 1),
        T,
    )
    with pytest.raises(rudnn.InvalidArgument, match="attend-only"):
        rt.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths, rotary_cos=cos,
                                   rotary_sin=sin, cache_batch_idx=rows)


def paged(cache, Z, table):
    """`cache` [B, S, ...] cut into pages of Z tokens laid out by `table`
    [B, S // Z] (one page of the pool for each entry's slot)."""
    pages = cache.new_empty(table.numel(), Z, *cache.shape[2:])
    for b in range(cache.shape[0]):
        for m in range(table.shape[1]):
            pages[table[b, m]] = cache[b, m * Z : (m + 1) * Z]
    return pages


def expect_each_entry(q, o, lse, options, keys, values, appended):
    """Each entry's o and lse against the float64 reference over its keys:
    keys(b) and values(b) [1, n, G, ·], the cached tokens from its left
    padding then the `appended` new ones (the queries the last)."""
    from test_attention import reference

    D = q.shape[-1]
    for b in range(q.shape[0]):
        k_b, v_b = keys(b), values(b)
        if k_b.shape[1] == 0:
            assert not o[b].any() and torch.isneginf(lse[b]).all()
            continue
        want_o, want_lse = reference(
            q[b : b + 1].double(), k_b.double(), v_b.double(), D**-0.5,
            causal=options.get("causal", False), window=options.get("window_size", (-1, -1)),
            softcap=options.get("softcap", 0.0), alibi=options.get("alibi_slopes"),
        )
        assert_close(o[b : b + 1], want_o, 1e-5, f"o of entry {b}")
        finite = torch.isfinite(want_lse)
        assert torch.equal(torch.isfinite(lse[b : b + 1]), finite), f"lse of entry {b}"
        assert_close(lse[b : b + 1][finite], want_lse[finite], 1e-5, f"lse of entry {b}")


LEFTPAD = torch.tensor([3, 0, 0, 6], dtype=torch.int32)
SLOPES = torch.tensor([0.5, 0.25, 0.125, 0.0625])
ATTEND_ONLY = [
    (dict(causal=True), False),
    (dict(causal=False), False),
    (dict(causal=True, window_size=(5, 0), softcap=4.0), False),
    (dict(causal=True, cache_leftpad=LEFTPAD), False),
    (dict(causal=True, cache_leftpad=LEFTPAD, alibi_slopes=SLOPES), False),
    (dict(causal=False, window_size=(6, 1), cache_leftpad=LEFTPAD, alibi_slopes=SLOPES,
          softcap=3.0), True),
]  # fmt: skip


@pytest.mark.parametrize(
    "options, pages",
    ATTEND_ONLY,
    ids=["causal", "not-causal", "window-softcap", "leftpad", "leftpad-alibi", "paged-everything"],
)
def test_attend_only_calls_attend_to_each_entrys_cached_tokens(options, pages):
    B, T, S, H, G, D, E, Z = 4, 3, 20, 4, 2, 16, 8, 4
    q = torch.randn(B, T, H, D)
    k_cache, v_cache = torch.randn(B, S, G, D), torch.randn(B, S, G, E)
    # An entry with fewer tokens than queries, an empty one, a full one.
    lengths = torch.tensor([9, 2, 0, S], dtype=torch.int32)
    caches, table = (k_cache, v_cache), None
    if pages:
        table = torch.randperm(B * S // Z).view(B, S // Z).to(torch.int32)
        caches = (paged(k_cache, Z, table), paged(v_cache, Z, table))
    before = [c.clone() for c in caches]
    o, lse = rt.flash_attn_with_kvcache(
        q, *caches, cache_seqlens=lengths, block_table=table, return_softmax_lse=True, **options
    )
    assert all(torch.equal(c, c0) for c, c0 in zip(caches, before))
    first = options.get("cache_leftpad", torch.zeros(B, dtype=torch.int32)).tolist()
    n = lengths.tolist()
    expect_each_entry(
        q, o, lse, options, lambda b: k_cache[b : b + 1, first[b] : n[b]],
        lambda b: v_cache[b : b + 1, first[b] : n[b]], 0,
    )


APPENDING = [
    (dict(causal=False, window_size=(4, 1), softcap=5.0), False),
    (dict(causal=True, cache_leftpad=LEFTPAD, alibi_slopes=SLOPES), False),
    (dict(causal=True, window_size=(7, 0), cache_leftpad=LEFTPAD, alibi_slopes=SLOPES,
          softcap=3.0), True),
]  # fmt: skip


@pytest.mark.parametrize(
    "options, pages", APPENDING, ids=["not-causal-window-softcap", "leftpad-alibi", "paged-all"]
)
def test_appending_calls_take_flash_attns_options(options, pages):
    B, T, S, H, G, D, E, Z = 4, 3, 24, 4, 2, 16, 8, 4
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, E)
    k_cache, v_cache = torch.randn(B, S, G, D), torch.randn(B, S, G, E)
    lengths = torch.tensor([9, 2, 0, S - T], dtype=torch.int32)
    caches, table = (k_cache.clone(), v_cache.clone()), None
    if pages:
        table = torch.randperm(B * S // Z).view(B, S // Z).to(torch.int32)
        caches = (paged(k_cache, Z, table), paged(v_cache, Z, table))
    leftpad = options.get("cache_leftpad", torch.zeros(B, dtype=torch.int32)).tolist()
    o, lse = rt.flash_attn_with_kvcache(
        q, *caches, k, v, cache_seqlens=lengths, block_table=table, return_softmax_lse=True,
        **options,
    )
    n = lengths.tolist()

    def sequence(cache, new, b):
        return torch.cat([cache[b : b + 1, leftpad[b] : n[b]], new[b : b + 1]], dim=1)

    expect_each_entry(
        q, o, lse, options, lambda b: sequence(k_cache, k, b), lambda b: sequence(v_cache, v, b),
        T,
    )
    # The new tokens where they belong.
    for b in range(B):
        for t in range(n[b], n[b] + T):
            row = (table[b, t // Z], t % Z) if pages else (b, t)
            assert torch.equal(caches[0][row], k[b, t - n[b]])
            assert torch.equal(caches[1][row], v[b, t - n[b]])


def test_a_refused_attend_only_call_raises_naming_the_entries():
    q, k_cache = torch.randn(2, 1, 2, 8), torch.randn(2, 4, 2, 8)
    with pytest.raises(rudnn.InvalidArgument, match="'v'"):
        rt.flash_attn_with_kvcache(q, k_cache, k_cache.clone(), k=k_cache[:, :1], cache_seqlens=1)
    # A length past the capacity, then a left padding past the length.
    refused = r"attend-only call was refused for entries \[1\]"
    with pytest.raises(rudnn.InvalidArgument, match=refused):
        rt.flash_attn_with_kvcache(q, k_cache, k_cache.clone(), cache_seqlens=torch.tensor([4, 5]))
    with pytest.raises(rudnn.InvalidArgument, match=r"entries \[0\]"):
        rt.flash_attn_with_kvcache(
            q, k_cache, k_cache.clone(), cache_seqlens=torch.tensor([2, 4]),
            cache_leftpad=torch.tensor([3, 4]),
        )
