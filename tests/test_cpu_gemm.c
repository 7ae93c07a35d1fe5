/* tg_cpu_gemm, the CPU backend's GEMM: every transpose, strided operands, beta, empty sizes, and its split across OpenMP
 * threads; tg_cpu_rows_dot, the few-row products of batch-1 inference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_rows_dot.h"
#include "base/bf16.h"
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

/* The sum tg_cpu_rows_dot promises, in scalar f32: term i into lane i mod 16 in order, then lane j += lane j + h for
 * h = 8, 4, 2, 1, then + bias. */
static float rows_dot_model(int64_t nin, const float *x, const float *w, const float *bias) {
  float lane[16] = {0};
  for (int64_t i = 0; i < nin; i++) {
    float p = x[i] * w[i];
    lane[i % 16] += p;
  }
  for (int h = 8; h > 0; h /= 2)
    for (int j = 0; j < h; j++) lane[j] += lane[j + h];
  return lane[0] + (bias ? *bias : 0.0f);
}

/* tg_cpu_rows_dot against float64 for lengths around its 16 lanes, every output tail, with and without a bias; bitwise
 * the scalar model of its order (so every ISA's clone gives these bits); the bf16 weights read as they are give the bits
 * of the same values widened to f32. */
static void test_rows_dot(void) {
  const int64_t nins[] = {1, 5, 15, 16, 17, 33, 514};
  float x[4 * 514], w[9 * 514], wr[9 * 514], bias[9], y[4 * 9], yh[4 * 9];
  uint16_t wh[9 * 514];
  for (size_t ni = 0; ni < sizeof nins / sizeof nins[0]; ni++)
    for (int64_t nout = 1; nout <= 9; nout++)
      for (int64_t rows = 1; rows <= TG_ROWS_DOT_MAX; rows++)
        for (int with_bias = 0; with_bias < 2; with_bias++) {
          int64_t nin = nins[ni];
          for (int64_t i = 0; i < rows * nin; i++) x[i] = val(4, i);
          for (int64_t i = 0; i < nout * nin; i++) w[i] = val(5, i);
          for (int64_t o = 0; o < nout; o++) bias[o] = val(6, o);
          const float *b = with_bias ? bias : NULL;
          tg_cpu_rows_dot(rows, nin, nout, x, w, NULL, b, y);
          double worst = 0.0;
          int64_t off = -1;
          for (int64_t r = 0; r < rows; r++)
            for (int64_t o = 0; o < nout; o++) {
              float model = rows_dot_model(nin, x + r * nin, w + o * nin, b ? b + o : NULL);
              if (memcmp(&model, &y[r * nout + o], sizeof model) != 0 && off < 0) off = r * nout + o;
              double want = b ? b[o] : 0.0;
              for (int64_t i = 0; i < nin; i++) want += (double)x[r * nin + i] * w[o * nin + i];
              worst = fmax(worst, fabs(y[r * nout + o] - want) / (1.0 + fabs(want)));
            }
          CHECK_MSG(worst < 1e-5, "rows_dot %lld x %lld x %lld (bias %d): error %g", (long long)rows, (long long)nin,
                    (long long)nout, with_bias, worst);
          CHECK_MSG(off < 0, "rows_dot %lld x %lld x %lld (bias %d): output %lld is not the lanes' fixed sum",
                    (long long)rows, (long long)nin, (long long)nout, with_bias, (long long)off);
          tg_bf16_pack(wh, w, (size_t)(nout * nin));
          tg_bf16_unpack(wr, wh, (size_t)(nout * nin));
          tg_cpu_rows_dot(rows, nin, nout, x, wr, NULL, b, y);
          tg_cpu_rows_dot(rows, nin, nout, x, NULL, wh, b, yh);
          CHECK_MSG(memcmp(y, yh, sizeof(float) * (size_t)(rows * nout)) == 0,
                    "rows_dot %lld x %lld x %lld: bf16 weights differ from the same values in f32", (long long)rows,
                    (long long)nin, (long long)nout);
        }
}

int main(void) {
  test_products();
  test_empty();
  test_rows_dot();
  return tg_test_finish();
}
