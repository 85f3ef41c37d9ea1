"""torch.nn.LSTM's drop-in: the same constructor, parameters and
state_dict (load one saved from torch.nn.LSTM unchanged), the same forward
on padded tensors and PackedSequences, and the same gradients (of the
input, the initial states and every parameter) through autograd: a forward
that needs them saves each step's states (and gates, unless
`recompute_gates`) for rudnn.lstm_backward. An empty batch or sequence
needs no kernel: the output is empty and the final states the initial ones
(or 0)."""

import math
from typing import Optional

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from rudnn.errors import Unsupported, invalid
from rudnn.torch._common import call, check_tensor, dense, int32_indices, integer_option

# The most layers rudnn.lstm takes.
_MAX_LAYERS = 1024


def _weight_names(layers, directions, count):
    """torch.nn.LSTM's parameter names, which the operator's contract uses
    too, in the order LSTM registers them: per layer, per direction,
    weight_ih, weight_hh and (with biases) bias_ih, bias_hh."""
    kinds = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    kinds = kinds[: count // (layers * directions)]
    return [
        f"{kind}_l{layer}" + ("_reverse" if direction else "")
        for layer in range(layers)
        for direction in range(directions)
        for kind in kinds
    ]


# What a forward keeps for the backward: nothing, the states, or the
# states and the gates (rudnn.lstm's save_states, save_gates).
_SAVE_NOTHING, _SAVE_STATES, _SAVE_GATES = 0, 1, 2


def _shapes(x, weights, layers, bidirectional, batch_first):
    """T, B, H, D of a call."""
    directions = 2 if bidirectional else 1
    steps, batch = (x.shape[1], x.shape[0]) if batch_first else x.shape[:2]
    return steps, batch, weights[1].shape[1], directions


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
    save: int,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    steps, batch, hidden, directions = _shapes(x, weights, layers, bidirectional, batch_first)
    if x.numel() == 0:
        # No step or no entry: the final states are the initial ones.
        out = x.new_zeros(*x.shape[:2], directions * hidden)
        states = [
            s.clone() if s is not None else x.new_zeros(layers * directions, batch, hidden)
            for s in (h0, c0)
        ]
        return out, states[0], states[1], x.new_empty(0), x.new_empty(0), x.new_empty(0)
    names = _weight_names(layers, directions, len(weights))
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
        save_states=True if save >= _SAVE_STATES else None,
        save_gates=True if save == _SAVE_GATES else None,
    )
    return tuple(computed) + tuple(x.new_empty(0) for _ in range(6 - len(computed)))


@_lstm.register_fake
def _(x, h0, c0, lengths, weights, layers, bidirectional, batch_first, save):
    steps, batch, hidden, directions = _shapes(x, weights, layers, bidirectional, batch_first)
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
) -> tuple[Tensor, Tensor, Tensor, list[Tensor]]:
    steps, batch, hidden_size, directions = _shapes(
        x, weights, layers, bidirectional, batch_first
    )
    if x.numel() == 0:
        # No step: the final states were the initial ones.
        states = [
            g.clone() if g is not None else x.new_zeros(layers * directions, batch, hidden_size)
            for g in (d_h_n, d_c_n)
        ]
        return x.new_zeros(x.shape), states[0], states[1], [torch.zeros_like(w) for w in weights]
    names = _weight_names(layers, directions, len(weights))
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
    )
    return computed[0], computed[1], computed[2], list(computed[3:])


@_lstm_backward.register_fake
def _(x, h0, c0, lengths, weights, hidden, cells, gates, d_out, d_h_n, d_c_n, layers,
      bidirectional, batch_first):
    steps, batch, hidden_size, directions = _shapes(
        x, weights, layers, bidirectional, batch_first
    )
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
    )


torch.library.register_autograd("rudnn::lstm", _backward, setup_context=_setup)


class LSTM(nn.Module):
    """torch.nn.LSTM(input_size, hidden_size, num_layers=1, bias=True,
    batch_first=False, dropout=0.0, bidirectional=False), forward and
    backward (dropout between layers and proj_size are not supported:
    refused here, at construction). `recompute_gates` (rudnn's own, keyword
    only): a training forward then saves each step's hidden and cell
    states alone and the backward recomputes the gates (one GEMM a layer),
    for 16 bytes less per hidden unit and step. A PackedSequence's lengths
    reach the operator as int32 without wrapping (see int32_indices):
    beyond int32 they are refused on CPU and become -1 (no step) on
    CUDA."""

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
        super().__init__()
        input_size = integer_option("input_size", input_size, minimum=1)
        hidden_size = integer_option("hidden_size", hidden_size, minimum=1)
        num_layers = integer_option("num_layers", num_layers, minimum=1, maximum=_MAX_LAYERS)
        if integer_option("proj_size", proj_size, minimum=0):
            raise Unsupported("proj_size: rudnn's LSTM has no projection")
        if dropout:
            raise Unsupported("dropout: rudnn's LSTM has no dropout between layers")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.bidirectional = bias, batch_first, bidirectional
        self.dropout, self.proj_size = dropout, proj_size
        self.recompute_gates = bool(recompute_gates)
        directions = 2 if bidirectional else 1
        self._names = []
        bound = 1 / math.sqrt(hidden_size)
        for layer in range(num_layers):
            width = input_size if layer == 0 else directions * hidden_size
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [
                    ("weight_ih", (4 * hidden_size, width)),
                    ("weight_hh", (4 * hidden_size, hidden_size)),
                ]
                if bias:
                    shapes += [("bias_ih", (4 * hidden_size,)), ("bias_hh", (4 * hidden_size,))]
                for name, shape in shapes:
                    parameter = nn.Parameter(torch.empty(shape, device=device, dtype=dtype))
                    nn.init.uniform_(parameter, -bound, bound)
                    self.register_parameter(name + suffix, parameter)
                    self._names.append(name + suffix)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}"
        text += ", bias=False" if not self.bias else ""
        text += ", batch_first=True" if self.batch_first else ""
        return text + (", bidirectional=True" if self.bidirectional else "")

    def flatten_parameters(self):
        """As torch.nn.LSTM's: the parameters are already what the kernels
        read (each tensor as it is), so nothing is moved."""

    @property
    def all_weights(self):
        """The parameters per layer and direction, as torch.nn.LSTM lists
        them."""
        per = 4 if self.bias else 2
        return [
            [getattr(self, name) for name in self._names[i : i + per]]
            for i in range(0, len(self._names), per)
        ]

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        lengths = None
        if packed:
            input, lengths = pad_packed_sequence(input, batch_first=self.batch_first)
            lengths = int32_indices("lengths", lengths, device=input.device)
        # An unbatched sequence (T, I) with states (L·D, H): one entry.
        unbatched = not packed and isinstance(input, Tensor) and input.dim() == 2
        if unbatched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                for name, state in zip(("h0", "c0"), hx):
                    check_tensor(name, state, 2, dtypes=None, like=input)
                hx = tuple(state.unsqueeze(1) for state in hx)
        check_tensor("input", input, 3)
        if input.shape[-1] != self.input_size:
            raise invalid(
                "input", f"feature dim {input.shape[-1]}, expected input_size {self.input_size}"
            )
        weights = [dense(getattr(self, name)) for name in self._names]
        for name, weight in zip(self._names, weights):
            if weight.dtype != input.dtype or weight.device != input.device:
                raise invalid(
                    name,
                    f"is {weight.dtype} on {weight.device}, input {input.dtype} on {input.device}",
                )
        h0 = c0 = None
        if hx is not None:
            h0, c0 = hx
            batch = input.shape[0] if self.batch_first else input.shape[1]
            expected = ((2 if self.bidirectional else 1) * self.num_layers, batch, self.hidden_size)
            for name, state in (("h0", h0), ("c0", c0)):
                check_tensor(name, state, 3, dtypes=None, like=input)
                if tuple(state.shape) != expected:
                    raise invalid(name, f"shape {tuple(state.shape)}, expected {expected}")
            h0, c0 = dense(h0), dense(c0)
        training = torch.is_grad_enabled() and (
            input.requires_grad
            or any(w.requires_grad for w in weights)
            or any(s is not None and s.requires_grad for s in (h0, c0))
        )
        save = _SAVE_NOTHING
        if training:
            save = _SAVE_STATES if self.recompute_gates else _SAVE_GATES
        out, h_n, c_n, *_ = _lstm(
            dense(input),
            h0,
            c0,
            lengths,
            weights,
            self.num_layers,
            self.bidirectional,
            self.batch_first,
            save,
        )
        if packed:
            out = pack_padded_sequence(
                out, lengths.cpu(), batch_first=self.batch_first, enforce_sorted=False
            )
        if unbatched:
            return out.squeeze(0 if self.batch_first else 1), (h_n.squeeze(1), c_n.squeeze(1))
        return out, (h_n, c_n)
