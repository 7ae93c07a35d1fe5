/* Op tests for softmax, log_softmax, layernorm and rmsnorm: float64 references, gradients, build errors. */
#include <math.h>
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/graph.h"

/* Rows and last dim of a spec. */
static void dims(const oc_input *s, int64_t *rows, int64_t *D) {
  *D = s->shape[s->ndim - 1];
  *rows = oc_numel(s) / *D;
}

/* ---- softmax / log_softmax ---- */

static tg_tensor *build_softmax(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  return tg_softmax(g, in[0]);
}

static tg_tensor *build_log_softmax(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  return tg_log_softmax(g, in[0]);
}

/* log_softmax of each row, in double: x - max - log(sum(exp(x - max))). */
static void ref_log_softmax_rows(const double *x, int64_t rows, int64_t D, double *out) {
  for (int64_t r = 0; r < rows; r++) {
    const double *xr = x + r * D;
    double m = xr[0], s = 0.0;
    for (int64_t j = 1; j < D; j++) m = fmax(m, xr[j]);
    for (int64_t j = 0; j < D; j++) s += exp(xr[j] - m);
    for (int64_t j = 0; j < D; j++) out[r * D + j] = xr[j] - m - log(s);
  }
}

static void ref_log_softmax(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  int64_t rows, D;
  dims(&spec[0], &rows, &D);
  ref_log_softmax_rows(in[0], rows, D, out); /* [rows, D] */
}

static void ref_softmax(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  int64_t rows, D;
  dims(&spec[0], &rows, &D);
  ref_log_softmax_rows(in[0], rows, D, out); /* [rows, D] */
  for (int64_t i = 0; i < rows * D; i++) out[i] = exp(out[i]);
}

/* ---- layernorm ---- */

typedef struct ln_ctx {
  int has_gamma, has_beta;
  float eps;
} ln_ctx;

static tg_tensor *build_layernorm(tg_graph *g, tg_tensor **in, const void *ctx) {
  const ln_ctx *c = ctx;
  int k = 1;
  tg_tensor *gamma = c->has_gamma ? in[k++] : NULL;
  tg_tensor *beta = c->has_beta ? in[k++] : NULL;
  return tg_layernorm(g, in[0], gamma, beta, c->eps);
}

static void ref_layernorm(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const ln_ctx *c = ctx;
  int64_t rows, D;
  dims(&spec[0], &rows, &D);
  int k = 1;
  const double *gamma = c->has_gamma ? in[k++] : NULL; /* [D] */
  const double *beta = c->has_beta ? in[k++] : NULL;   /* [D] */
  for (int64_t r = 0; r < rows; r++) {
    const double *xr = in[0] + r * D; /* [D] */
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < D; j++) mean += xr[j];
    mean /= (double)D;
    for (int64_t j = 0; j < D; j++) var += (xr[j] - mean) * (xr[j] - mean);
    var /= (double)D; /* biased, as PyTorch */
    for (int64_t j = 0; j < D; j++) {
      double y = (xr[j] - mean) / sqrt(var + c->eps);
      if (gamma) y *= gamma[j];
      if (beta) y += beta[j];
      out[r * D + j] = y;
    }
  }
}

/* ---- rmsnorm ---- */

typedef struct rms_ctx {
  int has_weight;
  float eps;
} rms_ctx;

static tg_tensor *build_rmsnorm(tg_graph *g, tg_tensor **in, const void *ctx) {
  const rms_ctx *c = ctx;
  return tg_rmsnorm(g, in[0], c->has_weight ? in[1] : NULL, c->eps);
}

static void ref_rmsnorm(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const rms_ctx *c = ctx;
  int64_t rows, D;
  dims(&spec[0], &rows, &D);
  const double *w = c->has_weight ? in[1] : NULL; /* [D] */
  for (int64_t r = 0; r < rows; r++) {
    const double *xr = in[0] + r * D; /* [D] */
    double ms = 0.0;
    for (int64_t j = 0; j < D; j++) ms += xr[j] * xr[j];
    double rstd = 1.0 / sqrt(ms / (double)D + c->eps);
    for (int64_t j = 0; j < D; j++) out[r * D + j] = xr[j] * rstd * (w ? w[j] : 1.0);
  }
}

/* ---- cases ---- */

static void run_softmax_cases(unsigned long long seed) {
  const int64_t s3[] = {3, 4, 5}, s2[] = {6, 7}, s1[] = {9}, sd1[] = {4, 1};
  struct {
    const char *name;
    int ndim;
    const int64_t *shape;
    double lo, hi;
  } shapes[] = {
      {"[3,4,5]", 3, s3, -3.0, 3.0},
      {"[6,7]", 2, s2, -3.0, 3.0},
      {"[9]", 1, s1, -3.0, 3.0},
      {"[4,1]", 2, sd1, -3.0, 3.0},
      {"[6,7] large logits (overflow without the max shift)", 2, s2, 90.0, 100.0},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    char name[128];
    oc_case c = {.n_in = 1, .build = build_softmax, .ref = ref_softmax};
    c.in[0] = oc_f32_input("x", shapes[i].ndim, shapes[i].shape, 1, shapes[i].lo, shapes[i].hi);
    snprintf(name, sizeof name, "softmax %s", shapes[i].name);
    c.name = name;
    oc_run(&c, seed);
    c.build = build_log_softmax;
    c.ref = ref_log_softmax;
    snprintf(name, sizeof name, "log_softmax %s", shapes[i].name);
    oc_run(&c, seed);
  }
}

static void run_layernorm_cases(unsigned long long seed) {
  const int64_t s3[] = {3, 4, 5}, s2[] = {6, 8}, s3b[] = {2, 3, 16};
  static const ln_ctx both = {1, 1, 1e-5f}, none = {0, 0, 1e-5f}, gamma_only = {1, 0, 1e-5f},
                      beta_only = {0, 1, 1e-3f}, big_eps = {1, 1, 0.5f};
  struct {
    const char *name;
    const ln_ctx *ctx;
    int ndim;
    const int64_t *shape;
    double lo, hi;
  } cases[] = {
      {"layernorm [3,4,5] gamma beta", &both, 3, s3, -2.0, 2.0},
      {"layernorm [6,8] no affine", &none, 2, s2, -2.0, 2.0},
      {"layernorm [2,3,16] gamma only", &gamma_only, 3, s3b, -2.0, 2.0},
      {"layernorm [6,8] beta only, eps 1e-3", &beta_only, 2, s2, -2.0, 2.0},
      {"layernorm [3,4,5] eps 0.5", &big_eps, 3, s3, -1.0, 1.0},
      {"layernorm [6,8] offset rows", &both, 2, s2, 20.0, 22.0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const ln_ctx *lc = cases[i].ctx;
    int64_t D = cases[i].shape[cases[i].ndim - 1];
    oc_case c = {.name = cases[i].name, .build = build_layernorm, .ref = ref_layernorm, .ctx = lc};
    c.in[c.n_in++] = oc_f32_input("x", cases[i].ndim, cases[i].shape, 1, cases[i].lo, cases[i].hi);
    if (lc->has_gamma) c.in[c.n_in++] = oc_f32_input("gamma", 1, &D, 1, 0.5, 1.5);
    if (lc->has_beta) c.in[c.n_in++] = oc_f32_input("beta", 1, &D, 1, -1.0, 1.0);
    oc_run(&c, seed);
  }
}

static void run_rmsnorm_cases(unsigned long long seed) {
  const int64_t s3[] = {3, 4, 5}, s2[] = {6, 8};
  static const rms_ctx with_w = {1, 1e-6f}, no_w = {0, 1e-6f}, big_eps = {1, 0.25f};
  struct {
    const char *name;
    const rms_ctx *ctx;
    int ndim;
    const int64_t *shape;
  } cases[] = {
      {"rmsnorm [3,4,5] weight", &with_w, 3, s3},
      {"rmsnorm [6,8] no weight", &no_w, 2, s2},
      {"rmsnorm [6,8] weight eps 0.25", &big_eps, 2, s2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const rms_ctx *rc = cases[i].ctx;
    int64_t D = cases[i].shape[cases[i].ndim - 1];
    oc_case c = {.name = cases[i].name, .build = build_rmsnorm, .ref = ref_rmsnorm, .ctx = rc};
    c.in[c.n_in++] = oc_f32_input("x", cases[i].ndim, cases[i].shape, 1, -2.0, 2.0);
    if (rc->has_weight) c.in[c.n_in++] = oc_f32_input("weight", 1, &D, 1, 0.5, 1.5);
    oc_run(&c, seed);
  }
}

/* Sizes above the kernels' threading threshold: forward only for softmax (a finite-difference pass
 * over every x element would be slow), gamma/beta/weight gradients summed over many rows in
 * several row chunks. */
static void run_threaded_cases(unsigned long long seed) {
  const int64_t big[] = {700, 50}, rows[] = {2200, 20}; /* rows: a threaded chunk, then a serial one */
  int64_t D = rows[1];
  oc_case c = {.name = "softmax [700,50] threaded", .n_in = 1, .build = build_softmax,
               .ref = ref_softmax, .inference = 1};
  c.in[0] = oc_f32_input("x", 2, big, 0, -4.0, 4.0);
  oc_run(&c, seed);
  c.name = "log_softmax [700,50] threaded";
  c.build = build_log_softmax;
  c.ref = ref_log_softmax;
  oc_run(&c, seed);

  static const ln_ctx both = {1, 1, 1e-5f};
  oc_case ln = {.name = "layernorm [2200,20] threaded, gamma beta grads", .n_in = 3,
                .build = build_layernorm, .ref = ref_layernorm, .ctx = &both};
  ln.in[0] = oc_f32_input("x", 2, rows, 0, -2.0, 2.0);
  ln.in[1] = oc_f32_input("gamma", 1, &D, 1, 0.5, 1.5);
  ln.in[2] = oc_f32_input("beta", 1, &D, 1, -1.0, 1.0);
  oc_run(&ln, seed);

  static const rms_ctx with_w = {1, 1e-6f};
  oc_case rms = {.name = "rmsnorm [2200,20] threaded, weight grad", .n_in = 2,
                 .build = build_rmsnorm, .ref = ref_rmsnorm, .ctx = &with_w};
  rms.in[0] = oc_f32_input("x", 2, rows, 0, -2.0, 2.0);
  rms.in[1] = oc_f32_input("weight", 1, &D, 1, 0.5, 1.5);
  oc_run(&rms, seed);
}

/* ---- shared operands: each backward must add into a gradient another op already wrote ----
 * Backward runs in reverse build order, so the op under test is built before the other consumer
 * of its operand (builders are called in separate statements to fix that order). */

typedef struct pair_ctx {
  int softmax_first;
} pair_ctx;

/* mse(softmax(x), log_softmax(x)): both ops add into x's gradient; the one built first runs last. */
static tg_tensor *build_softmax_pair(tg_graph *g, tg_tensor **in, const void *ctx) {
  const pair_ctx *c = ctx;
  tg_tensor *s, *l;
  if (c->softmax_first) {
    s = tg_softmax(g, in[0]);
    l = tg_log_softmax(g, in[0]);
  } else {
    l = tg_log_softmax(g, in[0]);
    s = tg_softmax(g, in[0]);
  }
  return tg_mse_loss(g, s, l);
}

static void ref_softmax_pair(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  int64_t rows, D;
  dims(&spec[0], &rows, &D);
  double ls[64]; /* [rows * D], the case is small */
  ref_log_softmax_rows(in[0], rows, D, ls);
  double s = 0.0;
  for (int64_t i = 0; i < rows * D; i++) s += (exp(ls[i]) - ls[i]) * (exp(ls[i]) - ls[i]);
  out[0] = s / (double)(rows * D);
}

/* mse(layernorm(layernorm(x, gamma, beta), gamma, beta), x): x has two consumers and so have
 * gamma and beta; the first layernorm's backward runs after both others. */
static tg_tensor *build_layernorm_shared(tg_graph *g, tg_tensor **in, const void *ctx) {
  const ln_ctx *c = ctx;
  tg_tensor *h = tg_layernorm(g, in[0], in[1], in[2], c->eps);
  tg_tensor *y = tg_layernorm(g, h, in[1], in[2], c->eps);
  return tg_mse_loss(g, y, in[0]);
}

static void ref_layernorm_shared(const double *const *in, const oc_input *spec, double *out,
                                 const void *ctx) {
  double h[64], y[64]; /* [rows * D], the case is small */
  ref_layernorm(in, spec, h, ctx);
  const double *in2[3] = {h, in[1], in[2]};
  ref_layernorm(in2, spec, y, ctx);
  int64_t n = oc_numel(&spec[0]);
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (y[i] - in[0][i]) * (y[i] - in[0][i]);
  out[0] = s / (double)n;
}

/* mse(rmsnorm(rmsnorm(x, w), w), x): x and w have two consumers each. */
static tg_tensor *build_rmsnorm_shared(tg_graph *g, tg_tensor **in, const void *ctx) {
  const rms_ctx *c = ctx;
  tg_tensor *h = tg_rmsnorm(g, in[0], in[1], c->eps);
  tg_tensor *y = tg_rmsnorm(g, h, in[1], c->eps);
  return tg_mse_loss(g, y, in[0]);
}

static void ref_rmsnorm_shared(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  double h[64], y[64]; /* [rows * D], the case is small */
  ref_rmsnorm(in, spec, h, ctx);
  const double *in2[2] = {h, in[1]};
  ref_rmsnorm(in2, spec, y, ctx);
  int64_t n = oc_numel(&spec[0]);
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (y[i] - in[0][i]) * (y[i] - in[0][i]);
  out[0] = s / (double)n;
}

static void run_shared_cases(unsigned long long seed) {
  const int64_t s[] = {3, 2, 5}, D = 5; /* 30 elements: fits the refs' scratch */
  static const pair_ctx soft_first = {1}, log_first = {0};
  oc_case c = {.name = "softmax built before log_softmax, sharing x", .n_in = 1,
               .build = build_softmax_pair, .ref = ref_softmax_pair, .ctx = &soft_first};
  c.in[0] = oc_f32_input("x", 3, s, 1, -2.0, 2.0);
  oc_run(&c, seed);
  c.name = "log_softmax built before softmax, sharing x";
  c.ctx = &log_first;
  oc_run(&c, seed);

  static const ln_ctx both = {1, 1, 1e-5f};
  oc_case ln = {.name = "layernorm twice then mse with x: shared x, gamma, beta", .n_in = 3,
                .build = build_layernorm_shared, .ref = ref_layernorm_shared, .ctx = &both};
  ln.in[0] = oc_f32_input("x", 3, s, 1, -2.0, 2.0);
  ln.in[1] = oc_f32_input("gamma", 1, &D, 1, 0.5, 1.5);
  ln.in[2] = oc_f32_input("beta", 1, &D, 1, -1.0, 1.0);
  oc_run(&ln, seed);

  static const rms_ctx with_w = {1, 1e-6f};
  oc_case rms = {.name = "rmsnorm twice then mse with x: shared x, weight", .n_in = 2,
                 .build = build_rmsnorm_shared, .ref = ref_rmsnorm_shared, .ctx = &with_w};
  rms.in[0] = oc_f32_input("x", 3, s, 1, -2.0, 2.0);
  rms.in[1] = oc_f32_input("weight", 1, &D, 1, 0.5, 1.5);
  oc_run(&rms, seed);
}

/* ---- build errors ---- */

/* A fresh graph with inputs x [3, 5] f32, g4 [4] f32, g5 [5] f32, i5 [5] i32, m5 [1, 5] f32, s [] f32. */
typedef struct err_env {
  tg_graph *g;
  tg_tensor *x, *g4, *g5, *i5, *m5, *s;
} err_env;

static err_env err_env_new(void) {
  const int64_t sx[] = {3, 5}, s4[] = {4}, s5[] = {5}, sm[] = {1, 5};
  err_env e;
  e.g = tg_graph_new(NULL, "norm_errors");
  e.x = tg_input(e.g, "x", TG_F32, 2, sx);
  e.g4 = tg_input(e.g, "g4", TG_F32, 1, s4);
  e.g5 = tg_input(e.g, "g5", TG_F32, 1, s5);
  e.i5 = tg_input(e.g, "i5", TG_I32, 1, s5);
  e.m5 = tg_input(e.g, "m5", TG_F32, 2, sm);
  e.s = tg_input(e.g, "s", TG_F32, 0, NULL);
  return e;
}

static void test_build_errors(void) {
  err_env e;
  tg_tensor *t;

  e = err_env_new();
  t = tg_layernorm(e.g, e.x, e.g4, NULL, 1e-5f);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "layernorm gamma [4] vs x [3, 5]",
                        (const char *const[]){"layernorm", "gamma", "'g4'", "[4]", "'x'", "[3, 5]", NULL});

  e = err_env_new();
  t = tg_layernorm(e.g, e.x, e.g5, e.i5, 1e-5f);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "layernorm beta i32",
                        (const char *const[]){"layernorm", "beta", "'i5'", "i32", NULL});

  e = err_env_new();
  t = tg_layernorm(e.g, e.x, NULL, e.m5, 1e-5f);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "layernorm beta [1, 5]",
                        (const char *const[]){"layernorm", "beta", "'m5'", "[1, 5]", "[3, 5]", NULL});

  e = err_env_new();
  t = tg_layernorm(e.g, e.x, NULL, NULL, -1.0f);
  oc_expect_build_error(e.g, t, TG_ERR_INVALID, "layernorm eps < 0",
                        (const char *const[]){"layernorm", "eps", NULL});

  e = err_env_new();
  t = tg_rmsnorm(e.g, e.x, e.m5, 1e-6f);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "rmsnorm weight [1, 5]",
                        (const char *const[]){"rmsnorm", "weight", "'m5'", "[1, 5]", "'x'", "[3, 5]", NULL});

  e = err_env_new();
  t = tg_rmsnorm(e.g, e.i5, NULL, 1e-6f);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "rmsnorm x i32",
                        (const char *const[]){"rmsnorm", "'i5'", "i32", NULL});

  e = err_env_new();
  t = tg_softmax(e.g, e.i5);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "softmax x i32",
                        (const char *const[]){"softmax", "'i5'", "i32", NULL});

  e = err_env_new();
  t = tg_log_softmax(e.g, e.s);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "log_softmax scalar",
                        (const char *const[]){"log_softmax", "'s'", "[]", NULL});

  e = err_env_new();
  t = tg_softmax(e.g, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_INVALID, "softmax NULL", (const char *const[]){"softmax", NULL});

  /* The first error sticks: a later valid call returns NULL and keeps it. */
  e = err_env_new();
  t = tg_layernorm(e.g, e.x, e.g4, NULL, 1e-5f);
  t = tg_softmax(e.g, e.x);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "sticky error after layernorm",
                        (const char *const[]){"layernorm", "'g4'", NULL});
}

int main(void) {
  unsigned long long seed = tg_test_seed(20240611ull);
  run_softmax_cases(seed);
  run_layernorm_cases(seed);
  run_rmsnorm_cases(seed);
  run_threaded_cases(seed);
  run_shared_cases(seed);
  test_build_errors();
  return tg_test_finish();
}
