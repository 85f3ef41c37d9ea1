"""layer_norm and rms_norm against torch.nn.functional in float64:
outputs and gradients, with and without the affine vectors and the fused
residual, on an odd feature width."""

import pytest
import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt
from conftest import assert_close, gradients

C = 37  # odd: no vector width divides it


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("with_residual", [False, True])
def test_layer_norm_matches_torch(affine, with_residual):
    x = torch.randn(3, 5, C)
    residual = torch.randn(3, 5, C)
    weight, bias = (torch.randn(C), torch.randn(C)) if affine else (None, None)
    dy = torch.randn(3, 5, C)

    def ours(x, residual, *vectors):
        y = rt.layer_norm(x, (C,), *vectors, eps=1e-5, residual=residual if with_residual else None)
        return y[0] + 0.5 * y[1] if with_residual else y

    def theirs(x, residual, *vectors):
        h = x + residual if with_residual else x
        y = F.layer_norm(h, (C,), *vectors, eps=1e-5)
        return y + 0.5 * h if with_residual else y

    vectors = [weight, bias] if affine else []
    inputs = [x, residual, *vectors]
    assert_close(ours(*inputs), theirs(*[t.double() for t in inputs]), 1e-5, "y")
    for got, want, name in zip(
        gradients(ours, inputs, dy),
        gradients(theirs, [t.double() for t in inputs], dy.double()),
        ["x", "residual", "weight", "bias"],
    ):
        if name == "residual" and not with_residual:
            continue
        assert_close(got, want, 1e-5, "d" + name)


@pytest.mark.parametrize("with_residual", [False, True])
def test_rms_norm_matches_torch(with_residual):
    x, residual, weight = torch.randn(4, 2, C), torch.randn(4, 2, C), torch.randn(C)
    dy = torch.randn(4, 2, C)

    def ours(x, residual, weight):
        if not with_residual:
            return rt.rms_norm(x, [C], weight, eps=1e-6)
        y, h = rt.rms_norm(x, [C], weight, eps=1e-6, residual=residual)
        return y + 0.5 * h

    def theirs(x, residual, weight):
        h = x + residual if with_residual else x
        y = F.rms_norm(h, [C], weight, eps=1e-6)
        return y + 0.5 * h if with_residual else y

    inputs = [x, residual, weight]
    assert_close(ours(*inputs), theirs(*[t.double() for t in inputs]), 1e-5, "y")
    grads = zip(
        gradients(ours, inputs, dy), gradients(theirs, [t.double() for t in inputs], dy.double())
    )
    for (got, want), name in zip(grads, ["x", "residual", "weight"]):
        if name != "residual" or with_residual:
            assert_close(got, want, 1e-5, "d" + name)


def test_rms_norm_bf16_and_trailing_dims():
    # Two normalised dims flatten into one row of 2·C; bf16 storage.
    x = torch.randn(6, 2, C, dtype=torch.bfloat16)
    weight = torch.randn(2, C, dtype=torch.bfloat16)
    y = rt.rms_norm(x, (2, C), weight)
    expected = F.rms_norm(x.double(), (2, C), weight.double(), eps=torch.finfo(torch.bfloat16).eps)
    assert y.dtype == torch.bfloat16
    assert_close(y, expected, 2e-2, "y")


def test_norm_bad_inputs_name_the_argument():
    x = torch.randn(4, C)
    with pytest.raises(rudnn.InvalidArgument, match="normalized_shape"):
        rt.layer_norm(x, (C + 1,))
    with pytest.raises(rudnn.InvalidArgument, match="'weight'"):
        rt.layer_norm(x, (C,), torch.randn(C, dtype=torch.float64))
    with pytest.raises(rudnn.InvalidArgument, match="'residual'"):
        rt.rms_norm(x, (C,), residual=torch.randn(5, C))
    with pytest.raises(rudnn.InvalidArgument, match="'input'"):
        rt.rms_norm(x.double(), (C,))
