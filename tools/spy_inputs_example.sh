#!/usr/bin/env bash
# The worked example of docs/INPUTS.md: SPY hourly bars with derived columns, triple-barrier classes, a causal
# transformer and a TFT trained as classifiers and backtested on the test split.
# Usage: tools/spy_inputs_example.sh [BUILD] [OUT]   (defaults: build, runs/spy-inputs); EPOCHS=N to change 12.
set -euo pipefail
build=${1:-build}
out=${2:-runs/spy-inputs}
epochs=${EPOCHS:-12}
tg="$build/tickgrad"
[ -x "$tg" ] || { echo "spy_inputs_example: no $tg (run make first)" >&2; exit 1; }
mkdir -p "$out"
tools/spy_columns.sh ../shared/data/lean/equity/usa/hour/spy.csv "$out/spy_columns.csv"
grep -oE 'avx512f|avx512_bf16|amx_bf16|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/^/ISA: /'; echo
common=(--data "$out/spy_columns.csv" --data-tz America/New_York --tz America/New_York
        --target triple-barrier:1,1,8 --epochs "$epochs" --seed 1)
features=logret,range,vol:20,rsi:14,tod,dow,col:relvol,known:bar_of_day,cat:session
"$tg" train --model transformer "${common[@]}" --out "$out/transformer" --features "$features" \
  --seq-len 32 --d-model 32 --heads 4 --layers 2 --batch 64
"$tg" train --model tft "${common[@]}" --out "$out/tft" --features "$features" \
  --enc-len 32 --hidden 32 --heads 4 --batch 64
for m in transformer tft; do
  "$tg" backtest --run "$out/$m" --data "$out/spy_columns.csv" --data-tz America/New_York --cost-bps 1 \
    > "$out/$m/backtest.txt"
  cat "$out/$m/backtest.txt"
done
