"""Shared by the package's tests: they run on the CPU, through the
emulation backend, against PyTorch computing in float64."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def relative_error(actual, expected):
    """max |actual − expected| / max |expected|, in float64."""
    actual, expected = actual.double(), expected.double()
    scale = expected.abs().max().clamp_min(1e-30)
    return ((actual - expected).abs().max() / scale).item()


def assert_close(actual, expected, tolerance, what=""):
    assert actual.shape == expected.shape, (
        f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    )
    error = relative_error(actual, expected)
    assert error <= tolerance, f"{what}: relative error {error:.3g} > {tolerance}"


def gradients(function, inputs, weight):
    """The gradients of ⟨weight, function(*inputs)⟩ with respect to
    `inputs` (leaves made fresh here), in the inputs' order."""
    leaves = [x.detach().clone().requires_grad_(True) for x in inputs]
    (function(*leaves) * weight).sum().backward()
    return [leaf.grad for leaf in leaves]
