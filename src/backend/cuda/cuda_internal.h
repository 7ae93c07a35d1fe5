/* Shared by the CUDA sources: the compute stream and cuBLAS handle per device, launch checks,
 * grid sizes, and faults that kernels report for the host to raise at the next synchronisation. */
#ifndef TG_CUDA_INTERNAL_H
#define TG_CUDA_INTERNAL_H

#include "backend/cuda/cuda_blas.h" /* cuBLAS, loaded on first use */
#include <cuda_runtime.h>
#include <stdint.h>
#include "ops/ops.h"

#define TG_CUDA_MAX_DEVICES 16
#define TG_CUDA_THREADS 256 /* threads per block for the flat (grid-stride) kernels */

/* Blocks for a grid-stride loop over n items with TG_CUDA_THREADS threads (at least 1, capped so
 * the grid stays a fixed, modest size; the loop covers the rest). */
static inline unsigned tg_cuda_blocks(int64_t n) {
  int64_t b = (n + TG_CUDA_THREADS - 1) / TG_CUDA_THREADS;
  if (b < 1) b = 1;
  if (b > 4096) b = 4096;
  return (unsigned)b;
}

/* Makes dev current on this thread and returns its compute stream (created on first use). Every
 * kernel launch and async copy of the library goes to this stream, so work is ordered and a
 * training step can be captured as one CUDA graph. */
cudaStream_t tg_cuda_stream(int dev);
/* The device's cuBLAS handle, bound to its compute stream, FP32 math (no TF32), with a fixed
 * workspace so cuBLAS never allocates during a captured step. NULL when creation failed (the
 * error is set). */
cublasHandle_t tg_cuda_blas(int dev);

/* A per-device scratch buffer of at least bytes (for kernels that need a temporary, e.g. per-row
 * statistics): valid until the next call on the same device, since every use is ordered on the one
 * stream. It only grows; an outgrown buffer is kept until exit, so pointers baked into a captured
 * step stay valid. NULL with the error set when it cannot grow. */
void *tg_cuda_scratch(int dev, size_t bytes);

/* Turns a CUDA runtime error into a tickgrad status naming what failed (what) and where (e.g. the
 * node name). TG_OK for cudaSuccess. Out of memory becomes TG_ERR_NOMEM. */
tg_status tg_cuda_fail(cudaError_t e, const char *what, const char *where);
tg_status tg_cuda_blas_fail(cublasStatus_t s, const char *what, const char *where);
/* After a kernel launch: TG_OK, or the launch error naming the kernel and the node. */
tg_status tg_cuda_launched(const char *kernel, const char *node);

/* Kernel faults: a kernel that finds a bad value (an index out of range, a class label outside the
 * logits) cannot return an error, so it records the first such fault in device memory and carries
 * on with a safe value (index clamped, row skipped). The host raises it as TG_ERR_INVALID at the
 * next synchronisation (tg_cuda_sync, a copy to the host), naming the op, the value and the bound. */
typedef struct tg_cuda_fault {
  int op;          /* tg_op of the kernel that found it, -1 when none */
  int pad;
  long long value; /* the bad value */
  long long bound; /* the valid range is [0, bound) */
} tg_cuda_fault;

/* Device pointer to dev's fault record (allocated with the stream). */
tg_cuda_fault *tg_cuda_fault_slot(int dev);

#ifdef __CUDACC__
/* Records a fault unless one is already recorded. */
static __device__ inline void tg_cuda_report_fault(tg_cuda_fault *f, int op, long long value, long long bound) {
  if (atomicCAS(&f->op, -1, op) == -1) {
    f->value = value;
    f->bound = bound;
  }
}
#endif

/* The device a kernel call runs on: its output's device index. */
static inline int tg_cuda_dev_of(const tg_kernel_args *a) { return a->out->device.index; }

/* dst [n] = src [n] rounded to bf16, nearest even (k_matmul.cu's rounding kernel), on d's compute stream. */
tg_status tg_cuda_round_bf16(tg_device d, uint16_t *dst, const float *src, size_t n);

/* NCCL's collectives for the backend table (cuda_nccl.cu); NULL in a build without NCCL. */
const struct tg_collectives *tg_cuda_collectives(void);

#endif
