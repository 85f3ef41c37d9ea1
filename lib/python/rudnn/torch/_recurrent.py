"""What rudnn.torch.LSTM and rudnn.torch.GRU share: torch.nn.LSTM's and
torch.nn.GRU's constructor and parameters (the state_dict loads unchanged),
their introspection, and the forward's handling of PackedSequences,
unbatched inputs and initial states before the operator runs."""

import math

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from rudnn.errors import Unsupported, invalid
from rudnn.torch._common import check_tensor, dense, int32_indices, integer_option

# The most layers the recurrent operators take.
MAX_LAYERS = 1024


def weight_names(layers, directions, count):
    """The parameter names, which the operators' contracts use too, in the
    order torch.nn registers them: per layer, per direction, weight_ih,
    weight_hh and (with biases) bias_ih, bias_hh."""
    kinds = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    kinds = kinds[: count // (layers * directions)]
    return [
        f"{kind}_l{layer}" + ("_reverse" if direction else "")
        for layer in range(layers)
        for direction in range(directions)
        for kind in kinds
    ]


def shapes(x, weights, bidirectional, batch_first):
    """T, B, H, D of a call."""
    directions = 2 if bidirectional else 1
    steps, batch = (x.shape[1], x.shape[0]) if batch_first else x.shape[:2]
    return steps, batch, weights[1].shape[1], directions


class Recurrent(nn.Module):
    """A stack of recurrent layers of `gates` gate rows a unit, constructed
    as torch.nn.LSTM and torch.nn.GRU are (dropout between layers refused by
    name here, at construction)."""

    _kind = "RNN"
    _gates = 1

    def __init__(self, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                 bidirectional, device, dtype):
        super().__init__()
        input_size = integer_option("input_size", input_size, minimum=1)
        hidden_size = integer_option("hidden_size", hidden_size, minimum=1)
        num_layers = integer_option("num_layers", num_layers, minimum=1, maximum=MAX_LAYERS)
        if dropout:
            raise Unsupported(f"dropout: rudnn's {self._kind} has no dropout between layers")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.bidirectional = bias, batch_first, bidirectional
        self.dropout = dropout
        directions = 2 if bidirectional else 1
        rows = self._gates * hidden_size
        self._names = []
        bound = 1 / math.sqrt(hidden_size)
        for layer in range(num_layers):
            width = input_size if layer == 0 else directions * hidden_size
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                parameters = [("weight_ih", (rows, width)), ("weight_hh", (rows, hidden_size))]
                if bias:
                    parameters += [("bias_ih", (rows,)), ("bias_hh", (rows,))]
                for name, shape in parameters:
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
        """As torch.nn's: the parameters are already what the kernels read
        (each tensor as it is), so nothing is moved."""

    @property
    def all_weights(self):
        """The parameters per layer and direction, as torch.nn lists them."""
        per = 4 if self.bias else 2
        return [
            [getattr(self, name) for name in self._names[i : i + per]]
            for i in range(0, len(self._names), per)
        ]

    def _prepare(self, input, states, names):
        """(input [T, B, I] or batch first, lengths or None, packed,
        unbatched, the initial states dense or None, the weights): a
        PackedSequence padded, an unbatched sequence (T, I) with states
        (L·D, H) made one entry, everything checked."""
        packed = isinstance(input, PackedSequence)
        lengths = None
        if packed:
            input, lengths = pad_packed_sequence(input, batch_first=self.batch_first)
            lengths = int32_indices("lengths", lengths, device=input.device)
        unbatched = not packed and isinstance(input, Tensor) and input.dim() == 2
        if unbatched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if states is not None:
                for name, state in zip(names, states):
                    check_tensor(name, state, 2, dtypes=None, like=input)
                states = tuple(state.unsqueeze(1) for state in states)
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
        if states is not None:
            batch = input.shape[0] if self.batch_first else input.shape[1]
            expected = ((2 if self.bidirectional else 1) * self.num_layers, batch, self.hidden_size)
            for name, state in zip(names, states):
                check_tensor(name, state, 3, dtypes=None, like=input)
                if tuple(state.shape) != expected:
                    raise invalid(name, f"shape {tuple(state.shape)}, expected {expected}")
            states = tuple(dense(state) for state in states)
        return dense(input), lengths, packed, unbatched, states, weights

    @staticmethod
    def _allow_tf32(input):
        """Whether f32 products may round to TF32, as cuDNN's would for
        torch.nn's module: on CUDA while torch.backends.cudnn.allow_tf32
        is set (read at each call), never on the CPU."""
        return input.is_cuda and bool(torch.backends.cudnn.allow_tf32)

    def _training(self, input, weights, states):
        """Whether this forward must save for a backward."""
        return torch.is_grad_enabled() and (
            input.requires_grad
            or any(w.requires_grad for w in weights)
            or any(s is not None and s.requires_grad for s in states or ())
        )

    def _finish(self, out, lengths, packed, unbatched):
        """The output as the input came: packed again, or one entry
        squeezed."""
        if packed:
            out = pack_padded_sequence(
                out, lengths.cpu(), batch_first=self.batch_first, enforce_sorted=False
            )
        if unbatched:
            out = out.squeeze(0 if self.batch_first else 1)
        return out
