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
if ! "$venv/bin/python" -c "import pandas, pyarrow, polars" 2>/dev/null; then
  echo "bench: installing pandas, pyarrow and polars into $venv" >&2
  "$venv/bin/pip" install -q pandas pyarrow polars
fi
py="$venv/bin/python"
cores=$(nproc --all)
export OMP_NUM_THREADS=$threads
log=$(mktemp)
trap 'rm -f "$log" "$log.bars"' EXIT
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
shared=${TG_SHARED_DATA:-../shared/data}
if [ ! -d "$shared" ]; then
  echo "# reader cases skipped: $shared is absent"
  exit 0
fi
export TG_SHARED_DATA=$shared
echo
echo "case, bars, tickgrad_us, peer, peer_us, ratio (peer_us / tickgrad_us)"
for case in read_spy_hour_csv read_eurusd_hour_csv read_es_snappy_parquet read_es_zstd_parquet; do
  tg_out=$("./$build/tickgrad_bench" --threads "$threads" --warmup 5 --reps 50 "$case" 2>"$log.bars") || {
    echo "$case, -, failed: $(tail -1 "$log.bars")"; continue; }
  tg=$(echo "$tg_out" | cut -d' ' -f2)
  bars=$(grep -o '[0-9]* bars' "$log.bars" | cut -d' ' -f1)
  "$py" bench/reader_peers.py "$case" 2>>"$log" | while read -r _ peer us; do
    echo "$case, $bars, $tg, $peer, $us, $(awk -v a="$us" -v b="$tg" 'BEGIN { printf "%.2f", a / b }')"
  done
done
