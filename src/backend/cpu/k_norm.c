/* CPU kernels over the last dim: softmax, log_softmax, layernorm, rmsnorm (forward and backward). */
#include <math.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_rows.h"
#include "ops/norm_args.h"

/* Below this many elements a kernel runs on the calling thread only. */
#define NORM_PAR_MIN 32768
/* Rows per pass of the layernorm/rmsnorm backward (bounds the per-row stats kept on the stack). */
#define NORM_CHUNK_ROWS 2048
/* Columns per task when summing gamma/beta/weight gradients over rows. */
#define NORM_COL_BLOCK 64

/* ---- softmax / log_softmax ---- */

tg_status tg_cpu_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, D;
  tg_norm_dims(a->in[0], &rows, &D);
  const float *x = (const float *)a->in[0]->data; /* [rows, D] */
  float *y = (float *)a->out->data;               /* [rows, D] */
  if (D == 0) return TG_OK;
#pragma omp parallel for if (rows * D > NORM_PAR_MIN)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * D;
    float *yr = y + r * D;
    float m = tg_row_max(xr, D);
    double s = 0.0;
    for (int64_t j = 0; j < D; j++) {
      yr[j] = expf(xr[j] - m);
      s += yr[j];
    }
    float inv = (float)(1.0 / s);
    for (int64_t j = 0; j < D; j++) yr[j] *= inv;
  }
  return TG_OK;
}

/* dx = y * (dy - sum(dy * y)); reads only the output. */
tg_status tg_cpu_softmax_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [rows, D] */
  if (!dx) return TG_OK;
  int64_t rows, D;
  tg_norm_dims(a->out, &rows, &D);
  const float *y = (const float *)a->out->data; /* [rows, D] */
  const float *dy = a->out_grad;                /* [rows, D] */
#pragma omp parallel for if (rows * D > NORM_PAR_MIN)
  for (int64_t r = 0; r < rows; r++) {
    const float *yr = y + r * D, *gr = dy + r * D;
    double dot = 0.0;
    for (int64_t j = 0; j < D; j++) dot += (double)gr[j] * yr[j];
    float fd = (float)dot;
    for (int64_t j = 0; j < D; j++) dx[r * D + j] += yr[j] * (gr[j] - fd);
  }
  return TG_OK;
}

tg_status tg_cpu_log_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, D;
  tg_norm_dims(a->in[0], &rows, &D);
  const float *x = (const float *)a->in[0]->data; /* [rows, D] */
  float *y = (float *)a->out->data;               /* [rows, D] */
  if (D == 0) return TG_OK;
#pragma omp parallel for if (rows * D > NORM_PAR_MIN)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * D;
    float m = tg_row_max(xr, D);
    float lse = (float)log(tg_row_exp_sum(xr, D, m));
    for (int64_t j = 0; j < D; j++) y[r * D + j] = (xr[j] - m) - lse;
  }
  return TG_OK;
}

/* dx = dy - exp(y) * sum(dy); reads only the output. */
tg_status tg_cpu_log_softmax_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [rows, D] */
  if (!dx) return TG_OK;
  int64_t rows, D;
  tg_norm_dims(a->out, &rows, &D);
  const float *y = (const float *)a->out->data; /* [rows, D] */
  const float *dy = a->out_grad;                /* [rows, D] */
#pragma omp parallel for if (rows * D > NORM_PAR_MIN)
  for (int64_t r = 0; r < rows; r++) {
    const float *yr = y + r * D, *gr = dy + r * D;
    double s = 0.0;
    for (int64_t j = 0; j < D; j++) s += gr[j];
    float fs = (float)s;
    for (int64_t j = 0; j < D; j++) dx[r * D + j] += gr[j] - expf(yr[j]) * fs;
  }
  return TG_OK;
}

/* ---- layernorm ---- */

/* Mean and 1/sqrt(biased variance + eps) of one row, in double. */
static void ln_stats(const float *xr, int64_t D, double eps, double *mean, double *rstd) {
  double s = 0.0;
  for (int64_t j = 0; j < D; j++) s += xr[j];
  double mu = s / (double)D, v = 0.0;
  for (int64_t j = 0; j < D; j++) {
    double d = xr[j] - mu;
    v += d * d;
  }
  *mean = mu;
  *rstd = 1.0 / sqrt(v / (double)D + eps);
}

tg_status tg_cpu_layernorm_fwd(const tg_kernel_args *a) {
  const tg_ln_args p = tg_ln_args_of(a);
  int64_t rows = p.rows, D = p.D;
  const float *x = p.x, *gamma = p.gamma, *beta = p.beta; /* [rows, D], [D] or NULL each */
  float *y = p.y;                                          /* [rows, D] */
  double eps = p.eps;
  if (D == 0) return TG_OK;
#pragma omp parallel for if (rows * D > NORM_PAR_MIN)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * D;
    float *yr = y + r * D;
    double mean, rstd;
    ln_stats(xr, D, eps, &mean, &rstd);
    float fm = (float)mean, fr = (float)rstd;
    for (int64_t j = 0; j < D; j++) {
      float v = (xr[j] - fm) * fr;
      if (gamma) v *= gamma[j];
      if (beta) v += beta[j];
      yr[j] = v;
    }
  }
  return TG_OK;
}

/* dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)) with gy = dy * gamma;
 * dgamma += sum_rows dy * xhat; dbeta += sum_rows dy. Rows go in chunks so that each chunk's
 * stats fit on the stack and gamma/beta sums can be split by columns without races. */
tg_status tg_cpu_layernorm_bwd(const tg_kernel_args *a) {
  const tg_ln_args p = tg_ln_args_of(a);
  int64_t rows = p.rows, D = p.D;
  const float *x = p.x, *gamma = p.gamma, *dy = p.dy;     /* [rows, D], [D] or NULL, [rows, D] */
  float *dx = p.dx, *dgamma = p.dgamma, *dbeta = p.dbeta; /* like x, [D], [D]; NULL: not wanted */
  double eps = p.eps;
  if (D == 0) return TG_OK;
  int64_t nblocks = (D + NORM_COL_BLOCK - 1) / NORM_COL_BLOCK;
  for (int64_t r0 = 0; r0 < rows; r0 += NORM_CHUNK_ROWS) {
    int64_t nr = rows - r0 < NORM_CHUNK_ROWS ? rows - r0 : NORM_CHUNK_ROWS;
    double mean[NORM_CHUNK_ROWS], rstd[NORM_CHUNK_ROWS]; /* [nr] */
    int par = nr * D > NORM_PAR_MIN;
#pragma omp parallel for if (par)
    for (int64_t i = 0; i < nr; i++) {
      const float *xr = x + (r0 + i) * D, *gr = dy + (r0 + i) * D;
      ln_stats(xr, D, eps, &mean[i], &rstd[i]);
      if (!dx) continue;
      float fm = (float)mean[i], fr = (float)rstd[i];
      double s1 = 0.0, s2 = 0.0;
      for (int64_t j = 0; j < D; j++) {
        float gy = gamma ? gr[j] * gamma[j] : gr[j];
        s1 += gy;
        s2 += (double)gy * ((xr[j] - fm) * fr);
      }
      float m1 = (float)(s1 / (double)D), m2 = (float)(s2 / (double)D);
      float *dxr = dx + (r0 + i) * D;
      for (int64_t j = 0; j < D; j++) {
        float gy = gamma ? gr[j] * gamma[j] : gr[j];
        float xhat = (xr[j] - fm) * fr;
        dxr[j] += fr * (gy - m1 - xhat * m2);
      }
    }
    if (!dgamma && !dbeta) continue;
#pragma omp parallel for if (par)
    for (int64_t b = 0; b < nblocks; b++) {
      int64_t j0 = b * NORM_COL_BLOCK;
      int64_t nj = D - j0 < NORM_COL_BLOCK ? D - j0 : NORM_COL_BLOCK;
      double sg[NORM_COL_BLOCK] = {0}, sb[NORM_COL_BLOCK] = {0}; /* [nj] */
      for (int64_t i = 0; i < nr; i++) {
        const float *xr = x + (r0 + i) * D + j0, *gr = dy + (r0 + i) * D + j0;
        float fm = (float)mean[i], fr = (float)rstd[i];
        for (int64_t j = 0; j < nj; j++) {
          sg[j] += (double)gr[j] * ((xr[j] - fm) * fr);
          sb[j] += gr[j];
        }
      }
      for (int64_t j = 0; j < nj; j++) {
        if (dgamma) dgamma[j0 + j] += (float)sg[j];
        if (dbeta) dbeta[j0 + j] += (float)sb[j];
      }
    }
  }
  return TG_OK;
}

/* ---- rmsnorm ---- */

/* 1/sqrt(mean(x^2) + eps) of one row, in double. */
static double rms_rstd(const float *xr, int64_t D, double eps) {
  double s = 0.0;
  for (int64_t j = 0; j < D; j++) s += (double)xr[j] * xr[j];
  return 1.0 / sqrt(s / (double)D + eps);
}

tg_status tg_cpu_rmsnorm_fwd(const tg_kernel_args *a) {
  const tg_rms_args p = tg_rms_args_of(a);
  int64_t rows = p.rows, D = p.D;
  const float *x = p.x, *w = p.w; /* [rows, D], [D] or NULL */
  float *y = p.y;                 /* [rows, D] */
  double eps = p.eps;
  if (D == 0) return TG_OK;
#pragma omp parallel for if (rows * D > NORM_PAR_MIN)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * D;
    float fr = (float)rms_rstd(xr, D, eps);
    for (int64_t j = 0; j < D; j++) y[r * D + j] = w ? xr[j] * fr * w[j] : xr[j] * fr;
  }
  return TG_OK;
}

/* dx = rstd * gw - x * rstd^3 * mean(gw * x) with gw = dy * w; dw += sum_rows dy * x * rstd. */
tg_status tg_cpu_rmsnorm_bwd(const tg_kernel_args *a) {
  const tg_rms_args p = tg_rms_args_of(a);
  int64_t rows = p.rows, D = p.D;
  const float *x = p.x, *w = p.w, *dy = p.dy; /* [rows, D], [D] or NULL, [rows, D] */
  float *dx = p.dx, *dw = p.dw;               /* like x, [D]; NULL: not wanted */
  double eps = p.eps;
  if (D == 0) return TG_OK;
  int64_t nblocks = (D + NORM_COL_BLOCK - 1) / NORM_COL_BLOCK;
  for (int64_t r0 = 0; r0 < rows; r0 += NORM_CHUNK_ROWS) {
    int64_t nr = rows - r0 < NORM_CHUNK_ROWS ? rows - r0 : NORM_CHUNK_ROWS;
    double rstd[NORM_CHUNK_ROWS]; /* [nr] */
    int par = nr * D > NORM_PAR_MIN;
#pragma omp parallel for if (par)
    for (int64_t i = 0; i < nr; i++) {
      const float *xr = x + (r0 + i) * D, *gr = dy + (r0 + i) * D;
      rstd[i] = rms_rstd(xr, D, eps);
      if (!dx) continue;
      double s = 0.0;
      for (int64_t j = 0; j < D; j++) s += (double)(w ? gr[j] * w[j] : gr[j]) * xr[j];
      float fr = (float)rstd[i];
      float c = (float)(rstd[i] * rstd[i] * rstd[i] * s / (double)D);
      float *dxr = dx + (r0 + i) * D;
      for (int64_t j = 0; j < D; j++) {
        float gw = w ? gr[j] * w[j] : gr[j];
        dxr[j] += fr * gw - xr[j] * c;
      }
    }
    if (!dw) continue;
#pragma omp parallel for if (par)
    for (int64_t b = 0; b < nblocks; b++) {
      int64_t j0 = b * NORM_COL_BLOCK;
      int64_t nj = D - j0 < NORM_COL_BLOCK ? D - j0 : NORM_COL_BLOCK;
      double sw[NORM_COL_BLOCK] = {0}; /* [nj] */
      for (int64_t i = 0; i < nr; i++) {
        const float *xr = x + (r0 + i) * D + j0, *gr = dy + (r0 + i) * D + j0;
        for (int64_t j = 0; j < nj; j++) sw[j] += (double)gr[j] * xr[j] * rstd[i];
      }
      for (int64_t j = 0; j < nj; j++) dw[j0 + j] += (float)sw[j];
    }
  }
  return TG_OK;
}
