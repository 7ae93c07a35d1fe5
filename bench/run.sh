#!/usr/bin/env bash
# make bench: runs every case in tickgrad and in PyTorch (eager and torch.compile) in the same run:
# the training steps (mlp_step, tft_step, mamba2_step, dqn_step, ppo_update) at 1 and 2 threads, printing
# "case, threads, tickgrad_us, torch_us, ratio, torch_compile_us", then the readers single-threaded,
# then the environments' throughput (env_cartpole_*, env_trading_*: "case, instances, steps_per_s").
# Then single-prediction latency at batch 1 on one thread, pinned to one CPU (`tickgrad_bench latency CASE`
# against bench/torch_latency.py, PyTorch eager): "case, tickgrad_p50_us, tickgrad_p99_us,
# tickgrad_p999_us, torch_p50_us, torch_p99_us, torch_p999_us, ratio_p50, ratio_p99, tickgrad_calls,
# torch_calls" (ratio = torch / tickgrad). Then the GPU cases (mlp_step_cuda_*) when `tickgrad devices`
# shows a working cuda:0, against PyTorch on the GPU; else one line "# GPU cases skipped: <why>".
#
# Knobs (environment): BENCH_THREADS (default 1: readers and GPU cases); BENCH_TRAIN_THREADS
# (default "1 2": thread counts of the training cases); BENCH_PYTHON=PATH uses that python as is and
# creates or installs nothing (BENCH_PYTHON=none: tickgrad's side only); BENCH_ONLY=gpu runs only
# the GPU section, BENCH_ONLY=latency only the latency section; BENCH_GPU_TIMEOUT (seconds, default
# 300) bounds each GPU-section command. Latency: BENCH_LATENCY_CPU (the CPU both sides are pinned to
# with taskset; default the last one; "none": not pinned), BENCH_LATENCY_CALLS (tickgrad's timed calls
# per case, default 100000; PyTorch's too, but fewer where they would take over
# BENCH_LATENCY_TORCH_BUDGET seconds, default 60, and never fewer than 10000), BENCH_LATENCY_CASES
# (default: all of them, see `tickgrad_bench latency --help`).
# Exit status: non-zero when a case failed (a GPU case without a GPU is "skipped", not a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
threads=${BENCH_THREADS:-1}
only=${BENCH_ONLY:-all}
gpu_timeout=${BENCH_GPU_TIMEOUT:-300}
case $only in all | gpu | latency) ;; *) echo "bench: BENCH_ONLY must be 'all', 'gpu' or 'latency', not '$only'" >&2; exit 2 ;; esac
if [ "${BENCH_PYTHON:-}" = none ] && [ "$only" = all ]; then
  echo "bench: BENCH_PYTHON=none (no PyTorch) is for BENCH_ONLY=gpu or latency; the CPU cases need PyTorch" >&2
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
latdir=
trap 'rm -f "$log" "$log.bars" "$log.gpu" "$log.lat" "$log.case"; [ -z "$latdir" ] || rm -rf "$latdir"' EXIT
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

# ---- latency section: one prediction per call at batch 1, one thread, both sides pinned to one CPU ----
lat_cases_all="dqn_policy_cartpole dqn_policy_trading dqn_policy_trading_gather mamba2_stream mamba2_step_raw
  tft_batch1 tft_forward_b1 mlp_batch1 mlp_forward_b1"
# torch_latency.py's twin of each tickgrad case: the *_raw / *_forward_b1 cases share their predictor case's
torch_twin() { case $1 in mamba2_step_raw) echo mamba2_stream ;; tft_forward_b1) echo tft_batch1 ;;
  mlp_forward_b1) echo mlp_batch1 ;; *) echo "$1" ;; esac; }
latency_section() {
  local cpu=${BENCH_LATENCY_CPU:-$((cores - 1))} calls=${BENCH_LATENCY_CALLS:-100000} pin=() failed=0
  local budget=${BENCH_LATENCY_TORCH_BUDGET:-60}
  if [ "$cpu" != none ]; then
    command -v taskset >/dev/null || { echo "bench: taskset is missing (util-linux); BENCH_LATENCY_CPU=none runs unpinned" >&2; return 1; }
    pin=(taskset -c "$cpu")
  fi
  latdir=$(mktemp -d) # the cases' run folders; removed at the end and by the EXIT trap
  echo
  echo "# single-prediction latency: batch 1, one thread, $([ "$cpu" = none ] && echo "not pinned" || echo "pinned to CPU $cpu (taskset)");"
  echo "# us per call, every call timed alone after a warm-up; nearest-rank percentiles; ratio = torch / tickgrad"
  echo "case, tickgrad_p50_us, tickgrad_p99_us, tickgrad_p999_us, torch_p50_us, torch_p99_us, torch_p999_us, ratio_p50, ratio_p99, tickgrad_calls, torch_calls"
  declare -A tcache
  for case in ${BENCH_LATENCY_CASES:-$lat_cases_all}; do
    local tg tw pt rc=0
    tg=$("${pin[@]}" "./$build/tickgrad_bench" latency --calls "$calls" --dir "$latdir" "$case" 2>"$log.case") || rc=$?
    cat "$log.case" >>"$log.lat"
    if [ "$rc" != 0 ]; then
      echo "$case, failed (exit $rc): $(grep -m1 '^tickgrad_bench' "$log.case" || tail -1 "$log.case")"
      failed=1
      continue
    fi
    tw=$(torch_twin "$case")
    if [ "$py" = none ]; then tcache[$tw]="- - - - - -"
    elif [ -z "${tcache[$tw]:-}" ]; then
      rc=0
      pt=$("${pin[@]}" "$py" bench/torch_latency.py "$tw" --calls "$calls" --budget-s "$budget" 2>>"$log.lat") || rc=$?
      if [ "$rc" != 0 ]; then echo "# torch $tw failed (exit $rc): $(tail -1 "$log.lat")"; failed=1; pt="- - - - - -"; fi
      tcache[$tw]=$pt
    fi
    # fields: name p50 p99 p999 calls mean max
    awk -v c="$case" -v tg="$tg" -v pt="${tcache[$tw]}" 'BEGIN {
      split(tg, a, " "); split(pt, b, " ")
      r50 = (b[2] + 0 > 0 && a[2] + 0 > 0) ? sprintf("%.2f", b[2] / a[2]) : "-"
      r99 = (b[3] + 0 > 0 && a[3] + 0 > 0) ? sprintf("%.2f", b[3] / a[3]) : "-"
      printf "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s\n", c, a[2], a[3], a[4], b[2], b[3], b[4], r50, r99, a[5], b[5] }'
  done
  grep -h '^# mamba2 step matches' "$log.lat" | head -1 || true
  rm -rf "$latdir"
  return $failed
}

gpu_status=0
if [ "$only" = gpu ]; then
  gpu_section || gpu_status=$?
  exit $gpu_status
fi
if [ "$only" = latency ]; then
  echo "# latency only (BENCH_ONLY=latency)"
  latency_section
  exit $?
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
lat_status=0
latency_section || lat_status=$?
gpu_section || gpu_status=$?
[ "$lat_status" = 0 ] || exit "$lat_status"
exit $gpu_status
