/* Op tests for sum, mean, sum/mean/max/argmax over the last dim, and dropout (inactive against a
 * reference; active: masks from the counter RNG, keep rate, scaling, backward replay). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "graph/graph_internal.h"
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/rng.h"

typedef tg_tensor *(*unary_builder)(tg_graph *g, tg_tensor *x);

/* ctx is the builder under test */
static tg_tensor *build_unary(tg_graph *g, tg_tensor **in, const void *ctx) {
  const unary_builder *f = ctx;
  return (*f)(g, in[0]);
}

static int64_t last_dim(const oc_input *s) { return s->ndim ? s->shape[s->ndim - 1] : 1; }

/* x [n] -> out [] */
static void ref_sum(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  double acc = 0.0;
  for (int64_t i = 0; i < oc_numel(&spec[0]); i++) acc += in[0][i];
  out[0] = acc;
}

static void ref_mean(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  ref_sum(in, spec, out, ctx);
  out[0] /= (double)oc_numel(&spec[0]);
}

/* x [R, D] -> out [R] */
static void ref_sum_last(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  int64_t D = last_dim(&spec[0]), R = oc_numel(&spec[0]) / D;
  for (int64_t r = 0; r < R; r++) {
    double acc = 0.0;
    for (int64_t j = 0; j < D; j++) acc += in[0][r * D + j];
    out[r] = acc;
  }
}

static void ref_mean_last(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  ref_sum_last(in, spec, out, ctx);
  int64_t D = last_dim(&spec[0]), R = oc_numel(&spec[0]) / D;
  for (int64_t r = 0; r < R; r++) out[r] /= (double)D;
}

/* first maximum of each row: its value (max) or its index (argmax) */
static void ref_rowmax(const double *const *in, const oc_input *spec, double *out, int want_index) {
  int64_t D = last_dim(&spec[0]), R = oc_numel(&spec[0]) / D;
  for (int64_t r = 0; r < R; r++) {
    int64_t best = 0;
    for (int64_t j = 1; j < D; j++)
      if (in[0][r * D + j] > in[0][r * D + best]) best = j;
    out[r] = want_index ? (double)best : in[0][r * D + best];
  }
}

static void ref_max_last(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  ref_rowmax(in, spec, out, 0);
}

static void ref_argmax_last(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  ref_rowmax(in, spec, out, 1);
}

/* Runs op on a 2-D [3, 5] and a 3-D [2, 3, 4] input (and a 1-D [6] one when with_1d). max and
 * argmax draw from a wide range so that no row's top two values are closer than the finite
 * difference step. */
static void run_reduction(const char *name, const unary_builder *f, oc_ref_fn ref, int diff, double lo,
                          double hi, int with_1d, unsigned long long seed) {
  static const int nds[3] = {2, 3, 1};
  static const int64_t shapes[3][3] = {{3, 5}, {2, 3, 4}, {6}};
  for (int k = 0; k < (with_1d ? 3 : 2); k++) {
    char full[96];
    snprintf(full, sizeof full, "%s %s", name, k == 0 ? "[3,5]" : k == 1 ? "[2,3,4]" : "[6]");
    oc_case c = {.name = full, .n_in = 1, .in = {{"x", TG_F32, nds[k], {0}, diff, lo, hi}},
                 .build = build_unary, .ref = ref, .ctx = f};
    for (int i = 0; i < nds[k]; i++) c.in[0].shape[i] = shapes[k][i];
    oc_run(&c, seed);
  }
}

static tg_tensor *dropout_half(tg_graph *g, tg_tensor *x) { return tg_dropout(g, x, 0.5f); }

static void test_reductions(unsigned long long seed) {
  static const unary_builder sum = tg_sum, mean = tg_mean, sum_last = tg_sum_last,
                             mean_last = tg_mean_last, max_last = tg_max_last,
                             argmax_last = tg_argmax_last, dropout = dropout_half;
  run_reduction("sum", &sum, ref_sum, 1, -1, 1, 1, seed);
  run_reduction("mean", &mean, ref_mean, 1, -1, 1, 1, seed);
  run_reduction("sum_last", &sum_last, ref_sum_last, 1, -1, 1, 1, seed);
  run_reduction("mean_last", &mean_last, ref_mean_last, 1, -1, 1, 1, seed);
  run_reduction("max_last", &max_last, ref_max_last, 1, -100, 100, 1, seed);
  run_reduction("argmax_last", &argmax_last, ref_argmax_last, 0, -100, 100, 1, seed);

  /* dropout in a graph planned without training: identity */
  oc_case c = {.name = "dropout p=0.5 inactive [3,5]", .n_in = 1,
               .in = {{"x", TG_F32, 2, {3, 5}, 0, -1, 1}},
               .build = build_unary, .ref = oc_ref_copy, .ctx = &dropout, .inference = 1};
  oc_run(&c, seed);
}

/* argmax of a row with ties and max_last's gradient both pick the first maximum. */
static void test_first_max(void) {
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "first_max");
  int64_t shape[2] = {2, 4};
  tg_tensor *x = tg_param(g, "x", 2, shape, (tg_init){TG_INIT_ZEROS, 0, 0});
  tg_tensor *m = tg_max_last(g, x), *am = tg_argmax_last(g, x);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.training = 1;
  CHECK_OK(tg_graph_plan(g, &opts));
  if (tg_graph_status(g) != TG_OK) goto done;
  float *w = tg_store_tensor(s, 0, 0).data; /* [2, 4] */
  const float rows[8] = {1, 3, 3, 2, -5, -5, -5, -5};
  memcpy(w, rows, sizeof rows);
  CHECK_OK(tg_graph_run(g));
  const int64_t *ai = am->data;
  const float *mv = m->data;
  CHECK(ai[0] == 1 && ai[1] == 0 && mv[0] == 3.0f && mv[1] == -5.0f);
  const float seedg[2] = {2.0f, 7.0f};
  CHECK_OK(tg_store_zero_grads(s));
  CHECK_OK(tg_graph_backward_seeded(g, m, seedg));
  const float *gw = tg_graph_grad(g, x);
  const float want[8] = {0, 2, 0, 0, 7, 0, 0, 0};
  CHECK(gw && memcmp(gw, want, sizeof want) == 0);
done:
  tg_graph_free(g);
  tg_store_free(s);
}

/* Dropout in a training plan on N elements. */
static void test_dropout_training(unsigned long long seed, int N) {
  const float p = 0.3f, scale = 1.0f / (1.0f - p);
  const uint64_t rng_seed = 0x5eed0000u + (seed & 0xffff);
  tg_store *s = tg_store_new(tg_cpu(0), seed);
  tg_graph *g = tg_graph_new(s, "dropout_train");
  int64_t n = N;
  tg_tensor *x = tg_param(g, "x", 1, &n, (tg_init){TG_INIT_UNIFORM, 1.0f, 2.0f}); /* never 0 */
  tg_tensor *y = tg_dropout(g, x, p);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.training = 1;
  CHECK_OK(tg_graph_plan(g, &opts));
  float *y1 = malloc((size_t)N * sizeof(float)), *ones = malloc((size_t)N * sizeof(float));
  if (!y1 || !ones || tg_graph_status(g) != TG_OK) goto done;
  CHECK_MSG(tg_node_of(y)->attr.i[0] == 1, "a training plan should activate dropout");
  for (int i = 0; i < N; i++) ones[i] = 1.0f;

  tg_graph_set_seed(g, rng_seed, 7);
  CHECK_OK(tg_graph_run(g));
  memcpy(y1, y->data, (size_t)N * sizeof(float));
  const float *xv = tg_store_tensor(s, 0, 0).data; /* [N] */
  uint64_t key = (g->fwd_offset << 20) | (uint64_t)tg_node_of(y)->id;
  int kept = 0, wrong = 0;
  for (int e = 0; e < N; e++) {
    int keep = tg_rng_uniform(rng_seed, key, (uint64_t)e) >= p;
    float want = keep ? xv[e] * scale : 0.0f;
    kept += keep;
    if (fabsf(y1[e] - want) > 1e-6f * fabsf(want)) wrong++;
  }
  CHECK_MSG(wrong == 0, "%d of %d elements differ from the counter-RNG mask scaled by 1/(1-p)", wrong, N);
  /* the kept count is binomial(N, 0.7): for N = 10000 sd 46, so +-0.03 is 6.5 sd */
  CHECK_MSG(fabs(kept / (double)N - (1.0 - p)) < 0.03, "kept %d of %d with p = %g", kept, N, (double)p);

  /* backward regenerates the forward's mask: grad = mask / (1 - p) */
  CHECK_OK(tg_store_zero_grads(s));
  CHECK_OK(tg_graph_backward_seeded(g, y, ones));
  const float *gx = tg_graph_grad(g, x);
  int gwrong = 0;
  for (int e = 0; gx && e < N; e++)
    if ((y1[e] != 0.0f) != (gx[e] != 0.0f) || (gx[e] != 0.0f && fabsf(gx[e] - scale) > 1e-6f)) gwrong++;
  CHECK_MSG(gx && gwrong == 0, "%d backward mask entries differ from the forward mask", gwrong);

  /* the next run advances the offset: another mask */
  CHECK_OK(tg_graph_run(g));
  int differ = 0;
  for (int e = 0; e < N; e++) differ += (((const float *)y->data)[e] == 0.0f) != (y1[e] == 0.0f);
  CHECK_MSG(differ > N / 10, "consecutive runs share a mask (%d of %d differ)", differ, N);

  /* same seed and offset: the same mask, bit for bit */
  tg_graph_set_seed(g, rng_seed, 7);
  CHECK_OK(tg_graph_run(g));
  CHECK(memcmp(y->data, y1, (size_t)N * sizeof(float)) == 0);
done:
  free(y1);
  free(ones);
  tg_graph_free(g);
  tg_store_free(s);
}

/* ---- large cases: the OpenMP paths ---- */

static void test_large(void) {
  static const unary_builder sum = tg_sum, mean = tg_mean, sum_last = tg_sum_last,
                             mean_last = tg_mean_last, max_last = tg_max_last, argmax_last = tg_argmax_last;
  const int64_t flat[2] = {200, 250}, rows[2] = {500, 80};
  oc_large_check("sum [200,250]", 2, flat, build_unary, ref_sum, &sum);
  oc_large_check("mean [200,250]", 2, flat, build_unary, ref_mean, &mean);
  oc_large_check("sum_last [500,80]", 2, rows, build_unary, ref_sum_last, &sum_last);
  oc_large_check("mean_last [500,80]", 2, rows, build_unary, ref_mean_last, &mean_last);
  oc_large_check("max_last [500,80]", 2, rows, build_unary, ref_max_last, &max_last);
  oc_large_check("argmax_last [500,80]", 2, rows, build_unary, ref_argmax_last, &argmax_last);
}

/* ---- builder errors ---- */

/* f on a fresh graph's input "feat" fails with status want and a message naming "feat". */
static void expect_error(const char *what, tg_dtype dt, int ndim, const int64_t *shape,
                         tg_tensor *(*f)(tg_graph *, tg_tensor *), tg_status want) {
  tg_graph *g = tg_graph_new(NULL, "errors");
  tg_tensor *x = tg_input(g, "feat", dt, ndim, shape);
  tg_tensor *y = f(g, x);
  oc_expect_build_error(g, y, want, what, (const char *const[]){"feat", NULL});
}

static tg_tensor *dropout_one(tg_graph *g, tg_tensor *x) { return tg_dropout(g, x, 1.0f); }
static tg_tensor *dropout_neg(tg_graph *g, tg_tensor *x) { return tg_dropout(g, x, -0.1f); }

static void test_builder_errors(void) {
  const int64_t s2[2] = {3, 4};
  expect_error("sum i32", TG_I32, 2, s2, tg_sum, TG_ERR_SHAPE);
  expect_error("max_last i64", TG_I64, 2, s2, tg_max_last, TG_ERR_SHAPE);
  expect_error("argmax_last i32", TG_I32, 2, s2, tg_argmax_last, TG_ERR_SHAPE);
  expect_error("sum_last scalar", TG_F32, 0, s2, tg_sum_last, TG_ERR_SHAPE);
  expect_error("mean_last scalar", TG_F32, 0, s2, tg_mean_last, TG_ERR_SHAPE);
  expect_error("dropout i32", TG_I32, 2, s2, dropout_half, TG_ERR_SHAPE);
  expect_error("dropout p=1", TG_F32, 2, s2, dropout_one, TG_ERR_INVALID);
  expect_error("dropout p<0", TG_F32, 2, s2, dropout_neg, TG_ERR_INVALID);

  /* output shapes and dtypes */
  tg_graph *g = tg_graph_new(NULL, "shapes");
  const int64_t s3[3] = {2, 3, 4}, s1[1] = {5};
  tg_tensor *x = tg_input(g, "x", TG_F32, 3, s3), *v = tg_input(g, "v", TG_F32, 1, s1);
  tg_tensor *a = tg_sum(g, x), *b = tg_mean_last(g, x), *c = tg_argmax_last(g, x), *d = tg_max_last(g, v);
  tg_tensor *e = tg_dropout(g, x, 0.25f);
  CHECK_OK(tg_graph_status(g));
  if (a && b && c && d && e) {
    CHECK(a->ndim == 0 && a->dtype == TG_F32);
    CHECK(b->ndim == 2 && b->shape[0] == 2 && b->shape[1] == 3);
    CHECK(c->ndim == 2 && c->dtype == TG_I64 && c->shape[1] == 3);
    CHECK(d->ndim == 0);
    CHECK(e->ndim == 3 && tg_node_of(e)->attr.f[0] == 0.25f && tg_node_of(e)->attr.i[0] == 0);
  }
  tg_graph_free(g);
}

int main(void) {
  unsigned long long seed = tg_test_seed(20240612ull);
  test_reductions(seed);
  test_first_max();
  test_dropout_training(seed, 10000);
  test_dropout_training(seed, 40000); /* the parallel path */
  test_large();
  test_builder_errors();
  return tg_test_finish();
}
