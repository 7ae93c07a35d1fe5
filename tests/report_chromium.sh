#!/usr/bin/env bash
# The run report in a real browser: a short training run and a backtest, `tickgrad report`, then headless
# Chromium loads report.html and the DOM must show the load check passed, no script errors and every chart.
# usage: report_chromium.sh TICKGRAD [--screenshot FILE.png [HEIGHT]]  (exit 77 when Chromium is not installed)
set -u
bin=$1
shot= height=4000
if [ "${2:-}" = "--screenshot" ]; then shot=${3:?--screenshot needs a file}; height=${4:-4000}; fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "skipped: chromium not installed"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() { # check DESCRIPTION -- command...
  local what=$1; shift 2
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=$((fail + 1)); fi
}
run() { # run LOG command...: stops the script when a step fails
  local log=$1; shift
  if ! "$@" > "$dir/$log" 2>&1; then
    echo "FAIL: $* (exit $?)"; tail -5 "$dir/$log"; exit 1
  fi
}

# a run: synthetic bars, a 2-epoch mlp, then a backtest into the run folder
run synth.log "$bin" synth --bars 6000 --seed 3 --signal 0.5 --out "$dir/bars.csv"
run train.log "$bin" --threads 1 train --model mlp --data "$dir/bars.csv" --horizons 2 --epochs 2 --device cpu --out "$dir/run"
if "$bin" backtest --help 2>/dev/null | grep -q -- '--run'; then
  run backtest.log "$bin" backtest --run "$dir/run" --split test
else
  run backtest.log "$bin" backtest --data "$dir/bars.csv" --strategy sma-cross:5,20 --out "$dir/run"
fi
run report.log "$bin" report "$dir/run"
page="$dir/run/report.html"
check "tickgrad report prints the page's path" -- grep -qx "$dir/run/report.html" "$dir/report.log"

# the charts the page should hold: 6 of training, the evaluation's calibration, process CPU and RSS, equity and
# drawdown, and the GPU's memory and utilisation when NVML gave numbers (a blank mem_used_mib column leaves them out)
want=11
if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "mem_used_mib") c = i; next } c && $c != "" { f = 1 } END { exit !f }' \
  "$dir/run/telemetry.csv"; then want=13; fi
in_file=$(grep -o '<svg class="chart"' "$page" | wc -l)
check "report.html has $want charts (it has $in_file)" -- test "$in_file" -eq "$want"

flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$dir/profile")
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" > "$dir/dom.html" 2> "$dir/chromium.log"
rc=$?
check "chromium rendered the page (exit $rc)" -- test "$rc" -eq 0 -a -s "$dir/dom.html"
check "the load check ran: data-report=\"ok\" on the body" -- grep -q '<body[^>]*data-report="ok"' "$dir/dom.html"
check "no script errors: #report-errors is empty" -- grep -q '<div id="report-errors"></div>' "$dir/dom.html"
check "the evaluation table shows the test split" -- grep -q '<tr><th>test</th>' "$dir/dom.html"
in_dom=$(grep -o '<svg class="chart"' "$dir/dom.html" | wc -l)
check "the DOM holds the $want charts (it holds $in_dom)" -- test "$in_dom" -eq "$want"
for name in loss grad_norm time_split calibration proc_rss equity drawdown; do
  check "chart $name in the DOM" -- grep -q "data-chart=\"$name\"" "$dir/dom.html"
done

if [ -n "$shot" ]; then
  timeout 120 "$browser" "${flags[@]}" --window-size=1280,"$height" --screenshot="$shot" "file://$page" >> "$dir/chromium.log" 2>&1
  check "screenshot $shot" -- test -s "$shot"
fi
if [ "$fail" -ne 0 ]; then
  echo "chromium log:"; tail -20 "$dir/chromium.log"
fi
echo "$fail failed"
[ "$fail" -eq 0 ]
