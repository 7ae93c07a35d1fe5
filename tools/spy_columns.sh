#!/usr/bin/env bash
# Derives a CSV with a header and a desk's extra columns from a Lean hourly equity file (used by docs/INPUTS.md).
# Usage: tools/spy_columns.sh [IN] [OUT]   (defaults: ../shared/data/lean/equity/usa/hour/spy.csv, spy_columns.csv)
# Lean hour files have no header: "YYYYMMDD HH:MM,open,high,low,close,volume", New York time, prices x 10000.
# Columns added, each computed from bars up to and including its own (nothing looks ahead):
#   relvol       volume / mean volume of the 20 bars before it (observed: col:relvol)
#   bar_of_day   0 for a day's first bar, 1 for its second, ... (known in advance: known:bar_of_day)
#   session      open / mid / close: the day's first bar, a middle one, or a bar at 15:00 or later (cat:session)
set -euo pipefail
in=${1:-../shared/data/lean/equity/usa/hour/spy.csv}
out=${2:-spy_columns.csv}
[ -r "$in" ] || { echo "spy_columns: cannot read $in" >&2; exit 1; }
awk -F, 'BEGIN { OFS = ","; print "ts,open,high,low,close,volume,relvol,bar_of_day,session" }
  {
    if (NF != 6) { printf "spy_columns: line %d has %d fields, want 6\n", NR, NF > "/dev/stderr"; exit 1 }
    day = substr($1, 1, 8); hm = substr($1, 10, 5)
    k = (day == last_day) ? k + 1 : 0; last_day = day
    rel = (n >= 20 && sum > 0) ? sprintf("%.4f", $6 / (sum / 20)) : ""
    sess = (k == 0) ? "open" : (hm >= "15:00") ? "close" : "mid"
    ts = substr(day, 1, 4) "-" substr(day, 5, 2) "-" substr(day, 7, 2) " " hm
    print ts, $2 / 10000, $3 / 10000, $4 / 10000, $5 / 10000, $6, rel, k, sess
    vol[n % 20] = $6; n++; sum = 0; for (i = 0; i < 20 && i < n; i++) sum += vol[i]
  }' "$in" > "$out.tmp"
mv "$out.tmp" "$out"
echo "spy_columns: wrote $out ($(($(wc -l < "$out") - 1)) bars)"
