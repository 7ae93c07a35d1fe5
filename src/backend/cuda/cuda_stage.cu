/* Staging on CUDA: the kernel that computes a batch from the sampler's order on the device, compute-stream copies, and fences for pinned buffers. */
#include "base/alloc.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_internal.h"
#include "base/shuffle.h"

struct tg_cuda_fence {
  int dev;
  cudaEvent_t event;
};

/* One thread per window (grid-stride): the same tg_batch_entry the host runs. */
static __global__ void k_stage_batch(tg_window_tables t, uint64_t epoch, uint64_t cursor, int64_t b, tg_batch_bufs o) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < b; i += (int64_t)gridDim.x * blockDim.x)
    tg_batch_entry(&t, epoch, cursor, i, &o);
}

extern "C" tg_status tg_cuda_stage_batch(int dev, const tg_window_tables *t, uint64_t epoch, uint64_t cursor, int64_t b,
                                         const tg_batch_bufs *o) {
  cudaStream_t s = tg_cuda_stream(dev);
  if (!s) return TG_ERR_DEVICE;
  if (b < 1) return TG_OK;
  k_stage_batch<<<tg_cuda_blocks(b), TG_CUDA_THREADS, 0, s>>>(*t, epoch, cursor, b, *o);
  return tg_cuda_launched("k_stage_batch", "tg_stage_next");
}

extern "C" tg_status tg_cuda_copy_on_compute(int dev, void *dst, const void *host_src, size_t bytes) {
  cudaStream_t s = tg_cuda_stream(dev);
  if (!s) return TG_ERR_DEVICE;
  if (!bytes) return TG_OK;
  return tg_cuda_fail(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, s),
                      "cudaMemcpyAsync on the compute stream", "staging a batch");
}

extern "C" tg_status tg_cuda_fence_new(int dev, tg_cuda_fence **out) {
  *out = NULL;
  tg_status st = tg_cuda_use(dev);
  if (st != TG_OK) return st;
  tg_cuda_fence *f = (tg_cuda_fence *)tg_malloc(sizeof *f);
  if (!f) return tg_error(TG_ERR_NOMEM, "staging: out of host memory for a fence");
  f->dev = dev;
  cudaError_t e = cudaEventCreateWithFlags(&f->event, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    tg_free(f);
    return tg_cuda_fail(e, "cudaEventCreateWithFlags", "staging fence");
  }
  *out = f;
  return TG_OK;
}

extern "C" void tg_cuda_fence_free(tg_cuda_fence *f) {
  if (!f) return;
  cudaEventDestroy(f->event);
  tg_free(f);
}

extern "C" tg_status tg_cuda_fence_record(tg_cuda_fence *f) {
  cudaStream_t s = tg_cuda_stream(f->dev);
  if (!s) return TG_ERR_DEVICE;
  return tg_cuda_fail(cudaEventRecord(f->event, s), "cudaEventRecord on the compute stream", "staging fence");
}

extern "C" tg_status tg_cuda_fence_wait(tg_cuda_fence *f) {
  if (!f) return TG_OK;
  return tg_cuda_fail(cudaEventSynchronize(f->event), "cudaEventSynchronize", "staging: waiting for a pinned buffer's copies");
}
