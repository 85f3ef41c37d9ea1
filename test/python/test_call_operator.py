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
