"""What the drop-in functions share: argument checks, the rudnn IR of one
operator call as a function, and the compiled functions, one per
signature."""

import threading

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


def tensor_type(shape, dtype):
    """`tensor<?x?x64xbf16>` for shape (None, None, 64): None is dynamic."""
    dims = "".join(("?" if d is None else str(d)) + "x" for d in shape)
    return f"tensor<{dims}{dtype}>"


def float_attr(value):
    return f"{float(value):.9e}"


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


_programs = {}
_programs_lock = threading.Lock()


def program(key, build):
    """The compiled function for `key`, built from the IR text `build()`
    returns the first time: one parse per signature, and rudnn compiles
    each of its kernels once."""
    with _programs_lock:
        function = _programs.get(key)
    if function is None:
        function = rudnn.compile(build()).main
        with _programs_lock:
            function = _programs.setdefault(key, function)
    return function
