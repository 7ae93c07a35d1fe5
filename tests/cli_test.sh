#!/usr/bin/env bash
# The command line: help, version, devices, ops, exit code 2 for unknown commands and flags, demo run.
set -u
bin=$1
pass=0 fail=0
expect() { # expect CODE DESCRIPTION -- command...
  local want=$1 what=$2; shift 3
  local out; out=$("$@" 2>&1); local got=$?
  if [ "$got" -eq "$want" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what: exit $got, want $want"; echo "$out" | head -5; fi
}
expect_out() { # expect_out PATTERN DESCRIPTION -- command...
  local pat=$1 what=$2; shift 3
  if "$@" 2>&1 | grep -q -- "$pat"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what: no '$pat' in output"; fi
}
expect 0 "--help" -- "$bin" --help
expect_out "usage: tickgrad" "help text" -- "$bin" --help
expect 0 "version" -- "$bin" version
expect_out "tickgrad [0-9]" "version text" -- "$bin" version
expect 0 "devices" -- "$bin" devices
expect_out "simd" "devices lists SIMD" -- "$bin" devices
expect_out "blas" "devices lists BLAS" -- "$bin" devices
expect 0 "ops" -- "$bin" ops
expect_out "layernorm" "ops lists layernorm" -- "$bin" ops
expect 2 "unknown command" -- "$bin" frobnicate
expect_out "unknown command 'frobnicate'" "unknown command named" -- "$bin" frobnicate
expect 2 "unknown global flag" -- "$bin" --frob
expect 2 "unknown demo flag" -- "$bin" demo --frob
expect_out "unknown flag '--frob'" "unknown flag named" -- "$bin" demo --frob
expect 2 "bad --threads" -- "$bin" --threads zero devices
expect 2 "bad --steps" -- "$bin" demo --steps -3
expect 2 "no command" -- "$bin"
dir=$(mktemp -d)
expect 0 "short demo run" -- "$bin" --threads 1 demo --steps 50 --rows 512 --out "$dir/run"
for f in final.safetensors final.state.safetensors metrics.csv; do
  if [ -s "$dir/run/$f" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: demo did not write $f"; fi
done
expect 1 "demo on a device not compiled in" -- "$bin" demo --steps 5 --device cuda:0 --out "$dir/gpu"
rm -rf "$dir"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
