#!/usr/bin/env bash
# Reads every file in ../shared/data with `tickgrad inspect` and prints one line each: the format
# and rows it gives, or the error. Usage: tools/inventory.sh [BUILD_DIR] [SHARED_DATA]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/tickgrad
shared=${2:-../shared/data}
find "$shared" -type f ! -name '*.md' ! -name 'LICENSE*' | sort | while read -r f; do
  rel=${f#"$shared"/}
  out=$("$bin" inspect "$f" 2>&1)
  if [ $? -eq 0 ]; then
    fmt=$(echo "$out" | awk '$1 == "format" {print $2}')
    rows=$(echo "$out" | awk '$1 == "rows" {sub(",", "", $2); print $2 " rows, " $3 " " $4}')
    echo "$rel: $fmt, $rows"
  else
    echo "$rel: ERROR $(echo "$out" | grep -v '^warning' | head -1 | sed 's/^tickgrad inspect: //' | cut -c1-220)"
  fi
done
