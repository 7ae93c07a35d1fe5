#!/usr/bin/env bash
# make bench: runs every case in tickgrad and in PyTorch in the same run.
# The training steps (mlp_step, tft_step, mamba2_step, transformer_step, transformer_long_step, patchtst_step, dqn_step,
# ppo_update) at each thread count in
# BENCH_TRAIN_THREADS, tickgrad in fp32 and bf16 (`tickgrad_bench --precision`), PyTorch eager in fp32 and under
# CPU autocast bf16 (`torch_cases.py --autocast`), and optionally torch.compile fp32: "case, threads, tickgrad_fp32_us,
# tickgrad_bf16_us, torch_fp32_us, torch_autocast_bf16_us, torch_fp32/tickgrad_fp32, tickgrad_fp32/tickgrad_bf16,
# torch_bf16/tickgrad_bf16, torch_compile_us" (BENCH_TORCH_COMPILE=1). Then the roofline: the ISA line, the measured GEMM peak
# (tickgrad_bench gemm_peak, a 1024-cube matmul through the planned GEMM path, fp32 and bf16, also on oneDNN's
# primitive when the build has oneDNN) and per case and precision "case, threads, precision,
# gemm_gflop_per_step, gemm_gflops, pct_of_peak, outside_gemm_share, lstm_gemm_gflop_per_step, slowest_other_ops"
# from tickgrad_bench's profiled steps. Then the readers single-threaded, then the environments' throughput
# (env_cartpole_*, env_trading_*: "case, instances, steps_per_s").
# Then single-prediction latency at batch 1 on one thread, pinned to one CPU (`tickgrad_bench latency CASE`
# against bench/torch_latency.py, PyTorch eager): "case, tickgrad_p50_us, tickgrad_p99_us,
# tickgrad_p999_us, torch_p50_us, torch_p99_us, torch_p999_us, ratio_p50, ratio_p99, tickgrad_calls,
# torch_calls" (ratio = torch / tickgrad). Then the GPU cases (mlp_step_cuda_*) when `tickgrad devices`
# shows a working cuda:0, against PyTorch on the GPU; else one line "# GPU cases skipped: <why>".
#
# The PyTorch peer runs as PyTorch's CPU performance tuning guide advises: a tuned allocator preloaded (jemalloc with
# huge pages and no purging in MALLOC_CONF, else tcmalloc, found with ldconfig; LD_PRELOAD) or, when neither is
# installed, glibc's malloc told not to trim or mmap (MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_);
# OMP_NUM_THREADS and torch.set_num_threads set to the case's threads. The header says which allocator every torch
# process got, checked in one process's memory map.
#
# Knobs (environment): BENCH_THREADS (default 1: readers and GPU cases); BENCH_TRAIN_THREADS
# (default "1 2": thread counts of the training cases); BENCH_TRAIN_CASES (default: all seven); BENCH_PYTHON=PATH uses that python as is and
# creates or installs nothing (BENCH_PYTHON=none: tickgrad's side only); BENCH_ONLY=train runs only the
# training section (its table and the roofline), BENCH_ONLY=gpu only the GPU section, BENCH_ONLY=latency only the
# latency section, BENCH_ONLY=ticks only the ticks-to-bars cases, BENCH_ONLY=readers only the bar readers (BENCH_READER_ROUNDS
# alternating rounds, default 3), BENCH_ONLY=rounds only interleaved rounds of training steps against PyTorch fp32
# (BENCH_ROUND_CASES, default "tft_step transformer_step"; BENCH_ROUNDS, default 5; at each of BENCH_TRAIN_THREADS:
# tickgrad fp32 and PyTorch eager fp32 alternate, each round a median of 20 steps, then the median ratio and its spread,
# the figure to report on a shared machine, where one run can be off by 25%); BENCH_TORCH_MALLOC (auto: as above;
# glibc: no preload; or a library to preload);
# BENCH_TORCH_COMPILE=1 fills the torch.compile column (default "-": compiling took 57 s for mlp_step and 12 min
# for tft_step on the 2-core machine, per process and thread count); BENCH_GPU_TIMEOUT (seconds, default
# 300) bounds each GPU-section command; BENCH_VULKAN_DEVICE (e.g. vulkan:0; default none) adds the GPU cases on that
# Vulkan device as rows vk_<case>, beside CUDA's and PyTorch's. Latency: BENCH_LATENCY_CPU (the CPU both sides are pinned to
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
case $only in all | train | rounds | gpu | latency | ticks | readers) ;;
  *) echo "bench: BENCH_ONLY must be 'all', 'train', 'rounds', 'gpu', 'latency', 'ticks' or 'readers', not '$only'" >&2
     exit 2 ;; esac
if [ "${BENCH_PYTHON:-}" = none ] && { [ "$only" = all ] || [ "$only" = train ] || [ "$only" = rounds ]; }; then
  echo "bench: BENCH_PYTHON=none (no PyTorch) is for BENCH_ONLY=gpu or latency; the CPU cases need PyTorch" >&2
  exit 2
fi
if [ -n "${BENCH_PYTHON:-}" ]; then
  py=$BENCH_PYTHON
  need=torch # the ticks and readers sections' peers need only pandas, pyarrow and polars
  case $only in ticks|readers) need="pandas, pyarrow, polars" ;; esac
  if [ "$py" != none ] && ! "$py" -c "import $need" 2>/dev/null; then
    echo "bench: BENCH_PYTHON=$py cannot import $need" >&2
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
  if { [ "$only" = all ] || [ "$only" = ticks ] || [ "$only" = readers ]; } && \
    ! "$venv/bin/python" -c "import pandas, pyarrow, polars" 2>/dev/null; then
    echo "bench: installing pandas, pyarrow and polars into $venv" >&2
    "$venv/bin/pip" install -q pandas pyarrow polars
  fi
  if { [ "$only" = all ] || [ "$only" = latency ]; } && ! "$venv/bin/python" -c "import onnx, onnxruntime" 2>/dev/null; then
    echo "bench: installing onnx and onnxruntime into $venv (the exported files' peer)" >&2
    "$venv/bin/pip" install -q onnx onnxruntime
  fi
  py="$venv/bin/python"
fi
cores=$(nproc --all)
export OMP_NUM_THREADS=$threads
log=$(mktemp)
latdir=
trap 'rm -f "$log" "$log.bars" "$log.gpu" "$log.lat" "$log.case" "$log.notes" "$log.tg" "$log.kept" "$log.peers"; [ -z "$latdir" ] || rm -rf "$latdir"' EXIT
# The bar readers: one file each into typed columns with its times parsed (tickgrad_bench read_*, bench/reader_peers.py:
# pandas, pyarrow, polars), alternating over three rounds (each round a median of 50 reads after 5), the median of the
# rounds and their spread. The peers on one thread as tickgrad (POLARS_MAX_THREADS, OMP_NUM_THREADS, which pyarrow's
# pool follows). tickgrad runs twice a round: on glibc's malloc as it is, which gives the memory of a freed series
# back to the system so that every read faults its pages in again, and told to keep it (MALLOC_TRIM_THRESHOLD_,
# MALLOC_MMAP_THRESHOLD_, as the torch peer gets), as polars' own allocator (jemalloc) keeps what it frees.
reader_section() {
  local shared=${TG_SHARED_DATA:-../shared/data} case peer rounds=${BENCH_READER_ROUNDS:-3}
  if [ ! -d "$shared" ]; then echo "# reader cases skipped: $shared is absent"; return 0; fi
  export TG_SHARED_DATA=$shared
  echo
  echo "# readers ($threads thread), $rounds rounds alternating: case, bars, tickgrad_us (min-max), tickgrad_kept_us" \
    "(min-max; malloc keeps freed memory), peer, peer_us (min-max), peer_us / tickgrad_us, peer_us / tickgrad_kept_us"
  for case in read_spy_hour_csv read_eurusd_hour_csv read_es_snappy_parquet read_es_zstd_parquet; do
    : > "$log.tg"; : > "$log.kept"; : > "$log.peers"
    for ((round = 1; round <= rounds; round++)); do
      "./$build/tickgrad_bench" --threads "$threads" --warmup 5 --reps 50 "$case" 2>"$log.bars" | cut -d' ' -f2 >> "$log.tg"
      MALLOC_TRIM_THRESHOLD_=68719476736 MALLOC_MMAP_THRESHOLD_=33554432 "./$build/tickgrad_bench" --threads "$threads" \
        --warmup 5 --reps 50 "$case" 2>>"$log" | cut -d' ' -f2 >> "$log.kept"
      POLARS_MAX_THREADS=$threads OMP_NUM_THREADS=$threads "$py" bench/reader_peers.py "$case" 2>>"$log" >> "$log.peers"
    done
    local bars tg kept
    bars=$(grep -o '[0-9]* bars' "$log.bars" | cut -d' ' -f1)
    tg=$(sort -g "$log.tg" | awk '{v[NR]=$1} END {if (NR) printf "%.0f (%.0f-%.0f)", v[int((NR+1)/2)], v[1], v[NR]}')
    kept=$(sort -g "$log.kept" | awk '{v[NR]=$1} END {if (NR) printf "%.0f (%.0f-%.0f)", v[int((NR+1)/2)], v[1], v[NR]}')
    [ -n "$tg" ] && [ -n "$kept" ] || { echo "$case, -, failed: $(tail -1 "$log.bars")"; continue; }
    for peer in $(awk '{print $2}' "$log.peers" | sort -u); do
      grep " $peer " "$log.peers" | awk '{print $3}' | sort -g | awk -v c="$case" -v b="$bars" -v tg="$tg" -v kept="$kept" \
        -v m="${tg%% *}" -v k="${kept%% *}" -v p="$peer" '{v[NR]=$1} END {if (NR) printf "%s, %s, %s, %s, %s, %.0f (%.0f-%.0f), %.2f, %.2f\n",
        c, b, tg, kept, p, v[int((NR+1)/2)], v[1], v[NR], v[int((NR+1)/2)] / m, v[int((NR+1)/2)] / k}'
    done
  done
  rm -f "$log.tg" "$log.kept" "$log.peers"
}
if [ "$only" = readers ]; then # no PyTorch needed
  echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc --all) cores;" \
    "$("./$build/tickgrad" version); $("$py" -c 'import polars, pyarrow, pandas; print("polars", polars.__version__, "pyarrow", pyarrow.__version__, "pandas", pandas.__version__)')"
  reader_section
  exit $?
fi
torch_version() {
  if [ "$py" = none ]; then echo "none (BENCH_PYTHON=none)"
  else "$py" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo "not installed"; fi
}

# ---- the PyTorch peer's processes, as PyTorch's CPU performance tuning guide advises ----
# find_lib NAME: the path ldconfig knows for the shared library NAME, or nothing
find_lib() { ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n { print $NF; exit }'; }
torch_env=() # what every torch process gets in its environment (env "${torch_env[@]}" python ...)
torch_alloc=
setup_torch_env() {
  local want=${BENCH_TORCH_MALLOC:-auto} lib='' name
  if [ "$want" = auto ]; then
    for name in libjemalloc.so.2 libtcmalloc_minimal.so.4 libtcmalloc.so.4; do
      lib=$(find_lib "$name")
      [ -z "$lib" ] || break
    done
  elif [ "$want" != glibc ]; then
    lib=$want
  fi
  if [ -n "$lib" ]; then
    torch_env=("LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}")
    torch_alloc="$(basename "$lib") preloaded (LD_PRELOAD=$lib)"
    if [[ $lib == *jemalloc* ]]; then
      # jemalloc as configured it would hurt: with its defaults (no huge pages where THP is madvise-only, freed pages
      # purged after 10 s) PyTorch's tft_step ran 2x slower than on glibc here; huge pages and no purging fixed it
      torch_env+=("MALLOC_CONF=${MALLOC_CONF:-thp:always,metadata_thp:auto,dirty_decay_ms:-1,muzzy_decay_ms:-1}")
      torch_alloc="$torch_alloc with ${torch_env[1]}"
    fi
    if [ "$py" != none ] && ! env "${torch_env[@]}" "$py" -c 'import torch; print(open("/proc/self/maps").read())' \
        2>/dev/null | grep -qF "$(basename "$lib")"; then
      torch_alloc="$torch_alloc, WARNING: not found in a torch process's memory map"
    fi
  else
    # glibc's tuning: never give freed memory back (trim) and keep blocks below 32 MiB (the largest mmap threshold)
    # in the heap, so a step's tensors reuse memory instead of a mmap/munmap and page faults per large tensor
    torch_env=(MALLOC_TRIM_THRESHOLD_=68719476736 MALLOC_MMAP_THRESHOLD_=33554432)
    torch_alloc="glibc malloc, MALLOC_TRIM_THRESHOLD_=64 GiB MALLOC_MMAP_THRESHOLD_=32 MiB"
    [ "$want" = glibc ] || torch_alloc="$torch_alloc (no jemalloc or tcmalloc installed: apt-get install libjemalloc2)"
  fi
}
setup_torch_env
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores; threads $threads"
echo "# torch $(torch_version); tickgrad $("./$build/tickgrad" version | cut -d' ' -f2)"
[ "$py" = none ] || [ "$only" = ticks ] ||
  echo "# torch peer: allocator $torch_alloc; OMP_NUM_THREADS and torch.set_num_threads = the case's threads"

# ---- GPU section: tickgrad's mlp_step_cuda_* against torch eager and torch.compile on cuda ----
num() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }
# field KEY LINE: the value of KEY=value in tickgrad_bench's "CASE transfers: ..." line
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
# torch_gpu BATCH [--compile]: the median us, or why there is none
torch_gpu() {
  local out rc=0
  [ "$py" = none ] && { echo "-"; return; }
  out=$(timeout "$gpu_timeout" env "${torch_env[@]}" "$py" bench/torch_cases.py mlp_step --device cuda --batch "$@" \
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
    gpu_row "" "${spec%%:*}" "${spec##*:}" || failed=1
  done
  # the same cases on a Vulkan GPU (BENCH_VULKAN_DEVICE, e.g. vulkan:0; unset: none), beside CUDA's and the same
  # PyTorch figures, as rows vk_<case>
  if [ -n "${BENCH_VULKAN_DEVICE:-}" ]; then
    echo "# Vulkan $BENCH_VULKAN_DEVICE: $("./$build/tickgrad" devices 2>&1 |
      sed -n "/^$BENCH_VULKAN_DEVICE\$/,/^[a-z]*:[0-9]/{s/^  name *//p}" | head -1)"
    for spec in mlp_step_cuda_b64:64 mlp_step_cuda_b4096:4096; do
      gpu_row "$BENCH_VULKAN_DEVICE" "${spec%%:*}" "${spec##*:}" || failed=1
    done
  fi
  return $failed
}
# gpu_row DEVICE CASE BATCH: one row of the GPU table, tickgrad's CASE on DEVICE ("": cuda:0; else the row is
# vk_CASE) against PyTorch at BATCH (measured once per batch size: the eager case shares mlp_step_cuda_b64's peer);
# status 1 when tickgrad's side failed
gpu_row() {
  local dev=$1 case=$2 batch=$3 out rc=0 tg tr ratio=- name=$2
  [ -z "$dev" ] || name=vk_$2
  out=$(timeout "$gpu_timeout" env ${dev:+TG_BENCH_DEVICE="$dev"} "./$build/tickgrad_bench" --threads "$threads" "$case" \
    2>"$log.bars") || rc=$?
  cat "$log.bars" >>"$log.gpu"
  if [ "$rc" = 3 ]; then
    echo "$name, skipped: $(grep -m1 'no CUDA device' "$log.bars" || tail -1 "$log.bars")"
    return 0
  elif [ "$rc" != 0 ]; then
    if [ "$rc" = 124 ]; then echo "$name, failed: timed out after ${gpu_timeout}s"
    else echo "$name, failed (exit $rc): $(tail -1 "$log.bars")"; fi
    return 1
  fi
  tg=$(cut -d' ' -f2 <<<"$out")
  tr=$(grep -m1 "^$case transfers:" "$log.bars" || true)
  [ -n "${tpt[$batch]:-}" ] || tpt[$batch]=$(torch_gpu "$batch")
  [ -n "${tpc[$batch]:-}" ] || tpc[$batch]=$(torch_gpu "$batch" --compile)
  if num "${tpt[$batch]}" && num "$tg"; then ratio=$(awk -v a="${tpt[$batch]}" -v b="$tg" 'BEGIN { printf "%.2f", a / b }'); fi
  echo "$name, $tg, ${tpt[$batch]}, $ratio, ${tpc[$batch]}, $(field h2d_per_step "$tr"), $(field d2h_per_step "$tr"), $(field h2d_per_epoch "$tr"), $(field captured "$tr")"
  grep -m1 'WARNING' "$log.bars" | sed 's/^/# /' || true
}

# ---- latency section: one prediction per call at batch 1, one thread, both sides pinned to one CPU ----
lat_cases_all="dqn_policy_cartpole dqn_policy_trading dqn_policy_trading_gather mamba2_stream mamba2_step_raw
  tft_batch1 tft_forward_b1 mlp_batch1 mlp_forward_b1 transformer_batch1 transformer_forward_b1"
# torch_latency.py's twin of each tickgrad case: the *_raw / *_forward_b1 cases share their predictor case's
torch_twin() { case $1 in mamba2_step_raw) echo mamba2_stream ;; tft_forward_b1) echo tft_batch1 ;;
  mlp_forward_b1) echo mlp_batch1 ;; transformer_forward_b1) echo transformer_batch1 ;; *) echo "$1" ;; esac; }
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
  local noise
  noise=$("${pin[@]}" "./$build/tickgrad_bench" latency --calls "$calls" noise_floor 2>>"$log.lat") &&
    echo "$noise" | awk '{ printf "# this machine'"'"'s own noise (noise_floor, a %.1f us arithmetic chain, no model): p50 %s, p99 %s, p99.9 %s us\n", $2, $2, $3, $4 }'
  echo "case, tickgrad_p50_us, tickgrad_p99_us, tickgrad_p999_us, torch_p50_us, torch_p99_us, torch_p999_us, ratio_p50, ratio_p99, tickgrad_calls, torch_calls"
  declare -A tcache tgres
  for case in ${BENCH_LATENCY_CASES:-$lat_cases_all}; do
    local tg tw pt rc=0
    tg=$("${pin[@]}" "./$build/tickgrad_bench" latency --calls "$calls" --dir "$latdir" "$case" 2>"$log.case") || rc=$?
    tgres[$case]=$tg
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
      pt=$("${pin[@]}" env "${torch_env[@]}" "$py" bench/torch_latency.py "$tw" --calls "$calls" --budget-s "$budget" 2>>"$log.lat") || rc=$?
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
  onnx_section
  rm -rf "$latdir"
  return $failed
}

# The latency cases' runs exported to ONNX (tickgrad export) and timed in ONNX Runtime (bench/onnx_latency.py, one
# thread, pinned as tickgrad is), beside tickgrad's numbers of the same latency run for the same work: the DQN policy
# against dqn_policy_trading (observation in, action out); the transformer's and the TFT's runs (made by their _batch1
# cases) against their _forward_b1 cases, the model's forward on a window of features at batch 1 (the file takes the
# same window, normalises it inside and scales the quantiles: two elementwise ops more).
onnx_section() {
  [ "$py" != none ] && "$py" -c "import onnxruntime" 2>/dev/null || { echo "# ONNX Runtime cases skipped: no onnxruntime in $py"; return 0; }
  echo
  echo "# ONNX Runtime on the exported file (bench/onnx_latency.py: IOBinding, 1 intra- and inter-op thread), us per call; ratio = onnxruntime / tickgrad"
  echo "case, run, tickgrad_p50_us, tickgrad_p99_us, onnxruntime_p50_us, onnxruntime_p99_us, ratio_p50, ratio_p99, binding_floor_p50_us"
  local spec case run file ort floor
  for spec in dqn_policy_trading:dqn-trading transformer_forward_b1:transformer tft_forward_b1:tft; do
    # the run dir is made by dqn_policy_trading, transformer_batch1 and tft_batch1
    case=${spec%%:*} run=${spec##*:} file=$latdir/$run.onnx
    [ -n "${tgres[$case]:-}" ] && [ -d "$latdir/$run" ] || continue
    if ! "./$build/tickgrad" export --run "$latdir/$run" --format onnx --out "$file" >>"$log.lat" 2>&1; then
      echo "$case, $run, export failed: $(tail -1 "$log.lat")"; failed=1; continue
    fi
    ort=$("${pin[@]}" "$py" bench/onnx_latency.py "$case" "$file" --calls "$calls" 2>>"$log.lat") || {
      echo "$case, $run, onnxruntime failed: $(tail -1 "$log.lat")"; failed=1; continue; }
    floor=$(echo "$ort" | awk '$1 ~ /-floor$/ { print $2 }')
    awk -v c="$case" -v r="$run" -v tg="${tgres[$case]}" -v o="$(echo "$ort" | head -1)" -v f="${floor:--}" 'BEGIN {
      split(tg, a, " "); split(o, b, " ")
      printf "%s, %s, %s, %s, %s, %s, %.2f, %.2f, %s\n", c, r, a[2], a[3], b[2], b[3], b[2] / a[2], b[3] / a[3], f }'
  done
}

# ---- training section: each step in tickgrad fp32 and bf16, PyTorch eager fp32 and autocast bf16; the roofline ----
train_threads=${BENCH_TRAIN_THREADS:-1 2}
# ratio A B: A / B to two decimals, or "-" when either is not a number
ratio() { if num "$1" && num "$2"; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; else echo -; fi; }
# tg_run ARGS...: the output of tickgrad_bench ARGS, or "failed (exit N): <why>"
tg_run() {
  local out rc=0
  out=$("./$build/tickgrad_bench" "$@" 2>"$log.case") || rc=$?
  cat "$log.case" >>"$log"
  if [ "$rc" = 0 ]; then echo "$out"; else echo "failed (exit $rc): $(tail -1 "$log.case")"; fi
}
# torch_run TH ARGS...: the median us of bench/torch_cases.py ARGS as the peer runs, or why there is none
torch_run() {
  local th=$1 out rc=0
  shift
  out=$(env "${torch_env[@]}" OMP_NUM_THREADS="$th" "$py" bench/torch_cases.py "$@" --threads "$th" 2>"$log.case") || rc=$?
  cat "$log.case" >>"$log"
  grep -h '^# ' "$log.case" >>"$log.notes" || true
  if [ "$rc" != 0 ]; then echo "failed (exit $rc): $(tail -1 "$log.case")"; else cut -d' ' -f2- <<<"$out" | tr ',' ';'; fi
}
train_section() {
  local case th reps prec lib out t32 t16 p32 p16 pc failed=0 roof=() peaks=() line tag c isa='' gemm=
  declare -A peak
  : >"$log.notes"
  echo
  echo "# training steps: median us per step; in each ratio A/B, above 1 means B is faster"
  echo "case, threads, tickgrad_fp32_us, tickgrad_bf16_us, torch_fp32_us, torch_autocast_bf16_us, torch_fp32/tickgrad_fp32, tickgrad_fp32/tickgrad_bf16, torch_bf16/tickgrad_bf16, torch_compile_us"
  local default_cases="mlp_step tft_step mamba2_step transformer_step transformer_long_step patchtst_step dqn_step ppo_update"
  for case in ${BENCH_TRAIN_CASES:-$default_cases}; do
    # the forecasters are slower per step, so they take fewer repetitions
    reps=(--warmup 50 --reps 500)
    case $case in
      tft_step | mamba2_step | transformer_step | transformer_long_step | patchtst_step) reps=(--warmup 5 --reps 40) ;;
    esac
    for th in $train_threads; do
      export OMP_NUM_THREADS=$th
      out=$(tg_run --threads "$th" "${reps[@]}" --precision fp32 "$case")
      t32=$(head -1 <<<"$out" | cut -d' ' -f2)
      [[ $out != failed* ]] || { t32=$out; failed=1; }
      roof+=("$case $th fp32 $(grep -m1 '^roofline ' <<<"$out" || true)")
      out=$(tg_run --threads "$th" "${reps[@]}" --precision bf16 "$case")
      t16=$(head -1 <<<"$out" | cut -d' ' -f2)
      [[ $out != failed* ]] || { t16=$out; failed=1; }
      roof+=("$case $th bf16 $(grep -m1 '^roofline ' <<<"$out" || true)")
      p32=$(torch_run "$th" "$case" "${reps[@]}")
      p16=$(torch_run "$th" "$case" "${reps[@]}" --autocast)
      pc=-
      [ "${BENCH_TORCH_COMPILE:-0}" = 0 ] || pc=$(torch_run "$th" "$case" "${reps[@]}" --compile)
      echo "$case, $th, $t32, $t16, $p32, $p16, $(ratio "$p32" "$t32"), $(ratio "$t32" "$t16"), $(ratio "$p16" "$t16"), $pc"
    done
  done
  export OMP_NUM_THREADS=$threads
  sort -u "$log.notes"
  # the peak: gemm_peak on the path the cases used, and on oneDNN's primitive when this build has oneDNN
  local libs=(default)
  "./$build/tickgrad" devices 2>/dev/null | grep -q 'no oneDNN in this build' || [ "${TICKGRAD_GEMM:-}" = onednn ] ||
    libs+=(onednn)
  for th in $train_threads; do
    for lib in "${libs[@]}"; do
      for prec in fp32 bf16; do
        if [ "$lib" = onednn ]; then
          out=$(OMP_NUM_THREADS=$th TICKGRAD_GEMM=onednn tg_run --threads "$th" --warmup 3 --reps 20 --precision "$prec" gemm_peak)
        else
          out=$(OMP_NUM_THREADS=$th tg_run --threads "$th" --warmup 3 --reps 20 --precision "$prec" gemm_peak)
        fi
        if [[ $out == failed* ]]; then peaks+=("gemm_peak, $th, $prec, $lib, $out"); failed=1; continue; fi
        line=$(grep -m1 '^peak ' <<<"$out")
        [ "$lib" = onednn ] || peak[$th.$prec]=$(field gflops "$line")
        peaks+=("gemm_peak, $th, $prec, $lib: $(field path "$line"), $(field gflops "$line")")
        isa=$(grep -m1 '^isa ' <<<"$out" | cut -d' ' -f2-)
        [ "$lib" = onednn ] || gemm=$(grep -m1 '^gemm ' <<<"$out" | cut -d' ' -f2-)
      done
    done
  done
  echo
  echo "# roofline. ISA: ${isa:-unknown}"
  echo "# GEMM library of the cases: ${gemm:-unknown}"
  echo "# peak: a 1024-cube matmul through the planned GEMM path (tickgrad_bench gemm_peak; bf16: operands rounded, f32"
  echo "# accumulation); default is the path the cases take, onednn the same shape on a oneDNN primitive (TICKGRAD_GEMM=onednn)"
  echo "case, threads, precision, path, gflops"
  printf '%s\n' "${peaks[@]}"
  echo "# per case, from max(3, reps / 4) profiled steps after the timed ones: GEMM ops are matmul, linear and"
  echo "# stacked_linear; the LSTM's internal GEMMs (lstm_gemm_gflop_per_step) and ssd_scan's small products are counted"
  echo "# outside them; pct_of_peak is gemm_gflops against the default path's peak at the same threads and precision"
  echo "case, threads, precision, gemm_gflop_per_step, gemm_gflops, pct_of_peak, outside_gemm_share, lstm_gemm_gflop_per_step, slowest_other_ops"
  for line in "${roof[@]}"; do
    read -r c th prec tag _ <<<"$line" # case threads precision "roofline" case key=value...
    [ "$tag" = roofline ] || { echo "$c, $th, $prec, no roofline line (the case failed)"; continue; }
    awk -v th="$th" -v prec="$prec" -v peak="${peak[$th.$prec]:-}" -v l="$line" 'BEGIN {
      n = split(l, f, " "); c = f[1]
      for (i = 6; i <= n; i++) { split(f[i], kv, "="); v[kv[1]] = kv[2] }
      pct = (peak + 0 > 0) ? sprintf("%.0f%%", 100 * v["gemm_gflops"] / peak) : "-"
      printf "%s, %s, %s, %.4f, %.1f, %s, %.0f%%, %.4f, %s\n", c, th, prec, v["gemm_gflop"], v["gemm_gflops"], pct,
        100 * v["outside"], v["lstm_gflop"], v["top_other"] }'
  done
  return $failed
}

# Interleaved rounds: per case and thread count, BENCH_ROUNDS rounds of tickgrad fp32 then PyTorch eager fp32, each a
# median of 20 steps after 5; every round's pair and ratio, then the median ratio with its range.
rounds_section() {
  local case th r tg pt failed=0 ratios
  local n=${BENCH_ROUNDS:-5}
  echo
  echo "# interleaved rounds (BENCH_ROUNDS=$n): tickgrad fp32 and PyTorch eager fp32 alternating, us per step (median of 20)"
  echo "# ISA: $(tg_run --threads 1 --warmup 1 --reps 1 gemm_peak | grep -m1 '^isa ' | cut -d' ' -f2-)"
  echo "case, threads, round, tickgrad_fp32_us, torch_fp32_us, torch/tickgrad"
  for case in ${BENCH_ROUND_CASES:-tft_step transformer_step}; do
    for th in $train_threads; do
      ratios=()
      for r in $(seq 1 "$n"); do
        tg=$(OMP_NUM_THREADS=$th tg_run --threads "$th" --warmup 5 --reps 20 --precision fp32 "$case")
        [[ $tg != failed* ]] && tg=$(head -1 <<<"$tg" | cut -d' ' -f2) || failed=1
        pt=$(torch_run "$th" "$case" --warmup 5 --reps 20)
        [[ $pt != failed* ]] || failed=1
        echo "$case, $th, $r, $tg, $pt, $(ratio "$pt" "$tg")"
        num "$tg" && num "$pt" && ratios+=("$(ratio "$pt" "$tg")")
      done
      [ ${#ratios[@]} -gt 0 ] || continue
      printf '%s\n' "${ratios[@]}" | sort -g | awk -v c="$case" -v th="$th" '{ v[NR] = $1 } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%s, %s, median of %d rounds, torch/tickgrad %.2f (%.2f-%.2f)\n", c, th, NR, m, v[1], v[NR] }'
    done
  done
  return $failed
}

gpu_status=0
train_status=0
if [ "$only" = rounds ]; then
  rounds_section
  exit $?
fi
if [ "$only" = train ]; then
  train_section || train_status=$?
  exit $train_status
fi
if [ "$only" = gpu ]; then
  gpu_section || gpu_status=$?
  exit $gpu_status
fi

# Ticks to bars: the SPY trade zips into time, volume and dollar bars, tickgrad and its peers alternating over three
# rounds (each round a median of its own repetitions); the median of the rounds and their spread. Peers on one thread
# as tickgrad (POLARS_MAX_THREADS, OMP_NUM_THREADS); polars' default would use every core.
tick_section() {
  local shared=${TG_SHARED_DATA:-../shared/data}
  if [ ! -d "$shared/lean/tick/equity/spy" ]; then echo "# tick cases skipped: no $shared/lean/tick/equity/spy"; return 0; fi
  export TG_SHARED_DATA=$shared

  echo
  echo "# ticks to bars ($threads thread), 3 rounds alternating: case, bars, tickgrad_us (min-max), peer, peer_us (min-max), ratio"
  echo "# peers: $("$py" -c 'import pandas, polars; print("pandas", pandas.__version__ + ", polars", polars.__version__)')"
  for case in ticks_spy_time ticks_spy_volume ticks_spy_dollar; do
    : > "$log.tg"; : > "$log.peers"
    for round in 1 2 3; do
      "./$build/tickgrad_bench" --threads "$threads" --warmup 1 --reps 5 "$case" 2>"$log.bars" | cut -d' ' -f2 >> "$log.tg"
      POLARS_MAX_THREADS=$threads OMP_NUM_THREADS=$threads "$py" bench/tick_peers.py "$case" 2>>"$log" >> "$log.peers"
    done
    bars=$(grep -o '[0-9]* bars' "$log.bars" | cut -d' ' -f1)
    tg=$(sort -g "$log.tg" | awk '{v[NR]=$1} END {if (NR) printf "%.0f (%.0f-%.0f)", v[int((NR+1)/2)], v[1], v[NR]}')
    tg_med=${tg%% *}
    [ -n "$tg_med" ] || { echo "$case, -, failed: $(tail -1 "$log.bars")"; continue; }
    for peer in pandas polars; do
      grep " $peer " "$log.peers" | awk '{print $3}' | sort -g | awk -v c="$case" -v b="$bars" -v tg="$tg" -v m="$tg_med" -v p="$peer" \
        '{v[NR]=$1} END {if (NR) printf "%s, %s, %s, %s, %.0f (%.0f-%.0f), %.2f\n", c, b, tg, p, v[int((NR+1)/2)], v[1], v[NR], v[int((NR+1)/2)] / m}'
    done
  done
  rm -f "$log.tg" "$log.peers"
  echo
  "$py" bench/tick_memory.py "./$build/tickgrad" 2>>"$log" || echo "tick_memory: failed: $(tail -1 "$log")"
}
if [ "$only" = ticks ]; then
  tick_section
  exit $?
fi
if [ "$only" = latency ]; then
  echo "# latency only (BENCH_ONLY=latency)"
  latency_section
  exit $?
fi

train_section || train_status=$?
reader_section
tick_section
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
[ "$train_status" = 0 ] || exit "$train_status"
exit $gpu_status
