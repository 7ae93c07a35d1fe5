/* `tickgrad devices` and `tickgrad ops`: what this build can run on, and which kernels it has. */
#include <cblas.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "tickgrad/tickgrad.h"

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

int tg_cmd_devices(int argc, char **argv) {
  if (argc > 0) {
    if (strcmp(argv[0], "--help") == 0) {
      printf("usage: tickgrad devices\nLists the CPU (cores, SIMD, BLAS, threads) and GPUs this build can use.\n");
      return TG_EXIT_OK;
    }
    return tg_cli_usage_error("devices", "unexpected argument '%s'", argv[0]);
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  printf("cpu:0\n");
  printf("  cores      %ld online\n", cores);
  printf("  simd       %s\n", simd_level());
  printf("  blas       %s, %d threads\n", openblas_get_config(), openblas_get_num_threads());
  printf("  threads    %d (OpenMP loops)\n", tg_threads());
  if (tg_backend_compiled(TG_CUDA)) {
    printf("cuda: backend compiled\n");
  } else {
    printf("cuda: backend not compiled into this build%s\n",
           TG_NVCC_FOUND ? " (nvcc was found at build time; the CUDA kernels arrive in a later version)"
                         : " (nvcc was not found at build time)");
  }
  return TG_EXIT_OK;
}

int tg_cmd_ops(int argc, char **argv) {
  if (argc > 0) {
    if (strcmp(argv[0], "--help") == 0) {
      printf("usage: tickgrad ops\nLists every op with its forward/backward kernels per backend.\n");
      return TG_EXIT_OK;
    }
    return tg_cli_usage_error("ops", "unexpected argument '%s'", argv[0]);
  }
  printf("%-24s %-10s %-10s\n", "op", "cpu", "cuda");
  for (int op = 0; op < tg_op_count(); op++) {
    if (tg_op_is_leaf(op)) continue;
    const char *k[2];
    for (int b = 0; b < 2; b++) {
      tg_device_kind kind = b ? TG_CUDA : TG_CPU;
      if (!tg_op_has_forward(op, kind)) k[b] = "-";
      else if (!tg_op_differentiable(op)) k[b] = "fwd";
      else k[b] = tg_op_has_backward(op, kind) ? "fwd+bwd" : "fwd only";
    }
    printf("%-24s %-10s %-10s\n", tg_op_name(op), k[0], k[1]);
  }
  return TG_EXIT_OK;
}
