#!/usr/bin/env bash
# Compares tickgrad's readers with the official decoders on every file in ../shared/data:
# Databento's databento-dbn for DBN, pyarrow for Parquet. Not part of CI (needs PyPI packages).
# Usage: tools/crosscheck.sh [BUILD_DIR]   (default: build; run `make build` first)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
venv=.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! "$venv/bin/python" -c "import databento_dbn, pyarrow" 2>/dev/null; then
  "$venv/bin/pip" install -q databento-dbn pyarrow
fi
status=0
"$venv/bin/python" tools/crosscheck_dbn.py --build "$build" || status=1
"$venv/bin/python" tools/crosscheck_parquet.py --build "$build" || status=1
[ $status -eq 0 ] && echo "crosscheck: PASS" || echo "crosscheck: FAIL"
exit $status
