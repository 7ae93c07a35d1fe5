#!/usr/bin/env bash
# Creates (once) the git-ignored virtual environment .venv with what the Python package's build, tests and
# benchmarks use (scikit-build-core, numpy, pandas, pyarrow, pytest, gymnasium, stable-baselines3, torch, safetensors,
# matplotlib for the README example, onnx and onnxruntime for the ONNX export's checks)
# and prints its python. Usage: scripts/python-env.sh [VENV]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-.venv}
want=(scikit-build-core numpy pandas pyarrow pytest gymnasium stable-baselines3 torch safetensors matplotlib onnx onnxruntime)
if [ ! -x "$venv/bin/python" ]; then
  echo "python-env: creating $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip >&2
fi
if ! "$venv/bin/python" -c "import scikit_build_core, numpy, pandas, pyarrow, pytest, gymnasium, stable_baselines3, torch, safetensors, matplotlib, onnx, onnxruntime" 2>/dev/null; then
  echo "python-env: installing ${want[*]} into $venv" >&2
  "$venv/bin/pip" install -q "${want[@]}" >&2
fi
echo "$venv/bin/python"
