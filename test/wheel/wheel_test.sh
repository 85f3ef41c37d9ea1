#!/usr/bin/env bash
# The wheel scripts/wheel built, installed with pip into a fresh virtual
# environment (no build tree or library path in sight), then
# test/wheel/wheel_check.py run there from an empty directory. PyTorch and
# NumPy, which the drop-ins take, are the project environment's, reached
# through a .pth file after the fresh environment's own packages. Exits 77
# (skipped) when no wheel was built (ctest run without scripts/test).
# Usage: wheel_test.sh WHEELHOUSE PROJECT_PYTHON SOURCE_DIR
set -euo pipefail
wheelhouse="$1" python="$2" source="$3"
wheels=("$wheelhouse"/rudnn-*manylinux*.whl)
if [[ ! -f "${wheels[0]}" ]]; then
  echo "no wheel in $wheelhouse: scripts/test (or scripts/wheel) builds it"
  exit 77
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"$python" -m venv --without-pip "$scratch/venv"
# pip from the project environment installs into the fresh one.
"$python" -m pip --python "$scratch/venv/bin/python" install --quiet --no-deps \
  "${wheels[0]}"
fresh_site="$("$scratch/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
project_site="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$project_site" > "$fresh_site/project-environment.pth"
mkdir "$scratch/run"
cd "$scratch/run"
env -u PYTHONPATH -u LD_LIBRARY_PATH -u RUDNN_CUDA_ROOTS \
  RUDNN_CACHE_DIR="$scratch/cache" PATH="$scratch/venv/bin:/usr/bin:/bin" \
  "$scratch/venv/bin/python" "$source/test/wheel/wheel_check.py" "$source/test/python"
