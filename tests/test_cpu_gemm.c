/* tg_cpu_gemm, the CPU backend's GEMM: every transpose, strided operands, beta, empty sizes, and its split across OpenMP threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

/* One product's operands, stored with padded leading dimensions (lda = row length + 3 ...). */
typedef struct gemm_case {
  int ta, tb;
  int64_t m, n, k;
  float beta;
} gemm_case;

static float val(uint64_t stream, int64_t i) { return tg_rng_uniform(11, stream, (uint64_t)i) * 2.0f - 1.0f; }

/* Runs c with the current thread count into C [m, ldc]; returns the worst error against float64
 * (relative to 1 + |want|). C starts as a fixed pattern (beta = 1 adds to it). */
static double run_case(const gemm_case *c, float *C) {
  int64_t ar = c->ta ? c->k : c->m, ac = c->ta ? c->m : c->k; /* A stored [ar, ac] */
  int64_t br = c->tb ? c->n : c->k, bc = c->tb ? c->k : c->n; /* B stored [br, bc] */
  int64_t lda = ac + 3, ldb = bc + 5, ldc = c->n + 2;
  float *A = malloc(sizeof(float) * (size_t)(ar * lda + 1)), *B = malloc(sizeof(float) * (size_t)(br * ldb + 1));
  if (!A || !B) {
    free(A);
    free(B);
    return INFINITY;
  }
  for (int64_t i = 0; i < ar * lda; i++) A[i] = val(1, i);
  for (int64_t i = 0; i < br * ldb; i++) B[i] = val(2, i);
  for (int64_t i = 0; i < c->m * ldc; i++) C[i] = val(3, i);
  tg_cpu_gemm(c->ta, c->tb, c->m, c->n, c->k, A, lda, B, ldb, c->beta, C, ldc);
  double worst = 0.0;
  for (int64_t i = 0; i < c->m; i++)
    for (int64_t j = 0; j < c->n; j++) {
      double s = c->beta != 0.0f ? (double)c->beta * val(3, i * ldc + j) : 0.0;
      for (int64_t p = 0; p < c->k; p++) {
        double a = c->ta ? A[p * lda + i] : A[i * lda + p];
        double b = c->tb ? B[j * ldb + p] : B[p * ldb + j];
        s += a * b;
      }
      worst = fmax(worst, fabs(s - C[i * ldc + j]) / (1.0 + fabs(s)));
    }
  for (int64_t i = 0; i < c->m; i++) /* the padding between rows of C stays untouched */
    for (int64_t j = c->n; j < ldc; j++)
      if (C[i * ldc + j] != val(3, i * ldc + j)) worst = INFINITY;
  free(A);
  free(B);
  return worst;
}

static void test_products(void) {
  /* large enough to split (m n k >= 2^20): by rows when m >= n, else by columns; slabs uneven */
  static const gemm_case cases[] = {
      {0, 0, 200, 70, 100, 0.0f}, {1, 0, 200, 70, 100, 1.0f}, {0, 1, 200, 70, 100, 1.0f}, {1, 1, 200, 70, 100, 0.0f},
      {0, 0, 40, 300, 100, 1.0f}, {1, 0, 40, 300, 100, 0.0f}, {0, 1, 40, 300, 100, 0.0f}, {1, 1, 40, 300, 100, 1.0f},
      {0, 1, 5, 7, 3, 1.0f}, /* small: one call */
      /* tiny (m n k <= 2048): the plain loops, every transpose, k past and short of the 8 dot-product lanes */
      {0, 0, 1, 64, 2, 0.0f}, {1, 0, 2, 64, 1, 1.0f}, {0, 1, 1, 2, 64, 1.0f}, {1, 1, 3, 5, 19, 0.0f},
      {0, 1, 4, 6, 21, 0.0f}, {1, 0, 3, 9, 7, 1.0f},
  };
  const int threads[3] = {1, 3, 2};
  int before = tg_threads();
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const gemm_case *c = &cases[ci];
    size_t nc = (size_t)(c->m * (c->n + 2));
    float *ref = malloc(sizeof(float) * nc), *got = malloc(sizeof(float) * nc);
    if (!ref || !got) {
      CHECK_MSG(0, "out of memory");
      free(ref);
      free(got);
      continue;
    }
    for (int t = 0; t < 3; t++) {
      CHECK_OK(tg_set_threads(threads[t]));
      double e = run_case(c, ref);
      CHECK_MSG(e < 1e-5, "gemm ta %d tb %d [%lld x %lld x %lld] beta %g on %d threads: worst error %g", c->ta,
                c->tb, (long long)c->m, (long long)c->n, (long long)c->k, (double)c->beta, threads[t], e);
      /* the split depends only on the sizes and the thread count: a rerun gives the same bits
       * (another thread count may not: OpenBLAS picks kernels by the slab's size) */
      run_case(c, got);
      CHECK_MSG(memcmp(ref, got, sizeof(float) * nc) == 0, "gemm ta %d tb %d [%lld x %lld x %lld]: two runs on %d threads differ",
                c->ta, c->tb, (long long)c->m, (long long)c->n, (long long)c->k, threads[t]);
    }
    free(ref);
    free(got);
  }
  CHECK_OK(tg_set_threads(before));
}

static void test_empty(void) {
  float C[6] = {1, 2, 3, 4, 5, 6}, A[1] = {7}, B[1] = {8};
  tg_cpu_gemm(0, 0, 2, 3, 0, A, 1, B, 3, 1.0f, C, 3); /* k = 0, beta = 1: C unchanged */
  CHECK(C[0] == 1 && C[5] == 6);
  tg_cpu_gemm(0, 0, 2, 3, 0, A, 1, B, 3, 0.0f, C, 3); /* k = 0, beta = 0: zeros */
  int zero = 1;
  for (int i = 0; i < 6; i++) zero &= C[i] == 0.0f;
  CHECK_MSG(zero, "k = 0 with beta = 0 must zero C");
  C[0] = 9;
  tg_cpu_gemm(0, 0, 0, 3, 4, A, 4, B, 3, 0.0f, C, 3); /* m = 0: nothing */
  CHECK(C[0] == 9);
}

int main(void) {
  test_products();
  test_empty();
  return tg_test_finish();
}
