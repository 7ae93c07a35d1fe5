#!/bin/sh
# OpenBLAS's kernels match the CPU: on a CPU with AVX2 or AVX-512, `tickgrad devices` (OPENBLAS_CORETYPE unset)
# never reports OpenBLAS's Prescott fallback, which it takes for CPU models it does not know; a set variable wins.
set -eu
bin=$1
out=$(env -u OPENBLAS_CORETYPE "$bin" devices)
simd=$(printf '%s\n' "$out" | awk '$1 == "simd" {print $2; exit}')
blas=$(printf '%s\n' "$out" | awk '$1 == "blas" {print; exit}')
echo "simd $simd; $blas"
case "$simd" in
  AVX-512|AVX2)
    case "$blas" in
      *Prescott*) echo "FAIL: OpenBLAS runs its Prescott kernels on an $simd CPU"; exit 1 ;;
    esac ;;
  *) echo "this CPU has neither AVX2 nor AVX-512: nothing to check beyond the run" ;;
esac
# The user's choice is kept (and no re-run loops): Prescott forced stays Prescott, with the note naming the fix.
forced=$(OPENBLAS_CORETYPE=Prescott "$bin" devices)
printf '%s\n' "$forced" | grep -q 'blas .*Prescott' || { echo "FAIL: OPENBLAS_CORETYPE=Prescott was not kept"; exit 1; }
case "$simd" in
  AVX-512|AVX2)
    printf '%s\n' "$forced" | grep -q 'blas note .*OPENBLAS_CORETYPE=' ||
      { echo "FAIL: no note naming OPENBLAS_CORETYPE under the Prescott kernels"; exit 1; } ;;
esac
echo "ok"
