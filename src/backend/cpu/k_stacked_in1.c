/* stacked_linear with one input per group (the TFT's per-variable embeddings, Linear(1 -> d)) as direct loops: a
 * product with K = 1 is an outer product, which a GEMM call spends more on than the work. */
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_rows.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"

/* Rows or columns per parallel loop below this many outputs stay on one thread. */
#define IN1_PAR_MIN (1 << 16)
/* The columns of dw a thread sums are a multiple of this many (one cache line of floats). */
#define IN1_COL_ALIGN 16

/* y[r, j, :] = x[r, j] w[j, :] (+ b[j, :]) for rows [r0, r1): x [rows, G], w [G, out], b [G, out] or NULL. */
TG_CPU_CLONES static void in1_fwd_rows(const float *restrict x, const float *restrict w, const float *restrict b,
                                       float *restrict y, int64_t r0, int64_t r1, int64_t G, int64_t nout) {
  for (int64_t r = r0; r < r1; r++)
    for (int64_t j = 0; j < G; j++) {
      float s = x[r * G + j];
      const float *restrict wj = w + j * nout; /* [out] */
      float *restrict yj = y + (r * G + j) * nout;
      if (b)
        for (int64_t o = 0; o < nout; o++) yj[o] = b[j * nout + o] + s * wj[o];
      else
        for (int64_t o = 0; o < nout; o++) yj[o] = s * wj[o];
    }
}

void tg_cpu_stacked_in1_fwd(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t G,
                            int64_t nout) {
  int64_t nblk = tg_par_ok() && rows * G * nout >= IN1_PAR_MIN ? omp_get_max_threads() : 1;
  int64_t per = (rows + nblk - 1) / nblk;
  TG_PAR_FOR(nblk > 1, schedule(static),
  for (int64_t p = 0; p < nblk; p++) {
    int64_t r0 = p * per, r1 = r0 + per < rows ? r0 + per : rows;
    if (r0 < r1) in1_fwd_rows(x, w, b, y, r0, r1, G, nout);
  });
}

/* dx[r, j] += dy[r, j, :] . w[j, :] for rows [r0, r1) (fresh: dx unzeroed, so written). */
TG_CPU_CLONES static void in1_dx_rows(const float *restrict dy, const float *restrict w, float *restrict dx, int fresh,
                                      int64_t r0, int64_t r1, int64_t G, int64_t nout) {
  for (int64_t r = r0; r < r1; r++)
    for (int64_t j = 0; j < G; j++) {
      float *g = dx + r * G + j;
      *g = tg_grad_base(fresh, *g) + tg_lane_dot(dy + (r * G + j) * nout, 1, w + j * nout, nout); /* [out] each */
    }
}

/* dw[c] += sum over rows, in order, of x[r, c / out] dy[r, c], for columns [c0, c1) of dw as [G out]. Four rows per
 * pass over the columns, added one after the other as the one-row loop adds them (the same bits), so dw is loaded
 * and stored a quarter as often. */
TG_CPU_CLONES static void in1_dw_cols(const float *restrict x, const float *restrict dy, float *restrict dw,
                                      int64_t rows, int64_t G, int64_t nout, int64_t c0, int64_t c1) {
  int64_t ld = G * nout, r = 0; /* dy [rows, G out] */
  for (; r + 4 <= rows; r += 4) {
    const float *restrict d0 = dy + r * ld, *restrict d1 = d0 + ld, *restrict d2 = d1 + ld, *restrict d3 = d2 + ld;
    for (int64_t c = c0; c < c1;) { /* the columns of group j = c / out within the range */
      int64_t j = c / nout, end = (j + 1) * nout < c1 ? (j + 1) * nout : c1;
      float s0 = x[r * G + j], s1 = x[(r + 1) * G + j], s2 = x[(r + 2) * G + j], s3 = x[(r + 3) * G + j];
      for (; c < end; c++) dw[c] = (((dw[c] + s0 * d0[c]) + s1 * d1[c]) + s2 * d2[c]) + s3 * d3[c];
    }
  }
  for (; r < rows; r++) {
    const float *restrict d = dy + r * ld; /* [G out] */
    for (int64_t c = c0; c < c1;) {
      int64_t j = c / nout, end = (j + 1) * nout < c1 ? (j + 1) * nout : c1;
      float s = x[r * G + j];
      for (; c < end; c++) dw[c] += s * d[c];
    }
  }
}

void tg_cpu_stacked_in1_bwd(const float *x, const float *w, const float *dy, float *dx, int dx_fresh, float *dw,
                            int64_t rows, int64_t G, int64_t nout) {
  int par = tg_par_ok() && rows * G * nout >= IN1_PAR_MIN;
  if (dx) {
    int64_t nblk = par ? omp_get_max_threads() : 1, per = (rows + nblk - 1) / nblk;
    TG_PAR_FOR(nblk > 1, schedule(static),
    for (int64_t p = 0; p < nblk; p++) {
      int64_t r0 = p * per, r1 = r0 + per < rows ? r0 + per : rows;
      if (r0 < r1) in1_dx_rows(dy, w, dx, dx_fresh, r0, r1, G, nout);
    });
  }
  if (dw) { /* one wide column range per thread: each row's part of dy is read as one run. Narrow blocks read dy
             * [rows, G out] down its columns, a row of G out floats apart (4 KiB at G = 16, out = 64: a new page at
             * every row, which the hardware prefetcher does not cross). Every column still sums its rows in order. */
    int64_t ncol = G * nout, nblk = par ? omp_get_max_threads() : 1;
    int64_t per = ((ncol + nblk - 1) / nblk + IN1_COL_ALIGN - 1) / IN1_COL_ALIGN * IN1_COL_ALIGN;
    TG_PAR_FOR(nblk > 1, schedule(static),
    for (int64_t bi = 0; bi < nblk; bi++) {
      int64_t c0 = bi * per, c1 = c0 + per < ncol ? c0 + per : ncol;
      if (c0 < c1) in1_dw_cols(x, dy, dw, rows, G, nout, c0, c1);
    });
  }
}
