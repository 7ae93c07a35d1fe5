/* Op tests for mse, huber, pinball and softmax cross-entropy: float64 references, gradients, errors. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/graph.h"

/* Loss gradients are about 1/numel; a tolerance tighter than the default catches wrong scales. */
#define LOSS_GRAD_TOL 2e-4

/* ---- mse ---- */

static tg_tensor *build_mse(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  return tg_mse_loss(g, in[0], in[1]);
}

static void ref_mse(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  int64_t n = oc_numel(&spec[0]);
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (in[0][i] - in[1][i]) * (in[0][i] - in[1][i]);
  out[0] = s / (double)n; /* [] */
}

/* ---- huber ---- */

typedef struct huber_ctx {
  float delta;
} huber_ctx;

static tg_tensor *build_huber(tg_graph *g, tg_tensor **in, const void *ctx) {
  const huber_ctx *c = ctx;
  return tg_huber_loss(g, in[0], in[1], c->delta);
}

static void ref_huber(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  double delta = ((const huber_ctx *)ctx)->delta;
  int64_t n = oc_numel(&spec[0]);
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs(in[0][i] - in[1][i]);
    s += d < delta ? 0.5 * d * d : delta * (d - 0.5 * delta);
  }
  out[0] = s / (double)n; /* [] */
}

/* ---- pinball ---- */

typedef struct pinball_ctx {
  int nq;
  float q[8];
} pinball_ctx;

static tg_tensor *build_pinball(tg_graph *g, tg_tensor **in, const void *ctx) {
  const pinball_ctx *c = ctx;
  return tg_pinball_loss(g, in[0], in[1], c->nq, c->q);
}

/* pytorch-forecasting's QuantileLoss, averaged over elements and quantiles. */
static void ref_pinball(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const pinball_ctx *c = ctx;
  int64_t m = oc_numel(&spec[1]);
  double s = 0.0;
  for (int64_t i = 0; i < m; i++)
    for (int k = 0; k < c->nq; k++) {
      double q = c->q[k], e = in[1][i] - in[0][i * c->nq + k];
      s += fmax(q * e, (q - 1.0) * e);
    }
  out[0] = s / (double)(m * c->nq); /* [] */
}

/* ---- softmax cross-entropy ---- */

static tg_tensor *build_xent(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  return tg_softmax_cross_entropy(g, in[0], in[1]);
}

static void ref_xent(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  int64_t N = spec[0].shape[0], C = spec[0].shape[1];
  double s = 0.0;
  for (int64_t r = 0; r < N; r++) {
    const double *x = in[0] + r * C; /* [C] */
    double m = x[0], z = 0.0;
    for (int64_t j = 1; j < C; j++) m = fmax(m, x[j]);
    for (int64_t j = 0; j < C; j++) z += exp(x[j] - m);
    s += m + log(z) - x[(int64_t)in[1][r]];
  }
  out[0] = s / (double)N; /* [] */
}

/* ---- cases ---- */

static void run_mse_huber_cases(unsigned long long seed) {
  const int64_t s3[] = {3, 4, 5}, s2[] = {4, 6}, s1[] = {7};
  struct {
    const char *name;
    int ndim;
    const int64_t *shape;
    int target_diff;
  } shapes[] = {
      {"[3,4,5]", 3, s3, 1},
      {"[4,6] target bound", 2, s2, 0},
      {"[7]", 1, s1, 1},
  };
  /* delta 0.5 and 1.2 with |pred - target| up to 4: points on both sides of delta. */
  static const huber_ctx d05 = {0.5f}, d12 = {1.2f};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    char name[128];
    oc_case c = {.name = name, .n_in = 2, .build = build_mse, .ref = ref_mse, .grad_tol = LOSS_GRAD_TOL};
    c.in[0] = oc_f32_input("pred", shapes[i].ndim, shapes[i].shape, 1, -2.0, 2.0);
    c.in[1] = oc_f32_input("target", shapes[i].ndim, shapes[i].shape, shapes[i].target_diff, -2.0, 2.0);
    snprintf(name, sizeof name, "mse_loss %s", shapes[i].name);
    oc_run(&c, seed);
    c.build = build_huber;
    c.ref = ref_huber;
    c.ctx = i == 1 ? &d12 : &d05;
    snprintf(name, sizeof name, "huber_loss %s delta %g", shapes[i].name,
             (double)((const huber_ctx *)c.ctx)->delta);
    oc_run(&c, seed);
  }
  /* Large delta: every point quadratic, so huber is half the mse. */
  static const huber_ctx d10 = {10.0f};
  oc_case c = {.name = "huber_loss [3,4,5] delta 10 (all quadratic)", .n_in = 2, .build = build_huber,
               .ref = ref_huber, .ctx = &d10, .grad_tol = LOSS_GRAD_TOL};
  c.in[0] = oc_f32_input("pred", 3, s3, 1, -2.0, 2.0);
  c.in[1] = oc_f32_input("target", 3, s3, 1, -2.0, 2.0);
  oc_run(&c, seed);
  /* Tiny delta: every point linear. */
  static const huber_ctx d001 = {0.01f};
  c.name = "huber_loss [3,4,5] delta 0.01 (all linear)";
  c.ctx = &d001;
  c.in[0] = oc_f32_input("pred", 3, s3, 1, 0.5, 2.0);
  c.in[1] = oc_f32_input("target", 3, s3, 1, -2.0, -0.5);
  oc_run(&c, seed);
}

/* Gradient cases keep pred and target apart (the loss has a kink at pred == target): one case with
 * every target above every prediction and one below; a case with both mixed checks the forward. */
static void run_pinball_cases(unsigned long long seed) {
  static const pinball_ctx q3 = {3, {0.1f, 0.5f, 0.9f}}, q2 = {2, {0.25f, 0.75f}},
                           q5 = {5, {0.02f, 0.1f, 0.5f, 0.9f, 0.98f}}, q1 = {1, {0.3f}},
                           q4 = {4, {0.2f, 0.4f, 0.6f, 0.8f}};
  const int64_t p3[] = {4, 5, 3}, t3[] = {4, 5}, p2[] = {6, 2}, t2[] = {6}, p5[] = {3, 4, 5},
                t5[] = {3, 4}, p1[] = {5, 1}, t1[] = {5}, p4[] = {4};
  oc_case c = {.name = "pinball_loss [4,5,3] Q=3 target above", .n_in = 2, .build = build_pinball,
               .ref = ref_pinball, .ctx = &q3, .grad_tol = LOSS_GRAD_TOL};
  c.in[0] = oc_f32_input("pred", 3, p3, 1, -3.0, -1.0);
  c.in[1] = oc_f32_input("target", 2, t3, 1, 1.0, 3.0);
  oc_run(&c, seed);

  c.name = "pinball_loss [6,2] Q=2 target below";
  c.ctx = &q2;
  c.in[0] = oc_f32_input("pred", 2, p2, 1, 1.0, 3.0);
  c.in[1] = oc_f32_input("target", 1, t2, 1, -3.0, -1.0);
  oc_run(&c, seed);

  c.name = "pinball_loss [5,1] Q=1 target below";
  c.ctx = &q1;
  c.in[0] = oc_f32_input("pred", 2, p1, 1, 0.5, 1.0);
  c.in[1] = oc_f32_input("target", 1, t1, 1, -1.0, 0.0);
  oc_run(&c, seed);

  c.name = "pinball_loss [4] Q=4 scalar target above";
  c.ctx = &q4;
  c.in[0] = oc_f32_input("pred", 1, p4, 1, -1.0, 0.0);
  c.in[1] = oc_f32_input("target", 0, NULL, 1, 0.5, 1.0);
  oc_run(&c, seed);

  c.name = "pinball_loss [3,4,5] Q=5 mixed signs (forward)";
  c.ctx = &q5;
  c.in[0] = oc_f32_input("pred", 3, p5, 0, -2.0, 2.0);
  c.in[1] = oc_f32_input("target", 2, t5, 0, -2.0, 2.0);
  oc_run(&c, seed);
}

static void run_xent_cases(unsigned long long seed) {
  struct {
    const char *name;
    int64_t N, C;
    tg_dtype label_dtype;
    double lo, hi;
  } cases[] = {
      {"softmax_cross_entropy [5,7] i32", 5, 7, TG_I32, -3.0, 3.0},
      {"softmax_cross_entropy [4,3] i64", 4, 3, TG_I64, -3.0, 3.0},
      {"softmax_cross_entropy [8,2] i64", 8, 2, TG_I64, -1.0, 1.0},
      {"softmax_cross_entropy [1,1] i32", 1, 1, TG_I32, -1.0, 1.0},
      {"softmax_cross_entropy [6,5] i32 large logits", 6, 5, TG_I32, 90.0, 100.0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t shape[] = {cases[i].N, cases[i].C};
    oc_case c = {.name = cases[i].name, .n_in = 2, .build = build_xent, .ref = ref_xent,
                 .grad_tol = LOSS_GRAD_TOL};
    c.in[0] = oc_f32_input("logits", 2, shape, 1, cases[i].lo, cases[i].hi);
    c.in[1] = (oc_input){.name = "labels", .dtype = cases[i].label_dtype, .ndim = 1,
                         .shape = {cases[i].N}, .lo = 0, .hi = (double)cases[i].C};
    oc_run(&c, seed);
  }
}

/* Sizes above the kernels' threading threshold (forward only: the reductions are what threads). */
static void run_threaded_cases(unsigned long long seed) {
  const int64_t big[] = {700, 50}, tq[] = {12000}, pq[] = {12000, 3};
  static const huber_ctx d05 = {0.5f};
  static const pinball_ctx q3 = {3, {0.1f, 0.5f, 0.9f}};
  oc_case c = {.name = "mse_loss [700,50] threaded", .n_in = 2, .build = build_mse, .ref = ref_mse,
               .inference = 1};
  c.in[0] = oc_f32_input("pred", 2, big, 0, -2.0, 2.0);
  c.in[1] = oc_f32_input("target", 2, big, 0, -2.0, 2.0);
  oc_run(&c, seed);
  c.name = "huber_loss [700,50] threaded";
  c.build = build_huber;
  c.ref = ref_huber;
  c.ctx = &d05;
  oc_run(&c, seed);
  c.name = "pinball_loss [12000,3] threaded";
  c.build = build_pinball;
  c.ref = ref_pinball;
  c.ctx = &q3;
  c.in[0] = oc_f32_input("pred", 2, pq, 0, -2.0, 2.0);
  c.in[1] = oc_f32_input("target", 1, tq, 0, -2.0, 2.0);
  oc_run(&c, seed);
  c.name = "softmax_cross_entropy [700,50] threaded";
  c.build = build_xent;
  c.ref = ref_xent;
  c.ctx = NULL;
  c.in[0] = oc_f32_input("logits", 2, big, 0, -4.0, 4.0);
  c.in[1] = (oc_input){.name = "labels", .dtype = TG_I64, .ndim = 1, .shape = {700}, .lo = 0, .hi = 50};
  oc_run(&c, seed);
}

/* ---- shared operands: each backward must add into a gradient another op already wrote ----
 * Backward runs in reverse build order, so the loss under test is built before the other consumer
 * of its operands (builders are called in separate statements to fix that order). */

static double ref_scalar(oc_ref_fn ref, const double *const *in, const oc_input *spec, const void *ctx) {
  double v;
  ref(in, spec, &v, ctx);
  return v;
}

static const huber_ctx shared_delta = {0.5f};

typedef struct pair_ctx {
  int mse_first;
} pair_ctx;

/* mse(mse(p, t), huber(p, t)): p and t feed two losses; the one built first runs last. */
static tg_tensor *build_mse_huber(tg_graph *g, tg_tensor **in, const void *ctx) {
  const pair_ctx *c = ctx;
  tg_tensor *m, *h;
  if (c->mse_first) {
    m = tg_mse_loss(g, in[0], in[1]);
    h = tg_huber_loss(g, in[0], in[1], shared_delta.delta);
  } else {
    h = tg_huber_loss(g, in[0], in[1], shared_delta.delta);
    m = tg_mse_loss(g, in[0], in[1]);
  }
  return tg_mse_loss(g, m, h);
}

static void ref_mse_huber(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  double d = ref_scalar(ref_mse, in, spec, NULL) - ref_scalar(ref_huber, in, spec, &shared_delta);
  out[0] = d * d;
}

/* mse(xent(x, y), mse(x, x2)): the logits feed two losses, cross-entropy built first. */
static tg_tensor *build_xent_mse(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  tg_tensor *xe = tg_softmax_cross_entropy(g, in[0], in[1]);
  tg_tensor *m = tg_mse_loss(g, in[0], in[2]);
  return tg_mse_loss(g, xe, m);
}

static void ref_xent_mse(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  const double *mse_in[2] = {in[0], in[2]};
  const oc_input mse_spec[2] = {spec[0], spec[2]};
  double d = ref_scalar(ref_xent, in, spec, NULL) - ref_scalar(ref_mse, mse_in, mse_spec, NULL);
  out[0] = d * d;
}

static const pinball_ctx shared_q = {2, {0.3f, 0.8f}};

/* mse(pinball(p, t), mse(huber(t, t2), mse(p, p2))): p and t each feed a second loss built later. */
static tg_tensor *build_pinball_shared(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  tg_tensor *a = tg_pinball_loss(g, in[0], in[1], shared_q.nq, shared_q.q);
  tg_tensor *b = tg_huber_loss(g, in[1], in[2], shared_delta.delta);
  tg_tensor *c = tg_mse_loss(g, in[0], in[3]);
  tg_tensor *bc = tg_mse_loss(g, b, c);
  return tg_mse_loss(g, a, bc);
}

static void ref_pinball_shared(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  const double *h_in[2] = {in[1], in[2]}, *m_in[2] = {in[0], in[3]};
  const oc_input h_spec[2] = {spec[1], spec[2]}, m_spec[2] = {spec[0], spec[3]};
  double a = ref_scalar(ref_pinball, in, spec, &shared_q);
  double b = ref_scalar(ref_huber, h_in, h_spec, &shared_delta);
  double c = ref_scalar(ref_mse, m_in, m_spec, NULL);
  double d = a - (b - c) * (b - c);
  out[0] = d * d;
}

static void run_shared_cases(unsigned long long seed) {
  const int64_t s[] = {3, 4}, p[] = {5, 2}, t[] = {5};
  static const pair_ctx mse_first = {1}, huber_first = {0};
  oc_case c = {.name = "mse built before huber, sharing pred and target", .n_in = 2,
               .build = build_mse_huber, .ref = ref_mse_huber, .ctx = &mse_first,
               .grad_tol = LOSS_GRAD_TOL};
  c.in[0] = oc_f32_input("pred", 2, s, 1, -2.0, 2.0);
  c.in[1] = oc_f32_input("target", 2, s, 1, -2.0, 2.0);
  oc_run(&c, seed);
  c.name = "huber built before mse, sharing pred and target";
  c.ctx = &huber_first;
  oc_run(&c, seed);

  oc_case x = {.name = "softmax_cross_entropy and mse share logits", .n_in = 3, .build = build_xent_mse,
               .ref = ref_xent_mse, .grad_tol = LOSS_GRAD_TOL};
  x.in[0] = oc_f32_input("logits", 2, s, 1, -2.0, 2.0);
  x.in[1] = (oc_input){.name = "labels", .dtype = TG_I32, .ndim = 1, .shape = {3}, .lo = 0, .hi = 4};
  x.in[2] = oc_f32_input("other", 2, s, 0, -2.0, 2.0);
  oc_run(&x, seed);

  oc_case q = {.name = "pinball shares pred with mse and target with huber", .n_in = 4,
               .build = build_pinball_shared, .ref = ref_pinball_shared, .grad_tol = LOSS_GRAD_TOL};
  q.in[0] = oc_f32_input("pred", 2, p, 1, -3.0, -1.0);
  q.in[1] = oc_f32_input("target", 1, t, 1, 1.0, 3.0);
  q.in[2] = oc_f32_input("other_t", 1, t, 0, -2.0, 2.0);
  q.in[3] = oc_f32_input("other_p", 2, p, 0, -2.0, 2.0);
  oc_run(&q, seed);
}

/* ---- build errors ---- */

/* A fresh graph with f32 inputs a [3, 4], b [4, 3], p [4, 3], t [4], t5 [5], l3 [3, 4, 2],
 * and labels i4 [4] i32, i3 [3] i32. */
typedef struct err_env {
  tg_graph *g;
  tg_tensor *a, *b, *p, *t, *t5, *l3, *i4, *i3;
} err_env;

static err_env err_env_new(void) {
  const int64_t s34[] = {3, 4}, s43[] = {4, 3}, s4[] = {4}, s5[] = {5}, s342[] = {3, 4, 2}, s3[] = {3};
  err_env e;
  e.g = tg_graph_new(NULL, "loss_errors");
  e.a = tg_input(e.g, "a", TG_F32, 2, s34);
  e.b = tg_input(e.g, "b", TG_F32, 2, s43);
  e.p = tg_input(e.g, "p", TG_F32, 2, s43);
  e.t = tg_input(e.g, "t", TG_F32, 1, s4);
  e.t5 = tg_input(e.g, "t5", TG_F32, 1, s5);
  e.l3 = tg_input(e.g, "l3", TG_F32, 3, s342);
  e.i4 = tg_input(e.g, "i4", TG_I32, 1, s4);
  e.i3 = tg_input(e.g, "i3", TG_I32, 1, s3);
  return e;
}

static void test_build_errors(void) {
  const float q2[] = {0.1f, 0.9f}, q3[] = {0.1f, 0.5f, 0.9f}, q3bad[] = {0.1f, 1.0f, 0.9f};
  float q17[17];
  for (int i = 0; i < 17; i++) q17[i] = (float)(i + 1) / 18.0f;
  err_env e;
  tg_tensor *r;

  e = err_env_new();
  r = tg_mse_loss(e.g, e.a, e.b);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "mse [3,4] vs [4,3]",
                        (const char *const[]){"mse_loss", "'a'", "[3, 4]", "'b'", "[4, 3]", NULL});

  e = err_env_new();
  r = tg_mse_loss(e.g, e.t, e.i4);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "mse target i32",
                        (const char *const[]){"mse_loss", "'i4'", "i32", NULL});

  e = err_env_new();
  r = tg_huber_loss(e.g, e.t, e.t5, 1.0f);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "huber [4] vs [5]",
                        (const char *const[]){"huber_loss", "'t'", "[4]", "'t5'", "[5]", NULL});

  e = err_env_new();
  r = tg_huber_loss(e.g, e.a, e.a, 0.0f);
  oc_expect_build_error(e.g, r, TG_ERR_INVALID, "huber delta 0",
                        (const char *const[]){"huber_loss", "delta", NULL});

  e = err_env_new();
  r = tg_pinball_loss(e.g, e.p, e.t, 2, q2);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "pinball Q 3 vs nq 2",
                        (const char *const[]){"pinball_loss", "'p'", "[4, 3]", "'t'", "[4]", "2 quantiles",
                                              NULL});

  e = err_env_new();
  r = tg_pinball_loss(e.g, e.p, e.t5, 3, q3);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "pinball target [5] vs pred [4, 3]",
                        (const char *const[]){"pinball_loss", "'p'", "[4, 3]", "'t5'", "[5]", NULL});

  e = err_env_new();
  r = tg_pinball_loss(e.g, e.l3, e.a, 3, q3);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "pinball pred [3,4,2] with nq 3",
                        (const char *const[]){"pinball_loss", "'l3'", "[3, 4, 2]", "'a'", "[3, 4]", NULL});

  e = err_env_new();
  r = tg_pinball_loss(e.g, e.p, e.t, 3, q3bad);
  oc_expect_build_error(e.g, r, TG_ERR_INVALID, "pinball quantile 1.0",
                        (const char *const[]){"pinball_loss", "quantile 1", "(0, 1)", NULL});

  e = err_env_new();
  r = tg_pinball_loss(e.g, e.p, e.t, 17, q17);
  oc_expect_build_error(e.g, r, TG_ERR_INVALID, "pinball 17 quantiles",
                        (const char *const[]){"pinball_loss", "17", "TG_MAX_QUANTILES", NULL});

  e = err_env_new();
  r = tg_softmax_cross_entropy(e.g, e.a, e.t);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "xent f32 labels",
                        (const char *const[]){"softmax_cross_entropy", "'t'", "f32", "i64", NULL});

  e = err_env_new();
  r = tg_softmax_cross_entropy(e.g, e.a, e.i4);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "xent labels [4] vs logits [3, 4]",
                        (const char *const[]){"softmax_cross_entropy", "'a'", "[3, 4]", "'i4'", "[4]", NULL});

  e = err_env_new();
  r = tg_softmax_cross_entropy(e.g, e.l3, e.i3);
  oc_expect_build_error(e.g, r, TG_ERR_SHAPE, "xent 3-D logits",
                        (const char *const[]){"softmax_cross_entropy", "'l3'", "[3, 4, 2]", "[N, C]", NULL});

  e = err_env_new();
  r = tg_mse_loss(e.g, e.a, NULL);
  oc_expect_build_error(e.g, r, TG_ERR_INVALID, "mse NULL target", (const char *const[]){"mse_loss", NULL});
}

/* ---- labels out of range at run ---- */

static void test_label_errors(unsigned long long seed) {
  const int64_t ls[] = {3, 4}, ys[] = {3};
  tg_store *store = tg_store_new(tg_cpu(0), seed);
  tg_graph *g = tg_graph_new(store, "xent_labels");
  tg_tensor *logits = tg_input(g, "logits", TG_F32, 2, ls);
  tg_tensor *labels = tg_input(g, "labels", TG_I64, 1, ys);
  tg_tensor *loss = tg_softmax_cross_entropy(g, logits, labels);
  CHECK(loss != NULL);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  CHECK_OK(tg_graph_plan(g, &opts));
  if (!loss || tg_graph_status(g) != TG_OK) goto done;

  float x[12] = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f, -2.0f, 0.0f, 3.0f, 0.25f}; /* [3, 4] */
  int64_t y[3] = {2, 3, 0};                                                                 /* [3] */
  tg_tensor tx, ty;
  CHECK_OK(tg_tensor_view(&tx, "x", tg_cpu(0), TG_F32, 2, ls, x));
  CHECK_OK(tg_tensor_view(&ty, "y", tg_cpu(0), TG_I64, 1, ys, y));
  CHECK_OK(tg_graph_bind(g, "logits", &tx));
  CHECK_OK(tg_graph_bind(g, "labels", &ty));
  CHECK_OK(tg_graph_run(g));
  /* log(sum exp) - x[label] per row, by hand. */
  double want = 0.0;
  for (int r = 0; r < 3; r++) {
    double z = 0.0;
    for (int j = 0; j < 4; j++) z += exp(x[r * 4 + j]);
    want += log(z) - x[r * 4 + y[r]];
  }
  want /= 3.0;
  CHECK_MSG(fabs(*(float *)loss->data - want) < 1e-5, "loss %g want %g", (double)*(float *)loss->data, want);

  y[1] = 4; /* == C */
  tg_status st = tg_graph_run(g);
  CHECK_MSG(st != TG_OK, "label 4 with 4 classes ran");
  CHECK_MSG(strstr(tg_last_error(), loss->name) != NULL, "message '%s' lacks node '%s'", tg_last_error(),
            loss->name);
  CHECK_MSG(strstr(tg_last_error(), "row 1") != NULL, "message '%s' lacks 'row 1'", tg_last_error());
  CHECK_MSG(strstr(tg_last_error(), "label 4") != NULL, "message '%s' lacks 'label 4'", tg_last_error());

  y[1] = 3;
  y[2] = -1;
  st = tg_graph_run(g);
  CHECK_MSG(st != TG_OK, "label -1 ran");
  CHECK_MSG(strstr(tg_last_error(), "row 2") != NULL, "message '%s' lacks 'row 2'", tg_last_error());
  CHECK_MSG(strstr(tg_last_error(), "label -1") != NULL, "message '%s' lacks 'label -1'", tg_last_error());

  y[2] = 0;
  CHECK_OK(tg_graph_run(g));
done:
  tg_graph_free(g);
  tg_store_free(store);
}

/* The same check with i32 labels, through a graph whose logits are a parameter (training plan). */
static void test_label_errors_i32(unsigned long long seed) {
  const int64_t ls[] = {2, 3}, ys[] = {2};
  tg_store *store = tg_store_new(tg_cpu(0), seed);
  tg_graph *g = tg_graph_new(store, "xent_labels_i32");
  tg_tensor *logits = tg_param(g, "logits", 2, ls, (tg_init){TG_INIT_NORMAL, 0.0f, 1.0f});
  tg_tensor *labels = tg_input(g, "labels", TG_I32, 1, ys);
  tg_tensor *loss = tg_softmax_cross_entropy(g, logits, labels);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.training = 1;
  CHECK_OK(tg_graph_plan(g, &opts));
  if (!loss || tg_graph_status(g) != TG_OK) goto done;
  int32_t y[2] = {7, 0}; /* [2] */
  tg_tensor ty;
  CHECK_OK(tg_tensor_view(&ty, "y", tg_cpu(0), TG_I32, 1, ys, y));
  CHECK_OK(tg_graph_bind(g, "labels", &ty));
  tg_status st = tg_graph_run(g);
  CHECK_MSG(st != TG_OK, "label 7 with 3 classes ran");
  CHECK_MSG(strstr(tg_last_error(), loss->name) != NULL && strstr(tg_last_error(), "row 0") &&
                strstr(tg_last_error(), "label 7"),
            "message '%s' lacks node, row or value", tg_last_error());
  y[0] = 2;
  CHECK_OK(tg_graph_run(g));
  CHECK_OK(tg_graph_backward(g, loss));
done:
  tg_graph_free(g);
  tg_store_free(store);
}

int main(void) {
  unsigned long long seed = tg_test_seed(20240611ull);
  run_mse_huber_cases(seed);
  run_pinball_cases(seed);
  run_xent_cases(seed);
  run_threaded_cases(seed);
  run_shared_cases(seed);
  test_build_errors();
  test_label_errors(seed);
  test_label_errors_i32(seed);
  return tg_test_finish();
}
