#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan; the parsers only, so without the CUDA backend) and runs each for FUZZ_SECONDS (default 30),
# from its seed corpus in fuzz/corpus/<name>, plus the real files in ../shared/data when present.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
build=build-fuzz
CC=clang cmake -S . -B $build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_FUZZ=ON -DTG_CUDA=OFF $* > $build.configure.log 2>&1 ||
  { cat $build.configure.log; exit 1; }
targets=$(cd fuzz && ls fuzz_*.c | sed 's/\.c$//')
cmake --build $build -j "$(nproc)" --target $targets
shared=../shared/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# one target: its seeds, then libFuzzer for $seconds; the exit status is libFuzzer's
run_target() {
  local t=$1 name=${1#fuzz_}
  mkdir -p "$work/$name"
  local seeds=()
  [ -d "fuzz/corpus/$name" ] && seeds+=("fuzz/corpus/$name")
  case $name in
    dbn) [ -d "$shared/dbn" ] && seeds+=("$shared/dbn")
         [ -d "$shared/dbn-ticks" ] && seeds+=("$shared/dbn-ticks") ;;
    parquet) [ -d "$shared/parquet-testing" ] && seeds+=("$shared/parquet-testing" "$shared/parquet-ohlcv") ;;
    safetensors) seeds+=(reference/data) ;;
  esac
  echo "fuzz: $t for ${seconds}s (seeds: ${seeds[*]})"
  # -rss_limit_mb bounds memory; a crash, leak, timeout or sanitizer report fails the run
  "$build/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "$work/$name" "${seeds[@]}" 2>"$work/$name.log"
}
# the targets run as many at a time as there are cores (CI time), each reported when its batch ends
jobs=$(nproc)
set -- $targets
failed=0
while [ $# -gt 0 ]; do
  batch=()
  pids=()
  while [ $# -gt 0 ] && [ ${#batch[@]} -lt "$jobs" ]; do
    run_target "$1" &
    pids+=($!)
    batch+=("$1")
    shift
  done
  for i in "${!batch[@]}"; do
    t=${batch[$i]}
    if wait "${pids[$i]}"; then
      echo "fuzz: $t: $(grep -E "stat::number_of_executed_units|Done" "$work/${t#fuzz_}.log" | tr '\n' ' ')"
    else
      tail -40 "$work/${t#fuzz_}.log"; echo "fuzz: $t FAILED"; failed=1
    fi
  done
done
[ "$failed" = 0 ] || exit 1
echo "fuzz: all targets ran ${seconds}s without a finding"
