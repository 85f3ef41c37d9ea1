"""rudnn: JIT-generated kernels for sequence operators.

``rudnn.compile`` takes rudnn IR (text or a path) and returns its functions,
which take and return tensors through DLPack: torch tensors on CUDA run on
the GPU backend, CPU tensors and NumPy arrays on the emulation backend. A
function compiles once per signature. ``rudnn.torch`` holds drop-in
replacements for PyTorch users (``chunk_kda``, ``flash_attn_func``, ...).
"""

from rudnn._rudnn import Context, __version__
from rudnn.errors import (
    CompileError,
    DeviceError,
    DeviceUnavailable,
    Error,
    Internal,
    InvalidArgument,
    Unsupported,
)
from rudnn.program import (
    CompiledFunction,
    CompiledModule,
    call_operator,
    compile,
    default_context,
    operator_names,
    operator_signature,
    program_cache_info,
    set_program_cache_size,
)

__all__ = [
    "CompileError",
    "CompiledFunction",
    "CompiledModule",
    "Context",
    "DeviceError",
    "DeviceUnavailable",
    "Error",
    "Internal",
    "InvalidArgument",
    "Unsupported",
    "__version__",
    "call_operator",
    "compile",
    "default_context",
    "operator_names",
    "operator_signature",
    "program_cache_info",
    "set_program_cache_size",
]
