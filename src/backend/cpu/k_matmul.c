/* CPU kernels for matmul, linear and stacked_linear: the plan's oneDNN primitives or OpenBLAS GEMMs over row-major
 * f32, with operands rounded to bf16 in the workspace (parameters: their bf16 mirror) when the node computes in bf16;
 * no allocation. */
#include <cblas.h>
#include <omp.h>
#include <string.h>
#include "backend/cpu/cpu_bf16_pack.h"
#include "backend/cpu/cpu_gemm_plan.h"
#include "backend/cpu/cpu_kernels.h"
#include "base/bf16.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_rows.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"
#include "ops/matmul_dims.h"

/* Column sums of linear's bias gradient go parallel above this many elements. */
#define TG_MM_PAR_MIN (1 << 18)
#define TG_MM_COL_BLOCK 64
/* Column sums take this many rows at a time across all their columns (a block's whole height first would stride
 * through dy, which the prefetchers serve poorly: the sums ran up to 2x slower, measured on the AMX Xeon). */
#define TG_MM_SUM_ROWS 32
/* stacked_linear's double column sums cover at most this many columns per pass (their sums on the stack). */
#define TG_SL_SUM_COLS 1024

/* Products of at most this many multiply-adds run as plain loops (mm_tiny): a BLAS call costs more than their work
 * (a batched matmul of one-row products, as the TFT's variable selection sums). */
#define TG_MM_TINY 2048

/* A batched matmul of small products runs its batches on the OpenMP threads from this many multiply-adds in all. */
#define TG_MM_BATCH_PAR_MIN (1 << 16)

/* Products of at least this many multiply-adds are split across the OpenMP threads. */
#define TG_MM_SPLIT_MIN (1 << 20)
/* A split slab has a multiple of this many rows (or columns) of C. */
#define TG_MM_SLAB 16

/* One OpenBLAS call: C[m, n] = op(A) op(B) + beta * C. A C of a few rows is one sgemv per row instead: it reads B
 * where it lies, where sgemm would first pack all of it (most of a batch-1 layer's time). */
static void mm_blas(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (m <= TG_GEMM_FEW_ROWS) {
    for (int64_t i = 0; i < m; i++) { /* C[i, :] = op(B)^T op(A)[i, :] (a row at stride lda when A is transposed) */
      float *c = C + i * ldc;
      if (beta == 0.0f) memset(c, 0, sizeof(float) * (size_t)n); /* some OpenBLAS versions keep a NaN there times 0 */
      cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, (blasint)(tb ? n : k), (blasint)(tb ? k : n), 1.0f,
                  B, (blasint)ldb, ta ? A + i : A + i * lda, (blasint)(ta ? lda : 1), beta, c, 1);
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              (blasint)m, (blasint)n, (blasint)k, 1.0f, A, (blasint)lda, B, (blasint)ldb, beta, C,
              (blasint)ldc);
}

/* 1 when C[m, n] = op(A) op(B) is small enough for mm_tiny's loops: few multiply-adds, and dot products (a
 * transposed B) at least TG_ROW_LANES long (shorter ones: sgemv vectorises better). */
static inline int mm_is_tiny(int tb, int64_t m, int64_t n, int64_t k) {
  return m * n * k <= TG_MM_TINY && (!tb || k >= TG_ROW_LANES);
}

/* C[m, n] = op(A) op(B) + beta * C in plain loops, for a product too small to repay a BLAS call (tg_cpu_gemm):
 * rows of op(B) scaled into C's rows when B is untransposed, else dot products along both operands' rows. Inlined
 * into its callers' clones (one call of a clone per product costs as much as a product of a few hundred). */
TG_CPU_INLINE void mm_tiny(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *restrict A, int64_t lda,
                           const float *restrict B, int64_t ldb, float beta, float *restrict C, int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    float *restrict c = C + i * ldc; /* [n] */
    if (beta == 0.0f) /* never 0 * C: C may hold NaN */
      for (int64_t j = 0; j < n; j++) c[j] = 0.0f;
    else if (beta != 1.0f)
      for (int64_t j = 0; j < n; j++) c[j] *= beta;
    if (!tb) {
      for (int64_t p = 0; p < k; p++) { /* c += op(A)[i, p] B[p, :] */
        float s = ta ? A[p * lda + i] : A[i * lda + p];
        const float *restrict b = B + p * ldb; /* [n] */
        for (int64_t j = 0; j < n; j++) c[j] += s * b[j];
      }
      continue;
    }
    for (int64_t j = 0; j < n; j++) /* c[j] += op(A)[i, :] . B[j, :] */
      c[j] += ta ? tg_lane_dot(A + i, lda, B + j * ldb, k) : tg_lane_dot(A + i * lda, 1, B + j * ldb, k);
  }
}

/* mm_tiny compiled for each clone, for tg_cpu_gemm. */
TG_CPU_CLONES static void mm_tiny_one(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                                      const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  mm_tiny(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
}

void tg_cpu_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0.0f)
      for (int64_t i = 0; i < m; i++) memset(C + i * ldc, 0, sizeof(float) * (size_t)n);
    return;
  }
  if (mm_is_tiny(tb, m, n, k)) {
    mm_tiny_one(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  /* split only when OpenBLAS is single-threaded (tg_set_threads): never two thread pools at once */
  int nt = omp_in_parallel() || openblas_get_num_threads() != 1 ? 1 : omp_get_max_threads();
  int by_rows = m >= n; /* split the longer side of C */
  int64_t side = by_rows ? m : n;
  int64_t slabs = side / TG_MM_SLAB < nt ? side / TG_MM_SLAB : nt;
  if (slabs < 2 || m * n * k < TG_MM_SPLIT_MIN) {
    mm_blas(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  /* slab p: rows (or columns) [p * per, ..) of C, per a multiple of TG_MM_SLAB; every element is
   * still one call's full-K dot product, and the slabs depend only on the sizes and thread count */
  int64_t per = (side + slabs - 1) / slabs;
  per = (per + TG_MM_SLAB - 1) / TG_MM_SLAB * TG_MM_SLAB;
  TG_PAR_FOR(1, schedule(static) num_threads(nt),
  for (int64_t p = 0; p < slabs; p++) {
    int64_t lo = p * per, len = side - lo < per ? side - lo : per;
    if (len <= 0) continue;
    if (by_rows) /* rows of op(A) and C */
      mm_blas(ta, tb, len, n, k, ta ? A + lo : A + lo * lda, lda, B, ldb, beta, C + lo * ldc, ldc);
    else /* columns of op(B) and C */
      mm_blas(ta, tb, m, len, k, A, lda, tb ? B + lo * ldb : B + lo, ldb, beta, C + lo, ldc);
  });
}

/* tg_cpu_gemm with a tiny product's loops inlined into the calling clone: for loops over many small products. */
TG_CPU_INLINE void gemm_small(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                              const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (m > 0 && n > 0 && k > 0 && mm_is_tiny(tb, m, n, k)) mm_tiny(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
  else tg_cpu_gemm(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
}

/* Operands are rounded in blocks of this many elements, split across the OpenMP threads. */
#define TG_BF16_BLOCK (1 << 16)

/* Where a node computing in bf16 puts its rounded operands: the workspace, in 64-byte steps; packed: as bf16 for
 * the plan's bf16 primitives, else as f32 holding bf16 values (for f32 primitives or OpenBLAS). */
typedef struct bf16_ws {
  char *next;
  int packed;
} bf16_ws;

static bf16_ws ws_of(const tg_kernel_args *a) {
  const tg_cpu_gemm_plan *p = a->prepared;
  return (bf16_ws){(char *)a->ws, p && p->packed_bf16};
}

/* src [n] as the GEMM reads it: itself when the node computes in f32 (or src is NULL); in bf16, with a mirror (src is
 * a parameter: the store's bf16 mirror of it, which the optimizer update writes), packed: the mirror itself, else the
 * mirror widened into the workspace (exact); without one, src rounded to bf16 into the workspace (tg_gemm_bf16_workspace sized it for the two inputs
 * and the output's gradient). */
static const void *operand(const tg_kernel_args *a, bf16_ws *w, const float *src, const uint16_t *mirror, int64_t n) {
  if (a->compute != TG_BF16 || !src) return src;
  if (mirror && w->packed) return mirror;
  void *dst = w->next;
  int64_t nblk = (n + TG_BF16_BLOCK - 1) / TG_BF16_BLOCK; /* blocks on the OpenMP threads when there are several */
  TG_PAR_FOR(nblk > 1, schedule(static),
  for (int64_t b = 0; b < nblk; b++) {
    int64_t lo = b * TG_BF16_BLOCK, len = n - lo < TG_BF16_BLOCK ? n - lo : TG_BF16_BLOCK;
    if (mirror) tg_bf16_unpack((float *)dst + lo, mirror + lo, (size_t)len);
    else if (w->packed) tg_cpu_bf16_pack((uint16_t *)dst + lo, src + lo, (size_t)len);
    else tg_cpu_f32_round_bf16((float *)dst + lo, src + lo, (size_t)len);
  });
  w->next += ((size_t)(w->packed ? 2 : 4) * (size_t)n + 63) & ~(size_t)63;
  return dst;
}

static const tg_cpu_gemm_plan *plan_of(const tg_kernel_args *a) { return a->prepared; }

/* n bf16 elements of the workspace for an operand a kernel packs itself. */
static uint16_t *ws_take(bf16_ws *w, int64_t n) {
  uint16_t *dst = (uint16_t *)w->next;
  w->next += (2 * (size_t)n + 63) & ~(size_t)63;
  return dst;
}

/* pk = dy rounded to bf16 in rows [r0, r1) and columns [c0, c1) of both [.., ncol]: one call when the rows are whole. */
static void pack_rows(uint16_t *pk, const float *dy, int64_t ncol, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  if (c0 == 0 && c1 == ncol) {
    tg_cpu_bf16_pack(pk + r0 * ncol, dy + r0 * ncol, (size_t)((r1 - r0) * ncol));
    return;
  }
  for (int64_t r = r0; r < r1; r++) tg_cpu_bf16_pack(pk + r * ncol + c0, dy + r * ncol + c0, (size_t)(c1 - c0));
}

/* Input k [n] as the GEMMs read it: operand() of its data, except where the plan keeps its bf16 copy
 * (tg_cpu_gemm_plan.kept): the forward (fwd 1) packs it there, the backward reads that copy back (the same bits: the
 * input still holds what the forward read, or recomputed the same). */
static const void *input_operand(const tg_kernel_args *a, bf16_ws *w, int k, int64_t n, int fwd) {
  const tg_cpu_gemm_plan *p = plan_of(a);
  const float *src = a->in[k]->data;
  if (a->compute != TG_BF16 || !p || !p->kept[k] || p->kept_numel[k] != n)
    return operand(a, w, src, a->in_bf16[k], n);
  if (fwd) tg_cpu_bf16_pack_par(p->kept[k], src, (size_t)n);
  return p->kept[k];
}

/* 1 when a batched product's batches should run on the OpenMP threads: many small products
 * (a large one is split inside tg_cpu_gemm instead). */
static int mm_batches_parallel(const tg_mm_dims *d) {
  int64_t one = d->m * d->n * d->k;
  return d->batch > 1 && one < TG_MM_SPLIT_MIN && d->batch * one >= TG_MM_BATCH_PAR_MIN && !omp_in_parallel() &&
         omp_get_max_threads() > 1 && openblas_get_num_threads() == 1;
}

/* 1 when every product is a row scaled by a number: C_i [1, n] = a_i B_i, B_i one row (the TFT's variable
 * selection sums over one variable at a time). */
static inline int mm_row_scale(const tg_mm_dims *d) { return d->m == 1 && d->k == 1 && !d->tb; }

/* Batches [lo, hi) of C = op(A) op(B). */
TG_CPU_CLONES static void mm_fwd_batches(const tg_mm_dims *d, int64_t lo, int64_t hi, const float *A, const float *B,
                                         float *C) {
  if (mm_row_scale(d)) { /* mm_tiny's result (0 + a b rounds as a b), without its general loops' setup per batch */
    int64_t n = d->n;
    for (int64_t i = lo; i < hi; i++) {
      float s = A[i * d->sa];
      const float *restrict b = B + i * d->sb; /* [n] */
      float *restrict c = C + i * d->sc;       /* [n] */
      for (int64_t j = 0; j < n; j++) c[j] = s * b[j];
    }
    return;
  }
  for (int64_t i = lo; i < hi; i++)
    gemm_small(d->ta, d->tb, d->m, d->n, d->k, A + i * d->sa, d->a1, B + i * d->sb, d->b1, 0.0f, C + i * d->sc,
               d->n);
}

tg_status tg_cpu_matmul_fwd(const tg_kernel_args *a) {
  tg_mm_dims d;
  tg_status st = tg_mm_dims_of(a, &d);
  if (st != TG_OK) return st;
  bf16_ws w = ws_of(a);
  const float *A = input_operand(a, &w, 0, tg_numel(a->in[0]), 1); /* [batch, M, K] or [batch, K, M] */
  const float *B = input_operand(a, &w, 1, tg_numel(a->in[1]), 1); /* [batch or 1, K, N] or [.., N, K] */
  float *C = (float *)a->out->data;                                 /* [batch, M, N] */
  if (plan_of(a) && plan_of(a)->fwd) return tg_gemm_prim_run(plan_of(a)->fwd, A, B, NULL, C, a->node_name);
  if (d.sb == 0 && !d.ta) {
    /* shared b: one GEMM over all batch*M rows */
    tg_cpu_gemm(0, d.tb, d.batch * d.m, d.n, d.k, A, d.a1, B, d.b1, 0.0f, C, d.n);
    return TG_OK;
  }
  int64_t nchunk = mm_batches_parallel(&d) ? omp_get_max_threads() : 1; /* contiguous runs of batches */
  TG_PAR_FOR(nchunk > 1, schedule(static),
  for (int64_t c = 0; c < nchunk; c++)
    mm_fwd_batches(&d, d.batch * c / nchunk, d.batch * (c + 1) / nchunk, A, B, C););
  return TG_OK;
}

/* Gradients of one (or, with rows = batch*M and untransposed a, a flattened) product:
 * C = op(A) op(B) with dC [m, n]; dA and dB are written (beta 0) or added into (beta 1). */
TG_CPU_INLINE void mm_bwd_one(const tg_mm_dims *d, int64_t m, const float *A, const float *B, const float *dC,
                              float *dA, float beta_a, float *dB, float beta_b) {
  if (dA) {
    if (!d->ta) /* dA [m, k] = dC op(B)^T */
      gemm_small(0, !d->tb, m, d->k, d->n, dC, d->n, B, d->b1, beta_a, dA, d->k);
    else /* dA [k, m] = op(B) dC^T */
      gemm_small(d->tb, 1, d->k, m, d->n, B, d->b1, dC, d->n, beta_a, dA, m);
  }
  if (dB) {
    if (!d->tb) /* dB [k, n] = op(A)^T dC */
      gemm_small(!d->ta, 0, d->k, d->n, m, A, d->a1, dC, d->n, beta_b, dB, d->n);
    else /* dB [n, k] = dC^T op(A) */
      gemm_small(1, d->ta, d->n, d->k, m, dC, d->n, A, d->a1, beta_b, dB, d->k);
  }
}

/* Gradients of batches [lo, hi), each of m rows (a flattened product: lo 0, hi 1); fa, fb: dA, dB start fresh
 * (args.grad_fresh), so the batches write them (a shared B's gradient: the first batch writes, the rest add). */
TG_CPU_CLONES static void mm_bwd_batches(const tg_mm_dims *d, int64_t m, int64_t lo, int64_t hi, const float *A,
                                         const float *B, const float *dC, float *dA, float *dB, int fa, int fb) {
  if (mm_row_scale(d) && m == 1) { /* as mm_tiny: dA_i += dC_i . B_i in lanes, dB_i += a_i dC_i */
    int64_t n = d->n;
    for (int64_t i = lo; i < hi; i++) {
      const float *restrict g = dC + i * d->sc, *restrict b = B + i * d->sb; /* [n] each */
      if (dA) dA[i * d->sa] = tg_grad_base(fa, dA[i * d->sa]) + tg_lane_dot(g, 1, b, n);
      if (dB) {
        float s = A[i * d->sa];
        float *restrict db = dB + i * d->sb; /* [n] */
        int fresh = fb && (d->sb != 0 || i == 0);
        for (int64_t j = 0; j < n; j++) db[j] = tg_grad_base(fresh, db[j]) + s * g[j];
      }
    }
    return;
  }
  for (int64_t i = lo; i < hi; i++)
    mm_bwd_one(d, m, A + i * d->sa, B + i * d->sb, dC + i * d->sc, dA ? dA + i * d->sa : NULL, fa ? 0.0f : 1.0f,
               dB ? dB + i * d->sb : NULL, fb && (d->sb != 0 || i == 0) ? 0.0f : 1.0f);
}

tg_status tg_cpu_matmul_bwd(const tg_kernel_args *a) {
  tg_mm_dims d;
  tg_status st = tg_mm_dims_of(a, &d);
  if (st != TG_OK) return st;
  float *dA = a->in_grad[0]; /* like A, or NULL */
  float *dB = a->in_grad[1]; /* like B, or NULL */
  if (!dA && !dB) return TG_OK;
  bf16_ws w = ws_of(a);
  const float *dC = operand(a, &w, a->out_grad, NULL, tg_numel(a->out));               /* [batch, M, N] */
  const float *A = input_operand(a, &w, 0, tg_numel(a->in[0]), 0); /* [batch, M, K] or [batch, K, M] */
  const float *B = input_operand(a, &w, 1, tg_numel(a->in[1]), 0); /* [batch or 1, K, N] or [.., N, K] */
  int fa = (a->grad_fresh & 1u) != 0, fb = (a->grad_fresh & 2u) != 0;
  tg_gemm_prim *pa = tg_cpu_grad_prim(plan_of(a), 0, fa), *pb = tg_cpu_grad_prim(plan_of(a), 1, fb);
  if (pa && dA) {
    if ((st = tg_gemm_prim_run(pa, dC, B, NULL, dA, a->node_name)) != TG_OK) return st;
    dA = NULL;
  }
  if (pb && dB) {
    if ((st = tg_gemm_prim_run(pb, A, dC, NULL, dB, a->node_name)) != TG_OK) return st;
    dB = NULL;
  }
  if (!dA && !dB) return TG_OK;
  if (d.sb == 0 && !d.ta) {
    /* shared b, untransposed a: the batches are just more rows, and dB sums over them */
    mm_bwd_batches(&d, d.batch * d.m, 0, 1, A, B, dC, dA, dB, fa, fb);
    return TG_OK;
  }
  /* a shared b's gradient (sb = 0) sums over the batches: that loop stays serial, in order */
  int64_t nchunk = (d.sb != 0 || !dB) && mm_batches_parallel(&d) ? omp_get_max_threads() : 1;
  TG_PAR_FOR(nchunk > 1, schedule(static),
  for (int64_t c = 0; c < nchunk; c++)
    mm_bwd_batches(&d, d.m, d.batch * c / nchunk, d.batch * (c + 1) / nchunk, A, B, dC, dA, dB, fa, fb););
  return TG_OK;
}

tg_status tg_cpu_linear_fwd(const tg_kernel_args *a) {
  int64_t rows, nin, nout;
  tg_status st = tg_linear_dims(a, &rows, &nin, &nout);
  if (st != TG_OK) return st;
  bf16_ws ws = ws_of(a);
  const float *x = input_operand(a, &ws, 0, rows * nin, 1); /* [rows, in] */
  const float *w = input_operand(a, &ws, 1, nout * nin, 1); /* [out, in] */
  float *y = (float *)a->out->data;                         /* [rows, out] */
  const float *bias = a->attr->i[0] && a->n_in > 2 ? (const float *)a->in[2]->data : NULL; /* [out] */
  if (plan_of(a) && plan_of(a)->fwd) return tg_gemm_prim_run(plan_of(a)->fwd, x, w, bias, y, a->node_name);
  float beta = 0.0f;
  if (bias) {
    for (int64_t r = 0; r < rows; r++) memcpy(y + r * nout, bias, sizeof(float) * (size_t)nout);
    beta = 1.0f;
  }
  tg_cpu_gemm(0, 1, rows, nout, nin, x, nin, w, nin, beta, y, nout);
  return TG_OK;
}

/* db[o] += sum over rows of dy[r, o], for columns [c0, c1): each column a float sum from db[o] over the rows in order,
 * TG_MM_SUM_ROWS rows at a time. A block of TG_MM_COL_BLOCK columns adds them in registers (eight 8-float vectors,
 * lane-wise: every clone gives the scalar loop's bits, which the columns after the last full block take). With pk
 * (bf16 [rows, nout]), those columns of each row are packed there too, read from memory once for both. */
TG_CPU_CLONES static void mm_col_sums(const float *dy, float *db, int64_t rows, int64_t nout, int64_t c0,
                                      int64_t c1, uint16_t *pk) {
  for (int64_t r0 = 0; r0 < rows; r0 += TG_MM_SUM_ROWS) {
    int64_t r1 = rows - r0 < TG_MM_SUM_ROWS ? rows : r0 + TG_MM_SUM_ROWS, j0 = c0;
    if (pk) pack_rows(pk, dy, nout, r0, r1, c0, c1);
#if TG_CPU_VEC
    for (; j0 + TG_MM_COL_BLOCK <= c1; j0 += TG_MM_COL_BLOCK) {
      tg_vf8 acc[TG_MM_COL_BLOCK / 8];
      for (int v = 0; v < TG_MM_COL_BLOCK / 8; v++) memcpy(&acc[v], db + j0 + 8 * v, sizeof acc[v]);
      for (int64_t r = r0; r < r1; r++) {
        const float *row = dy + r * nout + j0; /* [TG_MM_COL_BLOCK] */
        for (int v = 0; v < TG_MM_COL_BLOCK / 8; v++) {
          tg_vf8 x;
          memcpy(&x, row + 8 * v, sizeof x);
          acc[v] += x;
        }
      }
      for (int v = 0; v < TG_MM_COL_BLOCK / 8; v++) memcpy(db + j0 + 8 * v, &acc[v], sizeof acc[v]);
    }
#endif
    for (int64_t r = r0; r < r1; r++) {
      const float *row = dy + r * nout;
      for (int64_t o = j0; o < c1; o++) db[o] += row[o];
    }
  }
}

/* A column-sum kernel: db[c] += the sum over rows of dy[r, c] for columns [c0, c1) of dy [rows, ncol], packing those
 * columns of dy into pk (bf16 [rows, ncol]) as it reads them when pk is set. */
typedef void col_sums_fn(const float *dy, float *db, int64_t rows, int64_t ncol, int64_t c0, int64_t c1, uint16_t *pk);

/* db [ncol] += the column sums of dy [rows, ncol] by `sums` (and pk = dy in bf16 with them, when set), column blocks on
 * the OpenMP threads when large. */
static void bias_grad(col_sums_fn *sums, const float *dy, float *db, int64_t rows, int64_t ncol, uint16_t *pk) {
  int64_t nblk = (ncol + TG_MM_COL_BLOCK - 1) / TG_MM_COL_BLOCK;
  if (rows * ncol >= TG_MM_PAR_MIN && nblk > 1) {
    TG_PAR_FOR(1, schedule(static),
    for (int64_t bi = 0; bi < nblk; bi++) {
      int64_t c0 = bi * TG_MM_COL_BLOCK, c1 = c0 + TG_MM_COL_BLOCK < ncol ? c0 + TG_MM_COL_BLOCK : ncol;
      sums(dy, db, rows, ncol, c0, c1, pk);
    });
  } else {
    sums(dy, db, rows, ncol, 0, ncol, pk);
  }
}

/* 1 when a backward should pack its output gradient dy while it sums dy's columns for the bias gradient (one read of
 * dy instead of two): the GEMMs take packed bf16 operands, read dy, and there is a bias gradient. */
static int fuse_dy_pack(const tg_kernel_args *a, const bf16_ws *w, const float *db, int gemms) {
  return a->compute == TG_BF16 && w->packed && db && gemms;
}

tg_status tg_cpu_linear_bwd(const tg_kernel_args *a) {
  int64_t rows, nin, nout;
  tg_status st = tg_linear_dims(a, &rows, &nin, &nout);
  if (st != TG_OK) return st;
  float *dx = a->in_grad[0];                      /* [rows, in] or NULL */
  float *dw = a->in_grad[1];                      /* [out, in] or NULL */
  float *db = a->n_in > 2 ? a->in_grad[2] : NULL; /* [out] or NULL */
  bf16_ws ws = ws_of(a);
  const float *dy_f32 = a->out_grad; /* [rows, out] */
  const float *dy;                   /* [rows, out] as GEMMs read it */
  if (fuse_dy_pack(a, &ws, db, dx || dw)) { /* the bias gradient first, packing dy as it sums it */
    uint16_t *pk = ws_take(&ws, rows * nout);
    bias_grad(mm_col_sums, dy_f32, db, rows, nout, pk);
    dy = (const float *)pk, db = NULL;
  } else {
    dy = operand(a, &ws, (dx || dw) ? dy_f32 : NULL, NULL, rows * nout);
  }
  const float *x = dw ? input_operand(a, &ws, 0, rows * nin, 0) : NULL; /* [rows, in] */
  const float *w = dx ? input_operand(a, &ws, 1, nout * nin, 0) : NULL; /* [out, in] */
  const tg_cpu_gemm_plan *p = plan_of(a);
  int fresh = (a->grad_fresh & 1u) != 0; /* dx unzeroed: written, not added into */
  tg_gemm_prim *px = tg_cpu_grad_prim(p, 0, fresh);
  if (dx && px) {
    if ((st = tg_gemm_prim_run(px, dy, w, NULL, dx, a->node_name)) != TG_OK) return st;
  } else if (dx) {
    tg_cpu_gemm(0, 0, rows, nin, nout, dy, nout, w, nin, fresh ? 0.0f : 1.0f, dx, nin);
  }
  if (dw && p && p->d_b) {
    if ((st = tg_gemm_prim_run(p->d_b, dy, x, NULL, dw, a->node_name)) != TG_OK) return st;
  } else if (dw) {
    tg_cpu_gemm(1, 0, nout, nin, rows, dy, nout, x, nin, 1.0f, dw, nin);
  }
  if (db) bias_grad(mm_col_sums, dy_f32, db, rows, nout, NULL); /* sums the unrounded gradient, in f32 */
  return TG_OK;
}

/* ---- stacked_linear: x [rows, G, in], w [G, out, in], bias [G, out] -> y [rows, G, out] ---- */

/* 1 when the groups' GEMMs should run whole on the OpenMP threads (at least two groups per thread
 * and enough work) rather than one after another, each split by tg_cpu_gemm. */
static int sl_groups_parallel(int64_t rows, int64_t G, int64_t nin, int64_t nout) {
  int nt = omp_get_max_threads();
  return nt > 1 && G >= 2 * nt && G * rows * nin * nout >= TG_MM_SPLIT_MIN && !omp_in_parallel() &&
         openblas_get_num_threads() == 1;
}

/* y[r, :] = b for r < rows: y [rows, n] with row stride ldy, b [n]. */
TG_CPU_CLONES static void sl_fill_rows(float *restrict y, int64_t ldy, const float *restrict b, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t k = 0; k < n; k++) y[r * ldy + k] = b[k];
}

tg_status tg_cpu_stacked_linear_fwd(const tg_kernel_args *a) {
  int64_t rows, G, nin, nout;
  tg_status st = tg_stacked_dims(a, &rows, &G, &nin, &nout);
  if (st != TG_OK) return st;
  bf16_ws ws = ws_of(a);
  const float *x = input_operand(a, &ws, 0, rows * G * nin, 1); /* [rows, G, in] */
  const float *w = input_operand(a, &ws, 1, G * nout * nin, 1); /* [G, out, in] */
  float *y = (float *)a->out->data;                             /* [rows, G, out] */
  const float *bias = a->attr->i[0] && a->n_in > 2 ? (const float *)a->in[2]->data : NULL; /* [G, out] */
  if (nin == 1) {
    tg_cpu_stacked_in1_fwd(x, w, bias, y, rows, G, nout);
    return TG_OK;
  }
  const tg_cpu_gemm_plan *p = plan_of(a);
  if (p && p->fwd && p->fwd_bias) return tg_gemm_prim_run(p->fwd, x, w, bias, y, a->node_name);
  if (bias) sl_fill_rows(y, G * nout, bias, rows, G * nout); /* every row of y = bias as [G out]; the GEMMs add */
  if (p && p->fwd) return tg_gemm_prim_run(p->fwd, x, w, NULL, y, a->node_name);
  /* group j: y[:, j] [rows, out] (row stride G out) = x[:, j] [rows, in] (stride G in) w[j]^T (+ y) */
  TG_PAR_FOR(sl_groups_parallel(rows, G, nin, nout), schedule(static),
  for (int64_t j = 0; j < G; j++)
    tg_cpu_gemm(0, 1, rows, nout, nin, x + j * nin, G * nin, w + j * nout * nin, nin, bias ? 1.0f : 0.0f,
                y + j * nout, G * nout););
  return TG_OK;
}

/* db[c] += sum over rows of dy[r, c] for columns [c0, c1), in double, rows in order: up to TG_SL_SUM_COLS columns per
 * pass, TG_MM_SUM_ROWS rows at a time across them, a block of TG_MM_COL_BLOCK columns at a time. With pk (bf16
 * [rows, ncol]), those columns of each row are packed there too, read from memory once for both. */
TG_CPU_CLONES static void sl_col_sums(const float *dy, float *db, int64_t rows, int64_t ncol, int64_t c0, int64_t c1,
                                      uint16_t *pk) {
  double acc[TG_SL_SUM_COLS]; /* [s1 - s0] */
  for (int64_t s0 = c0; s0 < c1; s0 += TG_SL_SUM_COLS) {
    int64_t s1 = c1 - s0 < TG_SL_SUM_COLS ? c1 : s0 + TG_SL_SUM_COLS;
    for (int64_t c = 0; c < s1 - s0; c++) acc[c] = 0.0;
    for (int64_t r0 = 0; r0 < rows; r0 += TG_MM_SUM_ROWS) {
      int64_t r1 = rows - r0 < TG_MM_SUM_ROWS ? rows : r0 + TG_MM_SUM_ROWS;
      if (pk) pack_rows(pk, dy, ncol, r0, r1, s0, s1);
      for (int64_t j0 = s0; j0 < s1; j0 += TG_MM_COL_BLOCK) {
        int64_t w = s1 - j0 < TG_MM_COL_BLOCK ? s1 - j0 : TG_MM_COL_BLOCK;
        double *a = acc + (j0 - s0); /* [w] */
        for (int64_t r = r0; r < r1; r++) {
          const float *row = dy + r * ncol + j0; /* [w] */
          for (int64_t k = 0; k < w; k++) a[k] += row[k];
        }
      }
    }
    for (int64_t c = s0; c < s1; c++) db[c] += (float)acc[c - s0];
  }
}

tg_status tg_cpu_stacked_linear_bwd(const tg_kernel_args *a) {
  int64_t rows, G, nin, nout;
  tg_status st = tg_stacked_dims(a, &rows, &G, &nin, &nout);
  if (st != TG_OK) return st;
  float *dx = a->in_grad[0];                      /* [rows, G, in] or NULL */
  float *dw = a->in_grad[1];                      /* [G, out, in] or NULL */
  float *db = a->n_in > 2 ? a->in_grad[2] : NULL; /* [G, out] or NULL */
  bf16_ws ws = ws_of(a);
  const float *dy_f32 = a->out_grad; /* [rows, G, out] */
  const float *dy;                   /* [rows, G, out] as the GEMMs read it */
  int64_t ncol = G * nout;
  if (fuse_dy_pack(a, &ws, db, dx || dw)) { /* the bias gradient first, packing dy as it sums it */
    uint16_t *pk = ws_take(&ws, rows * ncol);
    bias_grad(sl_col_sums, dy_f32, db, rows, ncol, pk);
    dy = (const float *)pk, db = NULL;
  } else {
    dy = operand(a, &ws, dy_f32, NULL, rows * ncol);
  }
  const float *x = input_operand(a, &ws, 0, rows * G * nin, 0); /* [rows, G, in] */
  const float *w = input_operand(a, &ws, 1, G * nout * nin, 0); /* [G, out, in] */
  const tg_cpu_gemm_plan *p = plan_of(a);
  int fresh = (a->grad_fresh & 1u) != 0; /* dx unzeroed: written, not added into */
  if (nin == 1) {
    tg_cpu_stacked_in1_bwd(x, w, dy, dx, fresh, dw, rows, G, nout);
    if (db) bias_grad(sl_col_sums, dy_f32, db, rows, ncol, NULL);
    return TG_OK;
  }
  if (p) { /* the planned primitives hold every group; the bias gradient sums the unrounded dy in f32 */
    if (dx && (st = tg_gemm_prim_run(tg_cpu_grad_prim(p, 0, fresh), dy, w, NULL, dx, a->node_name)) != TG_OK) return st;
    if (dw && (st = tg_gemm_prim_run(p->d_b, dy, x, NULL, dw, a->node_name)) != TG_OK) return st;
    if (db) bias_grad(sl_col_sums, dy_f32, db, rows, ncol, NULL);
    return TG_OK;
  }
  int groups_par = sl_groups_parallel(rows, G, nin, nout);
  /* db as [G out] += column sums of dy as [rows, G out]: group j's columns right after its GEMMs
   * (dy[:, j] still cached) unless the groups run one after another on several threads, where a
   * separate pass sums column blocks in parallel; each column is summed over the rows in order
   * either way */
  int sums_by_group = db && (groups_par || omp_get_max_threads() == 1 || omp_in_parallel());
  TG_PAR_FOR(groups_par, schedule(static),
  for (int64_t j = 0; j < G; j++) {
    const float *dyj = dy + j * nout, *wj = w + j * nout * nin; /* [rows, out] strided G out; [out, in] */
    if (dx) /* dx[:, j] [rows, in] += dy[:, j] w[j] */
      tg_cpu_gemm(0, 0, rows, nin, nout, dyj, G * nout, wj, nin, fresh ? 0.0f : 1.0f, dx + j * nin, G * nin);
    if (dw) /* dw[j] [out, in] += dy[:, j]^T x[:, j] */
      tg_cpu_gemm(1, 0, nout, nin, rows, dyj, G * nout, x + j * nin, G * nin, 1.0f, dw + j * nout * nin, nin);
    if (sums_by_group) sl_col_sums(dy_f32, db, rows, ncol, j * nout, (j + 1) * nout, NULL);
  });
  if (db && !sums_by_group) bias_grad(sl_col_sums, dy_f32, db, rows, ncol, NULL);
  return TG_OK;
}
