"""torch.nn.LSTM's drop-in for inference: the same constructor, parameters
and state_dict (load one saved from torch.nn.LSTM unchanged), the same
forward on padded tensors and PackedSequences. An empty batch or sequence
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
) -> tuple[Tensor, Tensor, Tensor]:
    directions = 2 if bidirectional else 1
    hidden = weights[1].shape[1]
    if x.numel() == 0:
        # No step or no entry: the final states are the initial ones.
        out = x.new_zeros(*x.shape[:2], directions * hidden)
        batch = x.shape[0] if batch_first else x.shape[1]
        states = [
            s.clone() if s is not None else x.new_zeros(layers * directions, batch, hidden)
            for s in (h0, c0)
        ]
        return out, states[0], states[1]
    names = _weight_names(layers, directions, len(weights))
    return call(
        "rudnn.lstm",
        dict(x=x, h0=h0, c0=c0, lengths=lengths, **dict(zip(names, weights))),
        ("out", "h_n", "c_n"),
        num_layers=layers,
        bidirectional=bidirectional,
        batch_first=batch_first,
    )


@_lstm.register_fake
def _(x, h0, c0, lengths, weights, layers, bidirectional, batch_first):
    directions = 2 if bidirectional else 1
    hidden = weights[1].shape[1]
    batch = x.shape[0] if batch_first else x.shape[1]
    state = x.new_empty(layers * directions, batch, hidden)
    return x.new_empty(*x.shape[:2], directions * hidden), state, state.new_empty(state.shape)


class LSTM(nn.Module):
    """torch.nn.LSTM(input_size, hidden_size, num_layers=1, bias=True,
    batch_first=False, dropout=0.0, bidirectional=False), forward only
    (dropout between layers is a training feature: it must be 0; proj_size
    is not supported). A PackedSequence's lengths reach the operator as
    int32 without wrapping (see int32_indices): beyond int32 they are
    refused on CPU and become -1 (no step) on CUDA."""

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
    ):
        super().__init__()
        input_size = integer_option("input_size", input_size, minimum=1)
        hidden_size = integer_option("hidden_size", hidden_size, minimum=1)
        num_layers = integer_option("num_layers", num_layers, minimum=1, maximum=_MAX_LAYERS)
        if integer_option("proj_size", proj_size, minimum=0):
            raise Unsupported("proj_size: rudnn's LSTM has no projection")
        if dropout:
            raise Unsupported("dropout: rudnn's LSTM runs inference, without dropout")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.bidirectional = bias, batch_first, bidirectional
        self.dropout, self.proj_size = dropout, proj_size
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

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        lengths = None
        if packed:
            input, lengths = pad_packed_sequence(input, batch_first=self.batch_first)
            lengths = int32_indices("lengths", lengths, device=input.device)
        check_tensor("input", input, 3)
        if input.shape[-1] != self.input_size:
            raise invalid(
                "input", f"feature dim {input.shape[-1]}, expected input_size {self.input_size}"
            )
        weights = [dense(getattr(self, name).detach()) for name in self._names]
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
        out, h_n, c_n = _lstm(
            dense(input),
            h0,
            c0,
            lengths,
            weights,
            self.num_layers,
            self.bidirectional,
            self.batch_first,
        )
        if packed:
            out = pack_padded_sequence(
                out, lengths.cpu(), batch_first=self.batch_first, enforce_sorted=False
            )
        return out, (h_n, c_n)
