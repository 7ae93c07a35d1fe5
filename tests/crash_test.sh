#!/usr/bin/env bash
# Crash consistency: a forecaster and an agent killed (SIGKILL) or failed (ENOSPC) at every file write, then resumed,
# end bitwise equal to the run that never stopped. The file layer's hook (TICKGRAD_FAULT) places each fault.
set -u
bin=$1
step=${2:-1} # every fault point (1), or every Nth: sanitizer builds, whose processes are slow, take every 3rd
dir=$(mktemp -d -p "$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")") # tmpfs: fsync is free
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
"$bin" synth --bars 1200 --seed 5 --out "$dir/m.csv" > /dev/null || { echo "FAIL: synth"; exit 1; }

# crash_case NAME "FILES TO COMPARE" ARGS...: every fault point of the run, killed and failed, then resumed
crash_case() {
  local name=$1 files=$2; shift 2
  "$bin" --threads 1 "$@" --out "$dir/$name-ref" > /dev/null 2>&1 || { echo "FAIL: $name: the reference run failed"; fail=$((fail + 1)); return; }
  local points
  points=$(TICKGRAD_FAULT=list "$bin" --threads 1 "$@" --out "$dir/$name-count" 2>&1 >/dev/null | grep -c '^fault point')
  if [ "$points" -lt 20 ]; then echo "FAIL: $name: only $points fault points"; fail=$((fail + 1)); return; fi
  local mode k d rc bad=0 resumed=0 restarted=0
  for mode in kill enospc; do
    for k in $(seq 1 "$step" "$points"); do
      d=$dir/$name-$mode-$k
      (TICKGRAD_FAULT=$mode:$k "$bin" --threads 1 "$@" --out "$d" > "$d.log" 2>&1; exit $?) 2> /dev/null # no "Killed" line
      rc=$?
      if [ "$mode" = kill ] && [ "$rc" -ne 137 ]; then
        echo "FAIL: $name kill:$k: exit $rc, want 137 (SIGKILL)"; bad=$((bad + 1)); continue
      fi
      if [ "$mode" = enospc ] && [ "$rc" -ne 0 ] && ! grep -q "No space left on device" "$d.log"; then
        echo "FAIL: $name enospc:$k: exit $rc without naming the full disk"; tail -3 "$d.log"; bad=$((bad + 1)); continue
      fi
      if [ -f "$d/config.json" ]; then # a run folder: resume it (from its newest whole checkpoint, or the start)
        "$bin" --threads 1 train --resume "$d" > "$d.log2" 2>&1; rc=$?; resumed=$((resumed + 1))
      else # stopped before the run was written: the same command again
        "$bin" --threads 1 "$@" --out "$d" > "$d.log2" 2>&1; rc=$?; restarted=$((restarted + 1))
      fi
      if [ "$rc" -ne 0 ]; then echo "FAIL: $name $mode:$k: resume exit $rc"; tail -3 "$d.log2"; bad=$((bad + 1)); continue; fi
      for f in $files; do
        if ! cmp -s "$dir/$name-ref/$f" "$d/$f"; then echo "FAIL: $name $mode:$k: $f differs from the run that never stopped"; bad=$((bad + 1)); fi
      done
      if ls "$d" "$d/checkpoints" 2>/dev/null | grep -q '\.tmp\.[0-9]*$'; then echo "FAIL: $name $mode:$k: temporaries left"; bad=$((bad + 1)); fi
      rm -rf "$d" "$d.log" "$d.log2"
    done
  done
  local which=each; [ "$step" -gt 1 ] && which="one in $step"
  echo "$name: $points fault points, killed and failed at $which: $resumed resumed, $restarted started again, $bad failures"
  if [ "$bad" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

crash_case forecaster "weights.safetensors state.safetensors best.safetensors" \
  train --model mlp --data "$dir/m.csv" --epochs 2 --ckpt-every 1
crash_case dqn "weights.safetensors target.safetensors optim.safetensors agent.safetensors" \
  train --model dqn --env cartpole --total-timesteps 400 --learning-starts 100 --ckpt-every 200

# check NAME WANT_EXIT PATTERN -- command...: the exit code and a line of the output
check() {
  local name=$1 want=$2 pat=$3; shift 4
  local out rc; out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ] && echo "$out" | grep -q -- "$pat"; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: $name: exit $rc (want $want), '$pat' wanted in:"; echo "$out" | tail -4; fi
}
fc="--threads 1 train --model mlp --data $dir/m.csv --epochs 3 --ckpt-every 1"
"$bin" $fc --out "$dir/full" > /dev/null 2>&1
# a damaged current set: the resume takes the one before, says so, and ends as the run that never stopped
"$bin" $fc --out "$dir/dmg" --stop-after 2 > /dev/null 2>&1
cur=$(readlink "$dir/dmg/checkpoint")
printf 'X' | dd of="$dir/dmg/$cur/weights.safetensors" bs=1 seek=200 conv=notrunc 2> /dev/null
check "damaged set" 0 "resuming from checkpoint 1, the newest whole one (not 2)" -- "$bin" --threads 1 train --resume "$dir/dmg"
if cmp -s "$dir/full/weights.safetensors" "$dir/dmg/weights.safetensors"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: the resume from the older set differs"; fi
if [ "$(ls "$dir/dmg/checkpoints" | wc -l)" -eq 2 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: not two sets kept: $(ls "$dir/dmg/checkpoints")"; fi
# config.json edited after the checkpoint: refused, naming it
"$bin" $fc --out "$dir/ed" --stop-after 1 > /dev/null 2>&1
sed -i 's/"lr": [0-9.e-]*/"lr": 0.5/' "$dir/ed/config.json"
check "edited config" 1 "ed/config.json changed after checkpoint 1 was written with it" -- "$bin" --threads 1 train --resume "$dir/ed"
# a checkpoint set copied in from another run with the same settings: refused, naming both run ids
"$bin" $fc --out "$dir/a" --stop-after 1 > /dev/null 2>&1
"$bin" $fc --out "$dir/b" --stop-after 1 > /dev/null 2>&1
rm -rf "$dir/b/checkpoints/000001" && cp -r "$dir/a/checkpoints/000001" "$dir/b/checkpoints/"
check "set from another run" 1 "checkpoint 1 was written by another run (run id" -- "$bin" --threads 1 train --resume "$dir/b"
# a copy of a whole run folder (cp -r keeps the links) resumes; so does one that followed them (cp -rL)
"$bin" $fc --out "$dir/orig" --stop-after 2 > /dev/null 2>&1
cp -r "$dir/orig" "$dir/copy" && cp -rL "$dir/orig" "$dir/deref"
check "copied run" 0 "done: 3 epochs" -- "$bin" --threads 1 train --resume "$dir/copy"
check "copied run, links followed" 0 "done: 3 epochs" -- "$bin" --threads 1 train --resume "$dir/deref"
for d in copy deref; do
  if cmp -s "$dir/full/weights.safetensors" "$dir/$d/weights.safetensors" && [ -L "$dir/$d/checkpoint" ]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: the resumed $d differs from the run that never stopped"; fi
done

echo "crash: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
