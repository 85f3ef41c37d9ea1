"""rudnn.call_operator: any operator by name, its tensors by contract name
and its attributes as keywords, against float64 and the typed drop-ins."""

import numpy as np
import pytest
import torch

import rudnn
import rudnn.torch as rt
from conftest import assert_close


def test_layer_norm_by_name_matches_float64():
    x = torch.randn(2, 9, 48) * 3 + 1
    gamma, beta = torch.randn(48), torch.randn(48)
    y, rstd = rudnn.call_operator(
        "rudnn.layer_norm", {"x": x, "gamma": gamma, "beta": beta}, results=("y", "rstd"), eps=1e-3
    )
    h = x.double()
    mean, var = h.mean(-1, keepdim=True), h.var(-1, unbiased=False, keepdim=True)
    expected_rstd = 1 / torch.sqrt(var + 1e-3)
    assert_close(y, (h - mean) * expected_rstd * gamma.double() + beta.double(), 1e-5, "y")
    assert_close(rstd, expected_rstd[..., 0], 1e-5, "rstd")
    assert y.shape == x.shape and rstd.shape == (2, 9)


def test_numpy_in_numpy_out():
    x = np.random.default_rng(3).standard_normal((5, 16)).astype(np.float32)
    mean, var = rudnn.call_operator("rudnn.moments", {"x": x}, results=("mean", "var"))
    assert isinstance(mean, np.ndarray)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(-1), atol=1e-6)
    np.testing.assert_allclose(var, x.astype(np.float64).var(-1), atol=1e-5)


def test_kv_cache_updated_in_place_matches_the_drop_in():
    B, T, H, G, D, S = 2, 1, 4, 2, 16, 12
    q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, D)
    k1, v1 = torch.randn(B, S, G, D), torch.randn(B, S, G, D)
    k2, v2 = k1.clone(), v1.clone()
    lengths = torch.tensor([3, 7], dtype=torch.int32)
    o1 = rt.kv_cache_attention(q, k1, v1, k, v, lengths)
    o2, status = rudnn.call_operator(
        "rudnn.kv_cache_attention",
        {"q": q, "k": k, "v": v, "k_cache": k2, "v_cache": v2, "cache_lengths": lengths},
        results=("o", "status"),
        scale=D**-0.5,
    )
    assert torch.equal(o1, o2) and torch.equal(k1, k2) and torch.equal(v1, v2)
    assert status.tolist() == [0, 0]


def test_unknown_names_and_values_are_named():
    x = torch.randn(4, 8)
    with pytest.raises(rudnn.Unsupported, match="no operator 'rudnn.layernorm'"):
        rudnn.call_operator("rudnn.layernorm", {"x": x}, results="y")
    with pytest.raises(rudnn.InvalidArgument, match="'epsilon' is not an attribute"):
        rudnn.call_operator("rudnn.layer_norm", {"x": x}, results="y", epsilon=1e-5)
    with pytest.raises(rudnn.InvalidArgument, match="'gamma' is not a result"):
        rudnn.call_operator("rudnn.layer_norm", {"x": x}, results="gamma")
    with pytest.raises(rudnn.InvalidArgument, match="'z' is not a tensor"):
        rudnn.call_operator("rudnn.layer_norm", {"x": x, "z": x}, results="y")
    with pytest.raises(rudnn.InvalidArgument, match="attribute 'eps' must be a bool"):
        rudnn.call_operator("rudnn.layer_norm", {"x": x}, results="y", eps=[1])
    assert "rudnn.lstm" in rudnn.operator_names()


def test_results_written_into_out_and_a_name_given_twice_refused():
    x = torch.randn(6, 24)
    y = torch.full_like(x, float("nan"))
    returned, rstd = rudnn.call_operator(
        "rudnn.rms_norm", {"x": x}, results=("y", "rstd"), out={"y": y}, eps=1e-6
    )
    assert returned is y
    expected = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6)
    assert_close(y, expected, 1e-5, "y")
    assert rstd.shape == (6,)
    with pytest.raises(rudnn.InvalidArgument, match="both as an operand and in out"):
        rudnn.call_operator("rudnn.rms_norm", {"x": x}, results="y", out={"x": y})


def test_packed_final_states_are_counted_from_the_offsets():
    # No initial state: the count of sequences (and of final states) comes
    # from cu_seqlens' length alone.
    T, H, K, V = 11, 2, 16, 8
    q, k, v = torch.randn(1, T, H, K), torch.randn(1, T, H, K), torch.randn(1, T, H, V)
    k = torch.nn.functional.normalize(k, dim=-1)
    g = -torch.rand(1, T, H, K)
    beta = torch.rand(1, T, H) * 0.9 + 0.05
    cu = torch.tensor([0, 4, 4, 11], dtype=torch.int32)
    output, final = rudnn.call_operator(
        "rudnn.kda_varlen",
        {"q": q, "k": k, "v": v, "g": g, "beta": beta, "cu_seqlens": cu},
        results=("output", "final_state"),
        scale=K**-0.5,
    )
    o2, final2 = rt.chunk_kda(
        q, k, v, g, beta, scale=K**-0.5, cu_seqlens=cu.long(), output_final_state=True
    )
    assert final.shape == (3, H, K, V)
    assert torch.equal(output, o2) and torch.equal(final, final2)
    assert torch.all(final[1] == 0)  # an empty sequence keeps its zero state


def test_drop_ins_build_their_functions_through_the_generic_entry(monkeypatch):
    # No drop-in parses IR of its own: with rudnn.compile's module gone,
    # each still runs, and each new signature is a function built by the
    # generic entry (a miss of the function cache).
    def refuse(*args, **kwargs):
        raise AssertionError("a drop-in parsed IR text")

    monkeypatch.setattr(rudnn.program.CompiledModule, "__init__", refuse)
    before = rt.program_cache_info()["misses"]
    x = torch.randn(3, 40)
    assert_close(
        rt.rms_norm(x, (40,), eps=3e-6),
        torch.nn.functional.rms_norm(x.double(), (40,), eps=3e-6),
        1e-5,
        "y",
    )
    q, k, v = torch.randn(1, 5, 2, 16), torch.randn(1, 7, 1, 16), torch.randn(1, 7, 1, 8)
    rt.flash_attn_func(q, k, v, causal=True, softmax_scale=0.31)
    lstm = rt.LSTM(6, 5, num_layers=2, bidirectional=True)
    out, (h_n, c_n) = lstm(torch.randn(4, 2, 6))
    assert out.shape == (4, 2, 10) and h_n.shape == (4, 2, 5)
    assert rt.program_cache_info()["misses"] >= before + 3
