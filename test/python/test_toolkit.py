"""Where the Python package takes NVRTC and the CUDA headers from when no
toolkit is installed: the wheels a pip-installed PyTorch brings, named to
the runtime through $RUDNN_CUDA_ROOTS; rudnn.info() says what was found."""

import os
import subprocess
import sys

import rudnn


def test_info_names_nvrtc_and_the_headers():
    report = rudnn.info()
    assert report.startswith(f"rudnn: {rudnn.__version__}")
    assert "\nnvrtc: " in report and "\ncuda headers: " in report


def test_the_wheels_toolkit_root_is_searched_after_the_installed_ones(tmp_path):
    root = tmp_path / "nvidia" / "cu13"
    (root / "lib").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "lib" / "libnvrtc.so.13").write_bytes(b"")
    (root / "include" / "cuda_fp16.h").write_text("")
    environment = dict(os.environ, RUDNN_CUDA_ROOTS="/a/toolkit")
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path)] + [p for p in sys.path if p]
    )
    script = "import os, rudnn; print(os.environ['RUDNN_CUDA_ROOTS'])"
    shown = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == os.pathsep.join(["/a/toolkit", str(root)])
