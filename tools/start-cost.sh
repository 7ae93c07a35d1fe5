#!/usr/bin/env bash
# What a command costs before it does any work: peak resident memory (max RSS) and the median wall time of 5 runs
# of `tickgrad version`, `tickgrad devices` and a tiny CPU training run (BENCHMARKS.md, "Start-up cost").
# Usage: tools/start-cost.sh [TICKGRAD_BINARY]   (default build/tickgrad)
set -euo pipefail
bin=${1:-build/tickgrad}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" synth --bars 3000 --seed 5 --out "$dir/bars.csv" >/dev/null
measure() { # measure NAME -- command...: prints NAME, max RSS in MB and the median wall time in ms
  local name=$1; shift 2
  local rss=0 times=()
  for i in 1 2 3 4 5; do
    rm -rf "$dir/run"
    local t0; t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$dir/rss" "$@" >/dev/null 2>&1
    times+=($((($(date +%s%N) - t0) / 1000000)))
    local kb; kb=$(tail -1 "$dir/rss")
    [ "$kb" -gt "$rss" ] && rss=$kb
  done
  local median; median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
  printf '%-10s %6.1f MB %6d ms\n' "$name" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$median"
}
measure version -- "$bin" version
measure devices -- "$bin" devices
measure train -- "$bin" --threads 1 train --model mlp --data "$dir/bars.csv" --epochs 1 --horizons 2 --device cpu --out "$dir/run"
