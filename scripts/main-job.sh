#!/usr/bin/env bash
# make run: the main job on the built-in synthetic market: train a TFT forecaster, backtest it on the test split, write the report.
# Usage: scripts/main-job.sh [BUILD] ; RUN_DIR=DIR picks the folder (default runs/main-<timestamp>), PRECISION the
# training precision (default auto: bf16 where the CPU has native bf16 GEMMs, else fp32). COMPARE=1 also trains a PatchTST
# in the same setting (the same bars, horizons, epochs and window, d_model 32, patches of 8 bars every 4) into
# RUN_DIR/patchtst and prints both models' validation losses side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./${1:-build}/tickgrad
out=${RUN_DIR:-runs/main-$(date +%Y%m%d-%H%M%S)}
precision=${PRECISION:-auto}
if [ -e "$out/tft/config.json" ]; then
  echo "make run: $out already holds a run; choose another RUN_DIR" >&2
  exit 1
fi
mkdir -p "$out"
step() { printf '\n== %s\n' "$*"; }

step "1/3 a synthetic market: 12000 one-minute bars with a planted signal ($out/market.csv)"
"$bin" synth --bars 12000 --signal 0.5 --seed 7 --out "$out/market.csv"

step "2/3 train a Temporal Fusion Transformer on it: quantiles of the next 1..4 bars' returns"
"$bin" --threads 2 train --model tft --data "$out/market.csv" --horizons 4 --hidden 32 --heads 4 --enc-len 32 \
  --epochs 6 --precision "$precision" --out "$out/tft"

step "3/3 backtest its forecasts on the test split (bars it never trained on), 1 bp costs, against buy and hold"
"$bin" --threads 1 backtest --run "$out/tft" --rule median --horizon 1 --cost-bps 1

if [ "${COMPARE:-0}" = 1 ]; then
  step "compare: PatchTST in the same setting"
  "$bin" --threads 2 train --model patchtst --data "$out/market.csv" --horizons 4 --d-model 32 --heads 4 --seq-len 32 \
    --patch-len 8 --stride 4 --epochs 6 --precision "$precision" --out "$out/patchtst"
  val_loss() { grep -m1 '"loss"' "$1/evaluation.json" | tr -d ' ,' | cut -d: -f2; }
  printf '\nvalidation loss (best weights, the same bars): tft %s, patchtst %s\n' "$(val_loss "$out/tft")" \
    "$(val_loss "$out/patchtst")"
fi

printf '\nThe run: %s/tft (config, metrics, checkpoints, trades, equity)\nThe report: %s/tft/report.html (open it in a browser)\n' "$out" "$out"
