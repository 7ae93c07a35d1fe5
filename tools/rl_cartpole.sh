#!/bin/bash
# CartPole-v1 at CleanRL's defaults, 500k steps, seeds 1 2 3: tickgrad's DQN and PPO, then (with --sb3)
# stable-baselines3's on gymnasium's CartPole with the same hyperparameters (tools/sb3_cartpole.py).
# Prints CSV rows: algo, seed, env_steps, seconds, env_steps_per_s, mean_return_last100.
# Usage: tools/rl_cartpole.sh [BUILD_DIR (default build)] [--sb3]. Run folders go to $RL_OUT (default /tmp/rl_cartpole).
set -euo pipefail
build=${1:-build}
sb3=${2:-}
out=${RL_OUT:-/tmp/rl_cartpole}
steps=${RL_STEPS:-500000}
mkdir -p "$out"
echo "algo, seed, env_steps, seconds, env_steps_per_s, mean_return_last100"
for algo in dqn ppo; do
  for seed in 1 2 3; do
    run="$out/$algo-$seed"
    rm -rf "$run"
    t0=$(date +%s.%N)
    "./$build/tickgrad" --threads 1 train --model "$algo" --env cartpole --seed "$seed" --env-seed "$seed" \
      --total-timesteps "$steps" --out "$run" > "$run.log"
    t1=$(date +%s.%N)
    # the "done:" line: mean return of the last 100 episodes; wall time of the whole command
    ret=$(grep '^done:' "$run.log" | sed 's/.*last 100 \([-0-9.na]*\),.*/\1/')
    awk -v a="tickgrad-$algo" -v s="$seed" -v n="$steps" -v t0="$t0" -v t1="$t1" -v r="$ret" \
      'BEGIN { printf "%s, %s, %d, %.1f, %.0f, %s\n", a, s, n, t1 - t0, n / (t1 - t0), r }'
  done
done
if [ "$sb3" = --sb3 ]; then
  py=${BENCH_PYTHON:-.venv/bin/python}
  for algo in dqn ppo; do
    "$py" tools/sb3_cartpole.py "$algo" --steps "$steps" | tail -n +2
  done
fi
