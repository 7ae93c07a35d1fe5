#!/usr/bin/env bash
# The layer check passes on the tree and fails, naming file and line, on planted violations of each of its rules.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
check=$src/tools/check-layers.sh
fails=0
expect() { # expect WHAT EXIT PATTERN -- ROOT
  local what=$1 want=$2 pattern=$3 root=$5 out rc
  out=$("$check" "$root" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -q -- "$pattern" <<< "$out"; then
    echo "FAIL: $what (exit $rc, want $want, output should match '$pattern'):"; echo "$out" | tail -5; fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}
expect "the tree respects the layers" 0 "respects the layers" -- "$src"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plant() { # plant DIR FILE LINE...: a fresh tree with one file
  rm -rf "$tmp/t"; mkdir -p "$tmp/t/include/tickgrad" "$tmp/t/src/$1"
  local f=$tmp/t/src/$1/$2; shift 2
  printf '%s\n' "$@" > "$f"
}
plant base bad.c '/* a planted violation */' '#include "base/alloc.h"' '#include "train/train_internal.h"'
expect "base including the trainer" 1 "src/base/bad.c:3: includes \"train/train_internal.h\" (layer 6" -- "$tmp/t"
plant graph bad.c '#include "tickgrad/report.h"'
expect "graph including a public header of a higher layer" 1 "src/graph/bad.c:1: includes \"tickgrad/report.h\"" -- "$tmp/t"
plant backend/cpu bad.c '#include "backend/cuda/cuda_api.h"'
expect "one backend including another's header" 1 "src/backend/cpu/bad.c:1: .*no other backend" -- "$tmp/t"
plant data/readers/csv bad.c '#include "data/readers/timeconv.h"' '#include "data/dataset/features_internal.h"'
expect "a reader including the dataset" 1 "src/data/readers/csv/bad.c:2: .*data/readers includes nothing of data/dataset" -- "$tmp/t"
plant data bad.c '#if TG_HAVE_CUDA' '#endif'
expect "TG_HAVE_CUDA outside the CUDA folder" 1 "src/data/bad.c:1: tests TG_HAVE_CUDA" -- "$tmp/t"
plant train bad.c '/* a planted kind test */' 'int is_tft(tg_model_kind k) { return k == TG_MODEL_TFT; }'
expect "a model kind named outside src/models" 1 "src/train/bad.c:2: names a model kind (TG_MODEL_\*)" -- "$tmp/t"
plant newfolder bad.c '#include "base/alloc.h"'
expect "a folder with no layer" 1 "src/newfolder/bad.c: its folder has no layer" -- "$tmp/t"
plant cli ok.c '#include "train/train_internal.h"' '#include "base/alloc.h"'
expect "cli including lower layers" 0 "respects the layers" -- "$tmp/t"

[ "$fails" -eq 0 ] || { echo "check_layers_test: $fails failed"; exit 1; }
echo "check_layers_test: all passed"
