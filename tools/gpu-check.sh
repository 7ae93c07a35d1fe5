#!/usr/bin/env bash
# One check of tickgrad on a machine with an NVIDIA GPU (written for a lent H200: 16 cores, CUDA
# driver, no network), within a time budget (GPU_CHECK_BUDGET seconds, default 450):
#   build (build-gpu, sm_90, -Werror), `tickgrad devices` (self-test), light start (cuBLAS loaded only
#   when a GPU starts), the CUDA tests, the Vulkan tests on the GPU (the NVIDIA driver's ICD; the loader from
#   build-deps/vulkan when the system has none: tools/vulkan-loader.sh), the bf16
#   GEMMs (test_cuda's bf16 lines: cuBLAS on the tensor cores against the CPU's bf16 plan), the full
#   test suite, `tickgrad demo` on cuda (GPU-busy figure from its telemetry.csv), `tickgrad train`
#   of the TFT and Mamba-2 on cuda (2 short epochs on a synthetic market), the GPU benchmark
#   cases against PyTorch on cuda (and on vulkan:0 beside them) when a python with torch + CUDA is there.
# Usage, from the repository root:  bash tools/gpu-check.sh      (OUT=DIR, default ./gpu-check-out)
# Each step logs to its own file under $OUT and appends one line PASS/FAIL/SKIP with its key
# number to $OUT/summary.txt, printed at the end. Every step has a timeout; a failure does not stop
# the steps after it; the exit status is 1 when any step failed. Installs nothing, never resets
# the GPU (nvidia-smi is only queried). Without a GPU the GPU steps are SKIPped with the reason.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-./gpu-check-out}
BUILD=${GPU_CHECK_BUILD:-build-gpu}
BUDGET=${GPU_CHECK_BUDGET:-450}
JOBS=${GPU_CHECK_JOBS:-16}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
START=$SECONDS
failed=0
have_gpu=0   # 1 once `tickgrad devices` lists a cuda:0
built=0
gpu_why=""   # why the GPU steps are skipped

# result STATUS NAME TEXT: one summary line (printed now too, so a cut-off run still shows it)
result() {
  local line
  line=$(printf '%-4s %-12s %s' "$1" "$2" "$3")
  echo "$line" >>"$SUMMARY"
  echo "== $line"
  [ "$1" = FAIL ] && failed=1
  return 0
}
left() { echo $((BUDGET - (SECONDS - START))); }
# run_step NAME CAP LOG CMD...: runs CMD under a timeout of min(CAP, time left - 10 s), output to LOG;
# returns CMD's status, 124 when it timed out, 125 when there was no time left to start it
run_step() {
  local name=$1 cap=$2 log=$3 t rc
  shift 3
  t=$(($(left) - 10))
  [ "$t" -gt "$cap" ] && t=$cap
  if [ "$t" -lt 5 ]; then
    echo "no time left in the ${BUDGET}s budget" >"$log"
    return 125
  fi
  echo "-- $name: $* (timeout ${t}s, log $log)"
  { echo "# $(date -u +%FT%TZ) $* (timeout ${t}s)"; } >"$log"
  timeout -k 10 "$t" "$@" >>"$log" 2>&1
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "# TIMED OUT after ${t}s" >>"$log"
    rc=124
  fi
  echo "# exit $rc after $((SECONDS - START))s total" >>"$log"
  return $rc
}
# why_failed RC LOG: a short reason for a failed step
why_failed() {
  case $1 in
    124) echo "timed out" ;;
    125) echo "not run: no time left in the ${BUDGET}s budget" ;;
    *) echo "exit $1: $(grep -v '^#' "$2" | grep -v '^$' | tail -1 | cut -c1-200)" ;;
  esac
}
# ctest_counts LOG: "N passed, M failed, K skipped of T" from ctest's output
ctest_counts() {
  local total failed skipped
  total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$1" | tail -1)
  failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$1" | tail -1)
  skipped=$(grep -c '\*\*\*Skipped' "$1")
  if [ -z "$total" ]; then
    echo "no ctest total ($(grep -c ' Test  *#' "$1") tests finished)"
    return
  fi
  echo "$((total - ${failed:-0} - skipped)) passed, ${failed:-?} failed, $skipped skipped of $total"
}

rev="not a git checkout"
if git rev-parse --short HEAD >/dev/null 2>&1; then
  rev=$(git rev-parse --short HEAD)$(git diff --quiet 2>/dev/null || echo ' with local changes')
fi
echo "tickgrad GPU check: $rev; out $OUT; budget ${BUDGET}s"

# ---- 0. the machine (queries only)
log=$OUT/00-machine.log
{
  echo "# $(date -u +%FT%TZ) $(uname -a)"
  echo "# cores $(nproc)"
  command -v nvidia-smi && timeout 30 nvidia-smi
  command -v nvcc && nvcc --version
  ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null
  cmake --version | head -1
} >"$log" 2>&1
smi="" smi_gpu=0
if command -v nvidia-smi >/dev/null; then
  smi=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1) && [ -n "$smi" ] &&
    [[ $smi != *"No devices"* ]] && smi_gpu=1
  smi=$(head -1 <<<"$smi")
fi
# CMake finds nvcc on PATH; the toolkit's usual place is tried when it is not there
if ! command -v nvcc >/dev/null && [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
nvcc_v=$("${CUDACXX:-nvcc}" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
result INFO machine "$rev; $(nproc) cores; nvidia-smi: ${smi:-absent}; nvcc: ${nvcc_v:-absent}"

# ---- 1. configure and build
log=$OUT/01-configure.log
run_step configure 120 "$log" cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTG_WERROR=ON
rc=$?
backend=$(grep -m1 'tickgrad: CUDA backend' "$log" | sed 's/^-- tickgrad: //')
if [ "$rc" = 0 ]; then
  result PASS configure "${backend:-CUDA backend: no line in the configure log}"
  log=$OUT/02-build.log
  run_step build 330 "$log" cmake --build "$BUILD" -j "$JOBS"
  rc=$?
  if [ "$rc" = 0 ]; then
    built=1
    result PASS build "$BUILD built (-j $JOBS, -Werror); $(sed -n 's/^# exit 0 after \([0-9]*\)s.*/\1/p' "$log")s since the start"
  else
    err=$(grep -m1 -i 'error' "$log" | cut -c1-200)
    result FAIL build "$(why_failed $rc "$log")${err:+; first error: $err}"
  fi
else
  result FAIL configure "$(why_failed $rc "$log")"
fi

# ---- 2. devices and the self-test
log=$OUT/03-devices.log
if [ "$built" = 1 ]; then
  run_step devices 60 "$log" "./$BUILD/tickgrad" devices
  rc=$?
  cuda_line=$(grep -m1 '^cuda' "$log")
  if grep -qx 'cuda:0' "$log"; then
    have_gpu=1
    name=$(sed -n 's/^  name *//p' "$log" | head -1)
    selftest=$(grep -m1 'self-test' "$log" | sed 's/^ *self-test *//')
    if [ "$rc" = 0 ] && [[ $selftest == PASS* ]]; then result PASS devices "cuda:0 $name; self-test $selftest"
    else result FAIL devices "cuda:0 $name; self-test ${selftest:-missing}; $(why_failed $rc "$log")"; fi
  else
    gpu_why="no GPU: ${cuda_line:-no cuda line from tickgrad devices ($(why_failed $rc "$log"))}"
    if [ "$smi_gpu" = 1 ]; then
      # nvidia-smi sees a GPU that tickgrad cannot use: the check checks nothing on it
      result FAIL devices "nvidia-smi shows '$smi' but tickgrad has no cuda:0: ${gpu_why#no GPU: }"
    else
      result SKIP devices "$gpu_why"
    fi
  fi
else
  gpu_why="the build failed"
  result SKIP devices "$gpu_why"
fi
skip_gpu() { result SKIP "$1" "$gpu_why"; }

# ---- 2b. light start on a GPU machine: `version` opens neither cuBLAS nor the driver; `devices` loads cuBLAS
# with dlopen when cuda:0 starts (its self-test GEMM above ran through it)
if [ "$have_gpu" = 1 ]; then
  cuda_libs() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -oE 'file=lib(cublas|cublasLt|cudart|cuda)\.so[.0-9]*' | sort -u | tr '\n' ' '; }
  v=$(cuda_libs "./$BUILD/tickgrad" version) d=$(cuda_libs "./$BUILD/tickgrad" devices)
  if [ -z "$v" ] && [[ $d == *file=libcublas.so* ]]; then result PASS light-start "version opens no CUDA library; devices: $d"
  else result FAIL light-start "version opens '${v}' (want none); devices opens '${d}' (want libcublas)"; fi
else
  skip_gpu light-start
fi

# ---- 3. the CUDA tests, then the whole suite
log=$OUT/04-ctest-cuda.log
if [ "$have_gpu" = 1 ]; then
  run_step ctest-cuda 180 "$log" ctest --test-dir "$BUILD" -R 'cuda|stage|op_coverage|telemetry' --output-on-failure --timeout 150
  rc=$?
  counts=$(ctest_counts "$log")
  skipped=$(grep '\*\*\*Skipped' "$log" | sed 's/.*: *\([a-z_0-9]*\) .*/\1/' | tr '\n' ' ')
  if [ "$rc" = 0 ] && [[ $counts != "0 passed"* ]] && [ -z "$skipped" ]; then result PASS ctest-cuda "$counts"
  elif [ "$rc" = 0 ] && [ -n "$skipped" ]; then result FAIL ctest-cuda "$counts: skipped on a machine with a GPU: $skipped"
  else result FAIL ctest-cuda "$counts; $(why_failed $rc "$log"); failed: $(grep -o '[0-9]* - [a-z_0-9]* ([A-Za-z ]*)' "$log" | grep -v Skipped | tr '\n' ' ')"; fi
else
  skip_gpu ctest-cuda
fi
# ---- 3b. the bf16 GEMMs on the tensor cores: test_cuda again, for its bf16 lines (how close cuBLAS's bf16 GEMMs
# came to the CPU's bf16 plan, as a share of the derived bound, and the bf16 MLP step captured); seconds on a GPU
log=$OUT/04b-bf16.log
if [ "$have_gpu" = 1 ]; then
  run_step bf16 60 "$log" env TG_EXPECT_CUDA_DEVICE=1 "./$BUILD/test_cuda"
  rc=$?
  par=$(grep -m1 '^cuda bf16 parity:' "$log" | sed 's/^cuda bf16 parity: //')
  mlp=$(grep -m1 '^mlp bf16:' "$log" | sed 's/^mlp bf16: //')
  first=$(grep -m1 'CHECK failed' "$log" | sed 's/^.*CHECK failed: //' | cut -c1-200)
  if [ "$rc" = 0 ] && [ -n "$par" ] && [ -n "$mlp" ]; then result PASS bf16 "$par; mlp $mlp"
  else result FAIL bf16 "$(why_failed $rc "$log"); ${first:+first failure: $first; }${par:-no bf16 parity line}; mlp ${mlp:-line missing}"; fi
else
  skip_gpu bf16
fi
log=$OUT/05-ctest.log
if [ "$built" = 1 ]; then
  run_step ctest 200 "$log" ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" --timeout 150
  rc=$?
  counts=$(ctest_counts "$log")
  if [ "$rc" = 0 ]; then result PASS ctest "$counts"
  else result FAIL ctest "$counts; $(why_failed $rc "$log"); failed: $(grep -o '[0-9]* - [a-z_0-9]* ([A-Za-z ]*)' "$log" | grep -v Skipped | tr '\n' ' ')"; fi
else
  result SKIP ctest "the build failed"
fi

# ---- 3c. Vulkan on the NVIDIA GPU: the Vulkan tests on it (its listing first). The machine may lack the loader:
# tools/vulkan-loader.sh, run where apt works, unpacks Debian's libvulkan1 into build-deps/vulkan (carry it along),
# which goes on LD_LIBRARY_PATH here. The NVIDIA driver's own ICD (nvidia_icd.json) must be installed; the loader is
# pointed at it alone (VK_ICD_FILENAMES), so vulkan:0 is the GPU and not a CPU implementation.
vk_env=()
vk_dev=""
log=$OUT/05b-vulkan.log
: >"$log"
if [ "$have_gpu" = 1 ]; then
  vk_icd=$(ls /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json 2>/dev/null | head -1)
  vk_loader=system
  if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1 '; then
    if [ -e build-deps/vulkan/libvulkan.so.1 ]; then vk_loader="build-deps/vulkan (carried)"
    else vk_loader=""; fi
  fi
  if [ -z "$vk_icd" ]; then
    result SKIP vulkan "the NVIDIA driver's Vulkan ICD (nvidia_icd.json) is not installed"
  elif [ -z "$vk_loader" ]; then
    result SKIP vulkan "no Vulkan loader: run tools/vulkan-loader.sh where apt works and carry build-deps/vulkan"
  else
    vk_env=(VK_ICD_FILENAMES="$vk_icd" TG_EXPECT_VULKAN_DEVICE=1)
    [ "$vk_loader" = system ] || vk_env+=(LD_LIBRARY_PATH="$PWD/build-deps/vulkan${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    env "${vk_env[@]}" "./$BUILD/tickgrad" devices >>"$log" 2>&1
    vk_name=$(sed -n '/^vulkan:0$/,/^[a-z]*:[0-9]/{s/^  name *//p}' "$log" | head -1)
    vk_type=$(sed -n '/^vulkan:0$/,/^[a-z]*:[0-9]/{s/^  type *//p}' "$log" | head -1)
    if [ -z "$vk_name" ]; then
      result FAIL vulkan "loader $vk_loader, ICD $vk_icd: tickgrad lists no vulkan:0 ($(grep -m1 '^vulkan' "$log"))"
    else
      vk_dev=vulkan:0
      run_step ctest-vulkan 240 "$log.ctest" env "${vk_env[@]}" ctest --test-dir "$BUILD" -L vulkan --output-on-failure --timeout 200
      rc=$?
      counts=$(ctest_counts "$log.ctest")
      if [ "$rc" = 0 ]; then result PASS ctest-vulkan "$vk_name ($vk_type; loader $vk_loader): $counts"
      else result FAIL ctest-vulkan "$vk_name: $counts; $(why_failed $rc "$log.ctest")"; fi
    fi
  fi
else
  skip_gpu vulkan
fi

# ---- 4. the demo on the GPU: speed, capture, transfers, GPU-busy from telemetry.csv
log=$OUT/06-demo.log
if [ "$have_gpu" = 1 ]; then
  rm -rf "$OUT/demo"
  run_step demo 150 "$log" "./$BUILD/tickgrad" demo --device cuda --steps 3000 --batch 4096 --rows 65536 --out "$OUT/demo"
  rc=$?
  last=$(grep '^step ' "$log" | tail -1)
  sps=$(sed -n 's/.*  \([0-9]*\) samples\/s.*/\1/p' <<<"$last")
  xfer=$(grep -o 'h2d [0-9]* B  d2h [0-9]* B' <<<"$last")
  val=$(sed -n 's/.*  val \([0-9.]*\) .*/\1/p' <<<"$last")
  nvml=$(sed -n 's/^telemetry: .* (\(.*\))$/\1/p' "$log")
  captured=$(grep -m1 'training step captured\|training step not captured' "$log" | sed 's/^training //; s/ as a CUDA graph.*//')
  util="no telemetry.csv"
  if [ -f "$OUT/demo/telemetry.csv" ]; then
    # util_pct is NVML's GPU utilisation: the share of each sample period in which a kernel ran.
    # The row at time 0 describes the time before the run, so it is left out of the mean.
    util=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "util_pct") c = i; next }
                    c && $1 + 0 > 0 && $c != "" { s += $c; n++ }
                    END { if (!c) print "no util_pct column"; else if (n) printf "%.1f%% mean over %d samples%s", s / n, n, n < 3 ? " (few: the run is short next to the 1 s sampling)" : "";
                          else print "no utilisation samples" }' "$OUT/demo/telemetry.csv")
  fi
  text="${sps:-?} samples/s; val loss ${val:-?}; last window ${xfer:-transfers ?}; GPU busy (NVML util) $util; ${nvml:-NVML status ?}; ${captured:-capture line missing}"
  if [ "$rc" = 0 ] && [ "$captured" = "step captured" ]; then result PASS demo "$text"
  else result FAIL demo "$(why_failed $rc "$log"); $text"; fi
else
  skip_gpu demo
fi

# ---- 4b. the forecasters trained on the GPU (2 short epochs each on a synthetic market)
log=$OUT/06b-train.log
if [ "$have_gpu" = 1 ]; then
  "./$BUILD/tickgrad" synth --bars 20000 --seed 3 --signal 0.5 --out "$OUT/train-bars.csv" >"$log" 2>&1
  for m in tft mamba2; do
    rm -rf "$OUT/train-$m"
    run_step "train-$m" 120 "$OUT/06b-train-$m.log" "./$BUILD/tickgrad" train --model "$m" --device cuda \
      --data "$OUT/train-bars.csv" --epochs 2 --out "$OUT/train-$m"
    rc=$?
    last=$(grep '^epoch ' "$OUT/06b-train-$m.log" | tail -1)
    if [ "$rc" = 0 ] && [ -n "$last" ]; then result PASS "train-$m" "$(sed 's/  */ /g' <<<"$last")"
    else result FAIL "train-$m" "$(why_failed $rc "$OUT/06b-train-$m.log")"; fi
  done
else
  skip_gpu train-tft
  skip_gpu train-mamba2
fi

# ---- 5. the GPU benchmark cases (bench/run.sh's GPU section) against PyTorch on cuda
log=$OUT/07-python.log
: >"$log"
py=none
pys=""
for p in .venv/bin/python python3 python; do
  if ! command -v "$p" >/dev/null; then pys+="$p: absent; "; continue; fi
  v=$(timeout 45 "$p" -c 'import torch; print(torch.__version__, torch.cuda.is_available())' 2>>"$log")
  echo "$p: ${v:-no torch}" >>"$log"
  pys+="$p: ${v:-no torch}; "
  if [[ $v == *" True" ]]; then py=$p; break; fi
done
if [ "$py" != none ]; then result PASS torch "using $py: torch ${v% True}, torch.cuda.is_available() True"
else result SKIP torch "no python with torch + CUDA (${pys%; }): tickgrad's side of the benchmark only"; fi
log=$OUT/08-bench.log
if [ "$built" = 1 ]; then
  run_step bench 400 "$log" env "${vk_env[@]}" BENCH_VULKAN_DEVICE="$vk_dev" BENCH_ONLY=gpu BENCH_PYTHON="$py" \
    BENCH_GPU_TIMEOUT=150 bash bench/run.sh "$BUILD"
  rc=$?
  if [ "$have_gpu" = 0 ]; then
    result SKIP bench "$(grep -m1 '^# GPU cases skipped' "$log" | sed 's/^# //' || why_failed $rc "$log")"
  else
    grep -q '^case, tickgrad_us' "$log" || result FAIL bench "no GPU table: $(why_failed $rc "$log")"
    # one summary line per case row: "case, tickgrad_us, torch_us, ratio, torch_compile_us, h2d, d2h, h2d/epoch, captured"
    while IFS= read -r row; do
      IFS=',' read -r c tg pt ratio pc h2d d2h h2de cap <<<"$row"
      tg=${tg# } pt=${pt# } ratio=${ratio# } pc=${pc# } h2d=${h2d# } d2h=${d2h# } h2de=${h2de# } cap=${cap# }
      text="tickgrad ${tg} us, torch ${pt:--} us (ratio ${ratio:--}), torch.compile ${pc:--} us; per step h2d ${h2d:-?} B d2h ${d2h:-?} B; h2d/epoch ${h2de:-?} B; captured ${cap:-?}"
      if [[ $tg =~ ^[0-9.]+$ ]] && { [ "$cap" = 1 ] || [[ $c == *_eager ]]; }; then result PASS "$c" "$text"
      elif [[ $tg =~ ^[0-9.]+$ ]]; then result FAIL "$c" "the step was not captured; $text"
      else result FAIL "$c" "$(cut -d, -f2- <<<"$row" | sed 's/^ //')"; fi
    done < <(grep '^mlp_step_cuda' "$log")
    while IFS= read -r row; do # the Vulkan rows: the step recorded once and replayed, as CUDA's is captured
      IFS=',' read -r c tg pt ratio pc h2d d2h h2de cap <<<"$row"
      tg=${tg# } pt=${pt# } ratio=${ratio# } cap=${cap# }
      text="vulkan:0 ${tg} us, torch ${pt:--} us (ratio ${ratio:--}); per step h2d${h2d:-?} B d2h${d2h:-?} B; recorded ${cap:-?}"
      if [[ $tg =~ ^[0-9.]+$ ]] && [ "$cap" = 1 ]; then result PASS "$c" "$text"
      elif [[ $tg =~ ^[0-9.]+$ ]]; then result FAIL "$c" "the step was not recorded; $text"
      else result FAIL "$c" "$(cut -d, -f2- <<<"$row" | sed 's/^ //')"; fi
    done < <(grep '^vk_mlp_step' "$log")
    [ "$rc" = 0 ] || result FAIL bench "$(why_failed $rc "$log")"
  fi
else
  result SKIP bench "the build failed"
fi

echo
echo "==== summary ($((SECONDS - START))s; logs in $OUT) ===="
cat "$SUMMARY"
exit $failed
