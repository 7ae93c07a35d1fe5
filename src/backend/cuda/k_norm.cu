/* CUDA kernels over the last dim, mirroring k_norm.c: softmax, log_softmax, layernorm, rmsnorm. */
#include <math.h>
#include "backend/cuda/cuda_internal.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* Numerics follow the CPU kernels step by step: the same float/double split, max shift, eps
 * placement and conversions. Products that feed an addition go through __fmul_rn / __dmul_rn,
 * which nvcc never fuses into an FMA, so they round as on the CPU (ISO C, no contraction); a
 * product of two floats taken in double is exact and needs no such care. Only the order of the
 * double sums differs from the CPU. */

/* Row kernels run ROW_THREADS threads per block: one warp per row while rows are at most
 * WARP_ROW_MAX long (ROW_THREADS / 32 rows per block), else the whole block per row. */
#define ROW_THREADS 256
#define WARP_ROW_MAX 1024
#define MAX_ROW_BLOCKS 65536 /* grid cap; the row loop covers the rest */
#define FULL_MASK 0xffffffffu
/* Gamma/beta/weight gradients: the CPU sums each chunk of NORM_CHUNK_ROWS rows in double and adds
 * it to the float gradient chunk by chunk; here each chunk is summed from NORM_SUB_ROWS-row parts
 * (one thread per column and part, rows in order), then added chunk by chunk in the same way. */
#define NORM_CHUNK_ROWS 2048
#define NORM_SUB_ROWS 128
#define SUBS_PER_CHUNK (NORM_CHUNK_ROWS / NORM_SUB_ROWS)

static_assert(ROW_THREADS % 32 == 0 && NORM_CHUNK_ROWS % NORM_SUB_ROWS == 0, "row layout");

/* ---- row helpers (device) ---- */

struct SumOp {
  template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct MaxOp { /* as tg_row_max: a NaN b never wins */
  __device__ float operator()(float a, float b) const { return b > a ? b : a; }
};

/* op over v of the G threads of one row (G = 32: a warp; G = ROW_THREADS: the block), in a fixed
 * order; every thread of the row gets the same value. */
template <int G, typename T, typename Op>
static __device__ T group_reduce(T v, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(FULL_MASK, v, o));
  if constexpr (G == 32) {
    return __shfl_sync(FULL_MASK, v, 0);
  } else {
    __shared__ T warp_v[G / 32]; /* [warps] */
    if (threadIdx.x % 32 == 0) warp_v[threadIdx.x / 32] = v;
    __syncthreads();
    T r = warp_v[0];
    for (int w = 1; w < G / 32; w++) r = op(r, warp_v[w]);
    __syncthreads(); /* warp_v is reused by the next reduction */
    return r;
  }
}

/* This thread's first row and the step to its next (rows of G threads each). */
template <int G> static __device__ int64_t first_row() {
  return (int64_t)blockIdx.x * (ROW_THREADS / G) + threadIdx.x / G;
}
template <int G> static __device__ int64_t row_step() {
  return (int64_t)gridDim.x * (ROW_THREADS / G);
}

/* tg_row_max of xr[0..D): NaN exactly when xr[0] is NaN, else the largest non-NaN value. */
template <int G>
static __device__ float row_max(const float *xr, int64_t D, int lane) {
  float m = -INFINITY;
  for (int64_t j = lane; j < D; j += G) m = MaxOp()(m, xr[j]);
  m = group_reduce<G>(m, MaxOp());
  return isnan(xr[0]) ? xr[0] : m;
}

/* ---- launch helpers (host) ---- */

template <typename T> struct same_type { using type = T; };

/* warp(args...) with a warp per row when rows of D are short, else block(args...) with a block
 * per row; nothing for no rows. */
template <typename... P>
static tg_status launch_rows(void (*warp)(P...), void (*block)(P...), const char *kernel,
                             const char *node, cudaStream_t s, int64_t rows, int64_t D,
                             typename same_type<P>::type... args) {
  if (rows == 0) return TG_OK;
  int64_t per_block = D <= WARP_ROW_MAX ? ROW_THREADS / 32 : 1;
  int64_t nb = (rows + per_block - 1) / per_block;
  if (nb > MAX_ROW_BLOCKS) nb = MAX_ROW_BLOCKS;
  if (per_block > 1)
    warp<<<(unsigned)nb, ROW_THREADS, 0, s>>>(args...);
  else
    block<<<(unsigned)nb, ROW_THREADS, 0, s>>>(args...);
  return tg_cuda_launched(kernel, node);
}

/* The last dim D of t and the number of rows before it. */
static void norm_dims(const tg_tensor *t, int64_t *rows, int64_t *D) {
  *D = t->ndim > 0 ? t->shape[t->ndim - 1] : 1;
  *rows = *D > 0 ? tg_numel(t) / *D : 0;
}

/* ---- softmax / log_softmax ---- */

template <int G>
static __global__ void k_softmax_fwd(const float *x, float *y, int64_t rows, int64_t D) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * D; /* [D] */
    float *yr = y + r * D;       /* [D] */
    float m = row_max<G>(xr, D, lane);
    double s = 0.0;
    for (int64_t j = lane; j < D; j += G) s += expf(xr[j] - m);
    float inv = (float)(1.0 / group_reduce<G>(s, SumOp()));
    for (int64_t j = lane; j < D; j += G) yr[j] = expf(xr[j] - m) * inv;
  }
}

tg_status tg_cuda_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, D;
  norm_dims(a->in[0], &rows, &D);
  const float *x = (const float *)a->in[0]->data; /* [rows, D] */
  float *y = (float *)a->out->data;               /* [rows, D] */
  if (D == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_softmax_fwd<32>, k_softmax_fwd<ROW_THREADS>, "k_softmax_fwd", a->node_name,
                     s, rows, D, x, y, rows, D);
}

/* dx += y * (dy - sum(dy * y)) */
template <int G>
static __global__ void k_softmax_bwd(const float *y, const float *dy, float *dx, int64_t rows,
                                     int64_t D) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *yr = y + r * D, *gr = dy + r * D; /* [D] each */
    float *dxr = dx + r * D;                       /* [D] */
    double dot = 0.0;
    for (int64_t j = lane; j < D; j += G) dot += (double)gr[j] * yr[j];
    float fd = (float)group_reduce<G>(dot, SumOp());
    for (int64_t j = lane; j < D; j += G) dxr[j] += __fmul_rn(yr[j], gr[j] - fd);
  }
}

tg_status tg_cuda_softmax_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [rows, D] */
  if (!dx) return TG_OK;
  int64_t rows, D;
  norm_dims(a->out, &rows, &D);
  const float *y = (const float *)a->out->data; /* [rows, D] */
  const float *dy = a->out_grad;                /* [rows, D] */
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_softmax_bwd<32>, k_softmax_bwd<ROW_THREADS>, "k_softmax_bwd", a->node_name,
                     s, rows, D, y, dy, dx, rows, D);
}

template <int G>
static __global__ void k_log_softmax_fwd(const float *x, float *y, int64_t rows, int64_t D) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * D; /* [D] */
    float *yr = y + r * D;       /* [D] */
    float m = row_max<G>(xr, D, lane);
    double s = 0.0;
    for (int64_t j = lane; j < D; j += G) s += expf(xr[j] - m);
    float lse = (float)log(group_reduce<G>(s, SumOp()));
    for (int64_t j = lane; j < D; j += G) yr[j] = (xr[j] - m) - lse;
  }
}

tg_status tg_cuda_log_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, D;
  norm_dims(a->in[0], &rows, &D);
  const float *x = (const float *)a->in[0]->data; /* [rows, D] */
  float *y = (float *)a->out->data;               /* [rows, D] */
  if (D == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_log_softmax_fwd<32>, k_log_softmax_fwd<ROW_THREADS>, "k_log_softmax_fwd",
                     a->node_name, s, rows, D, x, y, rows, D);
}

/* dx += dy - exp(y) * sum(dy) */
template <int G>
static __global__ void k_log_softmax_bwd(const float *y, const float *dy, float *dx, int64_t rows,
                                         int64_t D) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *yr = y + r * D, *gr = dy + r * D; /* [D] each */
    float *dxr = dx + r * D;                       /* [D] */
    double sum = 0.0;
    for (int64_t j = lane; j < D; j += G) sum += gr[j];
    float fs = (float)group_reduce<G>(sum, SumOp());
    for (int64_t j = lane; j < D; j += G) dxr[j] += gr[j] - __fmul_rn(expf(yr[j]), fs);
  }
}

tg_status tg_cuda_log_softmax_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [rows, D] */
  if (!dx) return TG_OK;
  int64_t rows, D;
  norm_dims(a->out, &rows, &D);
  const float *y = (const float *)a->out->data; /* [rows, D] */
  const float *dy = a->out_grad;                /* [rows, D] */
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_log_softmax_bwd<32>, k_log_softmax_bwd<ROW_THREADS>, "k_log_softmax_bwd",
                     a->node_name, s, rows, D, y, dy, dx, rows, D);
}

/* ---- parameter gradients: sums over rows, chunked as on the CPU ---- */

/* Row parts of [rows, D] for the parameter-gradient sums. */
static int64_t norm_subs(int64_t rows) { return (rows + NORM_SUB_ROWS - 1) / NORM_SUB_ROWS; }

/* dst[j] += (float)(sum of chunk c's parts at column j) for chunks c = 0, 1, .. in order. */
static __global__ void k_norm_col_finish(const double *part, float *dst, int64_t subs, int64_t D) {
  /* part: [subs, D]; dst: [D] */
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < D;
       j += (int64_t)gridDim.x * blockDim.x) {
    float v = dst[j];
    for (int64_t s0 = 0; s0 < subs; s0 += SUBS_PER_CHUNK) {
      int64_t s1 = s0 + SUBS_PER_CHUNK < subs ? s0 + SUBS_PER_CHUNK : subs;
      double c = 0.0;
      for (int64_t sp = s0; sp < s1; sp++) c += part[sp * D + j];
      v += (float)c;
    }
    dst[j] = v;
  }
}

static tg_status norm_col_finish(const tg_kernel_args *a, cudaStream_t s, const double *part,
                                 float *dst, int64_t subs, int64_t D) {
  k_norm_col_finish<<<tg_cuda_blocks(D), TG_CUDA_THREADS, 0, s>>>(part, dst, subs, D);
  return tg_cuda_launched("k_norm_col_finish", a->node_name);
}

/* ---- layernorm ---- */

/* Mean and 1/sqrt(biased variance + eps) of row xr in double, as the floats the CPU uses. */
template <int G>
static __device__ void ln_stats(const float *xr, int64_t D, double eps, int lane, float *fm,
                                float *fr) {
  double s = 0.0;
  for (int64_t j = lane; j < D; j += G) s += xr[j];
  double mu = group_reduce<G>(s, SumOp()) / (double)D, v = 0.0;
  for (int64_t j = lane; j < D; j += G) {
    double d = xr[j] - mu;
    v += __dmul_rn(d, d);
  }
  v = group_reduce<G>(v, SumOp());
  *fm = (float)mu;
  *fr = (float)(1.0 / sqrt(v / (double)D + eps));
}

/* Inputs: x, then gamma if attr.i[0], then beta if attr.i[1]. */
static void ln_operands(const tg_kernel_args *a, int *gi, int *bi) {
  *gi = a->attr->i[0] ? 1 : -1;
  *bi = a->attr->i[1] ? (a->attr->i[0] ? 2 : 1) : -1;
}

template <int G>
static __global__ void k_layernorm_fwd(const float *x, const float *gamma, const float *beta,
                                       float *y, int64_t rows, int64_t D, double eps) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * D; /* [D] */
    float *yr = y + r * D;       /* [D] */
    float fm, fr;
    ln_stats<G>(xr, D, eps, lane, &fm, &fr);
    for (int64_t j = lane; j < D; j += G) {
      float v = __fmul_rn(xr[j] - fm, fr);
      if (gamma) v = __fmul_rn(v, gamma[j]);
      if (beta) v += beta[j];
      yr[j] = v;
    }
  }
}

tg_status tg_cuda_layernorm_fwd(const tg_kernel_args *a) {
  int64_t rows, D;
  norm_dims(a->in[0], &rows, &D);
  int gi, bi;
  ln_operands(a, &gi, &bi);
  const float *x = (const float *)a->in[0]->data;                      /* [rows, D] */
  const float *gamma = gi >= 0 ? (const float *)a->in[gi]->data : NULL; /* [D] */
  const float *beta = bi >= 0 ? (const float *)a->in[bi]->data : NULL;  /* [D] */
  float *y = (float *)a->out->data;                                    /* [rows, D] */
  double eps = a->attr->f[0];
  if (D == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_layernorm_fwd<32>, k_layernorm_fwd<ROW_THREADS>, "k_layernorm_fwd",
                     a->node_name, s, rows, D, x, gamma, beta, y, rows, D, eps);
}

/* Per row: stats[r] = (mean, rstd) when stats is non-NULL; dx (when non-NULL) +=
 * rstd * (gy - mean(gy) - xhat * mean(gy * xhat)) with gy = dy * gamma. */
template <int G>
static __global__ void k_layernorm_bwd_rows(const float *x, const float *gamma, const float *dy,
                                            float *dx, float *stats, int64_t rows, int64_t D,
                                            double eps) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * D, *gr = dy + r * D; /* [D] each */
    float fm, fr;
    ln_stats<G>(xr, D, eps, lane, &fm, &fr);
    if (stats && lane == 0) {
      stats[2 * r] = fm;
      stats[2 * r + 1] = fr;
    }
    if (!dx) continue;
    double s1 = 0.0, s2 = 0.0;
    for (int64_t j = lane; j < D; j += G) {
      float gy = gamma ? gr[j] * gamma[j] : gr[j];
      s1 += gy;
      s2 += (double)gy * ((xr[j] - fm) * fr);
    }
    float m1 = (float)(group_reduce<G>(s1, SumOp()) / (double)D);
    float m2 = (float)(group_reduce<G>(s2, SumOp()) / (double)D);
    float *dxr = dx + r * D; /* [D] */
    for (int64_t j = lane; j < D; j += G) {
      float gy = gamma ? __fmul_rn(gr[j], gamma[j]) : gr[j];
      float xhat = (xr[j] - fm) * fr;
      dxr[j] += __fmul_rn(fr, gy - m1 - __fmul_rn(xhat, m2));
    }
  }
}

/* pg[p, j] = sum of dy * xhat and pb[p, j] = sum of dy over part p's rows, in row order (either
 * may be NULL). */
static __global__ void k_layernorm_col_parts(const float *x, const float *dy, const float *stats,
                                             double *pg, double *pb, int64_t rows, int64_t D,
                                             int64_t subs) {
  /* x, dy: [rows, D]; stats: [rows, 2]; pg, pb: [subs, D] */
  int64_t n = subs * D;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t p = i / D, j = i - p * D;
    int64_t r1 = (p + 1) * NORM_SUB_ROWS < rows ? (p + 1) * NORM_SUB_ROWS : rows;
    double sg = 0.0, sb = 0.0;
    for (int64_t r = p * NORM_SUB_ROWS; r < r1; r++) {
      float g = dy[r * D + j];
      sg += (double)g * ((x[r * D + j] - stats[2 * r]) * stats[2 * r + 1]);
      sb += g;
    }
    if (pg) pg[i] = sg;
    if (pb) pb[i] = sb;
  }
}

/* dgamma += sum_rows dy * xhat; dbeta += sum_rows dy: the rows kernel saves each row's stats,
 * the parts kernel sums column parts, the finish kernel adds them chunk by chunk. */
tg_status tg_cuda_layernorm_bwd(const tg_kernel_args *a) {
  int64_t rows, D;
  norm_dims(a->in[0], &rows, &D);
  int gi, bi;
  ln_operands(a, &gi, &bi);
  const float *x = (const float *)a->in[0]->data;                      /* [rows, D] */
  const float *gamma = gi >= 0 ? (const float *)a->in[gi]->data : NULL; /* [D] */
  const float *dy = a->out_grad;                                       /* [rows, D] */
  float *dx = a->in_grad[0];                                           /* [rows, D] */
  float *dgamma = gi >= 0 ? a->in_grad[gi] : NULL;                     /* [D] */
  float *dbeta = bi >= 0 ? a->in_grad[bi] : NULL;                      /* [D] */
  double eps = a->attr->f[0];
  if (D == 0 || rows == 0 || (!dx && !dgamma && !dbeta)) return TG_OK;
  int dev = tg_cuda_dev_of(a);
  cudaStream_t s = tg_cuda_stream(dev);
  int64_t subs = norm_subs(rows);
  double *pg = NULL, *pb = NULL; /* [subs, D] each */
  float *stats = NULL;           /* [rows, 2] */
  if (dgamma || dbeta) {
    size_t np = (size_t)(subs * D);
    size_t bytes = sizeof(double) * 2 * np + sizeof(float) * 2 * (size_t)rows;
    double *buf = (double *)tg_cuda_scratch(dev, bytes);
    if (!buf) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
    pg = dgamma ? buf : NULL;
    pb = dbeta ? buf + np : NULL;
    stats = (float *)(buf + 2 * np);
  }
  tg_status st = launch_rows(k_layernorm_bwd_rows<32>, k_layernorm_bwd_rows<ROW_THREADS>,
                             "k_layernorm_bwd_rows", a->node_name, s, rows, D, x, gamma, dy, dx,
                             stats, rows, D, eps);
  if (st != TG_OK || !stats) return st;
  k_layernorm_col_parts<<<tg_cuda_blocks(subs * D), TG_CUDA_THREADS, 0, s>>>(x, dy, stats, pg, pb,
                                                                              rows, D, subs);
  if ((st = tg_cuda_launched("k_layernorm_col_parts", a->node_name)) != TG_OK) return st;
  if (dgamma && (st = norm_col_finish(a, s, pg, dgamma, subs, D)) != TG_OK) return st;
  return dbeta ? norm_col_finish(a, s, pb, dbeta, subs, D) : TG_OK;
}

/* ---- rmsnorm ---- */

/* 1/sqrt(mean(x^2) + eps) of row xr, in double. */
template <int G>
static __device__ double rms_rstd(const float *xr, int64_t D, double eps, int lane) {
  double s = 0.0;
  for (int64_t j = lane; j < D; j += G) s += (double)xr[j] * xr[j];
  return 1.0 / sqrt(group_reduce<G>(s, SumOp()) / (double)D + eps);
}

template <int G>
static __global__ void k_rmsnorm_fwd(const float *x, const float *w, float *y, int64_t rows,
                                     int64_t D, double eps) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * D; /* [D] */
    float *yr = y + r * D;       /* [D] */
    float fr = (float)rms_rstd<G>(xr, D, eps, lane);
    for (int64_t j = lane; j < D; j += G) yr[j] = w ? xr[j] * fr * w[j] : xr[j] * fr;
  }
}

tg_status tg_cuda_rmsnorm_fwd(const tg_kernel_args *a) {
  int64_t rows, D;
  norm_dims(a->in[0], &rows, &D);
  const float *x = (const float *)a->in[0]->data;                         /* [rows, D] */
  const float *w = a->attr->i[0] ? (const float *)a->in[1]->data : NULL; /* [D] */
  float *y = (float *)a->out->data;                                       /* [rows, D] */
  double eps = a->attr->f[0];
  if (D == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_rmsnorm_fwd<32>, k_rmsnorm_fwd<ROW_THREADS>, "k_rmsnorm_fwd", a->node_name,
                     s, rows, D, x, w, y, rows, D, eps);
}

/* Per row: rstd[r] (double) when rstd is non-NULL; dx (when non-NULL) +=
 * rstd * gw - x * rstd^3 * mean(gw * x) with gw = dy * w. */
template <int G>
static __global__ void k_rmsnorm_bwd_rows(const float *x, const float *w, const float *dy,
                                          float *dx, double *rstd, int64_t rows, int64_t D,
                                          double eps) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * D, *gr = dy + r * D; /* [D] each */
    double rs = rms_rstd<G>(xr, D, eps, lane);
    if (rstd && lane == 0) rstd[r] = rs;
    if (!dx) continue;
    double s = 0.0;
    for (int64_t j = lane; j < D; j += G) s += (double)(w ? gr[j] * w[j] : gr[j]) * xr[j];
    s = group_reduce<G>(s, SumOp());
    float fr = (float)rs;
    float c = (float)(rs * rs * rs * s / (double)D);
    float *dxr = dx + r * D; /* [D] */
    for (int64_t j = lane; j < D; j += G) {
      float gw = w ? gr[j] * w[j] : gr[j];
      dxr[j] += __fmul_rn(fr, gw) - __fmul_rn(xr[j], c);
    }
  }
}

/* pw[p, j] = sum of dy * x * rstd over part p's rows, in row order. */
static __global__ void k_rmsnorm_col_parts(const float *x, const float *dy, const double *rstd,
                                           double *pw, int64_t rows, int64_t D, int64_t subs) {
  /* x, dy: [rows, D]; rstd: [rows]; pw: [subs, D] */
  int64_t n = subs * D;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t p = i / D, j = i - p * D;
    int64_t r1 = (p + 1) * NORM_SUB_ROWS < rows ? (p + 1) * NORM_SUB_ROWS : rows;
    double sw = 0.0;
    for (int64_t r = p * NORM_SUB_ROWS; r < r1; r++)
      sw += __dmul_rn((double)dy[r * D + j] * x[r * D + j], rstd[r]);
    pw[i] = sw;
  }
}

/* dw += sum_rows dy * x * rstd, in the same three steps as the layernorm backward. */
tg_status tg_cuda_rmsnorm_bwd(const tg_kernel_args *a) {
  int64_t rows, D;
  norm_dims(a->in[0], &rows, &D);
  int has_w = a->attr->i[0] != 0;
  const float *x = (const float *)a->in[0]->data;                /* [rows, D] */
  const float *w = has_w ? (const float *)a->in[1]->data : NULL; /* [D] */
  const float *dy = a->out_grad;                                 /* [rows, D] */
  float *dx = a->in_grad[0];                                     /* [rows, D] */
  float *dw = has_w ? a->in_grad[1] : NULL;                      /* [D] */
  double eps = a->attr->f[0];
  if (D == 0 || rows == 0 || (!dx && !dw)) return TG_OK;
  int dev = tg_cuda_dev_of(a);
  cudaStream_t s = tg_cuda_stream(dev);
  int64_t subs = norm_subs(rows);
  double *pw = NULL, *rstd = NULL; /* [subs, D], [rows] */
  if (dw) {
    size_t np = (size_t)(subs * D);
    pw = (double *)tg_cuda_scratch(dev, sizeof(double) * (np + (size_t)rows));
    if (!pw) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
    rstd = pw + np;
  }
  tg_status st = launch_rows(k_rmsnorm_bwd_rows<32>, k_rmsnorm_bwd_rows<ROW_THREADS>,
                             "k_rmsnorm_bwd_rows", a->node_name, s, rows, D, x, w, dy, dx, rstd,
                             rows, D, eps);
  if (st != TG_OK || !dw) return st;
  k_rmsnorm_col_parts<<<tg_cuda_blocks(subs * D), TG_CUDA_THREADS, 0, s>>>(x, dy, rstd, pw, rows,
                                                                            D, subs);
  if ((st = tg_cuda_launched("k_rmsnorm_col_parts", a->node_name)) != TG_OK) return st;
  return norm_col_finish(a, s, pw, dw, subs, D);
}
