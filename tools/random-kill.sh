#!/usr/bin/env bash
# The random-kill experiment: runs killed with SIGKILL at random moments, then resumed; counts the resumes that
# work and end bitwise equal to the run that never stopped. Usage: tools/random-kill.sh BIN [KILLS_PER_KIND]
set -u
bin=${1:?usage: tools/random-kill.sh BIN [KILLS_PER_KIND]}
kills=${2:-30}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" synth --bars 4000 --seed 3 --out "$dir/m.csv" > /dev/null
declare -A args files
args[forecaster]="--threads 1 train --model mlp --data $dir/m.csv --epochs 6 --ckpt-every 1"
files[forecaster]="weights.safetensors state.safetensors best.safetensors"
args[dqn]="--threads 1 train --model dqn --env cartpole --total-timesteps 3000 --learning-starts 200 --ckpt-every 100"
files[dqn]="weights.safetensors target.safetensors optim.safetensors agent.safetensors"
for kind in forecaster dqn; do
  # shellcheck disable=SC2086
  start=$(date +%s%N); "$bin" ${args[$kind]} --out "$dir/$kind-ref" > /dev/null 2>&1 || { echo "$kind: reference run failed"; exit 1; }
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  killed=0 finished=0 resumed=0 equal=0 refused=0 temps=0
  for i in $(seq 1 "$kills"); do
    d=$dir/$kind-$i
    # shellcheck disable=SC2086
    "$bin" ${args[$kind]} --out "$d" > /dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v r="$RANDOM" -v ms="$ms" 'BEGIN { printf "%.3f", (r / 32768) * 0.9 * ms / 1000 }')"
    if kill -9 "$pid" 2> /dev/null; then killed=$((killed + 1)); else finished=$((finished + 1)); fi
    wait "$pid" 2> /dev/null
    if [ -f "$d/config.json" ]; then cmd=(train --resume "$d"); else read -ra cmd <<< "${args[$kind]} --out $d"; fi
    if "$bin" --threads 1 "${cmd[@]}" > "$d.log" 2>&1; then resumed=$((resumed + 1)); else refused=$((refused + 1)); tail -2 "$d.log"; fi
    same=1
    for f in ${files[$kind]}; do cmp -s "$dir/$kind-ref/$f" "$d/$f" || same=0; done
    equal=$((equal + same))
    if ls "$d" "$d/checkpoints" 2> /dev/null | grep -q '\.tmp\.[0-9]*$'; then temps=$((temps + 1)); fi
    rm -rf "$d" "$d.log"
  done
  echo "$kind (run of $ms ms): $kills tries, $killed killed ($finished had finished), $resumed resumed, $refused refused, $equal bitwise equal to the uninterrupted run, $temps left temporaries"
done
