"""rudnn: JIT-generated kernels for sequence operators.

``rudnn.compile`` takes rudnn IR (text or a path) and returns its functions,
which take and return tensors through DLPack: torch tensors on CUDA run on
the GPU backend, CPU tensors and NumPy arrays on the emulation backend. A
function compiles once per signature. ``rudnn.torch`` holds drop-in
replacements for PyTorch users (``chunk_kda``, ``flash_attn_func``, ...).
"""

from rudnn._toolkit import use_pip_toolkit

use_pip_toolkit()  # before any context looks for NVRTC

from rudnn._rudnn import Context, __version__, setup_report  # noqa: E402
from rudnn.errors import (  # noqa: E402
    CompileError,
    DeviceError,
    DeviceUnavailable,
    Error,
    Internal,
    InvalidArgument,
    Unsupported,
)
from rudnn.program import (  # noqa: E402
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



def info():
    """What this machine offers rudnn, one "name: value" line each (as
    `rudnn-run --version` prints it): the version, the NVRTC library and
    CUDA headers it uses (a toolkit's, or those a pip-installed PyTorch
    brought), ptxas, the driver and each device, and why any is missing."""
    return setup_report()


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
    "info",
    "compile",
    "default_context",
    "operator_names",
    "operator_signature",
    "program_cache_info",
    "set_program_cache_size",
]
