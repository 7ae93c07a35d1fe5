/* CUDA kernels for causal_softmax and conv1d_causal (forward and backward), mirroring k_sequence.c. */
#include <math.h>
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_rows.cuh"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* Numerics follow the CPU kernels step by step. causal_softmax: the same max shift, double exp-sum
 * and float scale as the CPU; products feeding an addition go through __fmul_rn. conv1d_causal: every
 * sum is in double of float products taken in double (exact, so a fused multiply-add rounds the
 * same); the forward and dx sum taps in the CPU's order (bitwise equal), the weight and bias
 * gradients sum rows per thread and then across the block in a fixed order (no atomics). */

#define CONV_MAX_BLOCKS 65536 /* grid cap of the block-per-output kernels; their loop covers the rest */

/* ---- causal_softmax ---- */

/* Keys visible to query row q: j <= q + offset, clamped to [0, Tk] without overflow for any offset. */
static __device__ inline int64_t cs_visible(int64_t q, int64_t offset, int64_t Tk) {
  if (offset >= Tk) return Tk;      /* q >= 0, so q + offset + 1 > Tk */
  if (offset <= -(q + 1)) return 0; /* q + offset + 1 <= 0 */
  int64_t n = q + offset + 1;       /* offset in (-(q+1), Tk): no overflow */
  return n < Tk ? n : Tk;
}

/* x [..., Tq, Tk] as rows [rows, Tk] with query index r % Tq. */
static void cs_dims(const tg_tensor *t, int64_t *rows, int64_t *Tq, int64_t *Tk) {
  *Tk = t->shape[t->ndim - 1];
  *Tq = t->shape[t->ndim - 2];
  *rows = *Tk > 0 ? tg_numel(t) / *Tk : 0;
}

/* y = softmax over each row's visible keys, 0 at hidden keys (and in a row with none visible). */
template <int G>
static __global__ void k_causal_softmax_fwd(const float *x, float *y, int64_t rows, int64_t Tq,
                                            int64_t Tk, int64_t offset) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * Tk; /* [Tk] */
    float *yr = y + r * Tk;       /* [Tk] */
    int64_t n = cs_visible(r % Tq, offset, Tk); /* the same for every thread of the row */
    if (n > 0) {
      float m = row_max<G>(xr, n, lane);
      float inv = (float)(1.0 / row_exp_sum<G>(xr, n, m, lane));
      for (int64_t j = lane; j < n; j += G) yr[j] = expf(xr[j] - m) * inv;
    }
    for (int64_t j = n + lane; j < Tk; j += G) yr[j] = 0.0f;
  }
}

tg_status tg_cuda_causal_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, Tq, Tk, offset = a->attr->i[0];
  cs_dims(a->in[0], &rows, &Tq, &Tk);
  const float *x = (const float *)a->in[0]->data; /* [rows, Tk] */
  float *y = (float *)a->out->data;               /* [rows, Tk] */
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_causal_softmax_fwd<32>, k_causal_softmax_fwd<TG_ROW_THREADS>,
                     "k_causal_softmax_fwd", a->node_name, s, rows, Tk, x, y, rows, Tq, Tk, offset);
}

/* dx += y * (dy - sum(dy * y)) over the visible keys; hidden keys get nothing. */
template <int G>
static __global__ void k_causal_softmax_bwd(const float *y, const float *dy, float *dx,
                                            int64_t rows, int64_t Tq, int64_t Tk, int64_t offset) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *yr = y + r * Tk, *gr = dy + r * Tk; /* [Tk] each */
    float *dxr = dx + r * Tk;                        /* [Tk] */
    int64_t n = cs_visible(r % Tq, offset, Tk);
    double dot = 0.0;
    for (int64_t j = lane; j < n; j += G) dot += (double)gr[j] * yr[j];
    float fd = (float)group_reduce<G>(dot, SumOp());
    for (int64_t j = lane; j < n; j += G) dxr[j] += __fmul_rn(yr[j], gr[j] - fd);
  }
}

tg_status tg_cuda_causal_softmax_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [rows, Tk] */
  if (!dx) return TG_OK;
  int64_t rows, Tq, Tk, offset = a->attr->i[0];
  cs_dims(a->out, &rows, &Tq, &Tk);
  const float *y = (const float *)a->out->data; /* [rows, Tk] */
  const float *dy = a->out_grad;                /* [rows, Tk] */
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_causal_softmax_bwd<32>, k_causal_softmax_bwd<TG_ROW_THREADS>,
                     "k_causal_softmax_bwd", a->node_name, s, rows, Tk, y, dy, dx, rows, Tq, Tk,
                     offset);
}

/* ---- conv1d_causal ---- */

/* A conv1d_causal call: inputs x, w, then bias if attr.i[0]. */
typedef struct conv_args {
  int64_t B, L, C, K;
  const float *x, *w, *bias; /* [B, L, C], [C, K], [C] or NULL */
  float *dx, *dw, *dbias;    /* like x, w, bias; NULL where no gradient is wanted */
} conv_args;

static conv_args conv_args_of(const tg_kernel_args *a) {
  conv_args c;
  c.B = a->in[0]->shape[0];
  c.L = a->in[0]->shape[1];
  c.C = a->in[0]->shape[2];
  c.K = a->in[1]->shape[1];
  int has_bias = a->attr->i[0] != 0;
  c.x = (const float *)a->in[0]->data;
  c.w = (const float *)a->in[1]->data;
  c.bias = has_bias ? (const float *)a->in[2]->data : NULL;
  c.dx = a->in_grad[0];
  c.dw = a->in_grad[1];
  c.dbias = has_bias ? a->in_grad[2] : NULL;
  return c;
}

/* y[r, c] = bias[c] + sum_k w[c,k] * x[r-K+1+k, c] over taps inside the sequence (row r = b*L + t),
 * one thread per output, in double from the bias, taps in order (as the CPU). */
static __global__ void k_conv1d_causal_fwd(const float *x, const float *w, const float *bias,
                                           float *y, int64_t rows, int64_t L, int64_t C,
                                           int64_t K) {
  /* x, y: [rows, C]; w: [C, K]; bias: [C] or NULL */
  int64_t n = rows * C;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = i / C, c = i - r * C, t = r % L;
    int64_t k0 = K - 1 - t > 0 ? K - 1 - t : 0; /* first tap inside the sequence */
    int64_t r0 = r - (K - 1);                   /* row of tap 0 */
    double acc = bias ? (double)bias[c] : 0.0;
    for (int64_t k = k0; k < K; k++) acc += (double)w[c * K + k] * x[(r0 + k) * C + c];
    y[i] = (float)acc;
  }
}

tg_status tg_cuda_conv1d_causal_fwd(const tg_kernel_args *a) {
  const conv_args p = conv_args_of(a);
  int64_t rows = p.B * p.L;
  if (rows * p.C == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  k_conv1d_causal_fwd<<<tg_cuda_blocks(rows * p.C), TG_CUDA_THREADS, 0, s>>>(
      p.x, p.w, p.bias, (float *)a->out->data, rows, p.L, p.C, p.K);
  return tg_cuda_launched("k_conv1d_causal_fwd", a->node_name);
}

/* dx[s, c] += sum_k w[c,k] * dy[s+K-1-k, c] over taps whose output lies inside the sequence, one
 * thread per element, taps in order (as the CPU). */
static __global__ void k_conv1d_causal_dx(const float *w, const float *dy, float *dx, int64_t rows,
                                          int64_t L, int64_t C, int64_t K) {
  /* dy, dx: [rows, C]; w: [C, K] */
  int64_t n = rows * C;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = i / C, c = i - r * C, s = r % L;
    int64_t k0 = s + K - L > 0 ? s + K - L : 0; /* first tap with output s+K-1-k < L */
    double acc = 0.0;
    for (int64_t k = k0; k < K; k++) acc += (double)w[c * K + k] * dy[(r + K - 1 - k) * C + c];
    dx[i] += (float)acc;
  }
}

/* One block per weight (c, k) with TG_ROW_THREADS threads: dw[c,k] += sum over rows r of
 * dy[r, c] * x[r-K+1+k, c] (rows whose tap lies inside the sequence); each thread sums its rows in
 * order, then the block reduces in a fixed order. */
static __global__ void k_conv1d_causal_dw(const float *x, const float *dy, float *dw, int64_t rows,
                                          int64_t L, int64_t C, int64_t K) {
  /* x, dy: [rows, C]; dw: [C, K] */
  for (int64_t o = blockIdx.x; o < C * K; o += gridDim.x) { /* the same o for the whole block */
    int64_t c = o / K, k = o - c * K;
    double s = 0.0;
    for (int64_t r = threadIdx.x; r < rows; r += blockDim.x)
      if (r % L + k >= K - 1) s += (double)dy[r * C + c] * x[(r - (K - 1) + k) * C + c];
    s = group_reduce<TG_ROW_THREADS>(s, SumOp());
    if (threadIdx.x == 0) dw[o] += (float)s;
  }
}

/* One block per channel with TG_ROW_THREADS threads: dbias[c] += sum over rows of dy[r, c]. */
static __global__ void k_conv1d_causal_dbias(const float *dy, float *dbias, int64_t rows,
                                             int64_t C) {
  /* dy: [rows, C]; dbias: [C] */
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) { /* the same c for the whole block */
    double s = 0.0;
    for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) s += dy[r * C + c];
    s = group_reduce<TG_ROW_THREADS>(s, SumOp());
    if (threadIdx.x == 0) dbias[c] += (float)s;
  }
}

/* Blocks for a block-per-output kernel over n outputs (n >= 1). */
static unsigned conv_blocks(int64_t n) { return (unsigned)(n < CONV_MAX_BLOCKS ? n : CONV_MAX_BLOCKS); }

tg_status tg_cuda_conv1d_causal_bwd(const tg_kernel_args *a) {
  const conv_args p = conv_args_of(a);
  int64_t rows = p.B * p.L;
  const float *dy = a->out_grad; /* [B, L, C] */
  if (rows * p.C == 0) return TG_OK; /* nothing to add: every sum is empty */
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  tg_status st = TG_OK;
  if (p.dx) {
    k_conv1d_causal_dx<<<tg_cuda_blocks(rows * p.C), TG_CUDA_THREADS, 0, s>>>(p.w, dy, p.dx, rows,
                                                                              p.L, p.C, p.K);
    if ((st = tg_cuda_launched("k_conv1d_causal_dx", a->node_name)) != TG_OK) return st;
  }
  if (p.dw) {
    k_conv1d_causal_dw<<<conv_blocks(p.C * p.K), TG_ROW_THREADS, 0, s>>>(p.x, dy, p.dw, rows, p.L,
                                                                         p.C, p.K);
    if ((st = tg_cuda_launched("k_conv1d_causal_dw", a->node_name)) != TG_OK) return st;
  }
  if (p.dbias) {
    k_conv1d_causal_dbias<<<conv_blocks(p.C), TG_ROW_THREADS, 0, s>>>(dy, p.dbias, rows, p.C);
    st = tg_cuda_launched("k_conv1d_causal_dbias", a->node_name);
  }
  return st;
}
