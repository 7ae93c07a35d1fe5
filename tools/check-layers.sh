#!/usr/bin/env bash
# The layer rule: a file under src/ or include/tickgrad/ includes only headers of its own layer or lower ones.
# Usage: tools/check-layers.sh [ROOT]   (exit 1 naming every file:line that breaks it; docs/ARCHITECTURE.md has the table)
# Also: one backend's folder includes no other backend's headers, data/readers none of data/dataset, and TG_HAVE_CUDA
# is tested only in src/backend/cuda.
# And: a model kind (TG_MODEL_*) is named only in src/models and tickgrad/models.h; the rest ask the model table.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# layer of a folder under src/ (the first match wins), and of a public header
layer_of_dir() {
  case $1 in
    base) echo 0 ;;
    graph|ops) echo 1 ;;
    backend|backend/*) echo 2 ;;
    optim|io|data|data/*|dist) echo 3 ;;
    models|env|agents) echo 4 ;;
    report) echo 5 ;;
    train|predict|backtest|eval) echo 6 ;;
    cli|python) echo 7 ;;
    *) echo "" ;;
  esac
}
layer_of_public() {
  case $1 in
    status|tensor|rng|version) echo 0 ;;
    graph|optim) echo 1 ;;
    device|telemetry) echo 2 ;;
    step|checkpoint|data|dataset|synth|dist|ticks) echo 3 ;;
    models|rl|rl_agents|env|agents) echo 4 ;;
    report) echo 5 ;;
    train|evaluate|predictor|backtest|eval|agent_run|export) echo 6 ;;
    tickgrad) echo 7 ;;
    *) echo "" ;;
  esac
}
names=(base graph backends "optim, io, data, dist" "models, env, agents" report "train, predict, backtest, eval" cli)

bad=0
fail() { echo "$1: $2" >&2; bad=$((bad + 1)); }

while IFS= read -r f; do
  case $f in
    include/tickgrad/*) own=$(layer_of_public "$(basename "${f%.h}")"); dir=public ;;
    *) dir=${f#src/}; dir=${dir%/*}; own=$(layer_of_dir "$dir") ;;
  esac
  [ -n "$own" ] || { fail "$f" "its folder has no layer (add it to tools/check-layers.sh and docs/ARCHITECTURE.md)"; continue; }
  while IFS=: read -r line inc; do
    h=${inc#*\"}; h=${h%%\"*}
    case $h in
      tickgrad/*) hl=$(layer_of_public "$(basename "${h%.h}")") ;;
      */*) hd=${h%/*}; hl=$(layer_of_dir "$hd") ;;
      *) continue ;; # a header beside the file
    esac
    [ -n "$hl" ] || { fail "$f:$line" "includes \"$h\", which belongs to no layer"; continue; }
    if [ "$hl" -gt "$own" ]; then
      fail "$f:$line" "includes \"$h\" (layer $hl, ${names[$hl]}) from layer $own (${names[$own]})"
    fi
    # backends do not include each other (the emulator compiles the CUDA backend's sources, so it may)
    # within data: the readers give bars and know nothing of the dataset built from them
    case $dir in data/readers|data/readers/*)
      case $h in data/dataset/*) fail "$f:$line" "includes \"$h\": data/readers includes nothing of data/dataset" ;; esac ;;
    esac
    case $dir in backend/*)
      case $h in backend/*/*)
        hb=${h#backend/}; hb=${hb%%/*}; fb=${dir#backend/}; fb=${fb%%/*}
        if [ "$hb" != "$fb" ] && ! { [ "$fb" = cuda_emu ] && [ "$hb" = cuda ]; }; then
          fail "$f:$line" "includes \"$h\": one backend's folder includes no other backend's headers"
        fi ;;
      esac ;;
    esac
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" || true)
  case $f in
    src/backend/cuda/*|src/backend/cuda_emu/*) ;;
    *) while IFS=: read -r line _; do
         fail "$f:$line" "tests TG_HAVE_CUDA: only the CUDA backend's folder and the build files may"
       done < <(grep -n 'TG_HAVE_CUDA' "$f" || true) ;;
  esac
  case $f in
    src/models/*|include/tickgrad/models.h) ;;
    *) while IFS=: read -r line _; do
         why="names a model kind (TG_MODEL_*): only src/models and tickgrad/models.h may; ask the model table"
         fail "$f:$line" "$why (tg_model_caps, tg_model_name, tg_model_default_kind)"
       done < <(grep -n 'TG_MODEL_' "$f" || true) ;;
  esac
done < <(find src include/tickgrad -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cpp' \) | LC_ALL=C sort)

if [ "$bad" -gt 0 ]; then
  echo "check-layers: $bad violation(s) of the layer rule (docs/ARCHITECTURE.md, Layers)" >&2
  exit 1
fi
echo "check-layers: every include in src/ and include/tickgrad/ respects the layers"
