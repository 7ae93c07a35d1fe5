/* CPU kernels for matmul and linear: OpenBLAS GEMMs over row-major f32 with no allocation. */
#include <cblas.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "ops/matmul_dims.h"

/* Column sums of linear's bias gradient go parallel above this many elements. */
#define TG_MM_PAR_MIN (1 << 18)
#define TG_MM_COL_BLOCK 64

/* C[m, n] = op(A) op(B) + beta * C, op(A) [m, k], op(B) [k, n]; empty sizes handled here so
 * OpenBLAS never sees a zero leading dimension. */
static void mm_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0.0f)
      for (int64_t i = 0; i < m; i++) memset(C + i * ldc, 0, sizeof(float) * (size_t)n);
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              (blasint)m, (blasint)n, (blasint)k, 1.0f, A, (blasint)lda, B, (blasint)ldb, beta, C,
              (blasint)ldc);
}

tg_status tg_cpu_matmul_fwd(const tg_kernel_args *a) {
  tg_mm_dims d;
  tg_status st = tg_mm_dims_of(a, &d);
  if (st != TG_OK) return st;
  const float *A = (const float *)a->in[0]->data; /* [batch, M, K] or [batch, K, M] */
  const float *B = (const float *)a->in[1]->data; /* [batch or 1, K, N] or [.., N, K] */
  float *C = (float *)a->out->data;               /* [batch, M, N] */
  if (d.sb == 0 && !d.ta) {
    /* shared b: one GEMM over all batch*M rows */
    mm_gemm(0, d.tb, d.batch * d.m, d.n, d.k, A, d.a1, B, d.b1, 0.0f, C, d.n);
    return TG_OK;
  }
  for (int64_t i = 0; i < d.batch; i++)
    mm_gemm(d.ta, d.tb, d.m, d.n, d.k, A + i * d.sa, d.a1, B + i * d.sb, d.b1, 0.0f, C + i * d.sc,
            d.n);
  return TG_OK;
}

/* Gradients of one (or, with rows = batch*M and untransposed a, a flattened) product:
 * C = op(A) op(B) with dC [m, n]; dA and dB accumulate (beta = 1). */
static void mm_bwd_one(const tg_mm_dims *d, int64_t m, const float *A, const float *B,
                       const float *dC, float *dA, float *dB) {
  if (dA) {
    if (!d->ta) /* dA [m, k] = dC op(B)^T */
      mm_gemm(0, !d->tb, m, d->k, d->n, dC, d->n, B, d->b1, 1.0f, dA, d->k);
    else /* dA [k, m] = op(B) dC^T */
      mm_gemm(d->tb, 1, d->k, m, d->n, B, d->b1, dC, d->n, 1.0f, dA, m);
  }
  if (dB) {
    if (!d->tb) /* dB [k, n] = op(A)^T dC */
      mm_gemm(!d->ta, 0, d->k, d->n, m, A, d->a1, dC, d->n, 1.0f, dB, d->n);
    else /* dB [n, k] = dC^T op(A) */
      mm_gemm(1, d->ta, d->n, d->k, m, dC, d->n, A, d->a1, 1.0f, dB, d->k);
  }
}

tg_status tg_cpu_matmul_bwd(const tg_kernel_args *a) {
  tg_mm_dims d;
  tg_status st = tg_mm_dims_of(a, &d);
  if (st != TG_OK) return st;
  const float *A = (const float *)a->in[0]->data; /* [batch, M, K] or [batch, K, M] */
  const float *B = (const float *)a->in[1]->data; /* [batch or 1, K, N] or [.., N, K] */
  const float *dC = a->out_grad;                  /* [batch, M, N] */
  float *dA = a->in_grad[0];                      /* like A, or NULL */
  float *dB = a->in_grad[1];                      /* like B, or NULL */
  if (!dA && !dB) return TG_OK;
  if (d.sb == 0 && !d.ta) {
    /* shared b, untransposed a: the batches are just more rows, and dB sums over them */
    mm_bwd_one(&d, d.batch * d.m, A, B, dC, dA, dB);
    return TG_OK;
  }
  for (int64_t i = 0; i < d.batch; i++)
    mm_bwd_one(&d, d.m, A + i * d.sa, B + i * d.sb, dC + i * d.sc, dA ? dA + i * d.sa : NULL,
               dB ? dB + i * d.sb : NULL);
  return TG_OK;
}

tg_status tg_cpu_linear_fwd(const tg_kernel_args *a) {
  int64_t rows, nin, nout;
  tg_status st = tg_linear_dims(a, &rows, &nin, &nout);
  if (st != TG_OK) return st;
  const float *x = (const float *)a->in[0]->data; /* [rows, in] */
  const float *w = (const float *)a->in[1]->data; /* [out, in] */
  float *y = (float *)a->out->data;               /* [rows, out] */
  float beta = 0.0f;
  if (a->attr->i[0] && a->n_in > 2) {
    const float *bias = (const float *)a->in[2]->data; /* [out] */
    for (int64_t r = 0; r < rows; r++) memcpy(y + r * nout, bias, sizeof(float) * (size_t)nout);
    beta = 1.0f;
  }
  mm_gemm(0, 1, rows, nout, nin, x, nin, w, nin, beta, y, nout);
  return TG_OK;
}

/* db[o] += sum over rows of dy[r, o], for columns [c0, c1). */
static void mm_col_sums(const float *dy, float *db, int64_t rows, int64_t nout, int64_t c0,
                        int64_t c1) {
  for (int64_t r = 0; r < rows; r++) {
    const float *row = dy + r * nout;
    for (int64_t o = c0; o < c1; o++) db[o] += row[o];
  }
}

tg_status tg_cpu_linear_bwd(const tg_kernel_args *a) {
  int64_t rows, nin, nout;
  tg_status st = tg_linear_dims(a, &rows, &nin, &nout);
  if (st != TG_OK) return st;
  const float *x = (const float *)a->in[0]->data; /* [rows, in] */
  const float *w = (const float *)a->in[1]->data; /* [out, in] */
  const float *dy = a->out_grad;                  /* [rows, out] */
  float *dx = a->in_grad[0];                      /* [rows, in] or NULL */
  float *dw = a->in_grad[1];                      /* [out, in] or NULL */
  float *db = a->n_in > 2 ? a->in_grad[2] : NULL; /* [out] or NULL */
  if (dx) mm_gemm(0, 0, rows, nin, nout, dy, nout, w, nin, 1.0f, dx, nin);
  if (dw) mm_gemm(1, 0, nout, nin, rows, dy, nout, x, nin, 1.0f, dw, nin);
  if (db) {
    int64_t nblk = (nout + TG_MM_COL_BLOCK - 1) / TG_MM_COL_BLOCK;
    if (rows * nout >= TG_MM_PAR_MIN && nblk > 1) {
#pragma omp parallel for schedule(static)
      for (int64_t bi = 0; bi < nblk; bi++) {
        int64_t c0 = bi * TG_MM_COL_BLOCK;
        int64_t c1 = c0 + TG_MM_COL_BLOCK < nout ? c0 + TG_MM_COL_BLOCK : nout;
        mm_col_sums(dy, db, rows, nout, c0, c1);
      }
    } else {
      mm_col_sums(dy, db, rows, nout, 0, nout);
    }
  }
  return TG_OK;
}
