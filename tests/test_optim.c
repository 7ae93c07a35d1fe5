/* Optimizers: schedules, SGD/momentum/Adam/AdamW against float64 references, clipping, NaN guards. */
#include <math.h>
#include <string.h>
#include "graph/backend.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

static unsigned long long g_seed;
static const double PI = 3.14159265358979323846;

/* A store with w [2, 3] (decayed) and b [3] (not decayed), finalized, on cpu:0. */
static tg_store *make_store(void) {
  tg_store *s = tg_store_new(tg_cpu(0), g_seed);
  tg_graph *g = tg_graph_new(s, "t");
  int64_t ws[2] = {2, 3}, bs[1] = {3};
  tg_init init = {TG_INIT_UNIFORM, -1.0f, 1.0f};
  CHECK(tg_param(g, "w", 2, ws, init) != NULL);
  CHECK(tg_param(g, "b", 1, bs, init) != NULL);
  CHECK_OK(tg_store_finalize(s));
  tg_graph_free(g);
  return s;
}

/* Fills every gradient with a value from the counter RNG (stream = round). */
static void set_grads(tg_store *s, uint64_t round, float scale) {
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_param_info p = tg_store_param(s, i);
    float *g = tg_store_grads(s) + p.offset;
    for (size_t e = 0; e < p.numel; e++)
      g[e] = scale * (2.0f * tg_rng_uniform(g_seed + 7, round * 16 + (uint64_t)i, e) - 1.0f);
  }
}

static int close_to(double got, double want, double rtol, double atol) {
  return fabs(got - want) <= atol + rtol * fabs(want);
}

/* ---- float64 references (PyTorch semantics) ---- */

typedef struct ref_state {
  double p[64], m[64], v[64];
} ref_state;

static void ref_load(ref_state *r, tg_store *s) {
  memset(r, 0, sizeof *r);
  for (size_t k = 0; k < tg_store_numel(s); k++) r->p[k] = tg_store_values(s)[k];
}

static void ref_sgd(ref_state *r, tg_store *s, const tg_optim_config *c, double lr, double gscale) {
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_param_info p = tg_store_param(s, i);
    double wd = p.ndim >= 2 ? c->weight_decay : 0.0;
    for (size_t e = p.offset; e < p.offset + p.numel; e++) {
      double d = (double)tg_store_grads(s)[e] * gscale + wd * r->p[e];
      if (c->momentum != 0.0f) {
        r->m[e] = c->momentum * r->m[e] + d;
        d = r->m[e];
      }
      r->p[e] -= lr * d;
    }
  }
}

static void ref_adam(ref_state *r, tg_store *s, const tg_optim_config *c, double lr, double gscale,
                     int64_t t) {
  double b1 = c->beta1, b2 = c->beta2;
  double bc1 = 1.0 - pow(b1, (double)t), bc2 = 1.0 - pow(b2, (double)t);
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_param_info p = tg_store_param(s, i);
    double wd = p.ndim >= 2 ? c->weight_decay : 0.0;
    for (size_t e = p.offset; e < p.offset + p.numel; e++) {
      double g = (double)tg_store_grads(s)[e] * gscale;
      if (c->kind == TG_ADAMW) r->p[e] *= 1.0 - lr * wd;
      else g += wd * r->p[e];
      r->m[e] = b1 * r->m[e] + (1.0 - b1) * g;
      r->v[e] = b2 * r->v[e] + (1.0 - b2) * g * g;
      double denom = sqrt(r->v[e]) / sqrt(bc2) + (double)c->eps;
      r->p[e] -= lr / bc1 * r->m[e] / denom;
    }
  }
}

static int ref_matches(const ref_state *r, tg_store *s, double rtol, const char *what) {
  int ok = 1;
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_param_info p = tg_store_param(s, i);
    for (size_t e = p.offset; e < p.offset + p.numel; e++) {
      double got = tg_store_values(s)[e];
      if (!close_to(got, r->p[e], rtol, 1e-7)) {
        fprintf(stderr, "%s: %s[%zu] = %.9g, reference %.9g\n", what, p.name, e - p.offset, got, r->p[e]);
        ok = 0;
      }
    }
  }
  return ok;
}

/* ---- tests ---- */

static void test_schedules(void) {
  tg_lr_schedule c = {TG_LR_CONSTANT, 0, 0, 0.0f};
  CHECK(tg_lr_at(&c, 0.5f, 0) == 0.5f && tg_lr_at(&c, 0.5f, 1000000) == 0.5f);
  c.warmup_steps = 4;
  CHECK(close_to(tg_lr_at(&c, 0.5f, 0), 0.125, 1e-7, 0));
  CHECK(close_to(tg_lr_at(&c, 0.5f, 1), 0.25, 1e-7, 0));
  CHECK(close_to(tg_lr_at(&c, 0.5f, 3), 0.5, 1e-7, 0));
  CHECK(tg_lr_at(&c, 0.5f, 4) == 0.5f && tg_lr_at(&c, 0.5f, 99) == 0.5f);

  tg_lr_schedule l = {TG_LR_LINEAR, 10, 110, 0.1f};
  CHECK(close_to(tg_lr_at(&l, 2.0f, 0), 0.2, 1e-6, 0));  /* warm-up: 2 * 1/10 */
  CHECK(close_to(tg_lr_at(&l, 2.0f, 9), 2.0, 1e-6, 0));
  CHECK(close_to(tg_lr_at(&l, 2.0f, 10), 2.0, 1e-6, 0)); /* decay starts at base */
  CHECK(close_to(tg_lr_at(&l, 2.0f, 60), 2.0 * (1.0 - 0.9 * 0.5), 1e-6, 0));
  CHECK(close_to(tg_lr_at(&l, 2.0f, 110), 0.2, 1e-6, 0));
  CHECK(close_to(tg_lr_at(&l, 2.0f, 5000), 0.2, 1e-6, 0)); /* clamped after total_steps */

  tg_lr_schedule k = {TG_LR_COSINE, 0, 100, 0.0f};
  CHECK(close_to(tg_lr_at(&k, 1.0f, 0), 1.0, 1e-6, 0));
  CHECK(close_to(tg_lr_at(&k, 1.0f, 25), 0.5 * (1.0 + cos(PI * 0.25)), 1e-6, 0));
  CHECK(close_to(tg_lr_at(&k, 1.0f, 50), 0.5, 1e-6, 0));
  CHECK(close_to(tg_lr_at(&k, 1.0f, 100), 0.0, 0, 1e-7));
  CHECK(close_to(tg_lr_at(&k, 1.0f, 1000), 0.0, 0, 1e-7));
  k.final_frac = 0.2f;
  k.warmup_steps = 20;
  CHECK(close_to(tg_lr_at(&k, 1.0f, 19), 1.0, 1e-6, 0));
  CHECK(close_to(tg_lr_at(&k, 1.0f, 60), 0.2 + 0.8 * 0.5, 1e-6, 0)); /* halfway through 20..100 */
  CHECK(close_to(tg_lr_at(&k, 1.0f, 100), 0.2, 1e-6, 0));
}

static void test_defaults_and_config(void) {
  tg_optim_config a = tg_optim_defaults(TG_ADAM), w = tg_optim_defaults(TG_ADAMW),
                  s = tg_optim_defaults(TG_SGD);
  CHECK(a.lr == 1e-3f && a.beta1 == 0.9f && a.beta2 == 0.999f && a.eps == 1e-8f && a.weight_decay == 0.0f);
  CHECK(w.weight_decay == 0.01f && w.lr == 1e-3f);
  CHECK(s.lr == 1e-2f && s.momentum == 0.0f && s.clip_norm == 0.0f);
  CHECK(a.schedule.kind == TG_LR_CONSTANT);

  tg_store *st = make_store();
  tg_optim *o = NULL;
  struct {
    tg_optim_config c;
    const char *word;
  } bad[12];
  int nb = 0;
  bad[nb].c = a, bad[nb].c.lr = 0.0f, bad[nb++].word = "lr";
  bad[nb].c = a, bad[nb].c.lr = NAN, bad[nb++].word = "lr";
  bad[nb].c = a, bad[nb].c.beta1 = 1.0f, bad[nb++].word = "beta1";
  bad[nb].c = a, bad[nb].c.beta2 = -0.1f, bad[nb++].word = "beta2";
  bad[nb].c = a, bad[nb].c.eps = 0.0f, bad[nb++].word = "eps";
  bad[nb].c = w, bad[nb].c.weight_decay = -1.0f, bad[nb++].word = "weight_decay";
  bad[nb].c = s, bad[nb].c.momentum = -0.5f, bad[nb++].word = "momentum";
  bad[nb].c = s, bad[nb].c.clip_norm = INFINITY, bad[nb++].word = "clip_norm";
  bad[nb].c = a, bad[nb].c.schedule.kind = TG_LR_COSINE, bad[nb].c.schedule.total_steps = 0,
  bad[nb++].word = "total_steps";
  bad[nb].c = a, bad[nb].c.schedule.kind = TG_LR_LINEAR, bad[nb].c.schedule.total_steps = 10,
  bad[nb].c.schedule.final_frac = 2.0f, bad[nb++].word = "final_frac";
  bad[nb].c = a, bad[nb].c.schedule.warmup_steps = -1, bad[nb++].word = "warmup_steps";
  for (int i = 0; i < nb; i++) {
    CHECK_STATUS(tg_optim_new(st, &bad[i].c, &o), TG_ERR_INVALID);
    CHECK_MSG(strstr(tg_last_error(), bad[i].word) != NULL, "want '%s' in: %s", bad[i].word, tg_last_error());
    CHECK(o == NULL);
  }
  /* an SGD config does not read Adam's fields */
  s.beta1 = 5.0f;
  s.eps = 0.0f;
  CHECK_OK(tg_optim_new(st, &s, &o));
  tg_optim_free(o);
  tg_store_free(st);
}

static void test_state_names(void) {
  tg_store *s = make_store();
  tg_optim *o = NULL;
  const char *name = NULL;
  tg_optim_config c = tg_optim_defaults(TG_SGD);
  CHECK_OK(tg_optim_new(s, &c, &o));
  CHECK(tg_optim_state_count(o) == 0 && tg_optim_state(o, 0, &name) == NULL);
  tg_optim_free(o);
  c.momentum = 0.9f;
  CHECK_OK(tg_optim_new(s, &c, &o));
  CHECK(tg_optim_state_count(o) == 1);
  float *m = tg_optim_state(o, 0, &name);
  CHECK(m && name && strcmp(name, "momentum") == 0);
  int zero = 1;
  for (size_t k = 0; m && k < tg_store_numel(s); k++) zero &= m[k] == 0.0f;
  CHECK(zero);
  CHECK(tg_optim_store(o) == s && tg_optim_config_of(o)->momentum == 0.9f);
  tg_optim_free(o);
  c = tg_optim_defaults(TG_ADAMW);
  CHECK_OK(tg_optim_new(s, &c, &o));
  CHECK(tg_optim_state_count(o) == 2);
  CHECK(tg_optim_state(o, 0, &name) && strcmp(name, "exp_avg") == 0);
  CHECK(tg_optim_state(o, 1, &name) && strcmp(name, "exp_avg_sq") == 0);
  CHECK(tg_optim_state(o, 2, &name) == NULL);
  tg_optim_free(o);
  tg_store_free(s);
}

/* Three steps of one optimizer against the float64 reference. */
static void run_against_reference(tg_optim_config c, const char *what) {
  tg_store *s = make_store();
  tg_optim *o = NULL;
  CHECK_OK(tg_optim_new(s, &c, &o));
  ref_state r;
  ref_load(&r, s);
  for (int64_t t = 1; t <= 3; t++) {
    set_grads(s, (uint64_t)t, 1.0f);
    double lr = tg_lr_at(&c.schedule, c.lr, t - 1);
    if (c.kind == TG_SGD) ref_sgd(&r, s, &c, lr, 1.0);
    else ref_adam(&r, s, &c, lr, 1.0, t);
    CHECK_OK(tg_optim_step(o));
    CHECK(tg_optim_steps(o) == t);
    CHECK(tg_optim_last_lr(o) == (float)lr);
    CHECK_MSG(ref_matches(&r, s, 2e-6, what), "%s step %lld", what, (long long)t);
  }
  tg_optim_free(o);
  tg_store_free(s);
}

static void test_against_reference(void) {
  tg_optim_config c = tg_optim_defaults(TG_SGD);
  c.lr = 0.1f;
  run_against_reference(c, "sgd");
  c.momentum = 0.9f;
  c.weight_decay = 0.05f;
  run_against_reference(c, "sgd momentum + wd");
  c = tg_optim_defaults(TG_ADAM);
  c.lr = 0.01f;
  run_against_reference(c, "adam");
  c.weight_decay = 0.1f;
  c.beta1 = 0.8f;
  c.beta2 = 0.95f;
  run_against_reference(c, "adam + L2");
  c = tg_optim_defaults(TG_ADAMW);
  c.lr = 0.02f;
  c.weight_decay = 0.3f;
  c.schedule = (tg_lr_schedule){TG_LR_COSINE, 2, 10, 0.1f};
  run_against_reference(c, "adamw + warm-up cosine");
}

/* The first SGD step by hand: with momentum the buffer starts as the gradient, as in PyTorch. */
static void test_sgd_first_step_by_hand(void) {
  tg_store *s = make_store();
  tg_optim_config c = tg_optim_defaults(TG_SGD);
  c.lr = 0.5f;
  c.momentum = 0.9f;
  tg_optim *o = NULL;
  CHECK_OK(tg_optim_new(s, &c, &o));
  float *p = tg_store_values(s), *g = tg_store_grads(s);
  size_t n = tg_store_numel(s);
  float before[64];
  memcpy(before, p, n * sizeof *p);
  for (size_t k = 0; k < n; k++) g[k] = 0.25f * (float)k - 1.0f;
  CHECK_OK(tg_optim_step(o));
  float *m = tg_optim_state(o, 0, NULL);
  int ok = 1;
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_param_info pi = tg_store_param(s, i);
    for (size_t k = pi.offset; k < pi.offset + pi.numel; k++)
      ok &= m[k] == g[k] && p[k] == before[k] - 0.5f * g[k];
  }
  CHECK(ok);
  tg_optim_free(o);
  tg_store_free(s);
}

static void test_no_decay_on_vectors(void) {
  const tg_optim_kind kinds[3] = {TG_SGD, TG_ADAM, TG_ADAMW};
  for (int k = 0; k < 3; k++) {
    tg_store *s = make_store();
    tg_optim_config c = tg_optim_defaults(kinds[k]);
    c.lr = 0.1f;
    c.weight_decay = 0.5f;
    tg_optim *o = NULL;
    CHECK_OK(tg_optim_new(s, &c, &o));
    tg_param_info w = tg_store_param(s, tg_store_find(s, "w"));
    tg_param_info b = tg_store_param(s, tg_store_find(s, "b"));
    float wb[6], bb[3];
    memcpy(wb, tg_store_values(s) + w.offset, sizeof wb);
    memcpy(bb, tg_store_values(s) + b.offset, sizeof bb);
    CHECK_OK(tg_store_zero_grads(s));
    CHECK_OK(tg_optim_step(o));
    CHECK_MSG(memcmp(bb, tg_store_values(s) + b.offset, sizeof bb) == 0, "kind %d decayed a bias", k);
    int changed = 1;
    for (int e = 0; e < 6; e++) changed &= wb[e] != tg_store_values(s)[w.offset + e];
    CHECK_MSG(changed, "kind %d did not decay the matrix", k);
    if (kinds[k] == TG_ADAMW) /* decoupled decay with zero gradient: p *= 1 - lr*wd exactly */
      CHECK(close_to(tg_store_values(s)[w.offset], wb[0] * (1.0 - 0.05), 1e-6, 0));
    tg_optim_free(o);
    tg_store_free(s);
  }
}

static void test_clipping(void) {
  tg_store *s = make_store();
  tg_optim_config c = tg_optim_defaults(TG_SGD);
  c.lr = 1.0f;
  c.clip_norm = 1.0f;
  tg_optim *o = NULL;
  CHECK_OK(tg_optim_new(s, &c, &o));
  set_grads(s, 11, 4.0f);
  double ss = 0.0;
  size_t n = tg_store_numel(s);
  for (size_t k = 0; k < n; k++) ss += (double)tg_store_grads(s)[k] * tg_store_grads(s)[k];
  double norm = sqrt(ss);
  CHECK(norm > 1.0);
  float before[64];
  memcpy(before, tg_store_values(s), n * sizeof(float));
  CHECK_OK(tg_optim_step(o));
  CHECK(close_to(tg_optim_last_grad_norm(o), norm, 1e-6, 0)); /* reported before clipping */
  /* the applied update is the gradient scaled to norm clip_norm */
  double applied = 0.0;
  int ok = 1;
  for (size_t k = 0; k < n; k++) {
    double d = (double)before[k] - tg_store_values(s)[k];
    applied += d * d;
    ok &= close_to(d, tg_store_grads(s)[k] / norm, 1e-5, 1e-7);
  }
  CHECK(ok);
  CHECK(close_to(sqrt(applied), 1.0, 1e-5, 0));
  /* under the limit nothing is scaled */
  set_grads(s, 12, 0.01f);
  memcpy(before, tg_store_values(s), n * sizeof(float));
  CHECK_OK(tg_optim_step(o));
  ok = 1;
  for (size_t k = 0; k < n; k++)
    ok &= tg_store_values(s)[k] == before[k] - tg_store_grads(s)[k];
  CHECK(ok);
  tg_optim_free(o);
  tg_store_free(s);
}

static void test_non_finite(void) {
  tg_store *s = make_store();
  tg_optim_config c = tg_optim_defaults(TG_ADAMW);
  tg_optim *o = NULL;
  CHECK_OK(tg_optim_new(s, &c, &o));
  set_grads(s, 1, 1.0f);
  CHECK_OK(tg_optim_step(o));
  size_t n = tg_store_numel(s);
  float p0[64], m0[64], v0[64];
  memcpy(p0, tg_store_values(s), n * sizeof(float));
  memcpy(m0, tg_optim_state(o, 0, NULL), n * sizeof(float));
  memcpy(v0, tg_optim_state(o, 1, NULL), n * sizeof(float));
  float lr0 = tg_optim_last_lr(o), norm0 = tg_optim_last_grad_norm(o);
  tg_param_info b = tg_store_param(s, tg_store_find(s, "b"));
  const float bad[2] = {NAN, INFINITY};
  for (int k = 0; k < 2; k++) {
    set_grads(s, 2, 1.0f);
    tg_store_grads(s)[b.offset + 1] = bad[k];
    CHECK_STATUS(tg_optim_step(o), TG_ERR_NUMERIC);
    const char *m = tg_last_error();
    CHECK_MSG(strstr(m, "'b'") && strstr(m, "step 2") && strstr(m, k ? "Inf" : "NaN"), "message: %s", m);
    CHECK(memcmp(p0, tg_store_values(s), n * sizeof(float)) == 0);
    CHECK(memcmp(m0, tg_optim_state(o, 0, NULL), n * sizeof(float)) == 0);
    CHECK(memcmp(v0, tg_optim_state(o, 1, NULL), n * sizeof(float)) == 0);
    CHECK(tg_optim_steps(o) == 1);
    CHECK(tg_optim_last_lr(o) == lr0 && tg_optim_last_grad_norm(o) == norm0);
  }
  /* a finite step afterwards proceeds as step 2 */
  set_grads(s, 2, 1.0f);
  CHECK_OK(tg_optim_step(o));
  CHECK(tg_optim_steps(o) == 2);
  tg_optim_free(o);
  tg_store_free(s);
}

static void test_no_allocation_in_step(void) {
  tg_store *s = make_store();
  tg_optim_config c = tg_optim_defaults(TG_ADAM);
  c.clip_norm = 0.5f;
  tg_optim *o = NULL;
  CHECK_OK(tg_optim_new(s, &c, &o));
  set_grads(s, 3, 1.0f);
  uint64_t before = tg_alloc_count();
  for (int i = 0; i < 5; i++) CHECK_OK(tg_optim_step(o));
  CHECK(tg_alloc_count() == before);
  tg_optim_free(o);
  tg_store_free(s);
}

/* Sizes above the OpenMP threshold: the kernels against a serial float64 reference, and a sum of
 * squares that does not depend on the thread count. */
static void test_large(void) {
  enum { N = 300 * 301 };
  tg_store *s = tg_store_new(tg_cpu(0), g_seed);
  tg_graph *g = tg_graph_new(s, "big");
  int64_t shape[2] = {300, 301};
  tg_init init = {TG_INIT_NORMAL, 0.0f, 1.0f};
  CHECK(tg_param(g, "big", 2, shape, init) != NULL);
  CHECK_OK(tg_store_finalize(s));
  tg_graph_free(g);
  float *p = tg_store_values(s), *gr = tg_store_grads(s);
  double ss = 0.0;
  for (size_t k = 0; k < N; k++) {
    gr[k] = tg_rng_normal(g_seed, 99, k);
    ss += (double)gr[k] * gr[k];
  }
  const tg_backend *be = tg_backend_for(TG_CPU);
  double got = 0.0, again = 0.0;
  CHECK_OK(be->sum_squares(tg_cpu(0), gr, N, &got));
  CHECK_OK(be->sum_squares(tg_cpu(0), gr, N, &again));
  CHECK(close_to(got, ss, 1e-12, 0) && got == again);
  double *ref = malloc(N * sizeof *ref), *m = calloc(N, sizeof *m), *v = calloc(N, sizeof *v);
  for (size_t k = 0; k < N; k++) ref[k] = p[k];
  tg_optim_config c = tg_optim_defaults(TG_ADAMW);
  c.lr = 0.01f;
  c.weight_decay = 0.1f;
  tg_optim *o = NULL;
  CHECK_OK(tg_optim_new(s, &c, &o));
  CHECK_OK(tg_optim_step(o));
  int ok = 1;
  for (size_t k = 0; k < N; k++) {
    double gk = gr[k];
    ref[k] *= 1.0 - 0.01 * 0.1;
    m[k] = 0.1 * gk;
    v[k] = 0.001 * gk * gk;
    ref[k] -= 0.01 / 0.1 * m[k] / (sqrt(v[k]) / sqrt(0.001) + 1e-8);
    if (!close_to(p[k], ref[k], 1e-5, 1e-6)) ok = 0;
  }
  CHECK(ok);
  free(ref);
  free(m);
  free(v);
  tg_optim_free(o);
  tg_store_free(s);
}

int main(void) {
  g_seed = tg_test_seed(20240611);
  test_schedules();
  test_defaults_and_config();
  test_state_names();
  test_against_reference();
  test_sgd_first_step_by_hand();
  test_no_decay_on_vectors();
  test_clipping();
  test_non_finite();
  test_no_allocation_in_step();
  test_large();
  return tg_test_finish();
}
