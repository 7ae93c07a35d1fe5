#!/usr/bin/env bash
# libtickgrad.so exports exactly the public API: every symbol `nm -D --defined-only` lists is a function or variable
# declared in include/tickgrad/*.h (tools/public-symbols.sh reads them), and every one declared there is exported.
# Then the check itself is shown to fail: on the same library against the headers' list with one name taken out
# (a symbol exported but not public) and with one name added (a public function the library does not export).
#
#   tests/exported_symbols_test.sh LIBTICKGRAD_SO [CC]
set -u
lib=$1
cc=${2:-cc}
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v nm >/dev/null || { echo "SKIP: nm (binutils) not found"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: no library at $lib"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The dynamic symbols the library defines, whatever their kind (T text, D/B/R data, W/V weak, i indirect); the
# version script makes everything else local, the linker's own markers included.
nm -D --defined-only "$lib" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u > "$tmp/exported" ||
  { echo "FAIL: nm -D $lib"; exit 1; }
"$root/tools/public-symbols.sh" --cc "$cc" "$root/include" > "$tmp/public" || { echo "FAIL: tools/public-symbols.sh"; exit 1; }

# check PUBLIC_LIST: prints each difference; fails on any
check() {
  local extra missing
  extra=$(comm -23 "$tmp/exported" "$1")
  missing=$(comm -13 "$tmp/exported" "$1")
  [ -z "$extra" ] && [ -z "$missing" ] && return 0
  [ -n "$extra" ] && printf 'exported but not declared in include/tickgrad/*.h: %s\n' $extra
  [ -n "$missing" ] && printf 'declared in include/tickgrad/*.h but not exported: %s\n' $missing
  return 1
}

fail=0
if check "$tmp/public" > "$tmp/out"; then
  echo "ok: $(wc -l < "$tmp/exported") symbols exported, each declared in the public headers, none missing"
else
  cat "$tmp/out"; echo "FAIL: $lib's exports differ from the public headers'"; fail=1
fi
[ "$(wc -l < "$tmp/exported")" -gt 100 ] || { echo "FAIL: only $(wc -l < "$tmp/exported") exports: the wrong library?"; fail=1; }

# the check catches both kinds of difference
planted=$(sed -n 1p "$tmp/public")
grep -vx "$planted" "$tmp/public" > "$tmp/public_less"
if check "$tmp/public_less" | grep -qx "exported but not declared in include/tickgrad/\*.h: $planted"; then
  echo "ok: the check fails on $planted exported but not declared"
else
  echo "FAIL: the check missed $planted exported but not declared"; fail=1
fi
{ cat "$tmp/public"; echo tg_planted_not_defined; } | sort > "$tmp/public_more"
if check "$tmp/public_more" | grep -qx "declared in include/tickgrad/\*.h but not exported: tg_planted_not_defined"; then
  echo "ok: the check fails on a declared function the library does not export"
else
  echo "FAIL: the check missed a declared function not exported"; fail=1
fi
exit $fail
