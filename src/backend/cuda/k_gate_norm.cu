/* CUDA kernels for gate_add_norm, mirroring k_gate_norm.c with the layernorm kernels' structure (a warp or block per row, column parts for gamma/beta). */
#include <math.h>
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_rows.cuh"
#include "ops/gate_norm_args.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* Numerics follow the CPU step by step (k_gate_norm.c, itself the unfused sigmoid, mul, add and
 * layernorm chain): products that feed an addition go through __fmul_rn / __dmul_rn, which nvcc
 * never fuses into an FMA. Only the order of the double sums differs from the CPU. z is not
 * stored: every pass recomputes it from a and skip. The op's workspace (sized for the CPU) is
 * not used here; the backward takes its row stats and column parts from tg_cuda_scratch. */

/* Super-rows (S rows: one of each affine slot) per column part of the gamma/beta sums. */
#define GAN_SUB 64

/* Overflow-free logistic function, as the elementwise sigmoid. */
static __device__ __forceinline__ float gan_sigmoid(float x) {
  float e = expf(-fabsf(x));
  float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

/* z[r, j] = skip + value * sigmoid(gate). */
static __device__ __forceinline__ float gan_z(const float *a, const float *skip, int64_t r, int64_t j,
                                              int64_t D) {
  const float *val = a + r * 2 * D; /* [2D]: value | gate */
  return skip[r * D + j] + __fmul_rn(val[j], gan_sigmoid(val[D + j]));
}

/* Mean and rstd of row r's z as the floats the CPU uses (double sums). */
template <int G>
static __device__ void gan_stats(const float *a, const float *skip, int64_t r, int64_t D, double eps, int lane,
                                 float *fm, float *fr) {
  double s = 0.0;
  for (int64_t j = lane; j < D; j += G) s += gan_z(a, skip, r, j, D);
  double mu = group_reduce<G>(s, SumOp()) / (double)D, v = 0.0;
  for (int64_t j = lane; j < D; j += G) {
    double d = gan_z(a, skip, r, j, D) - mu;
    v += __dmul_rn(d, d);
  }
  v = group_reduce<G>(v, SumOp());
  *fm = (float)mu;
  *fr = (float)(1.0 / sqrt(v / (double)D + eps));
}

template <int G>
static __global__ void k_gan_fwd(const float *a, const float *skip, const float *gamma, const float *beta,
                                 float *y, int64_t rows, int64_t D, int64_t S, double eps) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    float fm, fr;
    gan_stats<G>(a, skip, r, D, eps, lane, &fm, &fr);
    const float *g = gamma ? gamma + r % S * D : NULL, *b = beta ? beta + r % S * D : NULL; /* [D] or NULL */
    float *yr = y + r * D;                                                                   /* [D] */
    for (int64_t j = lane; j < D; j += G) {
      float v = __fmul_rn(gan_z(a, skip, r, j, D) - fm, fr);
      if (g) v = __fmul_rn(v, g[j]) + b[j];
      yr[j] = v;
    }
  }
}

tg_status tg_cuda_gate_add_norm_fwd(const tg_kernel_args *a) {
  const tg_gan_args p = tg_gan_args_of(a);
  if (p.D == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  return launch_rows(k_gan_fwd<32>, k_gan_fwd<TG_ROW_THREADS>, "k_gan_fwd", a->node_name, s, p.rows, p.D, p.a,
                     p.skip, p.gamma, p.beta, p.y, p.rows, p.D, p.S, p.eps);
}

/* Per row: stats[r] = (mean, rstd) when stats is non-NULL; when da or dskip is wanted, dz =
 * rstd * (gy - mean(gy) - xhat * mean(gy * xhat)) with gy = dy * gamma, dskip += dz,
 * dvalue += dz * s and dgate += dz * value * s * (1 - s) with s = sigmoid(gate). */
template <int G>
static __global__ void k_gan_bwd_rows(const float *a, const float *skip, const float *gamma, const float *dy,
                                      float *da, float *dskip, float *stats, int64_t rows, int64_t D, int64_t S,
                                      double eps) {
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < rows; r += row_step<G>()) {
    float fm, fr;
    gan_stats<G>(a, skip, r, D, eps, lane, &fm, &fr);
    if (stats && lane == 0) {
      stats[2 * r] = fm;
      stats[2 * r + 1] = fr;
    }
    if (!da && !dskip) continue;
    const float *gr = dy + r * D;                          /* [D] */
    const float *g = gamma ? gamma + r % S * D : NULL;     /* [D] or NULL */
    double s1 = 0.0, s2 = 0.0;
    for (int64_t j = lane; j < D; j += G) {
      float gy = g ? gr[j] * g[j] : gr[j];
      s1 += gy;
      s2 += (double)gy * ((gan_z(a, skip, r, j, D) - fm) * fr);
    }
    float m1 = (float)(group_reduce<G>(s1, SumOp()) / (double)D);
    float m2 = (float)(group_reduce<G>(s2, SumOp()) / (double)D);
    const float *val = a + r * 2 * D; /* [2D]: value | gate */
    for (int64_t j = lane; j < D; j += G) {
      float gy = g ? __fmul_rn(gr[j], g[j]) : gr[j];
      float xhat = (gan_z(a, skip, r, j, D) - fm) * fr;
      float dz = __fmul_rn(fr, gy - m1 - __fmul_rn(xhat, m2));
      if (dskip) dskip[r * D + j] += dz;
      if (da) {
        float s = gan_sigmoid(val[D + j]);
        da[r * 2 * D + j] += __fmul_rn(dz, s);
        da[r * 2 * D + D + j] += __fmul_rn(__fmul_rn(__fmul_rn(dz, val[j]), s), 1.0f - s);
      }
    }
  }
}

/* Column c of the [S D] gamma/beta gradients (slot c / D, element c % D) summed over part p's
 * super-rows q (row q S + slot), in order: pg[p, c] = sum dy * xhat, pb[p, c] = sum dy (either
 * may be NULL). */
static __global__ void k_gan_col_parts(const float *a, const float *skip, const float *dy, const float *stats,
                                       double *pg, double *pb, int64_t rows, int64_t D, int64_t S, int64_t subs) {
  /* stats: [rows, 2]; pg, pb: [subs, S D] */
  int64_t ncol = S * D, n = subs * ncol, nq = rows / S;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t p = i / ncol, c = i - p * ncol, slot = c / D, j = c - slot * D;
    int64_t q1 = (p + 1) * GAN_SUB < nq ? (p + 1) * GAN_SUB : nq;
    double sg = 0.0, sb = 0.0;
    for (int64_t q = p * GAN_SUB; q < q1; q++) {
      int64_t r = q * S + slot;
      float gv = dy[r * D + j];
      sg += (double)gv * ((gan_z(a, skip, r, j, D) - stats[2 * r]) * stats[2 * r + 1]);
      sb += gv;
    }
    if (pg) pg[i] = sg;
    if (pb) pb[i] = sb;
  }
}

/* dst[c] += (float)(sum of the parts' column c, in part order). */
static __global__ void k_gan_col_finish(const double *part, float *dst, int64_t subs, int64_t ncol) {
  /* part: [subs, ncol]; dst: [ncol] */
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < ncol; c += (int64_t)gridDim.x * blockDim.x) {
    double t = 0.0;
    for (int64_t p = 0; p < subs; p++) t += part[p * ncol + c];
    dst[c] += (float)t;
  }
}

/* The rows kernel (input gradients, and the row stats when gamma/beta gradients are wanted), then
 * the column parts and their finish for dgamma and dbeta. */
tg_status tg_cuda_gate_add_norm_bwd(const tg_kernel_args *a) {
  const tg_gan_args p = tg_gan_args_of(a);
  if (p.D == 0 || p.rows == 0 || (!p.da && !p.dskip && !p.dgamma && !p.dbeta)) return TG_OK;
  int dev = tg_cuda_dev_of(a);
  cudaStream_t s = tg_cuda_stream(dev);
  int64_t ncol = p.S * p.D, subs = (p.rows / p.S + GAN_SUB - 1) / GAN_SUB;
  double *pg = NULL, *pb = NULL; /* [subs, S D] each */
  float *stats = NULL;           /* [rows, 2] */
  if (p.dgamma || p.dbeta) {
    size_t np = (size_t)(subs * ncol);
    size_t bytes = sizeof(double) * 2 * np + sizeof(float) * 2 * (size_t)p.rows;
    double *buf = (double *)tg_cuda_scratch(dev, bytes);
    if (!buf) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
    pg = p.dgamma ? buf : NULL;
    pb = p.dbeta ? buf + np : NULL;
    stats = (float *)(buf + 2 * np);
  }
  tg_status st = launch_rows(k_gan_bwd_rows<32>, k_gan_bwd_rows<TG_ROW_THREADS>, "k_gan_bwd_rows", a->node_name,
                             s, p.rows, p.D, p.a, p.skip, p.gamma, p.dy, p.da, p.dskip, stats, p.rows, p.D, p.S,
                             p.eps);
  if (st != TG_OK || !stats) return st;
  if (subs > 0) {
    k_gan_col_parts<<<tg_cuda_blocks(subs * ncol), TG_CUDA_THREADS, 0, s>>>(p.a, p.skip, p.dy, stats, pg, pb, p.rows,
                                                                            p.D, p.S, subs);
    if ((st = tg_cuda_launched("k_gan_col_parts", a->node_name)) != TG_OK) return st;
  }
  if (pg) {
    k_gan_col_finish<<<tg_cuda_blocks(ncol), TG_CUDA_THREADS, 0, s>>>(pg, p.dgamma, subs, ncol);
    if ((st = tg_cuda_launched("k_gan_col_finish", a->node_name)) != TG_OK) return st;
  }
  if (pb) {
    k_gan_col_finish<<<tg_cuda_blocks(ncol), TG_CUDA_THREADS, 0, s>>>(pb, p.dbeta, subs, ncol);
    return tg_cuda_launched("k_gan_col_finish", a->node_name);
  }
  return TG_OK;
}
