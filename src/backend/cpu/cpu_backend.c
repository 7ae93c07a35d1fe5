/* The CPU backend table: host memory (64-byte aligned), fills, copies, bf16 rounding, the kernel lookup, optimizer
 * kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#include "graph/backend.h"
#include "backend/cpu/cpu_bf16_pack.h"
#include "backend/cpu/cpu_gemm_plan.h"
#include "backend/cpu/cpu_gemm_prim.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_optim.h"
#include "tickgrad/device.h"

static tg_status cpu_alloc(tg_device d, size_t bytes, void **out) {
  size_t rounded = (bytes + 63) & ~(size_t)63;
  void *p = NULL;
  tg_alloc_note();
  if (posix_memalign(&p, 64, rounded ? rounded : 64) != 0) {
    char dev[16];
    return tg_error(TG_ERR_NOMEM, "%s: cannot allocate %zu bytes of host memory",
                    tg_device_str(d, dev, sizeof dev), bytes);
  }
  *out = p;
  return TG_OK;
}

static void cpu_free(tg_device d, void *p) {
  (void)d;
  free(p);
}

static tg_status cpu_fill_f32(tg_device d, float *p, size_t n, float value) {
  (void)d;
  if (value == 0.0f && !signbit(value)) memset(p, 0, n * sizeof *p); /* +0.0f is all zero bits */
  else
    for (size_t i = 0; i < n; i++) p[i] = value;
  return TG_OK;
}

static tg_status cpu_fill_bytes(tg_device d, void *p, size_t bytes, unsigned char value) {
  (void)d;
  memset(p, value, bytes);
  return TG_OK;
}

static tg_status cpu_copy(tg_device d, void *dst, const void *src, size_t bytes) {
  (void)d;
  if (bytes) memmove(dst, src, bytes);
  return TG_OK;
}

static tg_status cpu_round_bf16(tg_device d, uint16_t *dst, const float *src, size_t n) {
  (void)d;
  tg_cpu_bf16_pack_par(dst, src, n);
  return TG_OK;
}

static tg_status cpu_advance_counter(tg_device d, uint64_t *c) {
  (void)d;
  c[1] = c[0]++;
  return TG_OK;
}

/* Native bf16 GEMMs: oneDNN's brgemm on AMX-BF16 or AVX512-BF16 (cpu_gemm_plan.c takes packed bf16 only then). */
static int cpu_bf16_native(int dev, char *why, size_t why_size) {
  (void)dev;
  if (tg_gemm_prim_has_bf16()) return 1;
  const char *lib = tg_gemm_prim_library();
  if (!*lib)
    snprintf(why, why_size, "this build has no oneDNN, so bf16 GEMMs round their operands to bf16 and run in f32");
  else
    snprintf(why, why_size, "%s has no native bf16 GEMM on this CPU (that needs AMX-BF16 or AVX512-BF16), so bf16 "
             "GEMMs round their operands to bf16 and run in f32", lib);
  return 0;
}

/* 1 on an AMD CPU of family 19h: Zen 3 and Zen 4; with AVX512-BF16, Zen 4, whose AVX-512 runs on 256-bit units. */
static int cpu_amd_family_19h(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned a, b, c, d;
  /* vendor "AuthenticAMD" in ebx, edx, ecx */
  if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541u || d != 0x69746e65u || c != 0x444d4163u) return 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  unsigned family = (a >> 8) & 0xfu;
  if (family == 0xfu) family += (a >> 20) & 0xffu;
  return family == 0x19u;
#else
  return 0;
#endif
}

/* The narrowest model width precision auto trains in bf16, from the training table of each CPU kind (BENCHMARKS.md):
 * 64 where oneDNN's bf16 runs on AMX (the 64-wide TFT and transformer steps 1.10-1.25x faster in bf16) or on AMD Zen 4
 * (whose AVX-512 FMAs run as two 256-bit halves while a bf16 dot product does twice their multiply-adds: 1.28-1.36x);
 * TG_BF16_AUTO_MIN_WIDTH elsewhere (an AMD EPYC with full-width AVX-512 ran those steps 0.87-0.90x in bf16 on
 * 2026-12-05). */
static int cpu_bf16_auto_min_width(int dev) {
  (void)dev;
  return tg_gemm_prim_has_amx() || cpu_amd_family_19h() ? 64 : TG_BF16_AUTO_MIN_WIDTH;
}

static int cpu_device_count(void) { return 1; }
static const char *cpu_unavailable_reason(void) { return ""; }
static tg_status cpu_use_or_sync(int dev) {
  (void)dev;
  return TG_OK;
}

/* Host memory: no streams, fences, capture, staging kernel or collectives (the entries stay NULL). cpu:N for any N is
 * the same host memory under another name, so the device checks can be tested without a GPU. */
const tg_backend tg_cpu_backend = {
    .name = "cpu",
    .kind = TG_CPU,
    .host_memory = 1,
    .device_count = cpu_device_count,
    .unavailable_reason = cpu_unavailable_reason,
    .use = cpu_use_or_sync,
    .sync = cpu_use_or_sync,
    .bf16_native = cpu_bf16_native,
    .bf16_auto_min_width = cpu_bf16_auto_min_width,
    .kernels = tg_cpu_op_kernels,
    .bwd_fresh = tg_cpu_bwd_fresh,
    .prepare = tg_cpu_prepare,
    .unprepare = tg_cpu_unprepare,
    .prepared_bytes = tg_cpu_prepared_bytes,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .fill_f32 = cpu_fill_f32,
    .fill_bytes = cpu_fill_bytes,
    .to_host = cpu_copy,
    .from_host = cpu_copy,
    .copy = cpu_copy,
    .round_bf16 = cpu_round_bf16,
    .sum_squares = tg_cpu_sum_squares,
    .optim_update = tg_cpu_optim_update,
    .advance_counter = cpu_advance_counter,
};
