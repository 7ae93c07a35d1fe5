#!/usr/bin/env bash
# Builds the extension module tickgrad._core in a plain CMake folder (default build-py) and links it into
# python/tickgrad/, so `PYTHONPATH=python .venv/bin/python -m pytest python/tests` runs the package from the work
# tree without `pip install .` (which is what users and CI run); without MPI, as pyproject.toml builds it. Usage: tools/python-dev.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-py}
py=${2:-.venv/bin/python}
[ -x "$py" ] || { echo "python-dev: no $py (scripts/python-env.sh creates .venv)" >&2; exit 2; }
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTG_PYTHON=ON -DTG_BUILD_TESTS=OFF -DTG_MPI=OFF \
  -DPython_EXECUTABLE="$(realpath -s "$py")" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" --target _core
so=$(ls "$build"/_core.*.so)
ln -sfn "$(realpath "$so")" "python/tickgrad/$(basename "$so")"
echo "python-dev: python/tickgrad/$(basename "$so") -> $so"
