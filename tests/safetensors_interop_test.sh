#!/usr/bin/env bash
# safetensors files exchanged with PyTorch (reference/safetensors_interop.py --no-write) when a python with torch and
# safetensors is found: $TG_PYTHON, else the checkout's .venv, else python3; exit 77 (skipped) when there is none.
# usage: safetensors_interop_test.sh BUILD_DIR
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: safetensors_interop_test.sh BUILD_DIR}
for py in "${TG_PYTHON:-}" "$root/.venv/bin/python" python3; do
  [ -n "$py" ] && command -v "$py" > /dev/null && "$py" -c "import torch, safetensors" 2> /dev/null && break
  py=
done
if [ -z "$py" ]; then
  echo "skipped: no python with torch and safetensors (set TG_PYTHON, or create .venv as bench/run.sh does)"
  exit 77
fi
exec "$py" "$root/reference/safetensors_interop.py" --build "$build" --no-write
