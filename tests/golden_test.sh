#!/usr/bin/env bash
# Golden outputs: every command's numbers (metrics, weights, forecasts, equity) on a seeded market must stay byte-identical.
# Usage: tests/golden_test.sh TICKGRAD [--record]
#   checks the SHA-256 of each output against tests/golden/outputs.sha256; --record rewrites that file.
# A change that alters the numbers on purpose records again in the same commit and says why in its message.
# Timing columns of metrics.csv (seconds, samples/s, time splits) are dropped before hashing; everything else is
# hashed as written. Every GEMM runs on OpenBLAS (TICKGRAD_GEMM=openblas: oneDNN picks its kernels by the CPU it
# finds), pinned to its Haswell kernels, and every command to fixed thread counts, so the numbers do not depend on
# which x86-64 CPU (AVX2 or better) runs the test; the forecasters train in fp32 (precision auto would pick bf16 on a
# CPU with AMX or AVX512-BF16).
set -euo pipefail
bin=$(realpath "$1")
record=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
golden=$src/tests/golden/outputs.sha256
export OPENBLAS_CORETYPE=Haswell TICKGRAD_GEMM=openblas
unset OPENBLAS_L2_SIZE OMP_NUM_THREADS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
tg() { "$bin" "$@" > "$work/last.log" 2>&1 || { echo "golden: command failed: tickgrad $*" >&2; cat "$work/last.log" >&2; exit 1; }; }

# The market, and each forecaster trained, backtested and run as a predictor on it.
tg synth --bars 4000 --signal 0.5 --seed 11 --out m.csv
tg --threads 1 train --precision fp32 --model mlp --data m.csv --horizons 2 --epochs 3 --stop-after 2 --out mlp
tg --threads 2 train --precision fp32 --model tft --data m.csv --horizons 2 --hidden 16 --heads 2 --enc-len 16 --epochs 2 --out tft
tg --threads 1 train --precision fp32 --model mamba2 --data m.csv --horizons 2 --epochs 2 --out mamba2
tg --threads 1 train --resume mlp
for m in mlp tft mamba2; do
  tg --threads 1 backtest --run $m --rule median --horizon 1 --cost-bps 1
  tg --threads 1 predict --run $m --data m.csv --out $m/forecast.csv
done
tg --threads 1 backtest --data m.csv --strategy sma-cross:5,20 --out rule
# Agents: CartPole and the trading market, resumed once, the trading policy backtested.
tg --threads 1 train --model dqn --total-timesteps 3000 --learning-starts 500 --out dqn
tg --threads 1 train --model ppo --total-timesteps 2048 --stop-after 1 --out ppo
tg --threads 1 train --resume ppo
tg --threads 1 train --model dqn --env trading --data m.csv --window 8 --episode-len 64 --total-timesteps 1500 \
  --learning-starts 200 --out dqnt
tg --threads 1 train --model ppo --env trading --data m.csv --window 8 --episode-len 64 --total-timesteps 2048 --out ppot
tg --threads 1 backtest --run dqnt
# Walk-forward and a sweep with backtests.
tg --threads 1 walkforward --folds 2 --precision fp32 --model mlp --data m.csv --horizons 2 --epochs 2 --out wf
tg --threads 1 sweep --grid lr=0.001,0.003 --precision fp32 --model mlp --data m.csv --horizons 2 --epochs 2 --backtest --out sw
# The main job (make run) as the README runs it.
RUN_DIR=$work/main PRECISION=fp32 "$src/scripts/main-job.sh" "$(realpath --relative-to="$src" "$(dirname "$bin")")" > main.log 2>&1 || { cat main.log >&2; exit 1; }

# metrics.csv without its timing columns; other files as they are.
strip_timing() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) keep[i] = ($i !~ /(^|_)(s|seconds|per_s|sps|time|wall)$/) }
           { out = ""; for (i = 1; i <= NF; i++) if (keep[i]) out = out (out == "" ? "" : ",") $i; print out }' "$1"
}
list=$work/outputs.sha256
# A run's checkpoint files by their names at the run's top (links into the current set), not inside the sets.
find -L . \( -name checkpoints -o -name checkpoint \) -prune -o -type f \( -name metrics.csv -o -name '*.safetensors' -o -name forecast.csv -o -name equity.csv \
  -o -name trades.csv -o -name walkforward.csv -o -name sweep.csv -o -name m.csv -o -name market.csv -o -name evaluation.json \) -print \
  | LC_ALL=C sort | while read -r f; do
  f=${f#./}
  case $f in
    */metrics.csv|metrics.csv) h=$(strip_timing "$f" | sha256sum) ;;
    *) h=$(sha256sum < "$f") ;;
  esac
  printf '%s  %s\n' "${h%% *}" "$f"
done > "$list"

if [ "$record" = --record ]; then
  mkdir -p "$(dirname "$golden")"
  cp "$list" "$golden"
  echo "golden: recorded $(wc -l < "$golden") outputs in $golden"
  exit 0
fi
if diff -u "$golden" "$list" > diff.txt; then
  echo "golden: $(wc -l < "$golden") outputs byte-identical to tests/golden/outputs.sha256"
else
  echo "golden: outputs differ from tests/golden/outputs.sha256 (- recorded, + now):" >&2
  grep '^[-+][^-+]' diff.txt >&2
  exit 1
fi
