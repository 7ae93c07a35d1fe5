/* `tickgrad devices` and `tickgrad ops`: what this build can run on, and which kernels it has. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "tickgrad/tickgrad.h"

static void print_mib(const char *label, uint64_t bytes) { printf("  %-10s %.0f MiB\n", label, (double)bytes / 1048576.0); }

/* Each GPU's description and self-test; exit 0 when none is present (that is not a failure) or all
 * pass, 1 when a present GPU fails. */
static int print_cuda_devices(void) {
  if (!tg_backend_compiled(TG_CUDA)) {
    printf("cuda: %s\n", tg_cuda_why_none());
    return TG_EXIT_OK;
  }
  int n = tg_cuda_count();
  if (n == 0) {
    printf("cuda: backend compiled (sm_90 + PTX); no usable GPU: %s\n", tg_cuda_why_none());
    return TG_EXIT_OK;
  }
  int failed = 0;
  for (int i = 0; i < n; i++) {
    tg_device_info info;
    printf("cuda:%d\n", i);
    if (tg_device_info_get(tg_cuda(i), &info) != TG_OK) {
      printf("  error      %s\n", tg_last_error());
      failed = 1;
      continue;
    }
    printf("  name       %s (PCI %s)\n", info.name, info.pci_bus_id);
    print_mib("memory", info.total_bytes);
    print_mib("free", info.free_bytes);
    printf("  compute    %d.%d, %d SMs\n", info.cc_major, info.cc_minor, info.sm_count);
    printf("  versions   driver %d.%d, runtime %d.%d\n", info.driver_version / 1000, info.driver_version % 1000 / 10,
           info.runtime_version / 1000, info.runtime_version % 1000 / 10);
    char report[512];
    tg_status st = tg_device_self_test(tg_cuda(i), report, sizeof report);
    printf("  self-test  %s: %s\n", st == TG_OK ? "PASS" : "FAIL", st == TG_OK ? report : tg_last_error());
    if (st != TG_OK) failed = 1;
  }
  return failed ? TG_EXIT_FAIL : TG_EXIT_OK;
}

int tg_cmd_devices(int argc, char **argv) {
  if (argc > 0) {
    if (strcmp(argv[0], "--help") == 0) {
      printf("usage: tickgrad devices\nLists the CPU (cores, SIMD, BLAS, threads) and the CUDA and Vulkan devices this build "
             "can use.\n");
      return TG_EXIT_OK;
    }
    return tg_cli_usage_error("devices", "unexpected argument '%s'", argv[0]);
  }
  tg_cpu_info cpu;
  tg_cpu_info_get(&cpu);
  printf("cpu:0\n");
  printf("  cores      %ld online\n", cpu.cores);
  printf("  simd       %s\n", cpu.simd);
  printf("  blas       %s, %d threads\n", cpu.blas, cpu.blas_threads);
  const char *blas_core = tg_blas_fallback_core();
  if (blas_core)
    printf("  blas note  OpenBLAS fell back to its Prescott kernels on this CPU: start with OPENBLAS_CORETYPE=%s\n",
           blas_core);
  printf("  gemm       %s\n", cpu.gemm);
  char why[256];
  tg_device host = {TG_CPU, 0};
  if (tg_device_bf16_native(host, why, sizeof why))
    printf("  bf16       native; precision auto trains models of width %d and more in bf16\n",
           tg_device_bf16_auto_min_width(host));
  else
    printf("  bf16       not native: %s; precision auto trains in fp32\n", why);
  printf("  threads    %d (OpenMP loops)\n", cpu.threads);
  int rc = print_cuda_devices();
  static char listing[16384];
  for (int b = 0; b < tg_backend_count(); b++)
    if (tg_backend_describe(b, listing, sizeof listing)) fputs(listing, stdout);
  if (!tg_backend_compiled(TG_VULKAN))
    printf("vulkan: backend not compiled into this build (vulkan/vulkan.h or glslc was missing when it was built, or "
           "TG_VULKAN=OFF): apt-get install libvulkan-dev glslc, then build again\n");
  return rc;
}

int tg_cmd_ops(int argc, char **argv) {
  if (argc > 0) {
    if (strcmp(argv[0], "--help") == 0) {
      printf("usage: tickgrad ops\nLists every op with its forward/backward kernels per compiled backend and compute dtype.\n");
      return TG_EXIT_OK;
    }
    return tg_cli_usage_error("ops", "unexpected argument '%s'", argv[0]);
  }
  /* a column per compiled backend and compute dtype that has any kernel */
  int kinds[16], dts[16], cols = 0;
  for (int b = 0; b < tg_backend_count(); b++)
    for (int dt = 0; dt < TG_DTYPE_COUNT && cols < 16; dt++) {
      int any = 0;
      for (int op = 0; op < tg_op_count() && !any; op++) any = tg_op_has_kernel(op, tg_backend_kind(b), (tg_dtype)dt, 0);
      if (any) kinds[cols] = b, dts[cols++] = dt;
    }
  printf("%-24s", "op");
  for (int c = 0; c < cols; c++) {
    char head[32];
    snprintf(head, sizeof head, "%s %s", tg_backend_name(kinds[c]), tg_dtype_name((tg_dtype)dts[c]));
    printf(" %-10s", head);
  }
  printf("\n");
  for (int op = 0; op < tg_op_count(); op++) {
    if (tg_op_is_leaf(op)) continue;
    printf("%-24s", tg_op_name(op));
    for (int c = 0; c < cols; c++) {
      tg_device_kind kind = tg_backend_kind(kinds[c]);
      const char *k;
      if (!tg_op_has_kernel(op, kind, (tg_dtype)dts[c], 0)) k = "-";
      else if (!tg_op_differentiable(op)) k = "fwd";
      else k = tg_op_has_kernel(op, kind, (tg_dtype)dts[c], 1) ? "fwd+bwd" : "fwd only";
      printf(" %-10s", k);
    }
    printf("\n");
  }
  return TG_EXIT_OK;
}
