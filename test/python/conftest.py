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


def flash_attn_signature(name):
    """flash-attn 2.8.3's own parameters of `name`, (name, default) in
    order (None where it has no default), read from its interface file,
    which scripts/python-env fetches from its source distribution
    (scripts/fetch-anchors): the package itself builds CUDA code."""
    import ast
    import pathlib
    import sys

    path = pathlib.Path(sys.prefix) / "anchors" / "flash_attn_interface.py"
    assert path.exists(), f"{path} is missing: scripts/python-env fetches it"
    tree = ast.parse(path.read_text())
    function = next(
        node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name
    )
    arguments = function.args.args
    defaults = [ast.literal_eval(d) for d in function.args.defaults]
    defaults = [None] * (len(arguments) - len(defaults)) + defaults
    return [(argument.arg, default) for argument, default in zip(arguments, defaults)]
