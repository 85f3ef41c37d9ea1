"""kda_decode against the KDA recurrence in float64: each entry's tokens
start from its slot of the pool and leave their state there, in place; the
other slots stay as they were; a repeated slot is refused."""

import pytest
import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt
from conftest import assert_close
from test_kda import recurrence


@pytest.mark.parametrize("tokens", [1, 3])
def test_kda_decode_updates_each_slot_in_place(tokens):
    B, Q, H, K, V, P = 3, 1, 2, 16, 12, 5  # q and k shared by both value heads
    q, k = torch.randn(B, tokens, Q, K), F.normalize(torch.randn(B, tokens, Q, K), dim=-1)
    v, beta_logits = torch.randn(B, tokens, H, V), torch.randn(B, tokens, H)
    g_raw, A_log = torch.randn(B, tokens, H, K), torch.randn(H) * 0.5
    pool = torch.randn(P, H, K, V) * 0.1
    before = pool.clone()
    slots = torch.tensor([4, 0, 2])
    o = rt.kda_decode(
        q,
        k,
        v,
        g_raw,
        beta_logits,
        pool,
        slots,
        use_qk_l2norm_in_kernel=True,
        use_gate_in_kernel=True,
        A_log=A_log,
        use_beta_sigmoid_in_kernel=True,
    )

    g = -torch.exp(A_log.double())[:, None] * F.softplus(g_raw.double())
    rows = [t.double().repeat_interleave(H // Q, dim=2) for t in (q, k)]
    o_ref, states = recurrence(
        *rows,
        v.double(),
        g,
        torch.sigmoid(beta_logits.double()),
        K**-0.5,
        before[slots].double(),
        qk_l2norm=True,
    )
    assert_close(o, o_ref, 1e-4, "o")
    assert_close(pool[slots], states, 1e-4, "pool[slots]")
    for untouched in (1, 3):
        assert torch.equal(pool[untouched], before[untouched])


def test_kda_decode_refuses_a_repeated_slot_and_names_bad_inputs():
    B, H, K, V = 2, 2, 16, 16
    q, k, v = torch.randn(B, 1, H, K), torch.randn(B, 1, H, K), torch.randn(B, 1, H, V)
    g, beta = -torch.rand(B, 1, H, K), torch.rand(B, 1, H)
    pool = torch.randn(3, H, K, V)
    before = pool.clone()
    o = rt.kda_decode(q, k, v, g, beta, pool, torch.tensor([1, 1]))
    assert torch.all(o == 0) and torch.equal(pool, before)
    with pytest.raises(rudnn.InvalidArgument, match="'state_pool'"):
        rt.kda_decode(q, k, v, g, beta, torch.zeros(3, H, K, V + 1), torch.tensor([0, 1]))
    with pytest.raises(rudnn.InvalidArgument, match="'slots'"):
        rt.kda_decode(q, k, v, g, beta, pool, torch.tensor([0, 1, 2]))
