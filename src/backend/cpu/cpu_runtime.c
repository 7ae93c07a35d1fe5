/* The CPU thread count of the OpenMP loops (OpenBLAS itself runs single-threaded), and what the host CPU offers. */
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>
#include "backend/cpu/cpu_gemm_plan.h"
#include "tickgrad/device.h"

tg_status tg_set_threads(int n) {
  if (n < 1 || n > 4096) return tg_error(TG_ERR_INVALID, "threads: %d is not in [1, 4096]", n);
  omp_set_num_threads(n);
  /* One thread pool: OpenBLAS stays single-threaded and the CPU backend splits large GEMMs across
   * the OpenMP threads (tg_cpu_gemm). Two pools that both spin while waiting fight over the cores. */
  openblas_set_num_threads(1);
  return TG_OK;
}

int tg_threads(void) { return omp_get_max_threads(); }

static const char *simd_level(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "AVX-512";
  if (__builtin_cpu_supports("avx2")) return "AVX2";
  if (__builtin_cpu_supports("avx")) return "AVX";
  if (__builtin_cpu_supports("sse4.2")) return "SSE4.2";
  return "SSE2";
#elif defined(__aarch64__)
  return "NEON";
#else
  return "none detected";
#endif
}

const char *tg_blas_fallback_core(void) {
#if defined(__x86_64__) || defined(__i386__)
  const char *core = openblas_get_corename();
  if (!core || strcasecmp(core, "Prescott")) return NULL;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return NULL;
}

void tg_blas_fix_core(char **argv) {
  const char *want = tg_blas_fallback_core();
  if (!want || getenv("OPENBLAS_CORETYPE")) return; /* a set variable is the user's choice, and ends a re-run */
  if (setenv("OPENBLAS_CORETYPE", want, 1) == 0) execv("/proc/self/exe", argv);
  fprintf(stderr, "tickgrad: OpenBLAS fell back to its Prescott kernels on this CPU and re-running with "
                  "OPENBLAS_CORETYPE=%s failed; small products run slower (start with that variable set)\n", want);
}

void tg_cpu_info_get(tg_cpu_info *out) {
  out->cores = sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(out->simd, sizeof out->simd, "%s", simd_level());
  snprintf(out->blas, sizeof out->blas, "%s", openblas_get_config());
  out->blas_threads = openblas_get_num_threads();
  tg_cpu_gemm_policy(out->gemm, sizeof out->gemm);
  out->threads = tg_threads();
}
