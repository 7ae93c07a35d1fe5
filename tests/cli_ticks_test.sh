#!/usr/bin/env bash
# Bars made from ticks inside every command (--by RECIPE, --quotes): train, resume, predict and backtest --run make the
# same bars from the recipe in config.json as `tickgrad bars` writes; ticks without --by and --by on bars are refused.
#   tests/cli_ticks_test.sh TICKGRAD   (TG_SHARED_DATA: also a run on Lean's SPY tick zips, skipped without them)
set -u
bin=$1
. "$(dirname "$0")/cli_expect.sh"
same() { # same DESCRIPTION FILE1 FILE2
  if [ -s "$2" ] && cmp -s "$2" "$3"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: $2 and $3 differ"; fi
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# 60,000 trades 1.5 s apart (epoch milliseconds), a random walk in cent steps, sizes 1-20, a side on 80% of them;
# quotes every 3 s around the same walk
awk 'BEGIN { srand(7); p = 100; print "ts,price,size,side"
  for (i = 0; i < 60000; i++) { p += rand() < 0.5 ? -0.01 : 0.01; s = rand() < 0.5 ? "B" : "S"; if (rand() < 0.2) s = ""
    printf "%.0f,%.2f,%d,%s\n", 1704205800000 + i * 1500, p, int(rand() * 20) + 1, s } }' > "$dir/ticks.csv"
awk 'BEGIN { srand(3); p = 100; print "ts,bid,ask,bid_size,ask_size"
  for (i = 0; i < 30000; i++) { p += rand() < 0.5 ? -0.01 : 0.01; printf "%.0f,%.2f,%.2f,5,5\n", 1704205799000 + i * 3000, p - 0.01, p + 0.01 } }' > "$dir/quotes.csv"
tiny="--model mlp --hidden 8 --window 8 --horizons 2 --device cpu"

# the bars command's file: the reference the commands' own bars must equal
expect_out "wrote .*vb.csv: [0-9]* bars by volume:400" "bars by volume" -- "$bin" bars --data "$dir/ticks.csv" --by volume:400 --out "$dir/vb.csv"

# train: ticks need a recipe, bars refuse one, a bad recipe is a usage error
expect 1 "train on ticks without --by" -- "$bin" train $tiny --data "$dir/ticks.csv" --out "$dir/n1"
expect_out "ticks.csv holds trade ticks, not bars: give --by RECIPE" "train names --by for a tick file" -- "$bin" train $tiny --data "$dir/ticks.csv" --out "$dir/n1"
expect_out "quotes.csv holds quote ticks, not bars" "a quote file given as data is named" -- "$bin" train $tiny --data "$dir/quotes.csv" --out "$dir/n1"
expect 1 "train --by on bars" -- "$bin" train $tiny --data "$dir/vb.csv" --by volume:400 --out "$dir/n2"
expect_out "vb.csv holds bars ([0-9]* read as csv), not trade ticks" "train names a bar file given --by" -- "$bin" train $tiny --data "$dir/vb.csv" --by volume:400 --out "$dir/n2"
expect 2 "train --by with an unknown kind" -- "$bin" train $tiny --data "$dir/ticks.csv" --by renko:4 --out "$dir/n3"
expect_out "unknown kind 'renko'" "train names the bad recipe" -- "$bin" train $tiny --data "$dir/ticks.csv" --by renko:4 --out "$dir/n3"
expect 2 "backtest --by with a bad size" -- "$bin" backtest --data "$dir/ticks.csv" --by volume:0 --strategy buy-and-hold --out "$dir/n4"
expect_out "does not apply to ticks" "--columns with --by is refused" -- "$bin" backtest --data "$dir/ticks.csv" --by tick:50 --columns ts=ts --strategy buy-and-hold --out "$dir/n5"
expect_out "given without a bar recipe" "--quotes without --by is refused" -- "$bin" backtest --data "$dir/ticks.csv" --quotes "$dir/quotes.csv" --strategy buy-and-hold --out "$dir/n6"

# train on ticks --by, and on the bars command's file: the same bars, so the same weights
expect 0 "train on ticks --by" -- "$bin" --threads 1 train $tiny --data "$dir/ticks.csv" --by volume:400 --epochs 2 --out "$dir/tt"
expect 0 "train on the bars file" -- "$bin" --threads 1 train $tiny --data "$dir/vb.csv" --epochs 2 --out "$dir/tb"
same "weights from ticks --by and from the bars file" "$dir/tt/weights.safetensors" "$dir/tb/weights.safetensors"
# the same bars written as Parquet (chosen by the extension) train to the same weights
expect_out "wrote .*vb.parquet: [0-9]* bars by volume:400" "bars as Parquet" -- "$bin" bars --data "$dir/ticks.csv" --by volume:400 --out "$dir/vb.parquet"
expect_out "format      parquet" "the Parquet file reads as Parquet" -- "$bin" inspect "$dir/vb.parquet"
expect 0 "train on the Parquet bars" -- "$bin" --threads 1 train $tiny --data "$dir/vb.parquet" --epochs 2 --out "$dir/tq"
same "weights from the Parquet and the CSV bars" "$dir/tq/weights.safetensors" "$dir/tb/weights.safetensors"
if grep -q '"bar_recipe": "volume:400"' "$dir/tt/config.json"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: config.json does not keep the recipe"; fi
# --resume rebuilds the bars from config.json's recipe and ends bitwise as the uninterrupted run
expect 0 "train on ticks, stopped after an epoch" -- "$bin" --threads 1 train $tiny --data "$dir/ticks.csv" --by volume:400 --epochs 2 --out "$dir/tr" --stop-after 1
expect 2 "resume with another recipe" -- "$bin" train --resume "$dir/tr" --by volume:500
expect 0 "resume on ticks" -- "$bin" --threads 1 train --resume "$dir/tr"
same "resumed tick run and the uninterrupted one" "$dir/tt/weights.safetensors" "$dir/tr/weights.safetensors"
# predict and backtest --run read the ticks by the run's recipe
expect 0 "predict a tick run" -- "$bin" predict --run "$dir/tt" --data "$dir/ticks.csv" --out "$dir/pt.csv"
expect 0 "predict the bars run" -- "$bin" predict --run "$dir/tb" --data "$dir/vb.csv" --out "$dir/pb.csv"
same "predictions from ticks and from bars" "$dir/pt.csv" "$dir/pb.csv"
expect 1 "predict a tick run on its ticks with the recipe taken out" -- "$bin" predict --run "$dir/tt" --data "$dir/ticks.csv" --by "" --out "$dir/pn.csv"
expect 0 "backtest --run of a tick run" -- "$bin" backtest --run "$dir/tt" --rule median --out "$dir/bt"
expect 0 "backtest --run of the bars run" -- "$bin" backtest --run "$dir/tb" --rule median --out "$dir/bb"
same "backtests from ticks and from bars" "$dir/bt/equity.csv" "$dir/bb/equity.csv"

# walkforward and sweep train each run on ticks by the recipe; a policy keeps it in env.json for its backtest
expect_out "wrote .*walkforward.csv" "walkforward on ticks --by" -- "$bin" --threads 1 walkforward --folds 1 $tiny --data "$dir/ticks.csv" --by volume:400 --epochs 1 --out "$dir/wf"
expect_out '"bar_recipe": "volume:400"' "a fold's config.json keeps the recipe" -- cat "$dir/wf/fold-01/config.json"
expect_out "wrote .*sweep.csv" "sweep on ticks --by" -- "$bin" --threads 1 sweep --grid lr=0.001,0.002 $tiny --data "$dir/ticks.csv" --by volume:400 --epochs 1 --out "$dir/sw"
expect 0 "dqn on ticks --by" -- "$bin" --threads 1 train --model dqn --env trading --data "$dir/ticks.csv" --by volume:400 --window 8 --episode-len 64 --total-timesteps 2000 --learning-starts 200 --out "$dir/rd"
expect_out '"bar_recipe": "volume:400"' "env.json keeps the recipe" -- cat "$dir/rd/env.json"
expect 0 "backtest --run of the dqn tick run" -- "$bin" backtest --run "$dir/rd" --out "$dir/rdb"
# quotes: merged into the bars of every command as into the bars command's
expect 0 "bars with quotes" -- "$bin" bars --data "$dir/ticks.csv" --quotes "$dir/quotes.csv" --by time:5m --out "$dir/q.csv"
expect 0 "backtest on the bars file with quotes" -- "$bin" backtest --data "$dir/q.csv" --strategy sma-cross:5,20 --out "$dir/qb"
expect 0 "backtest on ticks --by --quotes" -- "$bin" backtest --data "$dir/ticks.csv" --by time:5m --quotes "$dir/quotes.csv" --strategy sma-cross:5,20 --out "$dir/qt"
same "backtests with quotes from ticks and from bars" "$dir/qt/equity.csv" "$dir/qb/equity.csv"
expect_out "spread_mean" "inspect lists the quote columns" -- "$bin" inspect --by time:5m --quotes "$dir/quotes.csv" "$dir/ticks.csv"
expect_out "several tick paths and one quotes file\|2 tick paths and one quotes file" "one quotes file for two tick paths is refused" -- "$bin" backtest --data "$dir/ticks.csv" "$dir/ticks.csv" --by time:5m --quotes "$dir/quotes.csv" --strategy buy-and-hold --out "$dir/q2"

# real ticks: Lean's SPY trade zips (5 days), 1-minute bars trained on, resumed, predicted and backtested
shared=${TG_SHARED_DATA:-}
spy=$shared/lean/tick/equity/spy
if [ -n "$shared" ] && [ -d "$spy" ] && ! "$bin" bars --data "$spy/20131007_trade.zip" --by time:1m --out "$dir/l.csv" 2>&1 | grep -q "without libzip"; then
  expect 0 "bars from SPY ticks" -- "$bin" bars --data "$spy/" --by time:1m --out "$dir/spy.csv"
  expect 0 "train on SPY ticks --by time:1m" -- "$bin" --threads 1 train $tiny --data "$spy/" --by time:1m --epochs 2 --out "$dir/st" --stop-after 1
  expect 0 "resume the SPY run" -- "$bin" --threads 1 train --resume "$dir/st"
  expect 0 "train on the SPY bars file" -- "$bin" --threads 1 train $tiny --data "$dir/spy.csv" --epochs 2 --out "$dir/sb"
  same "SPY weights from ticks (resumed) and from the bars file" "$dir/st/weights.safetensors" "$dir/sb/weights.safetensors"
  expect_out '"bars": 4128,' "the SPY run read 4128 minutes" -- cat "$dir/st/data.json"
  expect 0 "predict the SPY run on its ticks" -- "$bin" predict --run "$dir/st" --data "$spy/" --out "$dir/sp.csv"
  if [ "$(wc -l < "$dir/sp.csv")" -eq 4129 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: SPY predictions: not a row per minute"; fi
  expect 0 "backtest --run of the SPY run" -- "$bin" backtest --run "$dir/st" --rule median --out "$dir/sbt"
  expect 0 "backtest --run of the SPY bars run" -- "$bin" backtest --run "$dir/sb" --rule median --out "$dir/sbb"
  same "SPY backtests from ticks and from bars" "$dir/sbt/equity.csv" "$dir/sbb/equity.csv"
else
  echo "skipped the Lean SPY tick run: TG_SHARED_DATA has no lean/tick/equity/spy (or the build has no libzip)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
