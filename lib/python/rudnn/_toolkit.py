"""Where NVRTC and the CUDA headers come from when no toolkit is installed:
the NVIDIA wheels a pip-installed PyTorch brings (nvidia/cu13 in
site-packages holds lib/libnvrtc.so.13 and include/cuda_fp16.h, laid out as
a toolkit is). rudnn's runtime searches $CUDA_HOME, $CUDA_PATH,
/usr/local/cuda and /opt/cuda first, then the roots in $RUDNN_CUDA_ROOTS;
this adds the wheels' root there."""

import importlib.util
import os
import pathlib


def pip_toolkit_root():
    """The wheels' toolkit root, or None when they are not installed."""
    spec = importlib.util.find_spec("nvidia")
    for location in (spec.submodule_search_locations or []) if spec else []:
        root = pathlib.Path(location) / "cu13"
        if (root / "lib" / "libnvrtc.so.13").exists() and (
            root / "include" / "cuda_fp16.h"
        ).exists():
            return str(root)
    return None


def use_pip_toolkit():
    """Appends the wheels' root to $RUDNN_CUDA_ROOTS (searched after every
    installed toolkit), once."""
    root = pip_toolkit_root()
    if root is None:
        return
    roots = [r for r in os.environ.get("RUDNN_CUDA_ROOTS", "").split(os.pathsep) if r]
    if root not in roots:
        os.environ["RUDNN_CUDA_ROOTS"] = os.pathsep.join(roots + [root])
