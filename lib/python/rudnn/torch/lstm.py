"""torch.nn.LSTM's drop-in: the same constructor, parameters and
state_dict (load one saved from torch.nn.LSTM unchanged), the same forward
on padded tensors and PackedSequences, and the same gradients (of the
input, the initial states and every parameter) through autograd: a forward
that needs them saves each step's states (and gates, unless
`recompute_gates`) for rudnn.lstm_backward. An empty batch or sequence
needs no kernel: the output is empty and the final states the initial ones
(or 0)."""

from typing import Optional

import torch
from torch import Tensor

from rudnn.errors import Unsupported
from rudnn.torch._common import call, dense, integer_option
from rudnn.torch._recurrent import Recurrent, shapes, weight_names


# What a forward keeps for the backward: nothing, the states, or the
# states and the gates (rudnn.lstm's save_states, save_gates).
_SAVE_NOTHING, _SAVE_STATES, _SAVE_GATES = 0, 1, 2


@torch.library.custom_op("rudnn::lstm", mutates_args=())
def _lstm(
    x: Tensor,
    h0: Optional[Tensor],
    c0: Optional[Tensor],
    lengths: Optional[Tensor],
    weights: list[Tensor],
    layers: int,
    bidirectional: bool,
    batch_first: bool,
    allow_tf32: bool,
    save: int,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    steps, batch, hidden, directions = shapes(x, weights, bidirectional, batch_first)
    if x.numel() == 0:
        # No step or no entry: the final states are the initial ones.
        out = x.new_zeros(*x.shape[:2], directions * hidden)
        states = [
            s.clone() if s is not None else x.new_zeros(layers * directions, batch, hidden)
            for s in (h0, c0)
        ]
        return out, states[0], states[1], x.new_empty(0), x.new_empty(0), x.new_empty(0)
    names = weight_names(layers, directions, len(weights))
    results = ("out", "h_n", "c_n")
    if save >= _SAVE_STATES:
        results += ("hidden", "cells")
    if save == _SAVE_GATES:
        results += ("gates",)
    computed = call(
        "rudnn.lstm",
        dict(x=x, h0=h0, c0=c0, lengths=lengths, **dict(zip(names, weights))),
        results,
        num_layers=layers,
        bidirectional=bidirectional,
        batch_first=batch_first,
        allow_tf32=allow_tf32,
        save_states=True if save >= _SAVE_STATES else None,
        save_gates=True if save == _SAVE_GATES else None,
    )
    return tuple(computed) + tuple(x.new_empty(0) for _ in range(6 - len(computed)))


@_lstm.register_fake
def _(x, h0, c0, lengths, weights, layers, bidirectional, batch_first, allow_tf32, save):
    steps, batch, hidden, directions = shapes(x, weights, bidirectional, batch_first)
    states = layers * directions
    saving = save >= _SAVE_STATES and x.numel() > 0
    rows = (steps, batch) if saving else (0,)
    return (
        x.new_empty(*x.shape[:2], directions * hidden),
        x.new_empty(states, batch, hidden),
        x.new_empty(states, batch, hidden),
        x.new_empty(*((layers,) + rows + (directions * hidden,) if saving else (0,))),
        x.new_empty(*((states,) + rows + (hidden,) if saving else (0,)), dtype=torch.float32),
        x.new_empty(
            *((states,) + rows + (4 * hidden,) if saving and save == _SAVE_GATES else (0,)),
            dtype=torch.float32,
        ),
    )


@torch.library.custom_op("rudnn::lstm_backward", mutates_args=())
def _lstm_backward(
    x: Tensor,
    h0: Optional[Tensor],
    c0: Optional[Tensor],
    lengths: Optional[Tensor],
    weights: list[Tensor],
    hidden: Tensor,
    cells: Tensor,
    gates: Optional[Tensor],
    d_out: Tensor,
    d_h_n: Optional[Tensor],
    d_c_n: Optional[Tensor],
    layers: int,
    bidirectional: bool,
    batch_first: bool,
    allow_tf32: bool,
) -> tuple[Tensor, Tensor, Tensor, list[Tensor]]:
    steps, batch, hidden_size, directions = shapes(x, weights, bidirectional, batch_first)
    if x.numel() == 0:
        # No step: the final states were the initial ones.
        states = [
            g.clone() if g is not None else x.new_zeros(layers * directions, batch, hidden_size)
            for g in (d_h_n, d_c_n)
        ]
        return x.new_zeros(x.shape), states[0], states[1], [torch.zeros_like(w) for w in weights]
    names = weight_names(layers, directions, len(weights))
    computed = call(
        "rudnn.lstm_backward",
        dict(
            x=x, h0=h0, c0=c0, lengths=lengths, hidden=hidden, cells=cells, gates=gates,
            d_out=d_out, d_h_n=d_h_n, d_c_n=d_c_n, **dict(zip(names, weights)),
        ),
        ("d_x", "d_h0", "d_c0") + tuple("d_" + name for name in names),
        num_layers=layers,
        bidirectional=bidirectional,
        batch_first=batch_first,
        allow_tf32=allow_tf32,
    )
    return computed[0], computed[1], computed[2], list(computed[3:])


@_lstm_backward.register_fake
def _(x, h0, c0, lengths, weights, hidden, cells, gates, d_out, d_h_n, d_c_n, layers,
      bidirectional, batch_first, allow_tf32):
    steps, batch, hidden_size, directions = shapes(x, weights, bidirectional, batch_first)
    state = x.new_empty(layers * directions, batch, hidden_size)
    return x.new_empty(x.shape), state, state.new_empty(state.shape), [
        w.new_empty(w.shape) for w in weights
    ]


def _setup(ctx, inputs, output):
    x, h0, c0, lengths, weights, *attributes, save = inputs
    _, _, _, hidden, cells, gates = output
    ctx.save_for_backward(x, h0, c0, lengths, hidden, cells, gates, *weights)
    ctx.attributes = attributes
    ctx.save = save


def _backward(ctx, d_out, d_h_n, d_c_n, *_saved):
    x, h0, c0, lengths, hidden, cells, gates, *weights = ctx.saved_tensors
    if ctx.save == _SAVE_NOTHING:
        raise RuntimeError(
            "rudnn.torch.LSTM: this forward saved nothing for a backward (it ran "
            "without gradients enabled)"
        )
    if d_out is None:
        d_out = x.new_zeros(*x.shape[:2], hidden.shape[-1])
    d_x, d_h0, d_c0, d_weights = _lstm_backward(
        x, h0, c0, lengths, weights, hidden, cells,
        gates if ctx.save == _SAVE_GATES else None,
        dense(d_out),
        None if d_h_n is None else dense(d_h_n),
        None if d_c_n is None else dense(d_c_n),
        *ctx.attributes,
    )
    return (
        d_x,
        d_h0 if h0 is not None else None,
        d_c0 if c0 is not None else None,
        None,
        d_weights,
        None,
        None,
        None,
        None,
        None,
    )


torch.library.register_autograd("rudnn::lstm", _backward, setup_context=_setup)


class LSTM(Recurrent):
    """torch.nn.LSTM(input_size, hidden_size, num_layers=1, bias=True,
    batch_first=False, dropout=0.0, bidirectional=False), forward and
    backward (dropout between layers and proj_size are not supported:
    refused here, at construction). `recompute_gates` (rudnn's own, keyword
    only): a training forward then saves each step's hidden and cell
    states alone and the backward recomputes the gates (one GEMM a layer),
    for 16 bytes less per hidden unit and step. A PackedSequence's lengths
    reach the operator as int32 without wrapping (see int32_indices):
    beyond int32 they are refused on CPU and become -1 (no step) on
    CUDA. f32 products round their operands to TF32 where torch.nn.LSTM's
    would: on CUDA tensors while torch.backends.cudnn.allow_tf32 is set
    (PyTorch's default), never on CPU ones."""

    _kind = "LSTM"
    _gates = 4

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
        *,
        recompute_gates=False,
    ):
        if integer_option("proj_size", proj_size, minimum=0):
            raise Unsupported("proj_size: rudnn's LSTM has no projection")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype)
        self.proj_size = proj_size
        self.recompute_gates = bool(recompute_gates)

    def forward(self, input, hx=None):
        input, lengths, packed, unbatched, states, weights = self._prepare(
            input, hx, ("h0", "c0")
        )
        h0, c0 = states if states is not None else (None, None)
        save = _SAVE_NOTHING
        if self._training(input, weights, states):
            save = _SAVE_STATES if self.recompute_gates else _SAVE_GATES
        out, h_n, c_n, *_ = _lstm(
            input, h0, c0, lengths, weights, self.num_layers, self.bidirectional,
            self.batch_first, self._allow_tf32(input), save,
        )
        out = self._finish(out, lengths, packed, unbatched)
        if unbatched:
            return out, (h_n.squeeze(1), c_n.squeeze(1))
        return out, (h_n, c_n)
