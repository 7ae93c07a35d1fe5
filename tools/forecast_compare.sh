#!/usr/bin/env bash
# tickgrad's TFT against pytorch-forecasting's out of sample: the same windows, settings and schedule, over seeds.
# usage: tools/forecast_compare.sh OUT NAME EPOCHS "SEEDS" SIDE -- TRAIN-FLAGS...
#   SIDE: tickgrad, pf or both. tickgrad: `tickgrad train --model tft TRAIN-FLAGS --epochs E --patience 0 --seed S`
#   into OUT/NAME-tickgrad-S (training ends by scoring every split: evaluation.json). pf: the run's windows exported
#   once (OUT/NAME-windows.safetensors), then tools/pf_compare.py per seed into OUT/NAME-pf-S.log (its last line holds
#   the same scores). Both run on one thread each (TICKGRAD=path of the command, default build/tickgrad; PYTHON, default
#   .venv/bin/python with pytorch-forecasting). tools/forecast_table.py OUT prints the table.
# Example (ES 1-minute, December 2013):
#   tools/forecast_compare.sh cmp es 6 "1 2 3" both -- --data ../shared/data/parquet-ohlcv/es_201312_1m.zstd.parquet \
#     --tz America/New_York
set -euo pipefail
out=$1 name=$2 epochs=$3 seeds=$4 side=$5
shift 5
[ "${1:-}" = "--" ] && shift
tg=${TICKGRAD:-build/tickgrad}
py=${PYTHON:-.venv/bin/python}
mkdir -p "$out"
case $side in tickgrad | pf | both) ;; *) echo "forecast_compare: SIDE must be tickgrad, pf or both, not '$side'" >&2; exit 2 ;; esac
if [ "$side" != pf ]; then
  for s in $seeds; do
    run=$out/$name-tickgrad-$s
    [ -f "$run/evaluation.json" ] && { echo "forecast_compare: $run done already"; continue; }
    rm -rf "$run"
    echo "forecast_compare: tickgrad $name seed $s" >&2
    "$tg" --threads 1 train --model tft "$@" --epochs "$epochs" --patience 0 --seed "$s" --out "$run" > "$run.log" 2>&1
  done
fi
if [ "$side" != tickgrad ]; then
  win=$out/$name-windows.safetensors
  [ -f "$win" ] || "$tg" --threads 1 train --model tft "$@" --export-windows "$win" > "$out/$name-export.log" 2>&1
  for s in $seeds; do
    log=$out/$name-pf-$s.log
    grep -q '^# {' "$log" 2>/dev/null && { echo "forecast_compare: $log done already"; continue; }
    echo "forecast_compare: pytorch-forecasting $name seed $s" >&2
    "$py" tools/pf_compare.py "$win" --epochs "$epochs" --seed "$s" --threads 1 > "$log" 2>&1
  done
fi
