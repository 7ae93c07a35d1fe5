/* Op tests for matmul and linear: float64 references, finite-difference gradients, builder errors. */
#include <math.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "support/check.h"
#include "support/op_check.h"

/* ---- matmul ---- */

typedef struct mm_ctx {
  int ta, tb;
} mm_ctx;

static tg_tensor *build_matmul(tg_graph *g, tg_tensor **in, const void *ctx) {
  const mm_ctx *m = ctx;
  return tg_matmul(g, in[0], in[1], m->ta, m->tb);
}

/* a [..., a0, a1], b [..., b0, b1] or [b0, b1] (shared); out [..., M, N] */
static void ref_matmul(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const mm_ctx *m = ctx;
  const oc_input *A = &spec[0], *B = &spec[1];
  int64_t a0 = A->shape[A->ndim - 2], a1 = A->shape[A->ndim - 1];
  int64_t b0 = B->shape[B->ndim - 2], b1 = B->shape[B->ndim - 1];
  int64_t M = m->ta ? a1 : a0, K = m->ta ? a0 : a1, N = m->tb ? b0 : b1;
  int64_t batch = oc_numel(A) / (a0 * a1);
  int64_t sb = B->ndim == 2 ? 0 : b0 * b1;
  for (int64_t bi = 0; bi < batch; bi++) {
    const double *a = in[0] + bi * a0 * a1, *b = in[1] + bi * sb;
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++) {
          double av = m->ta ? a[k * a1 + i] : a[i * a1 + k];
          double bv = m->tb ? b[j * b1 + k] : b[k * b1 + j];
          s += av * bv;
        }
        out[(bi * M + i) * N + j] = s;
      }
  }
}

static const mm_ctx k_mm[4] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};

/* a is [batch.., M, K] laid out per trans_a; b is [bbatch.., K, N] per trans_b. */
static void run_matmul(unsigned long long seed, const char *name, const mm_ctx *m, int nbatch,
                       const int64_t *batch, int b_shared, int64_t M, int64_t K, int64_t N,
                       int diff_a, int diff_b) {
  int64_t sa[TG_MAX_DIMS], sb[TG_MAX_DIMS];
  for (int d = 0; d < nbatch; d++) sa[d] = sb[d] = batch[d];
  int nb = b_shared ? 0 : nbatch;
  sa[nbatch] = m->ta ? K : M;
  sa[nbatch + 1] = m->ta ? M : K;
  sb[nb] = m->tb ? N : K;
  sb[nb + 1] = m->tb ? K : N;
  oc_case c;
  memset(&c, 0, sizeof c);
  c.name = name;
  c.n_in = 2;
  c.in[0] = oc_f32_input("a", nbatch + 2, sa, diff_a, -1.0, 1.0);
  c.in[1] = oc_f32_input("b", nb + 2, sb, diff_b, -1.0, 1.0);
  c.build = build_matmul;
  c.ref = ref_matmul;
  c.ctx = m;
  oc_run(&c, seed);
}

static void test_matmul(unsigned long long seed) {
  static const char *names2d[4] = {"matmul_nn", "matmul_tn", "matmul_nt", "matmul_tt"};
  static const char *names3d[4] = {"matmul_batched_nn", "matmul_batched_tn", "matmul_batched_nt",
                                   "matmul_batched_tt"};
  static const char *namesbc[4] = {"matmul_shared_b_nn", "matmul_shared_b_tn",
                                   "matmul_shared_b_nt", "matmul_shared_b_tt"};
  const int64_t b1[1] = {2}, b2[2] = {2, 3};
  for (int t = 0; t < 4; t++) {
    run_matmul(seed + t, names2d[t], &k_mm[t], 0, NULL, 0, 3, 4, 5, 1, 1);
    run_matmul(seed + 10 + t, names3d[t], &k_mm[t], 1, b1, 0, 3, 4, 5, 1, 1);
    run_matmul(seed + 20 + t, namesbc[t], &k_mm[t], 1, b1, 1, 3, 4, 5, 1, 1);
  }
  run_matmul(seed + 30, "matmul_4d", &k_mm[0], 2, b2, 0, 2, 3, 4, 1, 1);
  run_matmul(seed + 31, "matmul_4d_shared_b_tn", &k_mm[1], 2, b2, 1, 2, 3, 4, 1, 1);
  run_matmul(seed + 32, "matmul_grad_a_only", &k_mm[2], 1, b1, 0, 3, 4, 5, 1, 0);
  run_matmul(seed + 33, "matmul_grad_b_only", &k_mm[1], 1, b1, 1, 3, 4, 5, 0, 1);
  run_matmul(seed + 34, "matmul_k1", &k_mm[0], 0, NULL, 0, 4, 1, 3, 1, 1);
  /* one row scaled per batch (M = K = 1: the kernels' row-scale path), n not a multiple of a vector */
  const int64_t b6[1] = {6};
  run_matmul(seed + 35, "matmul_row_scale", &k_mm[0], 1, b6, 0, 1, 1, 19, 1, 1);
  run_matmul(seed + 36, "matmul_row_scale_tn", &k_mm[1], 1, b6, 0, 1, 1, 19, 1, 1);
  run_matmul(seed + 37, "matmul_row_scale_grad_b_only", &k_mm[0], 1, b6, 0, 1, 1, 19, 0, 1);
  run_matmul(seed + 38, "matmul_row_scale_shared_b", &k_mm[0], 1, b6, 1, 1, 1, 19, 1, 1);
}

/* ---- linear ---- */

typedef struct lin_ctx {
  int has_bias;
} lin_ctx;

static tg_tensor *build_linear(tg_graph *g, tg_tensor **in, const void *ctx) {
  const lin_ctx *l = ctx;
  return tg_linear(g, in[0], in[1], l->has_bias ? in[2] : NULL);
}

/* x [rows, in], w [out, in], bias [out]; out [rows, out] */
static void ref_linear(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const lin_ctx *l = ctx;
  int64_t nout = spec[1].shape[0], nin = spec[1].shape[1];
  int64_t rows = oc_numel(&spec[0]) / nin;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t o = 0; o < nout; o++) {
      double s = l->has_bias ? in[2][o] : 0.0;
      for (int64_t i = 0; i < nin; i++) s += in[0][r * nin + i] * in[1][o * nin + i];
      out[r * nout + o] = s;
    }
}

static void run_linear(unsigned long long seed, const char *name, int has_bias, int xndim,
                       const int64_t *xshape, int64_t nout, int diff_x) {
  static const lin_ctx k_lin[2] = {{0}, {1}};
  int64_t nin = xshape[xndim - 1];
  int64_t ws[2] = {nout, nin}, bs[1] = {nout};
  oc_case c;
  memset(&c, 0, sizeof c);
  c.name = name;
  c.n_in = has_bias ? 3 : 2;
  c.in[0] = oc_f32_input("x", xndim, xshape, diff_x, -1.0, 1.0);
  c.in[1] = oc_f32_input("w", 2, ws, 1, -1.0, 1.0);
  if (has_bias) c.in[2] = oc_f32_input("bias", 1, bs, 1, -1.0, 1.0);
  c.build = build_linear;
  c.ref = ref_linear;
  c.ctx = &k_lin[has_bias];
  oc_run(&c, seed);
}

static void test_linear(unsigned long long seed) {
  const int64_t x2[2] = {4, 5}, x3[3] = {2, 3, 5}, x1[1] = {5};
  run_linear(seed + 40, "linear_bias", 1, 2, x2, 3, 1);
  run_linear(seed + 41, "linear_no_bias", 0, 2, x2, 3, 1);
  run_linear(seed + 42, "linear_3d_bias", 1, 3, x3, 4, 1);
  run_linear(seed + 43, "linear_3d_no_bias", 0, 3, x3, 4, 1);
  run_linear(seed + 44, "linear_x_input", 1, 3, x3, 4, 0);
  run_linear(seed + 45, "linear_1d_x", 1, 1, x1, 3, 1);
}

/* ---- gradient accumulation: the same operands feed two nodes, so kernels must add (beta = 1) ---- */

static tg_tensor *build_twice(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  tg_tensor *l1 = tg_linear(g, in[0], in[1], in[2]);
  tg_tensor *l2 = tg_linear(g, in[0], in[1], in[2]);
  tg_tensor *m1 = tg_matmul(g, in[0], in[1], 0, 1);
  tg_tensor *m2 = tg_matmul(g, in[0], in[1], 0, 1);
  return tg_add(g, tg_add(g, l1, l2), tg_add(g, m1, m2));
}

/* 2 * linear(x, w, bias) + 2 * x w^T */
static void ref_twice(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  static const lin_ctx with_bias = {1};
  int64_t n = oc_numel(&spec[0]) / spec[0].shape[spec[0].ndim - 1] * spec[1].shape[0];
  ref_linear(in, spec, out, &with_bias);
  for (int64_t i = 0; i < n; i++) out[i] = 4.0 * out[i] - 2.0 * in[2][i % spec[1].shape[0]];
  (void)ctx;
}

static void test_accumulate(unsigned long long seed) {
  const int64_t xs[2] = {4, 5}, ws[2] = {3, 5}, bs[1] = {3};
  oc_case c;
  memset(&c, 0, sizeof c);
  c.name = "linear_matmul_accumulate";
  c.n_in = 3;
  c.in[0] = oc_f32_input("x", 2, xs, 1, -1.0, 1.0);
  c.in[1] = oc_f32_input("w", 2, ws, 1, -1.0, 1.0);
  c.in[2] = oc_f32_input("bias", 1, bs, 1, -1.0, 1.0);
  c.build = build_twice;
  c.ref = ref_twice;
  oc_run(&c, seed + 50);
}

/* ---- builder errors ---- */

static tg_tensor *in_f32(tg_graph *g, const char *name, int ndim, const int64_t *shape) {
  return tg_input(g, name, TG_F32, ndim, shape);
}

static void test_errors(void) {
  const int64_t s34[2] = {3, 4}, s54[2] = {5, 4}, s234[3] = {2, 3, 4}, s345[3] = {3, 4, 5};
  const int64_t s4[1] = {4}, s5[1] = {5}, s2x[2] = {2, 4};
  {
    tg_graph *g = tg_graph_new(NULL, "mm_k");
    tg_tensor *a = in_f32(g, "act", 2, s34), *b = in_f32(g, "weight", 2, s54);
    oc_expect_build_error(g, tg_matmul(g, a, b, 0, 0), TG_ERR_SHAPE, "mm_k",
                          (const char *const[]){"matmul", "act", "weight", "[3, 4]", "[5, 4]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "mm_ok_nt");
    tg_tensor *a = in_f32(g, "act", 2, s34), *b = in_f32(g, "weight", 2, s54);
    tg_tensor *c = tg_matmul(g, a, b, 0, 1);
    CHECK(c != NULL && c->ndim == 2 && c->shape[0] == 3 && c->shape[1] == 5);
    CHECK(tg_graph_status(g) == TG_OK);
    tg_graph_free(g);
  }
  {
    tg_graph *g = tg_graph_new(NULL, "mm_batch");
    tg_tensor *a = in_f32(g, "q", 3, s234), *b = in_f32(g, "k", 3, s345);
    oc_expect_build_error(g, tg_matmul(g, a, b, 0, 0), TG_ERR_SHAPE, "mm_batch", /* batch 2 vs 3 */
                          (const char *const[]){"matmul", "q", "k", "[2, 3, 4]", "[3, 4, 5]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "mm_1d");
    tg_tensor *a = in_f32(g, "vec", 1, s4), *b = in_f32(g, "mat", 2, s34);
    CHECK(tg_matmul(g, a, b, 0, 0) == NULL);
    CHECK(oc_msg_has((const char *const[]){"matmul", "vec", "mat", "[4]", NULL}));
    tg_graph_free(g);
  }
  {
    tg_graph *g = tg_graph_new(NULL, "mm_dtype");
    tg_tensor *a = tg_input(g, "ids", TG_I32, 2, s34), *b = in_f32(g, "mat", 2, s54);
    oc_expect_build_error(g, tg_matmul(g, a, b, 0, 1), TG_ERR_SHAPE, "mm_dtype",
                          (const char *const[]){"matmul", "ids", "i32", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "mm_null");
    tg_tensor *a = in_f32(g, "act", 2, s34);
    CHECK(tg_matmul(g, a, NULL, 0, 0) == NULL);
    CHECK(tg_graph_status(g) != TG_OK);
    tg_graph_free(g);
  }
  {
    tg_graph *g = tg_graph_new(NULL, "lin_in");
    tg_tensor *x = in_f32(g, "feat", 2, s2x), *w = in_f32(g, "w1", 2, s34);
    tg_tensor *y = tg_linear(g, x, w, NULL); /* x [2, 4], w [3, 4] -> [2, 3] */
    CHECK(y != NULL && y->ndim == 2 && y->shape[0] == 2 && y->shape[1] == 3);
    tg_graph_free(g);
  }
  {
    tg_graph *g = tg_graph_new(NULL, "lin_in2");
    tg_tensor *x = in_f32(g, "feat", 2, s34), *w = in_f32(g, "w1", 2, s54);
    tg_tensor *y = tg_linear(g, x, w, NULL); /* x [3, 4], w [5, 4] -> [3, 5] */
    CHECK(y != NULL && y->ndim == 2 && y->shape[0] == 3 && y->shape[1] == 5);
    tg_tensor *z = tg_linear(g, y, w, NULL); /* y [3, 5] vs w [5, 4]: in differs */
    oc_expect_build_error(g, z, TG_ERR_SHAPE, "lin_in2",
                          (const char *const[]){"linear", "w1", "[3, 5]", "[5, 4]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "lin_bias");
    tg_tensor *x = in_f32(g, "feat", 2, s34), *w = in_f32(g, "w1", 2, s54);
    tg_tensor *b = in_f32(g, "b1", 1, s4);
    oc_expect_build_error(g, tg_linear(g, x, w, b), TG_ERR_SHAPE, "lin_bias", /* bias [4] vs out 5 */
                          (const char *const[]){"linear", "b1", "[4]", "w1", "[5, 4]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "lin_w1d");
    tg_tensor *x = in_f32(g, "feat", 2, s34), *w = in_f32(g, "wv", 1, s5);
    CHECK(tg_linear(g, x, w, NULL) == NULL);
    CHECK(oc_msg_has((const char *const[]){"linear", "wv", "[5]", "feat", NULL}));
    tg_graph_free(g);
  }
}

/* ---- linear's bias gradient, called directly: each column's float sum over the rows in order, bit for bit, on the
 * OpenMP path (ROWS*OUT above its threshold) and the serial one, over full column blocks and a partial last one ---- */

static void test_linear_large(int64_t ROWS, int64_t OUT) {
  enum { IN = 8 };
  float *x = malloc(sizeof(float) * ROWS * IN), *w = malloc(sizeof(float) * OUT * IN);
  float *bias = malloc(sizeof(float) * OUT), *y = malloc(sizeof(float) * ROWS * OUT);
  float *dy = malloc(sizeof(float) * ROWS * OUT), *db = malloc(sizeof(float) * OUT);
  for (int i = 0; i < ROWS * IN; i++) x[i] = (float)((i * 37 % 101) - 50) / 50.0f;
  for (int i = 0; i < OUT * IN; i++) w[i] = (float)((i * 53 % 97) - 48) / 48.0f;
  for (int o = 0; o < OUT; o++) bias[o] = (float)o / OUT, db[o] = 1.0f;
  for (int i = 0; i < ROWS * OUT; i++) dy[i] = (float)((i * 29 % 89) - 44) / 44.0f;
  tg_tensor tx, tw, tb, ty;
  const int64_t sx[2] = {ROWS, IN}, sw[2] = {OUT, IN}, sb[1] = {OUT}, sy[2] = {ROWS, OUT};
  tg_tensor_view(&tx, "x", tg_cpu(0), TG_F32, 2, sx, x);
  tg_tensor_view(&tw, "w", tg_cpu(0), TG_F32, 2, sw, w);
  tg_tensor_view(&tb, "bias", tg_cpu(0), TG_F32, 1, sb, bias);
  tg_tensor_view(&ty, "y", tg_cpu(0), TG_F32, 2, sy, y);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = 1;
  tg_kernel_args a;
  memset(&a, 0, sizeof a);
  a.n_in = 3;
  a.in[0] = &tx;
  a.in[1] = &tw;
  a.in[2] = &tb;
  a.out = &ty;
  a.attr = &attr;
  a.out_grad = dy;
  a.in_grad[2] = db;
  a.node_name = "linear_large";
  CHECK_OK(tg_cpu_linear_fwd(&a));
  double worst = 0;
  for (int r = 0; r < ROWS; r += 97)
    for (int o = 0; o < OUT; o++) {
      double s = bias[o];
      for (int i = 0; i < IN; i++) s += (double)x[r * IN + i] * w[o * IN + i];
      worst = fmax(worst, fabs(s - y[r * OUT + o]));
    }
  CHECK_MSG(worst < 1e-4, "linear_large forward error %g", worst);
  CHECK_OK(tg_cpu_linear_bwd(&a));
  worst = 0;
  for (int o = 0; o < OUT; o++) {
    double s = 1.0;
    for (int r = 0; r < ROWS; r++) s += dy[r * OUT + o];
    worst = fmax(worst, fabs(s - db[o]) / (1 + fabs(s)));
    float f = 1.0f; /* the kernel's sum: in float, row after row */
    for (int r = 0; r < ROWS; r++) f += dy[r * OUT + o];
    CHECK_MSG(memcmp(&f, &db[o], sizeof f) == 0, "linear_large %lld x %lld: bias gradient column %d is %.9g, not "
              "the rows' float sum in order %.9g", (long long)ROWS, (long long)OUT, o, db[o], f);
  }
  CHECK_MSG(worst < 1e-4, "linear_large bias gradient error %g", worst);
  free(x), free(w), free(bias), free(y), free(dy), free(db);
}

int main(void) {
  unsigned long long seed = tg_test_seed(1234);
  test_matmul(seed);
  test_linear(seed);
  test_accumulate(seed);
  test_errors();
  test_linear_large(2048, 200);
  test_linear_large(101, 150);
  return tg_test_finish();
}
