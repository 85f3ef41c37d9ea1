"""What the drop-in functions share: argument checks, the rudnn IR of one
operator call as a function, and the compiled functions, one per
signature, the least recently used dropped beyond a bound."""

import collections
import math
import operator
import os
import struct
import threading
import warnings

import torch

import rudnn
from rudnn.errors import invalid

_ELEMENT_TYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int32: "i32",
    torch.bool: "i1",
}
FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def element_type(tensor):
    return _ELEMENT_TYPES[tensor.dtype]


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


def tensor_type(shape, dtype):
    """`tensor<?x?x64xbf16>` for shape (None, None, 64): None is dynamic."""
    dims = "".join(("?" if d is None else str(d)) + "x" for d in shape)
    return f"tensor<{dims}{dtype}>"


def float_attr(value):
    """A float32 attribute's text: the value rounded to float32 first, so
    the text names exactly the float32 the operator gets."""
    return f"{_as_float32(float(value)):.9e}"


def function_text(operation, syntax, operands, results, returned=None):
    """A function `@main` that calls one operator: `operands` and
    `results` are (name, type) pairs in the op's order, `syntax` the op's
    operands and attributes with `%name` for each operand, `returned` the
    results the function returns (all by default)."""
    returned = [r for r in results if returned is None or r[0] in returned]
    arguments = ",\n    ".join(f'%{n}: {t} {{rudnn.name = "{n}"}}' for n, t in operands)
    outputs = ",\n    ".join(f'{t} {{rudnn.name = "{n}"}}' for n, t in returned)
    names = ", ".join(f"%{n}_" for n, _ in results)
    operand_types = ", ".join(t for _, t in operands)
    result_types = ", ".join(t for _, t in results)
    returns = ", ".join(f"%{n}_" for n, _ in returned)
    return_types = ", ".join(t for _, t in returned)
    return (
        f"func.func @main({arguments})\n    -> ({outputs}) {{\n"
        f"  {names} = {operation} {syntax}\n"
        f"      : ({operand_types}) -> ({result_types})\n"
        f"  return {returns} : {return_types}\n}}\n"
    )


DEFAULT_PROGRAM_CACHE_SIZE = 256


def _capacity_from_environment():
    """RUDNN_PROGRAM_CACHE_SIZE, a positive count, else the default (with a
    warning when it is set to anything else)."""
    text = os.environ.get("RUDNN_PROGRAM_CACHE_SIZE", "").strip()
    if not text:
        return DEFAULT_PROGRAM_CACHE_SIZE
    if text.isdigit() and int(text) > 0:
        return int(text)
    warnings.warn(
        f"RUDNN_PROGRAM_CACHE_SIZE={text!r} is not a positive count; "
        f"{DEFAULT_PROGRAM_CACHE_SIZE} programs are kept",
        stacklevel=2,
    )
    return DEFAULT_PROGRAM_CACHE_SIZE


class _ProgramCache:
    """The compiled function of each signature, at most `capacity` of them:
    every distinct attribute value (an eps, a scale) is a signature of its
    own, so an unbounded cache would grow with every value a caller ever
    passed. The least recently used is dropped first; a dropped signature
    compiles again when called (its kernels come back from rudnn's kernel
    cache). Thread safe; a compile runs outside the lock, so two threads
    missing the same signature may both build it and the first kept
    wins."""

    def __init__(self, capacity):
        self._lock = threading.Lock()
        self._functions = collections.OrderedDict()
        self._capacity = capacity
        self._hits = self._misses = self._evictions = 0

    def _evict_beyond_capacity(self):
        while len(self._functions) > self._capacity:
            self._functions.popitem(last=False)
            self._evictions += 1

    def get(self, key, build):
        with self._lock:
            function = self._functions.get(key)
            if function is not None:
                self._functions.move_to_end(key)
                self._hits += 1
                return function
            self._misses += 1
        function = rudnn.compile(build()).main
        with self._lock:
            function = self._functions.setdefault(key, function)
            self._functions.move_to_end(key)
            self._evict_beyond_capacity()
        return function

    def resize(self, capacity):
        with self._lock:
            previous, self._capacity = self._capacity, capacity
            self._evict_beyond_capacity()
        return previous

    def info(self):
        with self._lock:
            return {
                "size": len(self._functions),
                "capacity": self._capacity,
                "hits": self._hits,
                "misses": self._misses,
                "evictions": self._evictions,
            }


_programs = _ProgramCache(_capacity_from_environment())


def program(key, build):
    """The compiled function for `key`, built from the IR text `build()`
    returns the first time: one parse per signature, and rudnn compiles
    each of its kernels once."""
    return _programs.get(key, build)


def set_program_cache_size(capacity):
    """Keeps at most `capacity` (≥ 1) compiled drop-in functions, one per
    signature (operator, dtypes, static dims, attribute values such as eps
    or softmax_scale), dropping the least recently used beyond it, now and
    from then on. Returns the previous capacity. The default, 256, comes
    from RUDNN_PROGRAM_CACHE_SIZE when set at import."""
    return _programs.resize(integer_option("capacity", capacity, minimum=1))


def program_cache_info():
    """The compiled-function cache's state: a dict of size (functions
    kept), capacity, hits, misses (each a compile) and evictions (functions
    dropped to stay within capacity), counted since import."""
    return _programs.info()
