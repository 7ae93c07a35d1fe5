/* CUDA kernels over the last dim, mirroring k_norm.c: softmax, log_softmax, layernorm, rmsnorm. */
#include <math.h>
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_rows.cuh"
#include "ops/norm_args.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* Numerics follow the CPU kernels step by step: the same float/double split, max shift, eps
 * placement and conversions. Products that feed an addition go through __fmul_rn / __dmul_rn,
 * which nvcc never fuses into an FMA, so they round as on the CPU (ISO C, no contraction); a
 * product of two floats taken in double is exact and needs no such care. Only the order of the
 * double sums differs from the CPU. */

/* Gamma/beta/weight gradients: the CPU sums each chunk of NORM_CHUNK_ROWS rows in double and adds
 * it to the float gradient chunk by chunk; here each chunk is summed from NORM_SUB_ROWS-row parts
 * (one thread per column and part, rows in order), then added chunk by chunk in the same way. */
#define NORM_CHUNK_ROWS 2048
#define NORM_SUB_ROWS 128
#define SUBS_PER_CHUNK (NORM_CHUNK_ROWS / NORM_SUB_ROWS)

static_assert(NORM_CHUNK_ROWS % NORM_SUB_ROWS == 0, "row layout");

/* ---- softmax / log_softmax ---- */

typedef void (*rows_fwd_kernel)(const float *x, float *y, int64_t rows, int64_t D);
typedef void (*rows_bwd_kernel)(const float *y, const float *dy, float *dx, int64_t rows, int64_t D);

/* A forward that maps x [rows, D] (input 0) to y [rows, D]: warp or block per row. */
static tg_status rows_fwd(const tg_kernel_args *a, rows_fwd_kernel warp, rows_fwd_kernel block,
                          const char *kernel) {
  int64_t rows, D;
  tg_norm_dims(a->in[0], &rows, &D);
  const float *x = (const float *)a->in[0]->data; /* [rows, D] */
  float *y = (float *)a->out->data;               /* [rows, D] */
  if (D == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(warp, block, kernel, a->node_name, s, rows, D, x, y, rows, D);
}

/* A backward that reads only the output: dx [rows, D] += f(y, dy); nothing when dx is not wanted. */
static tg_status rows_bwd(const tg_kernel_args *a, rows_bwd_kernel warp, rows_bwd_kernel block,
                          const char *kernel) {
  float *dx = a->in_grad[0]; /* [rows, D] */
  if (!dx) return TG_OK;
  int64_t rows, D;
  tg_norm_dims(a->out, &rows, &D);
  const float *y = (const float *)a->out->data; /* [rows, D] */
  const float *dy = a->out_grad;                /* [rows, D] */
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(warp, block, kernel, a->node_name, s, rows, D, y, dy, dx, rows, D);
}

template <int G>
static __global__ void k_softmax_fwd(const float *x, float *y, int64_t rows, int64_t D) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * D; /* [D] */
    float *yr = y + r * D;       /* [D] */
    float m = row_max<G>(xr, D, lane);
    float inv = (float)(1.0 / row_exp_sum<G>(xr, D, m, lane));
    for (int64_t j = lane; j < D; j += G) yr[j] = expf(xr[j] - m) * inv;
  }
}

tg_status tg_cuda_softmax_fwd(const tg_kernel_args *a) {
  return rows_fwd(a, k_softmax_fwd<32>, k_softmax_fwd<TG_ROW_THREADS>, "k_softmax_fwd");
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
  return rows_bwd(a, k_softmax_bwd<32>, k_softmax_bwd<TG_ROW_THREADS>, "k_softmax_bwd");
}

template <int G>
static __global__ void k_log_softmax_fwd(const float *x, float *y, int64_t rows, int64_t D) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    const float *xr = x + r * D; /* [D] */
    float *yr = y + r * D;       /* [D] */
    float m = row_max<G>(xr, D, lane);
    float lse = (float)log(row_exp_sum<G>(xr, D, m, lane));
    for (int64_t j = lane; j < D; j += G) yr[j] = (xr[j] - m) - lse;
  }
}

tg_status tg_cuda_log_softmax_fwd(const tg_kernel_args *a) {
  return rows_fwd(a, k_log_softmax_fwd<32>, k_log_softmax_fwd<TG_ROW_THREADS>, "k_log_softmax_fwd");
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
  return rows_bwd(a, k_log_softmax_bwd<32>, k_log_softmax_bwd<TG_ROW_THREADS>, "k_log_softmax_bwd");
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
  const tg_ln_args p = tg_ln_args_of(a);
  if (p.D == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_layernorm_fwd<32>, k_layernorm_fwd<TG_ROW_THREADS>, "k_layernorm_fwd",
                     a->node_name, s, p.rows, p.D, p.x, p.gamma, p.beta, p.y, p.rows, p.D, p.eps);
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
  const tg_ln_args p = tg_ln_args_of(a);
  if (p.D == 0 || p.rows == 0 || (!p.dx && !p.dgamma && !p.dbeta)) return TG_OK;
  int dev = tg_cuda_dev_of(a);
  cudaStream_t s = tg_cuda_stream(dev);
  int64_t subs = norm_subs(p.rows);
  double *pg = NULL, *pb = NULL; /* [subs, D] each */
  float *stats = NULL;           /* [rows, 2] */
  if (p.dgamma || p.dbeta) {
    size_t np = (size_t)(subs * p.D);
    size_t bytes = sizeof(double) * 2 * np + sizeof(float) * 2 * (size_t)p.rows;
    double *buf = (double *)tg_cuda_scratch(dev, bytes);
    if (!buf) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
    pg = p.dgamma ? buf : NULL;
    pb = p.dbeta ? buf + np : NULL;
    stats = (float *)(buf + 2 * np);
  }
  tg_status st = launch_rows(k_layernorm_bwd_rows<32>, k_layernorm_bwd_rows<TG_ROW_THREADS>,
                             "k_layernorm_bwd_rows", a->node_name, s, p.rows, p.D, p.x, p.gamma,
                             p.dy, p.dx, stats, p.rows, p.D, p.eps);
  if (st != TG_OK || !stats) return st;
  k_layernorm_col_parts<<<tg_cuda_blocks(subs * p.D), TG_CUDA_THREADS, 0, s>>>(
      p.x, p.dy, stats, pg, pb, p.rows, p.D, subs);
  if ((st = tg_cuda_launched("k_layernorm_col_parts", a->node_name)) != TG_OK) return st;
  if (p.dgamma && (st = norm_col_finish(a, s, pg, p.dgamma, subs, p.D)) != TG_OK) return st;
  return p.dbeta ? norm_col_finish(a, s, pb, p.dbeta, subs, p.D) : TG_OK;
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
  const tg_rms_args p = tg_rms_args_of(a);
  if (p.D == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_rmsnorm_fwd<32>, k_rmsnorm_fwd<TG_ROW_THREADS>, "k_rmsnorm_fwd", a->node_name,
                     s, p.rows, p.D, p.x, p.w, p.y, p.rows, p.D, p.eps);
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
  const tg_rms_args p = tg_rms_args_of(a);
  if (p.D == 0 || p.rows == 0 || (!p.dx && !p.dw)) return TG_OK;
  int dev = tg_cuda_dev_of(a);
  cudaStream_t s = tg_cuda_stream(dev);
  int64_t subs = norm_subs(p.rows);
  double *pw = NULL, *rstd = NULL; /* [subs, D], [rows] */
  if (p.dw) {
    size_t np = (size_t)(subs * p.D);
    pw = (double *)tg_cuda_scratch(dev, sizeof(double) * (np + (size_t)p.rows));
    if (!pw) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
    rstd = pw + np;
  }
  tg_status st = launch_rows(k_rmsnorm_bwd_rows<32>, k_rmsnorm_bwd_rows<TG_ROW_THREADS>,
                             "k_rmsnorm_bwd_rows", a->node_name, s, p.rows, p.D, p.x, p.w, p.dy,
                             p.dx, rstd, p.rows, p.D, p.eps);
  if (st != TG_OK || !p.dw) return st;
  k_rmsnorm_col_parts<<<tg_cuda_blocks(subs * p.D), TG_CUDA_THREADS, 0, s>>>(p.x, p.dy, rstd, pw,
                                                                              p.rows, p.D, subs);
  if ((st = tg_cuda_launched("k_rmsnorm_col_parts", a->node_name)) != TG_OK) return st;
  return norm_col_finish(a, s, pw, p.dw, subs, p.D);
}
