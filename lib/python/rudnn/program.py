"""rudnn IR compiled from Python, called on DLPack tensors.

    module = rudnn.compile(text_or_path)
    o, final_state = module.main(q, k, v, g, beta)

Each function takes its arguments in declaration order (or by their
``rudnn.name``) and returns its results, allocated by the arguments' own
framework (torch or NumPy) on their device, or written into ``out=``. Torch
tensors on CUDA run on the GPU backend (on the current stream); CPU tensors
and NumPy arrays on the emulation backend. Nothing is copied: the kernels
read and write the tensors' memory.
"""

import operator
import os
import sys
import threading
import warnings

import numpy as np

from rudnn import _rudnn
from rudnn.errors import InvalidArgument, Unsupported, invalid

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


_contexts = {}
_contexts_lock = threading.Lock()
_program_capacity = _capacity_from_environment()


def default_context(backend="emulation", device=0):
    """The context calls on `backend` use unless given one: one per backend
    and device, shared by the whole process."""
    key = (backend, device)
    with _contexts_lock:
        context = _contexts.get(key)
        if context is None:
            context = _rudnn.Context(backend=backend, device=device)
            context.set_function_cache_capacity(_program_capacity)
            _contexts[key] = context
        return context


def set_program_cache_size(capacity):
    """Keeps at most `capacity` (≥ 1) operator functions in each default
    context, one per signature (operator, dtypes, static dims, alignment,
    attribute values such as eps or softmax_scale), dropping the least
    recently used beyond it, now and from then on; a dropped signature is
    built again when called (its kernels come back from the kernel cache).
    Returns the previous capacity. The default, 256, comes from
    RUDNN_PROGRAM_CACHE_SIZE when set at import."""
    global _program_capacity
    if isinstance(capacity, bool):
        raise invalid("capacity", f"expected an integer, got {capacity!r}")
    try:
        capacity = operator.index(capacity)
    except TypeError:
        raise invalid("capacity", f"expected an integer, got {capacity!r}") from None
    if capacity < 1:
        raise invalid("capacity", f"{capacity} is less than 1")
    with _contexts_lock:
        previous, _program_capacity = _program_capacity, capacity
        for context in _contexts.values():
            context.set_function_cache_capacity(capacity)
    return previous


def program_cache_info():
    """The operator functions the drop-ins and call_operator use, summed
    over the default contexts: a dict of size (functions kept), capacity
    (per context), hits, misses (each a function built) and evictions
    (dropped to stay within capacity), counted since import."""
    with _contexts_lock:
        counters = [context.counters() for context in _contexts.values()]
        capacity = _program_capacity
    total = {
        key: sum(c[name] for c in counters)
        for key, name in (
            ("size", "functions_cached"),
            ("hits", "function_cache_hits"),
            ("misses", "function_cache_misses"),
            ("evictions", "function_cache_evictions"),
        )
    }
    return dict(
        size=total["size"],
        capacity=capacity,
        hits=total["hits"],
        misses=total["misses"],
        evictions=total["evictions"],
    )


def _torch():
    return sys.modules.get("torch")


def _placement(value, name):
    """("cpu", None) or ("cuda", index) for a tensor; raises for the rest."""
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type == "cpu":
            return ("cpu", None)
        if value.device.type == "cuda":
            return ("cuda", value.device.index or 0)
        raise invalid(name, f"tensors on {value.device} are not supported")
    if isinstance(value, np.ndarray):
        return ("cpu", None)
    if hasattr(value, "__dlpack_device__"):
        kind, index = value.__dlpack_device__()
        if kind == 1:
            return ("cpu", None)
        if kind == 2:
            return ("cuda", index)
        raise invalid(name, f"DLPack device type {kind} is not supported")
    raise invalid(name, f"expected a tensor (torch, NumPy or DLPack), got {type(value).__name__}")


def _exported(value):
    """What the native module reads through DLPack: a torch tensor without
    its autograd history (the same memory)."""
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor) and value.requires_grad:
        return value.detach()
    return value


_TORCH_DTYPES = {
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "i32": "int32",
    "bool": "bool",
}
_NUMPY_DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "bool": np.bool_}


def _empty(like, shape, dtype, name):
    """An uninitialised result in `like`'s framework and device."""
    torch = _torch()
    if torch is not None and isinstance(like, torch.Tensor):
        return torch.empty(shape, dtype=getattr(torch, _TORCH_DTYPES[dtype]), device=like.device)
    if dtype not in _NUMPY_DTYPES:
        raise Unsupported(
            f"result '{name}' is {dtype}, which NumPy has no type for: pass torch tensors"
        )
    return np.empty(shape, dtype=_NUMPY_DTYPES[dtype])


def _common_placement(values, names):
    """Where all `values` (named `names`) live: ("cpu" or "cuda", device).
    Raises InvalidArgument naming one that lives elsewhere than the first."""
    placements = [_placement(v, n) for v, n in zip(values, names)]
    first = placements[0] if placements else ("cpu", None)
    for placement, name in zip(placements, names):
        if placement != first:
            raise invalid(name, f"is on {placement[0]}, but '{names[0]}' is on {first[0]}")
    return first


def _context_for(placement, context):
    """`context`, or the default one of the placement's backend."""
    if context is not None:
        return context
    if placement[0] == "cuda":
        return default_context("cuda", placement[1])
    return default_context("emulation")


def _call(function, values, placement, out, stream):
    """Calls a native function on `values` (its arguments in order) and
    returns its results: `out`, where it holds a tensor, else results
    allocated by the arguments' framework on their device (one that updates
    an argument in place is that argument). On CUDA the default stream is
    torch's current one."""
    exported = [_exported(v) for v in values]
    if out is None or any(value is None for value in out):
        given = out or [None] * len(function.results)
        names = [a["name"] for a in function.arguments]
        like = values[0] if values else np.empty(0)
        shapes = function.result_shapes(exported)
        out = []
        for info, shape, value in zip(function.results, shapes, given):
            if value is not None:
                out.append(value)
            elif info["updates"]:
                out.append(values[names.index(info["updates"])])
            else:
                out.append(_empty(like, shape, info["dtype"], info["name"]))
    if stream is None and placement[0] == "cuda":
        stream = _torch().cuda.current_stream(placement[1]).cuda_stream
    function.call(exported, [_exported(v) for v in out], int(stream or 0))
    return out


class CompiledFunction:
    """One function of a compiled module, callable on tensors."""

    def __init__(self, module, name):
        self._module = module
        self.name = name
        info = module._function(module._context or default_context(), name)
        self.arguments = info.arguments
        self.results = info.results

    def __repr__(self):
        args = ", ".join(a["name"] for a in self.arguments)
        results = ", ".join(r["name"] for r in self.results)
        return f"<rudnn function {self.name}({args}) -> ({results})>"

    def _bind(self, args, named):
        if len(args) > len(self.arguments):
            raise InvalidArgument(
                f"{self.name} takes {len(self.arguments)} arguments, got {len(args)}"
            )
        values = list(args) + [None] * (len(self.arguments) - len(args))
        names = [a["name"] for a in self.arguments]
        for key, value in named.items():
            if key not in names:
                raise invalid(
                    key, f"{self.name} has no argument of that name (it has {', '.join(names)})"
                )
            index = names.index(key)
            if values[index] is not None:
                raise invalid(key, "given twice")
            values[index] = value
        for name, value in zip(names, values):
            if value is None:
                raise invalid(name, "missing")
        return values

    def __call__(self, *args, out=None, stream=None, **named):
        values = self._bind(args, named)
        placement = _common_placement(values, [a["name"] for a in self.arguments])
        context = _context_for(placement, self._module._context)
        function = self._module._function(context, self.name)
        if out is not None:
            out = list(out) if isinstance(out, (list, tuple)) else [out]
            for value, info in zip(out, self.results):
                _placement(value, info["name"])
        out = _call(function, values, placement, out, stream)
        return out[0] if len(out) == 1 else tuple(out)


class CompiledModule:
    """A module of rudnn IR: its functions as attributes (``module.main``),
    or by ``module[name]``; called directly when it has one function."""

    def __init__(self, text, context=None):
        self._text = text
        self._context = context
        self._bound = {}  # id(context) -> (context, module, {name: function})
        self._lock = threading.Lock()
        names = self._parsed(context or default_context())[1].functions()
        self.functions = {name: CompiledFunction(self, name) for name in names}

    def _parsed(self, context):
        """(context, its parse of the text, its functions looked up so far):
        parsed once per context, each function bound once, not per call."""
        with self._lock:
            bound = self._bound.get(id(context))
            if bound is None:
                module = _rudnn.Module.parse(context, self._text)
                bound = self._bound[id(context)] = (context, module, {})
            return bound

    def _function(self, context, name):
        _, module, functions = self._parsed(context)
        with self._lock:
            if name not in functions:
                functions[name] = module.function(name)
            return functions[name]

    def __getitem__(self, name):
        try:
            return self.functions[name]
        except KeyError:
            raise invalid(
                name, f"no such function (the module has {', '.join(self.functions)})"
            ) from None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.functions[name]
        except KeyError:
            raise AttributeError(f"the module has no function '{name}'") from None

    def __call__(self, *args, **kwargs):
        if len(self.functions) != 1:
            raise InvalidArgument(
                f"the module has {len(self.functions)} functions: call one by name"
            )
        return next(iter(self.functions.values()))(*args, **kwargs)


def compile(source, context=None):
    """Parses and verifies rudnn IR (text, or the path of a file holding
    it) and returns its functions as a CompiledModule. Kernels compile at a
    function's first call for each signature. `context`: run every call
    there (by default each call picks its tensors' backend). Raises
    InvalidArgument carrying the diagnostics for bad IR."""
    if not isinstance(source, (str, os.PathLike)):
        raise invalid("source", f"expected IR text or a path, got {type(source).__name__}")
    if isinstance(source, os.PathLike) or ("\n" not in source and source.endswith(".mlir")):
        try:
            with open(source) as file:
                source = file.read()
        except OSError as error:
            raise invalid("source", f"cannot read {os.fspath(source)}: {error.strerror}") from None
    return CompiledModule(source, context)


def call_operator(op, tensors, *, results, out=None, context=None, stream=None, **attributes):
    """Calls the rudnn operator `op` ("rudnn.layer_norm") on `tensors`, a
    dict of its operands by contract name, with `attributes` as keywords
    (bools, ints, floats, strings), returning the results named in
    `results`, one tensor or a tuple in the order asked: those in `out` (a
    dict by contract name) written there, the others allocated like the
    inputs (a cache updated in place is the operand itself). Every operator
    and option of the dialect is reachable here: an unknown operator,
    attribute or tensor name raises naming it. The function built for each
    signature is kept by the context (program_cache_info)."""
    if isinstance(results, str):
        results = (results,)
    out = dict(out or {})
    names = list(tensors) + list(out)
    if not tensors:
        raise invalid("tensors", "an operator takes at least one tensor")
    for name in out:
        if name in tensors:
            raise invalid(name, "is given both as an operand and in out")
    placement = _common_placement(list(tensors.values()) + list(out.values()), names)
    context = _context_for(placement, context)
    exported = {name: _exported(value) for name, value in {**tensors, **out}.items()}
    wanted = list(results) + [name for name in out if name not in results]
    function = _rudnn.operator_function(context, op, attributes, exported, wanted)
    values = [tensors[a["name"]] for a in function.arguments]
    given = [out.get(r["name"]) for r in function.results]
    computed = _call(function, values, placement, given, stream)
    out = dict(zip((r["name"] for r in function.results), computed))
    asked = tuple(out[name] for name in results)
    return asked[0] if len(asked) == 1 else asked


def operator_names():
    """The operators call_operator takes."""
    return list(_rudnn.operator_names())


def operator_signature(op, ranks=None, **attributes):
    """What call_operator accepts for `op`, for a call with `attributes`
    and tensors of `ranks` ({name: rank}) where they change it (an LSTM's
    weights follow num_layers and bidirectional, with biases when
    "bias_ih_l0" is given): a dict of its summary, operands and results
    (name, layout letters, element type, optional, the operand a result
    updates in place), dims (letter, static, bounds, relations) and
    attribute names, from its contract."""
    return _rudnn.operator_signature(op, attributes, dict(ranks or {}))
