#!/usr/bin/env bash
# The names the public headers declare for linking: each function declared (not defined: a static inline function
# is not exported) and each extern variable in include/tickgrad/*.h, one per line, sorted. With --version-script, a GNU
# ld version script instead that makes them the shared library's only global symbols (everything else, the library's
# internal tg_* functions included, local).
#
#   tools/public-symbols.sh [--cc CC] [--version-script] [-o FILE] [INCLUDE_DIR]   (INCLUDE_DIR: default include/)
#
# -o FILE writes FILE whole or not at all (the build's version script) instead of standard output.
#
# The headers go through the C preprocessor first (CC -E, default cc), so comments, #if blocks (tg_error's format
# attribute) and macros are settled as a C compiler settles them; only the lines that come from INCLUDE_DIR/tickgrad/
# are read (the line markers say which file each line came from), and every declaration is read whole whatever its
# line breaks: a statement at file scope that ends in ';' is a declaration, skipped when it is a typedef or static;
# one with '(' declares the function whose name stands before its first '(' (after any __attribute__), one with
# extern and no '(' the variable named last (before any '['). A '{' at file scope opens a body that is skipped: a
# function's (static inline), a struct's or an enum's (the statement goes on to its ';').
set -euo pipefail
cc=cc
mode=list
inc=
out=
while [ $# -gt 0 ]; do
  case $1 in
    --cc) cc=$2; shift 2 ;;
    --version-script) mode=script; shift ;;
    -o) out=$2; shift 2 ;;
    -*) echo "public-symbols: unknown flag $1" >&2; exit 2 ;;
    *) inc=$1; shift ;;
  esac
done
[ -n "$inc" ] || inc="$(dirname "$0")/../include"
inc=$(cd "$inc" && pwd)
headers=("$inc"/tickgrad/*.h)
[ -e "${headers[0]}" ] || { echo "public-symbols: no headers in $inc/tickgrad" >&2; exit 1; }

src=$(printf '#include "%s"\n' "${headers[@]}")
names=$(printf '%s\n' "$src" | "$cc" -E -x c -std=c11 -D_POSIX_C_SOURCE=200809L -I"$inc" - |
  awk -v dir="$inc/tickgrad/" '
    /^# [0-9]+ "/ { file = $3; gsub(/"/, "", file); keep = index(file, dir) == 1; next }
    /^#/ { next }
    keep { text = text " " $0 }
    END {
      depth = 0; stmt = ""
      n = length(text)
      for (i = 1; i <= n; i++) {
        c = substr(text, i, 1)
        if (depth > 0) {
          if (c == "{") depth++
          else if (c == "}") depth--
          continue
        }
        if (c == "{") {
          # a function body (static inline) ends the statement; a struct/enum/initializer body is skipped inside it
          if (stmt ~ /\)[ \t]*$/ && stmt !~ /=/) stmt = ""
          else stmt = stmt " {} "
          depth = 1
          continue
        }
        if (c == ";") { declare(stmt); stmt = ""; continue }
        stmt = stmt c
      }
    }
    function declare(s,   t, name, m) {
      t = s
      gsub(/[ \t]+/, " ", t); sub(/^ /, "", t)
      if (t == "" || t ~ /^(typedef|static)[ (]/ || t ~ /^(struct|union|enum) [A-Za-z_0-9]* ?\{\} ?$/) return
      if (t ~ /^(struct|union|enum) [A-Za-z_0-9]*$/) return        # a forward declaration
      while (match(t, /__attribute__ ?\(\(/)) {                     # drop attributes, whatever they hold
        rest = substr(t, RSTART + RLENGTH); d = 2
        for (k = 1; k <= length(rest) && d > 0; k++) {
          ch = substr(rest, k, 1)
          if (ch == "(") d++
          else if (ch == ")") d--
        }
        t = substr(t, 1, RSTART - 1) substr(rest, k)
      }
      if (index(t, "(")) {
        m = substr(t, index(t, "(") + 1)
        if (match(m, /^ ?\* ?[A-Za-z_][A-Za-z_0-9]*/)) {            # a pointer declarator: (*name ...
          name = substr(m, RSTART, RLENGTH); sub(/^ ?\* ?/, "", name)
          print name
          return
        }
        m = substr(t, 1, index(t, "(") - 1)
        if (!match(m, /[A-Za-z_][A-Za-z_0-9]* ?$/)) { print "public-symbols: cannot read: " t > "/dev/stderr"; bad = 1; exit 1 }
        name = substr(m, RSTART, RLENGTH); sub(/ $/, "", name)
        print name
      } else if (t ~ /^extern /) {
        sub(/ ?(\[[^]]*\] ?)*$/, "", t)
        if (!match(t, /[A-Za-z_][A-Za-z_0-9]*$/)) { print "public-symbols: cannot read: " t > "/dev/stderr"; exit 1 }
        print substr(t, RSTART, RLENGTH)
      } else {
        print "public-symbols: not a declaration this script knows: " t > "/dev/stderr"; exit 1
      }
    }' | sort -u)
[ -n "$names" ] || { echo "public-symbols: no declarations found in $inc/tickgrad" >&2; exit 1; }
emit() {
  if [ $mode = list ]; then
    printf '%s\n' "$names"
  else
    echo "/* Written by tools/public-symbols.sh from include/tickgrad/*.h: the shared library's exported symbols. */"
    echo "{"
    echo "  global:"
    printf '    %s;\n' $names
    echo "  local:"
    echo "    *;"
    echo "};"
  fi
}
if [ -n "$out" ]; then
  emit > "$out.tmp"
  mv "$out.tmp" "$out"
else
  emit
fi
