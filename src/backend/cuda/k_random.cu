/* CUDA kernel for sample_rows: the CPU's draws, with the run counter read on the device. */
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_kernels.h"
#include "ops/sample_rows.h"

/* out [b]; offset_dev (may be NULL): the run counter, read here so a captured step draws afresh. */
static __global__ void sample_rows_kernel(int64_t *out, int64_t b, int64_t rows, uint64_t seed, uint64_t stream,
                                          uint64_t offset, const uint64_t *offset_dev) {
  uint64_t off = offset_dev ? *offset_dev : offset;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < b; e += (int64_t)gridDim.x * blockDim.x)
    out[e] = tg_sample_row(seed, stream, off, e, rows);
}

tg_status tg_cuda_sample_rows_fwd(const tg_kernel_args *a) {
  int64_t b = tg_numel(a->out);
  if (b == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  sample_rows_kernel<<<tg_cuda_blocks(b), TG_CUDA_THREADS, 0, s>>>((int64_t *)a->out->data, b, a->attr->i[0], a->seed,
                                                                     a->rng_stream, a->rng_offset, a->rng_offset_dev);
  return tg_cuda_launched("sample_rows", a->node_name);
}
