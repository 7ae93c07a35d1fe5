#!/usr/bin/env bash
# Runs one test program with oneDNN and OpenBLAS held to a lower CPU kind (avx2, or avx512 without bf16), so the
# paths another kind of CPU takes run here.
# Usage: isa_run.sh avx2|avx512 PROGRAM [ARGS...]. Exits 77 (skip) when this CPU lacks the kind asked for.
set -u
kind=$1
shift
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
case "$kind" in
  avx2) need=avx2 onednn=AVX2 openblas=Haswell ;;
  avx512) need=avx512f onednn=AVX512_CORE openblas=SkylakeX ;;
  *) echo "isa_run.sh: unknown CPU kind '$kind' (avx2 or avx512)" >&2; exit 2 ;;
esac
if ! grep -qw "$need" <<<"$flags"; then
  echo "skipped: this CPU has no $need, so the $kind paths cannot run here"
  exit 77
fi
export ONEDNN_MAX_CPU_ISA=$onednn OPENBLAS_CORETYPE=$openblas
echo "isa_run: ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
exec "$@"
