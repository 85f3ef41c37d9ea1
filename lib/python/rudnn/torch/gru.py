"""torch.nn.GRU's drop-in: the same constructor, parameters and state_dict
(gates r, z, n; load one saved from torch.nn.GRU unchanged), the same
forward on padded tensors and PackedSequences, and the same gradients (of
the input, the initial state and every parameter) through autograd: a
forward that needs them saves each layer's outputs and each step's r, z, n
and W_hn h + b_hn for rudnn.gru_backward. An empty batch or sequence needs
no kernel: the output is empty and the final state the initial one (or
0)."""

from typing import Optional

import torch
from torch import Tensor

from rudnn.torch._common import call, dense
from rudnn.torch._recurrent import Recurrent, shapes, weight_names


@torch.library.custom_op("rudnn::gru", mutates_args=())
def _gru(
    x: Tensor,
    h0: Optional[Tensor],
    lengths: Optional[Tensor],
    weights: list[Tensor],
    layers: int,
    bidirectional: bool,
    batch_first: bool,
    allow_tf32: bool,
    save: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    steps, batch, hidden, directions = shapes(x, weights, bidirectional, batch_first)
    if x.numel() == 0:
        # No step or no entry: the final state is the initial one.
        out = x.new_zeros(*x.shape[:2], directions * hidden)
        h_n = h0.clone() if h0 is not None else x.new_zeros(layers * directions, batch, hidden)
        return out, h_n, x.new_empty(0), x.new_empty(0)
    names = weight_names(layers, directions, len(weights))
    results = ("out", "h_n") + (("hidden", "gates") if save else ())
    computed = call(
        "rudnn.gru",
        dict(x=x, h0=h0, lengths=lengths, **dict(zip(names, weights))),
        results,
        num_layers=layers,
        bidirectional=bidirectional,
        batch_first=batch_first,
        allow_tf32=allow_tf32,
        save_states=True if save else None,
    )
    return tuple(computed) + tuple(x.new_empty(0) for _ in range(4 - len(computed)))


@_gru.register_fake
def _(x, h0, lengths, weights, layers, bidirectional, batch_first, allow_tf32, save):
    steps, batch, hidden, directions = shapes(x, weights, bidirectional, batch_first)
    states = layers * directions
    saving = save and x.numel() > 0
    return (
        x.new_empty(*x.shape[:2], directions * hidden),
        x.new_empty(states, batch, hidden),
        x.new_empty(*((layers, steps, batch, directions * hidden) if saving else (0,))),
        x.new_empty(
            *((states, steps, batch, 4 * hidden) if saving else (0,)), dtype=torch.float32
        ),
    )


@torch.library.custom_op("rudnn::gru_backward", mutates_args=())
def _gru_backward(
    x: Tensor,
    h0: Optional[Tensor],
    lengths: Optional[Tensor],
    weights: list[Tensor],
    hidden: Tensor,
    gates: Tensor,
    d_out: Tensor,
    d_h_n: Optional[Tensor],
    layers: int,
    bidirectional: bool,
    batch_first: bool,
    allow_tf32: bool,
) -> tuple[Tensor, Tensor, list[Tensor]]:
    steps, batch, hidden_size, directions = shapes(x, weights, bidirectional, batch_first)
    if x.numel() == 0:
        # No step: the final state was the initial one.
        d_h0 = (
            d_h_n.clone()
            if d_h_n is not None
            else x.new_zeros(layers * directions, batch, hidden_size)
        )
        return x.new_zeros(x.shape), d_h0, [torch.zeros_like(w) for w in weights]
    names = weight_names(layers, directions, len(weights))
    computed = call(
        "rudnn.gru_backward",
        dict(
            x=x, h0=h0, lengths=lengths, hidden=hidden, gates=gates, d_out=d_out,
            d_h_n=d_h_n, **dict(zip(names, weights)),
        ),
        ("d_x", "d_h0") + tuple("d_" + name for name in names),
        num_layers=layers,
        bidirectional=bidirectional,
        batch_first=batch_first,
        allow_tf32=allow_tf32,
    )
    return computed[0], computed[1], list(computed[2:])


@_gru_backward.register_fake
def _(x, h0, lengths, weights, hidden, gates, d_out, d_h_n, layers, bidirectional,
      batch_first, allow_tf32):
    steps, batch, hidden_size, directions = shapes(x, weights, bidirectional, batch_first)
    return (
        x.new_empty(x.shape),
        x.new_empty(layers * directions, batch, hidden_size),
        [w.new_empty(w.shape) for w in weights],
    )


def _setup(ctx, inputs, output):
    x, h0, lengths, weights, *attributes, save = inputs
    _, _, hidden, gates = output
    ctx.save_for_backward(x, h0, lengths, hidden, gates, *weights)
    ctx.attributes = attributes
    ctx.save = save


def _backward(ctx, d_out, d_h_n, *_saved):
    x, h0, lengths, hidden, gates, *weights = ctx.saved_tensors
    if not ctx.save:
        raise RuntimeError(
            "rudnn.torch.GRU: this forward saved nothing for a backward (it ran "
            "without gradients enabled)"
        )
    if d_out is None:
        d_out = x.new_zeros(*x.shape[:2], hidden.shape[-1])
    d_x, d_h0, d_weights = _gru_backward(
        x, h0, lengths, weights, hidden, gates, dense(d_out),
        None if d_h_n is None else dense(d_h_n), *ctx.attributes,
    )
    return (d_x, d_h0 if h0 is not None else None, None, d_weights) + (None,) * 5


torch.library.register_autograd("rudnn::gru", _backward, setup_context=_setup)


class GRU(Recurrent):
    """torch.nn.GRU(input_size, hidden_size, num_layers=1, bias=True,
    batch_first=False, dropout=0.0, bidirectional=False), forward and
    backward (dropout between layers is not supported: refused here, at
    construction). A PackedSequence's lengths reach the operator as int32
    and f32 products round to TF32 as rudnn.torch.LSTM's do."""

    _kind = "GRU"
    _gates = 3

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype)

    def forward(self, input, hx=None):
        input, lengths, packed, unbatched, states, weights = self._prepare(
            input, None if hx is None else (hx,), ("hx",)
        )
        h0 = states[0] if states is not None else None
        out, h_n, *_ = _gru(
            input, h0, lengths, weights, self.num_layers, self.bidirectional,
            self.batch_first, self._allow_tf32(input), self._training(input, weights, states),
        )
        out = self._finish(out, lengths, packed, unbatched)
        return out, h_n.squeeze(1) if unbatched else h_n
