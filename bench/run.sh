#!/usr/bin/env bash
# make bench: runs every case in tickgrad and in PyTorch (eager and torch.compile), single thread,
# in the same run, and prints "case, tickgrad_us, torch_us, ratio, torch_compile_us".
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
threads=${BENCH_THREADS:-1}
venv=.venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  echo "bench: creating $venv with torch from PyPI (once; large download)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q torch numpy safetensors
fi
py="$venv/bin/python"
cores=$(nproc --all)
export OMP_NUM_THREADS=$threads
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores; threads $threads"
echo "# torch $("$py" -c 'import torch; print(torch.__version__)'); tickgrad $("./$build/tickgrad" version | cut -d' ' -f2)"
echo "case, tickgrad_us, torch_us, ratio, torch_compile_us"
for case in mlp_step; do
  tg=$("./$build/tickgrad_bench" --threads "$threads" "$case" | cut -d' ' -f2)
  pt=$("$py" bench/torch_cases.py "$case" --threads "$threads" 2>>"$log" | cut -d' ' -f2)
  pc=$("$py" bench/torch_cases.py "$case" --threads "$threads" --compile 2>>"$log" | cut -d' ' -f2-)
  ratio=$(awk -v a="$pt" -v b="$tg" 'BEGIN { printf "%.2f", a / b }')
  echo "$case, $tg, $pt, $ratio, $pc"
done
