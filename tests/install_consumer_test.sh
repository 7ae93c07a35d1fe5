#!/usr/bin/env bash
# The installed library as a program outside the project uses it: `cmake --install` into a fresh prefix, a tiny TFT
# trained by the command, then examples/consumer (C++17) built against the prefix twice, with pkg-config
# (PKG_CONFIG_PATH) and with CMake's find_package(tickgrad) (CMAKE_PREFIX_PATH), and run: each prints the forecast
# of the same bar as `tickgrad predict` does, which must be its numbers exactly. Also: the prefix holds what
# docs/EMBEDDING.md says it does, and the consumers load the prefix's libtickgrad.so (not the build folder's).
#
#   tests/install_consumer_test.sh BUILD_DIR TICKGRAD_BIN
set -u
build=$1
bin=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
for tool in g++ pkg-config cmake; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not found (apt-get install g++ pkg-config cmake)"; exit 77; }
done
tmp=$(mktemp -d)
[ -n "${TG_KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

p=$(cd "$tmp" && pwd -P)/prefix # physical: ldd prints the resolved path
cmake --install "$build" --prefix "$p" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
# the library folder: lib, or the multiarch one when the build was configured for the prefix /usr (GNUInstallDirs)
pc=$(find "$p" -name tickgrad.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: the prefix has no tickgrad.pc"; exit 1; }
ld=$(dirname "$(dirname "$pc")")
l=${ld#"$p"/}
for f in $l/libtickgrad.a $l/libtickgrad.so $l/pkgconfig/tickgrad.pc $l/cmake/tickgrad/tickgradConfig.cmake \
         $l/cmake/tickgrad/tickgradConfigVersion.cmake include/tickgrad/tickgrad.h include/tickgrad/predictor.h; do
  [ -e "$p/$f" ] && ok || bad "the prefix has no $f"
done
soname=$(readelf -d "$ld/libtickgrad.so" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ -n "$soname" ] && [ -e "$ld/$soname" ] && ok || bad "libtickgrad.so's soname '$soname' is not installed"
version=$("$bin" version | awk '{print $2; exit}')
[ "$(PKG_CONFIG_PATH=$ld/pkgconfig pkg-config --modversion tickgrad)" = "$version" ] && ok ||
  bad "pkg-config's version is not the command's ($version)"

# a tiny forecaster (as tests/cli_test.sh trains one) and the command's forecasts of every bar
"$bin" synth --bars 1500 --seed 5 --signal 0.4 --out "$tmp/t.csv" > /dev/null || { echo "FAIL: synth"; exit 1; }
"$bin" --threads 1 train --model tft --data "$tmp/t.csv" --epochs 1 --horizons 2 --hidden 8 --heads 2 --enc-len 8 \
  --out "$tmp/run" > "$tmp/train.log" 2>&1 || { tail "$tmp/train.log"; echo "FAIL: train"; exit 1; }
"$bin" predict --run "$tmp/run" --data "$tmp/t.csv" --out "$tmp/predict.csv" 2> /dev/null || { echo "FAIL: predict"; exit 1; }
bar=1200 # a bar inside the file: the consumer pushes bars 1..1200 and prints the last one's forecast
want_head=$(head -1 "$tmp/predict.csv" | cut -d, -f4-)
want_row=$(sed -n "$((bar + 1))p" "$tmp/predict.csv" | cut -d, -f4-)
[ -n "$want_row" ] && [ "${want_row#,}" = "$want_row" ] || { echo "FAIL: predict gave no forecast for bar $bar"; exit 1; }

# check NAME PROGRAM: runs it and compares
check() {
  local out
  if ! out=$("$2" "$tmp/run" "$tmp/t.csv" $bar 2> "$tmp/$1.err"); then bad "$1: the consumer failed: $(cat "$tmp/$1.err")"; return; fi
  if [ "$(echo "$out" | sed -n 1p)" = "$want_head" ] && [ "$(echo "$out" | sed -n 2p)" = "$want_row" ]; then ok; else
    bad "$1: the consumer's forecast of bar $bar differs from tickgrad predict's"
    printf '  consumer: %s\n  predict:  %s\n' "$(echo "$out" | tr '\n' ' ')" "$want_head $want_row"
  fi
  if ldd "$2" | grep -q "libtickgrad.so.* => $ld/"; then ok; else bad "$1 does not load $ld's libtickgrad.so: $(ldd "$2" | grep tickgrad)"; fi
  if ldd "$2" | grep -q "not found"; then bad "$1: a library not found: $(ldd "$2" | grep 'not found')"; else ok; fi
}

# pkg-config (examples/consumer/Makefile)
if PKG_CONFIG_PATH=$ld/pkgconfig make -s -C "$root/examples/consumer" OUT="$tmp/consumer_pc" > "$tmp/pc.log" 2>&1; then
  ok; check pkg-config "$tmp/consumer_pc"
else cat "$tmp/pc.log"; bad "the consumer did not build with pkg-config"; fi

# CMake find_package (examples/consumer/CMakeLists.txt)
if cmake -S "$root/examples/consumer" -B "$tmp/cbuild" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$p" > "$tmp/cm.log" 2>&1 &&
   cmake --build "$tmp/cbuild" >> "$tmp/cm.log" 2>&1; then
  ok; check find_package "$tmp/cbuild/consumer"
else cat "$tmp/cm.log"; bad "the consumer did not build with find_package(tickgrad)"; fi

echo "install_consumer: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
