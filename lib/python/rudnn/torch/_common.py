"""What the drop-in functions share: argument checks and the call of one
operator through rudnn's generic entry."""

import math
import operator
import struct

import torch

import rudnn
from rudnn.errors import invalid

FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def check_tensor(name, tensor, rank=None, dtypes=FLOATS, like=None):
    """Raises InvalidArgument naming `name` unless `tensor` is a tensor of
    `rank` dims, one of `dtypes`, on `like`'s device (and of its dtype when
    `dtypes` is None)."""
    if not isinstance(tensor, torch.Tensor):
        raise invalid(name, f"expected a torch.Tensor, got {type(tensor).__name__}")
    if rank is not None and tensor.dim() != rank:
        raise invalid(name, f"expected {rank} dims, got shape {tuple(tensor.shape)}")
    if like is not None:
        if tensor.device != like.device:
            raise invalid(name, f"is on {tensor.device}, the other inputs on {like.device}")
        if dtypes is None and tensor.dtype != like.dtype:
            raise invalid(name, f"is {tensor.dtype}, expected {like.dtype} as the other inputs")
    if dtypes is not None and tensor.dtype not in dtypes:
        names = ", ".join(str(d).replace("torch.", "") for d in dtypes)
        raise invalid(
            name, f"expected one of {names}, got {str(tensor.dtype).replace('torch.', '')}"
        )


def check_dim(name, tensor, dim, expected, what):
    if tensor.shape[dim] != expected:
        raise invalid(
            name,
            f"dim {dim} ({what}) is {tensor.shape[dim]}, expected {expected} "
            f"(shape {tuple(tensor.shape)})",
        )


def check_updatable(name, tensor):
    """A tensor the operator updates in place is passed as it is (a copy
    would take the update), so its innermost dim must already be contiguous."""
    if tensor.dim() and tensor.stride(-1) != 1:
        raise invalid(name, "is updated in place, so its innermost dim must be contiguous")


def dense(tensor):
    """The tensor with a contiguous innermost dim, as rudnn takes it."""
    if tensor.dim() and tensor.stride(-1) != 1:
        return tensor.contiguous()
    return tensor


INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)


def integer_option(name, value, minimum=None, maximum=None):
    """`value` as an int, raising InvalidArgument naming `name` unless it is
    an integer (bool is not: True as a size is a mistake, not a 1) within
    [minimum, maximum]."""
    if isinstance(value, bool):
        raise invalid(name, f"expected an integer, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise invalid(name, f"expected an integer, got {type(value).__name__} {value!r}") from None
    if minimum is not None and number < minimum:
        raise invalid(name, f"{number} is less than {minimum}")
    if maximum is not None and number > maximum:
        raise invalid(name, f"{number} is more than {maximum}, the most rudnn takes")
    return number


def _as_float32(value):
    """`value` rounded to float32 as rudnn's attributes hold it: beyond its
    range it is ±inf, below its smallest subnormal 0."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


_SIGNS = {
    "any": (lambda x: True, "finite"),
    "positive": (lambda x: x > 0, "positive and finite"),
    "negative": (lambda x: x < 0, "negative and finite"),
    "non-negative": (lambda x: x >= 0, "finite and not negative"),
}


def float_option(name, value, sign="any"):
    """`value` as a float, raising InvalidArgument naming `name` unless it
    is a real number, finite as a float32 (the operators' attributes are
    float32: NaN, ±inf or a value past float32's range cannot be written
    into the IR) and of `sign` ("any", "positive", "negative",
    "non-negative") after that rounding, so a positive scale too small for
    float32 is refused rather than becoming 0."""
    if isinstance(value, (bool, str, bytes)):
        raise invalid(name, f"expected a real number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError, RuntimeError):
        raise invalid(name, f"expected a real number, got {type(value).__name__}") from None
    test, what = _SIGNS[sign]
    if not math.isfinite(number) or not test(number):
        raise invalid(name, f"{number!r}: must be {what}")
    rounded = _as_float32(number)
    if not math.isfinite(rounded) or not test(rounded):
        raise invalid(name, f"{number!r} is {rounded!r} as a float32: must be {what}")
    return number


def has_host_values(tensor):
    """Whether the host may read `tensor`'s values now: a plain CPU tensor
    outside torch.compile's tracing. A CUDA tensor's values would cost a
    device synchronisation; a meta or fake tensor has none."""
    return (
        not torch.compiler.is_compiling()
        and type(tensor) in (torch.Tensor, torch.nn.Parameter)
        and tensor.device.type == "cpu"
    )


def int32_indices(name, indices, device=None):
    """Slots, lengths or offsets (int32 or int64) as the int32 tensor the
    operators take, on `device` (default: where they are), never wrapped: an
    int64 value beyond int32 would otherwise alias another one (2**32 + 1 as
    1, another request's slot).

    With host values (a CPU tensor, outside torch.compile), the first entry
    out of int32's range raises InvalidArgument naming `name`, the entry's
    index and its value. On a CUDA tensor (whose values the host sees only
    through a synchronisation), a meta or fake one, each entry out of range
    becomes -1 instead: a negative slot, length or offset, which no
    operator takes for a valid one (kda_decode and kv_cache_attention
    refuse that entry, an offset that decreases is refused, an LSTM entry
    of negative length takes no step), so no wrapped value is ever used."""
    if indices.dtype != torch.int32:
        outside = (indices < INT32_MIN) | (indices > INT32_MAX)
        if has_host_values(indices):
            flat = outside.reshape(-1)
            if bool(flat.any()):
                entry = int(flat.nonzero()[0])
                value = int(indices.reshape(-1)[entry])
                raise invalid(
                    name,
                    f"entry {entry} is {value}, outside int32's range "
                    f"[{INT32_MIN}, {INT32_MAX}] the operators index with",
                )
        else:
            indices = torch.where(outside, -1, indices)
        indices = indices.to(torch.int32)
    if device is not None:
        indices = indices.to(device)
    return dense(indices)


def check_offsets(name, offsets, total, what):
    """Raises InvalidArgument naming `name` unless the offsets (with host
    values; others are left to the operator) start at 0, never decrease and
    end at `total`, the rows `what` counts: the check a call makes, for the
    calls whose empty result needs no call."""
    if not has_host_values(offsets):
        return
    values = offsets.tolist()
    rule = f"must start at 0, never decrease and end at {what} = {total}"
    if not values:
        raise invalid(name, f"{rule}: it is empty")
    for entry, value in enumerate(values):
        if entry == 0 and value != 0:
            raise invalid(name, f"{rule}: entry 0 is {value}, not 0")
        if entry and value < values[entry - 1]:
            raise invalid(name, f"{rule}: entry {entry} is {value}, less than entry {entry - 1}")
        if value > total:
            raise invalid(name, f"{rule}: entry {entry} is {value}, past {what}")
    if values[-1] != total:
        raise invalid(name, f"{rule}: entry {len(values) - 1} is {values[-1]}, not {what}")


def packed_offsets(name, offsets):
    """Packed sequences' offsets (a 1-dim int32 or int64 tensor, already
    checked) as the int32 tensor the varlen operators take; empty ones are
    refused, as N sequences have N + 1 offsets."""
    if offsets.shape[0] == 0:
        raise invalid(name, "is empty: the offsets of N sequences are N + 1 entries")
    return int32_indices(name, offsets)


def operator_name(name, offsets):
    """rudnn's operator `name`, or its varlen form when the sequences are
    packed (`offsets` given)."""
    return f"rudnn.{name}_varlen" if offsets is not None else f"rudnn.{name}"


def call(op, tensors, results, out=None, **attributes):
    """The results named `results` (a tuple, in that order) of the rudnn
    operator `op` on `tensors` (by contract name; None: absent), with the
    attributes not None, through rudnn's generic entry: the function of
    each signature is built once and kept by the context
    (program_cache_info). `out`: results to write into, by name."""
    given = {name: tensor for name, tensor in tensors.items() if tensor is not None}
    options = {name: value for name, value in attributes.items() if value is not None}
    computed = rudnn.call_operator(op, given, results=results, out=out, **options)
    return computed if isinstance(computed, tuple) else (computed,)
