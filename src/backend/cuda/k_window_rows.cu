/* CUDA kernel for window_rows: each window's last row t [N] -> the rows of its window [N, W] (i64). */
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_internal.h"

/* One thread per output element (i, k): out[i, k] = t[i] - W + 1 + k. A t that is not an integer in
 * [W-1, rows) is reported as a fault by its k == 0 thread (TG_ERR_INVALID at the next
 * synchronisation; value: the window's first row t - W + 1, or -1 when t is not an integer; bound:
 * rows - W + 1 first rows exist), and its window is written as rows 0 .. W-1 so later gathers stay
 * in range. */
template <typename T>
static __global__ void k_window_rows(const T *__restrict__ t, int64_t *__restrict__ out, int64_t N, int64_t W,
                                     int64_t rows, tg_cuda_fault *fault) {
  int64_t n = N * W;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e / W, k = e - i * W;
    double v = (double)t[i];
    int ok = v >= (double)(W - 1) && v < (double)rows && v == floor(v); /* false for NaN */
    int64_t first = ok ? (int64_t)v - W + 1 : 0;
    if (!ok && k == 0) {
      long long bad = v == floor(v) && v > -9.0e18 && v < 9.0e18 ? (long long)v - (long long)(W - 1) : -1LL;
      tg_cuda_report_fault(fault, TG_OP_WINDOW_ROWS, bad, (long long)(rows - W + 1));
    }
    out[e] = first + k;
  }
}

template <typename T>
static tg_status window_rows_t(const tg_kernel_args *a, const void *t, int64_t *out, int64_t N, int64_t W,
                               int64_t rows) {
  int dev = tg_cuda_dev_of(a);
  tg_cuda_fault *fault = tg_cuda_fault_slot(dev);
  if (!fault) return TG_ERR_DEVICE; /* the device cannot be used; tg_cuda_use set the message */
  if (N * W == 0) return TG_OK;
  k_window_rows<T><<<tg_cuda_blocks(N * W), TG_CUDA_THREADS, 0, tg_cuda_stream(dev)>>>((const T *)t, out, N, W, rows,
                                                                                     fault);
  return tg_cuda_launched("k_window_rows", a->node_name);
}

tg_status tg_cuda_window_rows_fwd(const tg_kernel_args *a) {
  const tg_tensor *t = a->in[0];
  int64_t W = a->attr->i[0], rows = a->attr->i[1], N = tg_numel(t);
  int64_t *out = (int64_t *)a->out->data; /* [N, W] */
  if (t->dtype == TG_F32) return window_rows_t<float>(a, t->data, out, N, W, rows);
  return window_rows_t<int64_t>(a, t->data, out, N, W, rows);
}
