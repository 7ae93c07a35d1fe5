/* CUDA kernels for the shape ops: concat, slice, reshape (a view: no-op), transpose, gather_rows. */
#include "backend/cuda/cuda_internal.h"
#include "ops/shape_split.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* gather_rows backward: about this many threads, each owning one column of a subset of table rows */
#define GATHER_THREADS (1 << 15)

/* ---- strided row blocks: rows rows of width elements, row i at src + i * sp and dst + i * dp ---- */

/* dst row blocks = src row blocks (ADD false: any 4- or 8-byte T) or += (ADD true: T float). */
template <typename T, bool ADD>
static __global__ void k_rows(const T *__restrict__ src, int64_t sp, T *__restrict__ dst,
                              int64_t dp, int64_t rows, int64_t width) {
  int64_t n = rows * width;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e / width, j = e - i * width;
    if constexpr (ADD)
      dst[i * dp + j] += src[i * sp + j];
    else
      dst[i * dp + j] = src[i * sp + j];
  }
}

/* Launches k_rows<T, ADD> (kernel: its name in errors); nothing for no elements. */
template <typename T, bool ADD>
static tg_status rows_t(const tg_kernel_args *a, const char *kernel, const void *src, int64_t sp,
                        void *dst, int64_t dp, int64_t rows, int64_t width) {
  if (rows * width == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  k_rows<T, ADD><<<tg_cuda_blocks(rows * width), TG_CUDA_THREADS, 0, s>>>(
      (const T *)src, sp, (T *)dst, dp, rows, width);
  return tg_cuda_launched(kernel, a->node_name);
}

/* Copies the row blocks of elements of es bytes (4: f32, i32; 8: i64); src and dst are
 * already offset to the first row's first element. */
static tg_status copy_rows(const tg_kernel_args *a, size_t es, const void *src, int64_t sp,
                           void *dst, int64_t dp, int64_t rows, int64_t width) {
  if (es == 8) return rows_t<uint64_t, false>(a, "k_copy_rows", src, sp, dst, dp, rows, width);
  return rows_t<uint32_t, false>(a, "k_copy_rows", src, sp, dst, dp, rows, width);
}

/* dst row blocks += src row blocks (f32). */
static tg_status add_rows(const tg_kernel_args *a, const float *src, int64_t sp, float *dst,
                          int64_t dp, int64_t rows, int64_t width) {
  return rows_t<float, true>(a, "k_add_rows", src, sp, dst, dp, rows, width);
}

/* ---- concat: in[k] [A, S_k, C] -> out [A, S, C], S = sum S_k, along dim d ---- */

tg_status tg_cuda_concat_fwd(const tg_kernel_args *a) {
  int d = (int)a->attr->i[0];
  const tg_tensor *o = a->out;
  size_t es = tg_dtype_size(o->dtype);
  int64_t A, S, C;
  tg_split_at(o, d, &A, &S, &C);
  char *out = (char *)o->data; /* [A, S, C] */
  int64_t off = 0;             /* start of input k along d */
  for (int k = 0; k < a->n_in; k++) {
    int64_t Sk = a->in[k]->shape[d];
    const void *x = a->in[k]->data; /* [A, Sk, C] */
    tg_status st = copy_rows(a, es, x, Sk * C, out + (size_t)(off * C) * es, S * C, A, Sk * C);
    if (st != TG_OK) return st;
    off += Sk;
  }
  return TG_OK;
}

tg_status tg_cuda_concat_bwd(const tg_kernel_args *a) {
  int d = (int)a->attr->i[0];
  const tg_tensor *o = a->out;
  int64_t A, S, C;
  tg_split_at(o, d, &A, &S, &C);
  const float *gy = a->out_grad; /* [A, S, C] */
  int64_t off = 0;
  for (int k = 0; k < a->n_in; k++) {
    int64_t Sk = a->in[k]->shape[d];
    float *gx = a->in_grad[k]; /* [A, Sk, C] */
    if (gx) {
      tg_status st = add_rows(a, gy + off * C, S * C, gx, Sk * C, A, Sk * C);
      if (st != TG_OK) return st;
    }
    off += Sk;
  }
  return TG_OK;
}

/* ---- slice: x [A, S, C] -> out [A, len, C] = x[:, start:start+len, :] ---- */

tg_status tg_cuda_slice_fwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  int d = (int)a->attr->i[0];
  int64_t start = a->attr->i[1], len = a->attr->i[2];
  size_t es = tg_dtype_size(x->dtype);
  int64_t A, S, C;
  tg_split_at(x, d, &A, &S, &C);
  const char *src = (const char *)x->data; /* [A, S, C] */
  void *dst = a->out->data;                /* [A, len, C] */
  return copy_rows(a, es, src + (size_t)(start * C) * es, S * C, dst, len * C, A, len * C);
}

tg_status tg_cuda_slice_bwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  float *gx = a->in_grad[0]; /* [A, S, C] */
  if (!gx) return TG_OK;
  int d = (int)a->attr->i[0];
  int64_t start = a->attr->i[1], len = a->attr->i[2];
  int64_t A, S, C;
  tg_split_at(x, d, &A, &S, &C);
  const float *gy = a->out_grad; /* [A, len, C] */
  return add_rows(a, gy, len * C, gx + start * C, S * C, A, len * C);
}

/* ---- reshape: the planner aliases the output (and its gradient) to input 0's ---- */

tg_status tg_cuda_reshape_fwd(const tg_kernel_args *a) {
  (void)a;
  return TG_OK;
}

tg_status tg_cuda_reshape_bwd(const tg_kernel_args *a) {
  (void)a;
  return TG_OK;
}

/* ---- transpose: x [A, P, B, Q, C] -> out [A, Q, B, P, C] (P, Q the swapped dims) ---- */

/* Element e of [A, X, B, Y, C] sits at this offset of [A, Y, B, X, C] (X and Y swapped). */
static __device__ inline int64_t tr_swapped(int64_t e, int64_t X, int64_t B, int64_t Y, int64_t C) {
  int64_t r = e;
  int64_t c = r % C; r /= C;
  int64_t y = r % Y; r /= Y;
  int64_t b = r % B; r /= B;
  int64_t x = r % X;
  int64_t i = r / X;
  return (((i * Y + y) * B + b) * X + x) * C + c;
}

/* One thread per element of y [A, Q, B, P, C] (so writes are coalesced): y = x [A, P, B, Q, C]
 * with P and Q swapped. */
template <typename T>
static __global__ void k_transpose(const T *__restrict__ x, T *__restrict__ y, tg_tr_dims t) {
  int64_t n = t.A * t.Q * t.B * t.P * t.C;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x)
    y[e] = x[tr_swapped(e, t.Q, t.B, t.P, t.C)];
}

/* One thread per element of gx [A, P, B, Q, C]: gx += gy [A, Q, B, P, C] with P and Q swapped. */
static __global__ void k_transpose_add(const float *__restrict__ gy, float *__restrict__ gx,
                                       tg_tr_dims t) {
  int64_t n = t.A * t.P * t.B * t.Q * t.C;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x)
    gx[e] += gy[tr_swapped(e, t.P, t.B, t.Q, t.C)];
}

template <typename T>
static tg_status transpose_t(const tg_kernel_args *a, const void *x, void *y, tg_tr_dims t,
                             int64_t n) {
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  k_transpose<T><<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, s>>>((const T *)x, (T *)y, t);
  return tg_cuda_launched("k_transpose", a->node_name);
}

tg_status tg_cuda_transpose_fwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  int64_t n = tg_numel(x);
  if (n == 0) return TG_OK;
  tg_tr_dims t = tg_tr_split(x, (int)a->attr->i[0], (int)a->attr->i[1]);
  const void *src = x->data; /* [A, P, B, Q, C] */
  void *dst = a->out->data;  /* [A, Q, B, P, C] */
  if (tg_dtype_size(x->dtype) == 8) return transpose_t<uint64_t>(a, src, dst, t, n);
  return transpose_t<uint32_t>(a, src, dst, t, n);
}

tg_status tg_cuda_transpose_bwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  float *gx = a->in_grad[0]; /* [A, P, B, Q, C] */
  int64_t n = tg_numel(x);
  if (!gx || n == 0) return TG_OK;
  tg_tr_dims t = tg_tr_split(x, (int)a->attr->i[0], (int)a->attr->i[1]);
  const float *gy = a->out_grad; /* [A, Q, B, P, C] */
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  k_transpose_add<<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, s>>>(gy, gx, t);
  return tg_cuda_launched("k_transpose_add", a->node_name);
}

/* ---- gather_rows: table [V, D], idx [N] (any shape, flattened) -> out [N, D] ----
 * An index outside [0, V) is reported as a fault (TG_ERR_INVALID at the next synchronisation) and
 * its row is skipped: zeros forward, no gradient. Both kernels check every index even when D is 0,
 * as the CPU does, by giving each index at least one thread (Dt = max(D, 1) columns). */

template <typename I>
static __global__ void k_gather_rows(const float *__restrict__ w, const I *__restrict__ idx,
                                     float *__restrict__ out, int64_t V, int64_t D, int64_t Dt,
                                     int64_t N, tg_cuda_fault *fault) {
  int64_t n = N * Dt;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e / Dt, c = e - i * Dt;
    int64_t v = (int64_t)idx[i];
    int ok = v >= 0 && v < V;
    if (!ok && c == 0) tg_cuda_report_fault(fault, TG_OP_GATHER_ROWS, v, V);
    if (c < D) out[i * D + c] = ok ? w[v * D + c] : 0.0f;
  }
}

/* Thread (bucket b, column c) owns gw[v, c] for every v with v % nb == b (nb a power of two) and
 * adds gy[i, c] for the i with idx[i] == v in index order: no two threads touch one element, and
 * each element sums in the CPU's order. Thread 0 reports bad indices. */
template <typename I>
static __global__ void k_gather_rows_bwd(const float *__restrict__ gy, const I *__restrict__ idx,
                                         float *__restrict__ gw, int64_t V, int64_t D, int64_t Dt,
                                         int64_t N, int64_t nb, tg_cuda_fault *fault) {
  int64_t n = nb * Dt;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t b = e / Dt, c = e - b * Dt;
    for (int64_t i = 0; i < N; i++) {
      int64_t v = (int64_t)idx[i];
      if (v < 0 || v >= V) {
        if (e == 0) tg_cuda_report_fault(fault, TG_OP_GATHER_ROWS, v, V);
        continue;
      }
      if ((v & (nb - 1)) == b && c < D) gw[v * D + c] += gy[i * D + c];
    }
  }
}

template <typename I>
static tg_status gather_rows_t(const tg_kernel_args *a, const float *w, const void *idx, float *out,
                               int64_t V, int64_t D, int64_t N) {
  int dev = tg_cuda_dev_of(a);
  tg_cuda_fault *fault = tg_cuda_fault_slot(dev);
  if (!fault) return TG_ERR_DEVICE; /* the device cannot be used; tg_cuda_use set the message */
  int64_t Dt = D > 0 ? D : 1;
  k_gather_rows<I><<<tg_cuda_blocks(N * Dt), TG_CUDA_THREADS, 0, tg_cuda_stream(dev)>>>(
      w, (const I *)idx, out, V, D, Dt, N, fault);
  return tg_cuda_launched("k_gather_rows", a->node_name);
}

template <typename I>
static tg_status gather_rows_bwd_t(const tg_kernel_args *a, const float *gy, const void *idx,
                                   float *gw, int64_t V, int64_t D, int64_t N) {
  int dev = tg_cuda_dev_of(a);
  tg_cuda_fault *fault = tg_cuda_fault_slot(dev);
  if (!fault) return TG_ERR_DEVICE; /* the device cannot be used; tg_cuda_use set the message */
  int64_t Dt = D > 0 ? D : 1;
  int64_t nb = 1; /* buckets: a power of two, about GATHER_THREADS / D, no more than V needs */
  while (nb < V && nb * Dt < GATHER_THREADS) nb *= 2;
  k_gather_rows_bwd<I><<<tg_cuda_blocks(nb * Dt), TG_CUDA_THREADS, 0, tg_cuda_stream(dev)>>>(
      gy, (const I *)idx, gw, V, D, Dt, N, nb, fault);
  return tg_cuda_launched("k_gather_rows_bwd", a->node_name);
}

tg_status tg_cuda_gather_rows_fwd(const tg_kernel_args *a) {
  const tg_tensor *table = a->in[0], *idx = a->in[1];
  int64_t V = table->shape[0], D = table->shape[1], N = tg_numel(idx);
  if (N == 0) return TG_OK;
  const float *w = (const float *)table->data; /* [V, D] */
  float *out = (float *)a->out->data;          /* [N, D] */
  if (idx->dtype == TG_I32) return gather_rows_t<int32_t>(a, w, idx->data, out, V, D, N);
  return gather_rows_t<int64_t>(a, w, idx->data, out, V, D, N);
}

tg_status tg_cuda_gather_rows_bwd(const tg_kernel_args *a) {
  const tg_tensor *table = a->in[0], *idx = a->in[1];
  float *gw = a->in_grad[0]; /* [V, D] */
  if (!gw) return TG_OK;
  int64_t V = table->shape[0], D = table->shape[1], N = tg_numel(idx);
  if (N == 0) return TG_OK;
  const float *gy = a->out_grad; /* [N, D] */
  if (idx->dtype == TG_I32) return gather_rows_bwd_t<int32_t>(a, gy, idx->data, gw, V, D, N);
  return gather_rows_bwd_t<int64_t>(a, gy, idx->data, gw, V, D, N);
}
