/* CPU kernels over the last dim: softmax, log_softmax, layernorm, rmsnorm (forward and backward). */
#include <math.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_rows.h"
#include "backend/cpu/cpu_vmath.h"
#include "ops/norm_args.h"

/* Below this many elements a kernel runs on the calling thread only. */
#define NORM_PAR_MIN 32768
/* Rows per pass of the layernorm/rmsnorm backward (bounds the per-row stats kept on the stack). */
#define NORM_CHUNK_ROWS 2048
/* Columns per task when summing rmsnorm weight gradients over rows. */
#define NORM_COL_BLOCK 64

/* ---- softmax / log_softmax ---- */

tg_status tg_cpu_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, D;
  tg_norm_dims(a->in[0], &rows, &D);
  const float *x = (const float *)a->in[0]->data; /* [rows, D] */
  float *y = (float *)a->out->data;               /* [rows, D] */
  if (D == 0) return TG_OK;
  TG_PAR_FOR(rows * D > NORM_PAR_MIN, ,
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
  });
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
  TG_PAR_FOR(rows * D > NORM_PAR_MIN, ,
  for (int64_t r = 0; r < rows; r++) {
    const float *yr = y + r * D, *gr = dy + r * D;
    double dot = 0.0;
    for (int64_t j = 0; j < D; j++) dot += (double)gr[j] * yr[j];
    float fd = (float)dot;
    for (int64_t j = 0; j < D; j++) dx[r * D + j] += yr[j] * (gr[j] - fd);
  });
  return TG_OK;
}

tg_status tg_cpu_log_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, D;
  tg_norm_dims(a->in[0], &rows, &D);
  const float *x = (const float *)a->in[0]->data; /* [rows, D] */
  float *y = (float *)a->out->data;               /* [rows, D] */
  if (D == 0) return TG_OK;
  TG_PAR_FOR(rows * D > NORM_PAR_MIN, ,
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * D;
    float m = tg_row_max(xr, D);
    float lse = (float)log(tg_row_exp_sum(xr, D, m));
    for (int64_t j = 0; j < D; j++) y[r * D + j] = (xr[j] - m) - lse;
  });
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
  TG_PAR_FOR(rows * D > NORM_PAR_MIN, ,
  for (int64_t r = 0; r < rows; r++) {
    const float *yr = y + r * D, *gr = dy + r * D;
    double s = 0.0;
    for (int64_t j = 0; j < D; j++) s += gr[j];
    float fs = (float)s;
    for (int64_t j = 0; j < D; j++) dx[r * D + j] += gr[j] - expf(yr[j]) * fs;
  });
  return TG_OK;
}

/* ---- layernorm ---- */

/* Rows per task of the parallel layernorm loops. */
#define LN_TASK_ROWS 32
/* The widest row whose dgamma/dbeta sums the serial backward keeps on the stack. */
#define LN_ACC_MAX 512
/* Columns per task of the parallel dgamma/dbeta sums: a 64-byte line of each row, so that d_model 64 makes four tasks
 * (64-column blocks left the whole pass to one thread there). */
#define LN_COL_BLOCK 16

/* Forward of rows [r0, r1), TG_ROW_BLOCK rows at a time. */
TG_CPU_CLONES static void ln_fwd_rows(const tg_ln_args *p, int64_t r0, int64_t r1) {
  int64_t D = p->D;
  const float *gamma = p->gamma, *beta = p->beta; /* [D] or NULL each */
  for (int64_t rb = r0; rb < r1; rb += TG_ROW_BLOCK) {
    int n = r1 - rb < TG_ROW_BLOCK ? (int)(r1 - rb) : TG_ROW_BLOCK;
    const float *xb[TG_ROW_BLOCK];
    double mean[TG_ROW_BLOCK], rstd[TG_ROW_BLOCK];
    tg_row_ptrs(p->x, D, rb, n, xb);
    tg_rows_ln_stats(xb, D, p->eps, mean, rstd);
    for (int i = 0; i < n; i++) {
      const float *xr = xb[i];         /* [D] */
      float *yr = p->y + (rb + i) * D; /* [D] */
      float fm = (float)mean[i], fr = (float)rstd[i];
      if (gamma && beta)
        for (int64_t j = 0; j < D; j++) yr[j] = (xr[j] - fm) * fr * gamma[j] + beta[j];
      else
        for (int64_t j = 0; j < D; j++) {
          float v = (xr[j] - fm) * fr;
          if (gamma) v *= gamma[j];
          if (beta) v += beta[j];
          yr[j] = v;
        }
    }
  }
}

tg_status tg_cpu_layernorm_fwd(const tg_kernel_args *a) {
  const tg_ln_args p = tg_ln_args_of(a);
  int64_t rows = p.rows, D = p.D, ntask = (rows + LN_TASK_ROWS - 1) / LN_TASK_ROWS;
  if (D == 0) return TG_OK;
  TG_PAR_FOR(rows * D > NORM_PAR_MIN, ,
  for (int64_t t = 0; t < ntask; t++) {
    int64_t r0 = t * LN_TASK_ROWS, r1 = r0 + LN_TASK_ROWS < rows ? r0 + LN_TASK_ROWS : rows;
    ln_fwd_rows(&p, r0, r1);
  });
  return TG_OK;
}

/* Stats of rows [r0, r1) into mean/rstd [r1 - r0] and, when dx is wanted, their input gradient, TG_ROW_BLOCK rows at
 * a time. acc [2, D] (the serial path) or NULL: each row's dgamma then dbeta terms added to these double sums right
 * away, in row order, the order ln_bwd_cols adds them in. */
TG_CPU_CLONES static void ln_bwd_rows(const tg_ln_args *p, int64_t r0, int64_t r1, double *mean, double *rstd,
                                      double *acc) {
  int64_t D = p->D;
  const float *gamma = p->gamma; /* [D] or NULL */
  int fx = p->fresh_x;
  for (int64_t rb = r0; rb < r1; rb += TG_ROW_BLOCK) {
    int n = r1 - rb < TG_ROW_BLOCK ? (int)(r1 - rb) : TG_ROW_BLOCK;
    const float *xb[TG_ROW_BLOCK], *gb[TG_ROW_BLOCK], *gam[TG_ROW_BLOCK];
    double mb[TG_ROW_BLOCK], rb_[TG_ROW_BLOCK];
    float fm[TG_ROW_BLOCK], fr[TG_ROW_BLOCK], m1[TG_ROW_BLOCK], m2[TG_ROW_BLOCK];
    tg_row_ptrs(p->x, D, rb, n, xb);
    tg_rows_ln_stats(xb, D, p->eps, mb, rb_);
    for (int i = 0; i < n; i++) mean[rb - r0 + i] = mb[i], rstd[rb - r0 + i] = rb_[i];
    tg_row_ptrs(p->dy, D, rb, n, gb);
    for (int i = 0; i < TG_ROW_BLOCK; i++) fm[i] = (float)mb[i], fr[i] = (float)rb_[i], gam[i] = gamma;
    /* an accumulated dx with gamma (a residual stream's norm) takes the row's dgamma and dbeta terms in its own loop */
    int fused = acc && p->dx && gamma && !fx;
    if (p->dx) {
      tg_rows_ln_bwd_means(gb, gam, xb, D, fm, fr, m1, m2);
      for (int i = 0; i < n; i++) {
        const float *restrict xr = xb[i], *restrict gr = gb[i]; /* [D] each */
        float *restrict dxr = p->dx + (rb + i) * D;             /* [D] */
        float a = fm[i], f = fr[i], u = m1[i], v = m2[i];
        if (fused) {
          double *restrict sg = acc, *restrict sb = acc + D; /* [D] each */
          for (int64_t j = 0; j < D; j++) {
            float xh = (xr[j] - a) * f;
            dxr[j] += f * (gr[j] * gamma[j] - u - xh * v);
            sg[j] += (double)gr[j] * xh;
            sb[j] += gr[j];
          }
        } else if (gamma && fx) /* a fresh dx written without being read: +0 + v, the bits of a zeroed buffer */
          for (int64_t j = 0; j < D; j++) dxr[j] = 0.0f + f * (gr[j] * gamma[j] - u - ((xr[j] - a) * f) * v);
        else if (gamma)
          for (int64_t j = 0; j < D; j++) dxr[j] += f * (gr[j] * gamma[j] - u - ((xr[j] - a) * f) * v);
        else
          for (int64_t j = 0; j < D; j++) dxr[j] = tg_grad_base(fx, dxr[j]) + f * (gr[j] - u - ((xr[j] - a) * f) * v);
      }
    }
    if (!acc || fused) continue;
    for (int i = 0; i < n; i++) {
      const float *restrict xr = xb[i], *restrict gr = gb[i]; /* [D] each */
      double *restrict sg = acc, *restrict sb = acc + D;       /* [D] each */
      float a = fm[i], f = fr[i];
      for (int64_t j = 0; j < D; j++) {
        sg[j] += (double)gr[j] * ((xr[j] - a) * f);
        sb[j] += gr[j];
      }
    }
  }
}

/* dgamma/dbeta columns [j0, j0 + nj) summed over rows [r0, r0 + nr) with their stats. */
TG_CPU_CLONES static void ln_bwd_cols(const tg_ln_args *p, int64_t r0, int64_t nr, int64_t j0, int64_t nj,
                                      const double *mean, const double *rstd) {
  int64_t D = p->D;
  double sg[LN_COL_BLOCK] = {0}, sb[LN_COL_BLOCK] = {0}; /* [nj] */
  for (int64_t i = 0; i < nr; i++) {
    const float *xr = p->x + (r0 + i) * D + j0, *gr = p->dy + (r0 + i) * D + j0;
    float fm = (float)mean[i], fr = (float)rstd[i];
    for (int64_t j = 0; j < nj; j++) {
      sg[j] += (double)gr[j] * ((xr[j] - fm) * fr);
      sb[j] += gr[j];
    }
  }
  for (int64_t j = 0; j < nj; j++) {
    if (p->dgamma) p->dgamma[j0 + j] += (float)sg[j];
    if (p->dbeta) p->dbeta[j0 + j] += (float)sb[j];
  }
}

/* dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)) with gy = dy * gamma;
 * dgamma += sum_rows dy * xhat; dbeta += sum_rows dy. Rows go in chunks so that each chunk's
 * stats fit on the stack and gamma/beta sums can be split by columns without races. On one thread with
 * D <= LN_ACC_MAX the sums are added row by row instead, in the same order (the same bits), while the row is hot. */
tg_status tg_cpu_layernorm_bwd(const tg_kernel_args *a) {
  const tg_ln_args p = tg_ln_args_of(a);
  int64_t rows = p.rows, D = p.D;
  if (D == 0) return TG_OK;
  int64_t nblocks = (D + LN_COL_BLOCK - 1) / LN_COL_BLOCK;
  for (int64_t r0 = 0; r0 < rows; r0 += NORM_CHUNK_ROWS) {
    int64_t nr = rows - r0 < NORM_CHUNK_ROWS ? rows - r0 : NORM_CHUNK_ROWS;
    int64_t ntask = (nr + LN_TASK_ROWS - 1) / LN_TASK_ROWS;
    double mean[NORM_CHUNK_ROWS], rstd[NORM_CHUNK_ROWS]; /* [nr] */
    int par = nr * D > NORM_PAR_MIN;
    if ((!par || !tg_par_ok()) && (p.dgamma || p.dbeta) && D <= LN_ACC_MAX) {
      double acc[2 * LN_ACC_MAX]; /* [2, D] */
      memset(acc, 0, sizeof(double) * (size_t)(2 * D));
      ln_bwd_rows(&p, r0, r0 + nr, mean, rstd, acc);
      for (int64_t j = 0; j < D; j++) {
        if (p.dgamma) p.dgamma[j] += (float)acc[j];
        if (p.dbeta) p.dbeta[j] += (float)acc[D + j];
      }
      continue;
    }
    TG_PAR_FOR(par, ,
    for (int64_t t = 0; t < ntask; t++) {
      int64_t i0 = t * LN_TASK_ROWS, i1 = i0 + LN_TASK_ROWS < nr ? i0 + LN_TASK_ROWS : nr;
      ln_bwd_rows(&p, r0 + i0, r0 + i1, mean + i0, rstd + i0, NULL);
    });
    if (!p.dgamma && !p.dbeta) continue;
    TG_PAR_FOR(par, ,
    for (int64_t b = 0; b < nblocks; b++) {
      int64_t j0 = b * LN_COL_BLOCK;
      int64_t nj = D - j0 < LN_COL_BLOCK ? D - j0 : LN_COL_BLOCK;
      ln_bwd_cols(&p, r0, nr, j0, nj, mean, rstd);
    });
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
  TG_PAR_FOR(rows * D > NORM_PAR_MIN, ,
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * D;
    float fr = (float)rms_rstd(xr, D, eps);
    for (int64_t j = 0; j < D; j++) y[r * D + j] = w ? xr[j] * fr * w[j] : xr[j] * fr;
  });
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
    TG_PAR_FOR(par, ,
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
    });
    if (!dw) continue;
    TG_PAR_FOR(par, ,
    for (int64_t b = 0; b < nblocks; b++) {
      int64_t j0 = b * NORM_COL_BLOCK;
      int64_t nj = D - j0 < NORM_COL_BLOCK ? D - j0 : NORM_COL_BLOCK;
      double sw[NORM_COL_BLOCK] = {0}; /* [nj] */
      for (int64_t i = 0; i < nr; i++) {
        const float *xr = x + (r0 + i) * D + j0, *gr = dy + (r0 + i) * D + j0;
        for (int64_t j = 0; j < nj; j++) sw[j] += (double)gr[j] * xr[j] * rstd[i];
      }
      for (int64_t j = 0; j < nj; j++) dw[j0 + j] += (float)sw[j];
    });
  }
  return TG_OK;
}
