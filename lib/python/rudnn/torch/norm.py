"""LayerNorm and RMSNorm as in torch.nn.functional, with the fused residual
forms of pre-norm blocks: given `residual`, the rows normalised are
h = input + residual, and (y, h) are returned. No row, or rows of no
feature, need no kernel: the results are empty."""

import math
from typing import Optional

import torch
from torch import Tensor

from rudnn.errors import invalid
from rudnn.torch._common import call, check_tensor, dense, float_option, integer_option

# The row statistics each norm saves for its backward.
_STATISTICS = {"layer_norm": ("mean", "rstd"), "rms_norm": ("rstd",)}


def _forward_call(kind, x, weight, bias, residual, eps):
    """y, the statistics, then h when there is a residual."""
    tensors = dict(x=x, residual=residual, gamma=weight)
    if kind == "layer_norm":
        tensors["beta"] = bias
    results = ("y", *_STATISTICS[kind]) + (("h",) if residual is not None else ())
    return call(f"rudnn.{kind}", tensors, results, eps=eps)


def _backward_call(kind, dy, x, mean, rstd, weight, with_bias):
    """dx, then dgamma with a weight, then dbeta with a bias."""
    tensors = dict(dy=dy, x=x, mean=mean, rstd=rstd, gamma=weight)
    results = ("dx",) + (("dgamma",) if weight is not None else ())
    results += ("dbeta",) if with_bias else ()
    return call(f"rudnn.{kind}_backward", tensors, results)


def _empty_rows(x, residual, eps):
    """The results for x [N, C] with N or C 0, known without a kernel: y and
    h are empty, and each row's statistics those of no values (mean 0,
    variance 0: rstd = eps^-1/2)."""
    rows = x.shape[0]
    mean = x.new_zeros(rows, dtype=torch.float32)
    rstd = x.new_full((rows,), eps**-0.5 if eps else math.inf, dtype=torch.float32)
    h = x.new_empty(x.shape if residual is not None else 0)
    return x.new_empty(x.shape), mean, rstd, h


@torch.library.custom_op("rudnn::layer_norm", mutates_args=())
def _layer_norm(
    x: Tensor,
    weight: Optional[Tensor],
    bias: Optional[Tensor],
    residual: Optional[Tensor],
    eps: float,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    if x.numel() == 0:
        return _empty_rows(x, residual, eps)
    y, mean, rstd, *h = _forward_call("layer_norm", x, weight, bias, residual, eps)
    return y, mean, rstd, h[0] if h else x.new_empty(0)


@_layer_norm.register_fake
def _(x, weight, bias, residual, eps):
    rows = x.new_empty(x.shape[0], dtype=torch.float32)
    return (
        x.new_empty(x.shape),
        rows,
        rows.new_empty(rows.shape),
        x.new_empty(x.shape if residual is not None else 0),
    )


@torch.library.custom_op("rudnn::rms_norm", mutates_args=())
def _rms_norm(
    x: Tensor, weight: Optional[Tensor], residual: Optional[Tensor], eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    if x.numel() == 0:
        y, _, rstd, h = _empty_rows(x, residual, eps)
        return y, rstd, h
    y, rstd, *h = _forward_call("rms_norm", x, weight, None, residual, eps)
    return y, rstd, h[0] if h else x.new_empty(0)


@_rms_norm.register_fake
def _(x, weight, residual, eps):
    return (
        x.new_empty(x.shape),
        x.new_empty(x.shape[0], dtype=torch.float32),
        x.new_empty(x.shape if residual is not None else 0),
    )


@torch.library.custom_op("rudnn::norm_backward", mutates_args=())
def _norm_backward(
    kind: str,
    dy: Tensor,
    x: Tensor,
    mean: Optional[Tensor],
    rstd: Tensor,
    weight: Optional[Tensor],
    with_bias: bool,
) -> tuple[Tensor, Tensor, Tensor]:
    if dy.numel() == 0:
        # No row reads γ or β: their gradients are 0 (empty when C is 0).
        vector = dy.new_zeros(dy.shape[-1])
        return (
            dy.new_zeros(dy.shape),
            vector if weight is not None else dy.new_empty(0),
            vector.clone() if with_bias else dy.new_empty(0),
        )
    dx, *rest = _backward_call(kind, dy, x, mean, rstd, weight, with_bias)
    dgamma = rest.pop(0) if weight is not None else dy.new_empty(0)
    dbeta = rest.pop(0) if with_bias else dy.new_empty(0)
    return dx, dgamma, dbeta


@_norm_backward.register_fake
def _(kind, dy, x, mean, rstd, weight, with_bias):
    vector = dy.new_empty(dy.shape[-1])
    return (
        dy.new_empty(dy.shape),
        vector if weight is not None else dy.new_empty(0),
        vector.new_empty(vector.shape) if with_bias else dy.new_empty(0),
    )


def _setup_layer_norm(ctx, inputs, output):
    x, weight, bias, residual, _ = inputs
    _, mean, rstd, h = output
    ctx.save_for_backward(h if residual is not None else x, mean, rstd, weight)
    ctx.with_bias = bias is not None


def _backward_layer_norm(ctx, dy, dmean, drstd, dh):
    rows, mean, rstd, weight = ctx.saved_tensors
    dx, dgamma, dbeta = _norm_backward(
        "layer_norm", dense(dy), rows, mean, rstd, weight, ctx.with_bias
    )
    if dh is not None and dh.numel():
        dx = dx + dh
    return (
        dx,
        dgamma if weight is not None else None,
        dbeta if ctx.with_bias else None,
        dx if ctx.needs_input_grad[3] else None,
        None,
    )


def _setup_rms_norm(ctx, inputs, output):
    x, weight, residual, _ = inputs
    _, rstd, h = output
    ctx.save_for_backward(h if residual is not None else x, rstd, weight)


def _backward_rms_norm(ctx, dy, drstd, dh):
    rows, rstd, weight = ctx.saved_tensors
    dx, dgamma, _ = _norm_backward("rms_norm", dense(dy), rows, None, rstd, weight, False)
    if dh is not None and dh.numel():
        dx = dx + dh
    return dx, dgamma if weight is not None else None, dx if ctx.needs_input_grad[2] else None, None


torch.library.register_autograd(
    "rudnn::layer_norm", _backward_layer_norm, setup_context=_setup_layer_norm
)
torch.library.register_autograd(
    "rudnn::rms_norm", _backward_rms_norm, setup_context=_setup_rms_norm
)


def _rows(input, normalized_shape, weight, bias, residual):
    """input as [rows, C] with C the normalised dims, the vectors as [C]."""
    if not isinstance(normalized_shape, (tuple, list, torch.Size)):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(
        integer_option("normalized_shape", d, minimum=0) for d in normalized_shape
    )
    check_tensor("input", input)
    if (
        not normalized_shape
        or tuple(input.shape[input.dim() - len(normalized_shape) :]) != normalized_shape
    ):
        raise invalid(
            "normalized_shape",
            f"{normalized_shape} is not the trailing dims of input {tuple(input.shape)}",
        )
    features = math.prod(normalized_shape)
    # Counted, not inferred (-1): with C = 0 any count of rows fits.
    rows = math.prod(input.shape[: input.dim() - len(normalized_shape)])
    vectors = []
    for name, vector in (("weight", weight), ("bias", bias)):
        if vector is not None:
            check_tensor(name, vector, dtypes=None, like=input)
            if tuple(vector.shape) != normalized_shape:
                raise invalid(name, f"shape {tuple(vector.shape)}, expected {normalized_shape}")
            vector = dense(vector.reshape(features))
        vectors.append(vector)
    if residual is not None:
        check_tensor("residual", residual, dtypes=None, like=input)
        if residual.shape != input.shape:
            raise invalid(
                "residual", f"shape {tuple(residual.shape)}, expected input's {tuple(input.shape)}"
            )
        residual = dense(residual.reshape(rows, features))
    return dense(input.reshape(rows, features)), vectors[0], vectors[1], residual


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, residual=None):
    """torch.nn.functional.layer_norm; with `residual`, normalises
    h = input + residual and returns (y, h)."""
    eps = float_option("eps", eps, "non-negative")
    x, weight, bias, residual_rows = _rows(input, normalized_shape, weight, bias, residual)
    y, _, _, h = _layer_norm(x, weight, bias, residual_rows, eps)
    if residual is None:
        return y.view(input.shape)
    return y.view(input.shape), h.view(input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None, residual=None):
    """torch.nn.functional.rms_norm (eps None: the dtype's epsilon); with
    `residual`, normalises h = input + residual and returns (y, h)."""
    if eps is not None:
        eps = float_option("eps", eps, "non-negative")
    x, weight, _, residual_rows = _rows(input, normalized_shape, weight, None, residual)
    if eps is None:
        eps = torch.finfo(input.dtype).eps
    y, _, h = _rms_norm(x, weight, residual_rows, float(eps))
    if residual is None:
        return y.view(input.shape)
    return y.view(input.shape), h.view(input.shape)
