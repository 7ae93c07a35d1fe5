#!/usr/bin/env bash
# make bench: runs every case in tickgrad and in PyTorch (eager and torch.compile) in the same run:
# the training steps (mlp_step, tft_step, mamba2_step, dqn_step, ppo_update) at 1 and 2 threads, printing
# "case, threads, tickgrad_us, torch_us, ratio, torch_compile_us", then the readers single-threaded,
# then the environments' throughput (env_cartpole_*, env_trading_*: "case, instances, steps_per_s").
# Then the GPU cases (mlp_step_cuda_*) when `tickgrad devices` shows a working cuda:0, against
# PyTorch on the GPU; else one line "# GPU cases skipped: <why>".
#
# Knobs (environment): BENCH_THREADS (default 1: readers and GPU cases); BENCH_TRAIN_THREADS
# (default "1 2": thread counts of the training cases); BENCH_PYTHON=PATH uses that python as is and
# creates or installs nothing (BENCH_PYTHON=none: tickgrad's side only); BENCH_ONLY=gpu runs only
# the GPU section; BENCH_GPU_TIMEOUT (seconds, default 300) bounds each GPU-section command.
# Exit status: non-zero when a case failed (a GPU case without a GPU is "skipped", not a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
threads=${BENCH_THREADS:-1}
only=${BENCH_ONLY:-all}
gpu_timeout=${BENCH_GPU_TIMEOUT:-300}
case $only in all | gpu) ;; *) echo "bench: BENCH_ONLY must be 'all' or 'gpu', not '$only'" >&2; exit 2 ;; esac
if [ "${BENCH_PYTHON:-}" = none ] && [ "$only" != gpu ]; then
  echo "bench: BENCH_PYTHON=none (no PyTorch) is for BENCH_ONLY=gpu; the CPU cases need PyTorch" >&2
  exit 2
fi
if [ -n "${BENCH_PYTHON:-}" ]; then
  py=$BENCH_PYTHON
  if [ "$py" != none ] && ! "$py" -c "import torch" 2>/dev/null; then
    echo "bench: BENCH_PYTHON=$py cannot import torch" >&2
    exit 2
  fi
else
  venv=.venv
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
    echo "bench: creating $venv with torch from PyPI (once; large download)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    "$venv/bin/pip" install -q torch numpy safetensors
  fi
  if [ "$only" = all ] && ! "$venv/bin/python" -c "import pandas, pyarrow, polars" 2>/dev/null; then
    echo "bench: installing pandas, pyarrow and polars into $venv" >&2
    "$venv/bin/pip" install -q pandas pyarrow polars
  fi
  py="$venv/bin/python"
fi
cores=$(nproc --all)
export OMP_NUM_THREADS=$threads
log=$(mktemp)
trap 'rm -f "$log" "$log.bars" "$log.gpu"' EXIT
torch_version() { if [ "$py" = none ]; then echo "none (BENCH_PYTHON=none)"; else "$py" -c 'import torch; print(torch.__version__)'; fi; }
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores; threads $threads"
echo "# torch $(torch_version); tickgrad $("./$build/tickgrad" version | cut -d' ' -f2)"

# ---- GPU section: tickgrad's mlp_step_cuda_* against torch eager and torch.compile on cuda ----
num() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }
# field KEY LINE: the value of KEY=value in tickgrad_bench's "CASE transfers: ..." line
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
# torch_gpu BATCH [--compile]: the median us, or why there is none
torch_gpu() {
  local out rc=0
  [ "$py" = none ] && { echo "-"; return; }
  out=$(timeout "$gpu_timeout" "$py" bench/torch_cases.py mlp_step --device cuda --batch "$@" \
    --threads "$threads" 2>>"$log.gpu") || rc=$?
  if [ "$rc" = 124 ]; then echo "timed out after ${gpu_timeout}s"
  elif [ "$rc" != 0 ]; then echo "failed (exit $rc): $(tail -1 "$log.gpu")"
  else echo "$out" | cut -d' ' -f2-; fi | tr ',' ';' # one column of the table
}
gpu_section() {
  local devs why failed=0
  devs=$("./$build/tickgrad" devices 2>&1) || true
  if ! grep -qx 'cuda:0' <<<"$devs"; then
    why=$(grep -m1 '^cuda' <<<"$devs" || true)
    echo "# GPU cases skipped: ${why:-tickgrad devices printed no cuda line}"
    return 0
  fi
  echo
  echo "# GPU cuda:0: $(sed -n '/^cuda:0$/,/^cuda:[1-9]/{s/^  name *//p}' <<<"$devs" | head -1)"
  echo "# $(grep -m1 'self-test' <<<"$devs" | sed 's/^ *//')"
  echo "case, tickgrad_us, torch_us, ratio, torch_compile_us, h2d_B_per_step, d2h_B_per_step, h2d_B_per_epoch, captured"
  declare -A tpt tpc
  for spec in mlp_step_cuda_b64:64 mlp_step_cuda_b64_eager:64 mlp_step_cuda_b4096:4096; do
    local case=${spec%%:*} batch=${spec##*:} out rc=0 tg tr ratio
    out=$(timeout "$gpu_timeout" "./$build/tickgrad_bench" --threads "$threads" "$case" 2>"$log.bars") || rc=$?
    cat "$log.bars" >>"$log.gpu"
    if [ "$rc" = 3 ]; then
      echo "$case, skipped: $(grep -m1 'no CUDA device' "$log.bars" || tail -1 "$log.bars")"
      continue
    elif [ "$rc" != 0 ]; then
      if [ "$rc" = 124 ]; then echo "$case, failed: timed out after ${gpu_timeout}s"
      else echo "$case, failed (exit $rc): $(tail -1 "$log.bars")"; fi
      failed=1
      continue
    fi
    tg=$(cut -d' ' -f2 <<<"$out")
    tr=$(grep -m1 "^$case transfers:" "$log.bars" || true)
    # the eager case has the same PyTorch peer as mlp_step_cuda_b64: measured once per batch size
    [ -n "${tpt[$batch]:-}" ] || tpt[$batch]=$(torch_gpu "$batch")
    [ -n "${tpc[$batch]:-}" ] || tpc[$batch]=$(torch_gpu "$batch" --compile)
    ratio=-
    if num "${tpt[$batch]}" && num "$tg"; then ratio=$(awk -v a="${tpt[$batch]}" -v b="$tg" 'BEGIN { printf "%.2f", a / b }'); fi
    echo "$case, $tg, ${tpt[$batch]}, $ratio, ${tpc[$batch]}, $(field h2d_per_step "$tr"), $(field d2h_per_step "$tr"), $(field h2d_per_epoch "$tr"), $(field captured "$tr")"
    grep -m1 'WARNING' "$log.bars" | sed 's/^/# /' || true
  done
  return $failed
}

gpu_status=0
if [ "$only" = gpu ]; then
  gpu_section || gpu_status=$?
  exit $gpu_status
fi

echo "case, threads, tickgrad_us, torch_us, ratio, torch_compile_us"
# each training case at every thread count in BENCH_TRAIN_THREADS (default "1 2"); the forecasters
# are slower per step, so they take fewer repetitions
for case in mlp_step tft_step mamba2_step dqn_step ppo_update; do
  reps="--warmup 50 --reps 500"
  case $case in mlp_step | dqn_step | ppo_update) ;; *) reps="--warmup 5 --reps 40" ;; esac
  for th in ${BENCH_TRAIN_THREADS:-1 2}; do
    # shellcheck disable=SC2086  # reps is two flags
    tg=$(OMP_NUM_THREADS=$th "./$build/tickgrad_bench" --threads "$th" $reps "$case" | cut -d' ' -f2)
    # shellcheck disable=SC2086
    pt=$(OMP_NUM_THREADS=$th "$py" bench/torch_cases.py "$case" --threads "$th" $reps 2>>"$log" | cut -d' ' -f2)
    # shellcheck disable=SC2086
    pc=$(OMP_NUM_THREADS=$th "$py" bench/torch_cases.py "$case" --threads "$th" $reps --compile 2>>"$log" | cut -d' ' -f2-)
    ratio=$(awk -v a="$pt" -v b="$tg" 'BEGIN { printf "%.2f", a / b }')
    echo "$case, $th, $tg, $pt, $ratio, $pc"
  done
done
shared=${TG_SHARED_DATA:-../shared/data}
if [ ! -d "$shared" ]; then
  echo "# reader cases skipped: $shared is absent"
else
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
fi
echo
echo "# environment throughput (single thread): steps/s = instances * 1e6 / us per vectorised step"
echo "case, instances, steps_per_s"
for spec in env_cartpole_1:1 env_cartpole_64:64 env_trading_1:1 env_trading_64:64; do
  case=${spec%%:*} inst=${spec##*:}
  us=$("./$build/tickgrad_bench" --threads 1 --warmup 20 --reps 200 "$case" 2>>"$log" | cut -d' ' -f2) || {
    echo "$case, $inst, failed: $(tail -1 "$log")"; continue; }
  echo "$case, $inst, $(awk -v n="$inst" -v u="$us" 'BEGIN { printf "%.0f", n * 1e6 / u }')"
done
gpu_section || gpu_status=$?
exit $gpu_status
