/* Devices: choosing one (auto, cpu, cuda, cuda:N), what each is, its memory statistics, synchronising. */
#ifndef TICKGRAD_DEVICE_H
#define TICKGRAD_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/graph.h"
#include "tickgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA devices usable now: 0 when the backend is not compiled, or there is no driver or GPU. */
int tg_cuda_count(void);
/* One line saying why tg_cuda_count() is 0 ("" when it is not). */
const char *tg_cuda_why_none(void);
/* Chooses a device from "auto", "cpu", "cpu:N", "cuda" or "cuda:N". "auto" takes cuda:0 when a GPU
 * works, else cpu:0, and writes one short line saying which into notice (may be NULL): "device auto: cuda:0", or
 * "device auto: cpu:0 (no GPU; ...)" without a driver or GPU, whose why `tickgrad devices` gives (tg_cuda_why_none),
 * or the error of a listed GPU that did not start.
 * "cuda"/"cuda:N" without that device fails with TG_ERR_DEVICE and the reason: never a fallback. */
tg_status tg_device_choose(const char *spec, tg_device *out, char *notice, size_t notice_size);
/* Name, memory and versions of a CUDA device (TG_ERR_DEVICE for a CPU or a missing device). */
tg_status tg_device_info_get(tg_device d, tg_device_info *out);
/* Allocator statistics (all zero on the CPU). */
tg_status tg_device_mem_stats(tg_device d, tg_mem_stats *out);
/* Waits until the device has finished queued work; raises any fault a kernel recorded. No-op on
 * the CPU. */
tg_status tg_device_sync(tg_device d);

/* What a device does, for code that must not name device kinds: its pointers are host pointers (every cpu:N); it is
 * the host itself (cpu:0: views, no copies); its backend captures steps and replays them (CUDA graphs). */
int tg_device_host_memory(tg_device d);
int tg_device_is_host(tg_device d);
int tg_device_captures(tg_device d);
/* 1 when d runs bf16 GEMMs natively, faster than fp32 (the CPU with AMX or AVX512-BF16); else 0 and, when why is not
 * NULL, one clause saying why bf16 would be slower there. */
int tg_device_bf16_native(tg_device d, char *why, size_t why_size);
/* The narrowest model (d_model, hidden width) whose training auto runs in bf16 on a device with native bf16 GEMMs,
 * where its backend says no other. Measured on a Xeon with AMX before its bf16 GEMMs kept their operands
 * (BENCHMARKS.md): bf16 steps were faster at width 128 and above (mamba2_step d_model 128: 1.35x fp32; mlp_step 256:
 * 1.23x) and slower at 64 (tft_step 0.81x, transformer_step 0.90x), where the operands' rounding passes cost more than
 * the smaller GEMMs saved. */
#define TG_BF16_AUTO_MIN_WIDTH 128
/* That width on d: the CPU says 64 where its bf16 steps were measured faster from there (AMX, AMD Zen 4). */
int tg_device_bf16_auto_min_width(tg_device d);
/* Settles a run's precision on d for a model of GEMM width `width`: auto becomes bf16 where tg_device_bf16_native
 * says so and width >= tg_device_bf16_auto_min_width(d), else fp32, and notice (may be NULL) receives one line saying
 * which and why ("precision auto: ..."). An explicit bf16 where it is not native stays bf16, and notice receives one
 * line saying it will be slower than fp32 and why; otherwise notice is "". */
void tg_precision_resolve(tg_precision *precision, tg_device d, int width, char *notice, size_t notice_size);

/* Device memory for data the caller puts there once (tables, resident inputs): *out receives a copy
 * of host[0..bytes) on d (on cpu:0 a copy in host memory). Free with tg_device_free. */
tg_status tg_device_upload(tg_device d, const void *host, size_t bytes, void **out);
/* Copies bytes from device memory src on d to host memory (waits for queued work). */
tg_status tg_device_download(tg_device d, void *host, const void *src, size_t bytes);
void tg_device_free(tg_device d, void *p);

/* Allocates on d, runs a GEMM, a layernorm and an MSE loss forward and backward there and on the
 * CPU, and compares loss and gradients. TG_OK with a one-line summary in report, or the failure. */
tg_status tg_device_self_test(tg_device d, char *report, size_t report_size);

/* The host CPU as the CPU backend uses it: online cores, the widest SIMD level its kernels can use, the BLAS build
 * and its own thread count, the OpenMP threads of its loops. */
typedef struct tg_cpu_info {
  long cores;
  char simd[16];
  char blas[160];
  char gemm[400]; /* which library runs the GEMM ops (oneDNN primitives or OpenBLAS) and how bf16 GEMMs run */
  int blas_threads, threads;
} tg_cpu_info;
void tg_cpu_info_get(tg_cpu_info *out);

/* The OpenBLAS core this CPU warrants when OpenBLAS fell back to its Prescott (SSE3) kernels, which it does for
 * CPU models it does not know (OpenBLAS 0.3.21 on an Emerald Rapids Xeon: its small products ran 6x slower):
 * "SkylakeX" on a CPU with AVX-512 F/BW/DQ/VL, "Haswell" on one with AVX2 and FMA; NULL when OpenBLAS chose
 * otherwise or the CPU has neither. */
const char *tg_blas_fallback_core(void);

/* For a program's main before any other work: when tg_blas_fallback_core is not NULL and OPENBLAS_CORETYPE is
 * unset, sets it to that core and re-executes the program (/proc/self/exe with argv), so that OpenBLAS loads its
 * kernels for this CPU. Returns only when nothing was needed or the exec failed (then with one line on stderr). */
void tg_blas_fix_core(char **argv);

/* Threads of the CPU backend's OpenMP loops; OpenBLAS runs single-threaded inside them (default:
 * OMP_NUM_THREADS, else all cores). */
tg_status tg_set_threads(int n);
int tg_threads(void);

#ifdef __cplusplus
}
#endif
#endif
