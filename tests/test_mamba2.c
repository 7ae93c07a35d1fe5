/* The Mamba-2 forecaster against PyTorch (reference/mamba2.py), across chunk lengths, and its recurrent step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "support/heap_count.h"
#include "tickgrad/tickgrad.h"


#define REF_TOL 1e-4   /* forward, loss and gradients against float64 PyTorch, relative to max |ref| */
#define CHUNK_TOL 2e-6 /* chunk lengths agree to float rounding */
#define STEP_TOL 1e-5  /* the recurrent step against the graph */

static const tg_tensor *need(const tg_safetensors *f, const char *name) {
  const tg_tensor *t = tg_safetensors_find(f, name);
  CHECK_MSG(t != NULL, "reference tensor '%s' missing", name);
  return t;
}

static int meta_int(const tg_safetensors *f, const char *key) {
  const char *v = tg_safetensors_meta(f, key);
  CHECK_MSG(v != NULL, "reference metadata '%s' missing", key);
  return v ? atoi(v) : 0;
}

/* max |got - want| / max |want| over n floats */
static double rel_err(const float *got, const float *want, int64_t n) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < n; i++) {
    diff = fmax(diff, fabs((double)got[i] - want[i]));
    scale = fmax(scale, fabs((double)want[i]));
  }
  return diff / (scale > 0 ? scale : 1);
}

/* The config stored in the reference file's metadata. */
static tg_forecast_cfg ref_cfg(const tg_safetensors *f) {
  tg_forecast_cfg c = tg_forecast_defaults(TG_MODEL_MAMBA2);
  tg_mamba2_cfg *m = &c.mamba;
  m->d_model = meta_int(f, "d_model");
  m->n_layers = meta_int(f, "n_layers");
  m->d_state = meta_int(f, "d_state");
  m->headdim = meta_int(f, "headdim");
  m->expand = meta_int(f, "expand");
  m->d_conv = meta_int(f, "d_conv");
  m->ngroups = meta_int(f, "ngroups");
  m->chunk = meta_int(f, "chunk");
  m->seq_len = meta_int(f, "seq_len");
  c.n_past = meta_int(f, "n_past");
  c.horizons = meta_int(f, "horizons");
  c.nq = meta_int(f, "nq");
  c.dropout = 0.0f;
  const char *q = tg_safetensors_meta(f, "q"); /* "[0.1, 0.5, 0.9]" */
  CHECK_MSG(q != NULL, "reference metadata 'q' missing");
  for (int i = 0; q && i < c.nq && i < TG_MAX_QUANTILES; i++) {
    while (*q && (*q == '[' || *q == ',' || *q == ' ')) q++;
    c.q[i] = (float)strtod(q, (char **)&q);
  }
  return c;
}

/* A forecast graph for c at batch B: inputs "past" [B, seq_len, n_past] and "target" [B, horizons]. */
typedef struct fgraph {
  tg_graph *g;
  tg_tensor *pred, *loss;
} fgraph;

static fgraph fgraph_new(tg_store *s, const tg_forecast_cfg *c, int64_t B, int training) {
  fgraph f = {tg_graph_new(s, "mamba2"), NULL, NULL};
  int64_t ps[3] = {B, c->mamba.seq_len, c->n_past}, ts[2] = {B, c->horizons};
  tg_forecast_inputs in = {tg_input(f.g, "past", TG_F32, 3, ps), NULL, NULL};
  f.pred = tg_forecast_build(f.g, c, &in);
  if (training) f.loss = tg_pinball_loss(f.g, f.pred, tg_input(f.g, "target", TG_F32, 2, ts), c->nq, c->q);
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = training;
  po.poison = 1;
  CHECK_MSG(f.pred != NULL, "mamba2 build: %s", tg_last_error());
  CHECK_OK(tg_graph_plan(f.g, &po));
  return f;
}

/* Copies every "init.<name>" tensor into the store; every store parameter must have one. */
static int load_init(tg_store *s, const tg_safetensors *ref) {
  int n_init = 0, ok = 1;
  for (int i = 0; i < tg_safetensors_count(ref); i++)
    n_init += strncmp(tg_safetensors_at(ref, i)->name, "init.", 5) == 0;
  CHECK_MSG(n_init == tg_store_count(s), "reference has %d initial tensors, the store %d parameters", n_init,
            tg_store_count(s));
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_tensor dst = tg_store_tensor(s, i, 0);
    char name[96];
    snprintf(name, sizeof name, "init.%s", dst.name);
    const tg_tensor *src = need(ref, name);
    int same = src && tg_shape_eq(src, &dst);
    CHECK_MSG(!src || same, "parameter '%s': reference shape differs", dst.name);
    if (same) memcpy(dst.data, src->data, tg_nbytes(&dst));
    ok &= same;
  }
  return ok && n_init == tg_store_count(s);
}

/* Forward, loss and every gradient against PyTorch; prints the errors, names the worst tensor. */
static void check_reference(tg_store *s, const tg_forecast_cfg *c, const tg_safetensors *ref, const tg_tensor *past,
                            const tg_tensor *target) {
  fgraph f = fgraph_new(s, c, past->shape[0], 1);
  if (!f.loss || !load_init(s, ref)) {
    tg_graph_free(f.g);
    return;
  }
  CHECK_OK(tg_graph_bind(f.g, "past", past));
  CHECK_OK(tg_graph_bind(f.g, "target", target));
  CHECK_OK(tg_graph_run(f.g));
  const tg_tensor *pred = need(ref, "pred"), *loss = need(ref, "loss");
  /* read the forecast before backward: in a training plan its buffer may hold gradients afterwards */
  double e_pred = pred ? rel_err(f.pred->data, pred->data, tg_numel(pred)) : 1;
  CHECK_OK(tg_graph_backward(f.g, f.loss));
  double e_loss = loss ? rel_err(f.loss->data, loss->data, 1) : 1;
  double worst = 0;
  const char *worst_name = "-";
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_tensor gr = tg_store_tensor(s, i, 1);
    char name[96];
    snprintf(name, sizeof name, "grad.%s", gr.name);
    const tg_tensor *want = need(ref, name);
    double e = want ? rel_err(gr.data, want->data, tg_numel(want)) : 1;
    if (e >= worst) worst = e, worst_name = tg_store_param(s, i).name;
  }
  printf("vs PyTorch: pred %.2e, loss %.2e, worst gradient %.2e (%s)\n", e_pred, e_loss, worst, worst_name);
  CHECK_MSG(e_pred <= REF_TOL, "forecast: relative error %.3g vs PyTorch", e_pred);
  CHECK_MSG(e_loss <= REF_TOL, "pinball loss %.9g, PyTorch %.9g", (double)*(float *)f.loss->data,
            loss ? (double)*(float *)loss->data : 0.0);
  CHECK_MSG(worst <= REF_TOL, "gradient of %s: relative error %.3g vs PyTorch", worst_name, worst);
  tg_graph_free(f.g);
}

/* The forecast of the same parameters with chunk 4, 8 and 64 agrees to float rounding. */
static void check_chunks(tg_store *s, const tg_forecast_cfg *c0, const tg_tensor *past) {
  static const int chunks[3] = {4, 8, 64};
  int64_t n = past->shape[0] * c0->horizons * c0->nq;
  float *first = malloc(sizeof(float) * (size_t)n);
  double worst = 0;
  for (int k = 0; k < 3 && first; k++) {
    tg_forecast_cfg c = *c0;
    c.mamba.chunk = chunks[k];
    fgraph f = fgraph_new(s, &c, past->shape[0], 0);
    CHECK_OK(tg_graph_bind(f.g, "past", past));
    CHECK_OK(tg_graph_run(f.g));
    if (f.pred && k == 0) memcpy(first, f.pred->data, sizeof(float) * (size_t)n);
    if (f.pred && k > 0) worst = fmax(worst, rel_err(f.pred->data, first, n));
    tg_graph_free(f.g);
  }
  printf("chunk 4 / 8 / 64: forecasts agree to %.2e relative\n", worst);
  CHECK_MSG(worst <= CHUNK_TOL, "chunk lengths change the forecast by %.3g relative", worst);
  free(first);
}

/* Dropout on the mixer outputs: identity in an inference plan, active in a training plan. */
static void check_dropout(tg_store *s, const tg_forecast_cfg *c0, const tg_tensor *past, const tg_tensor *target) {
  int64_t n = past->shape[0] * c0->horizons * c0->nq;
  float *plain = malloc(sizeof(float) * (size_t)n);
  tg_forecast_cfg c = *c0;
  for (int k = 0; k < 3 && plain; k++) {
    c.dropout = k == 0 ? 0.0f : 0.3f;
    fgraph f = fgraph_new(s, &c, past->shape[0], k == 2);
    CHECK_OK(tg_graph_bind(f.g, "past", past));
    if (k == 2) CHECK_OK(tg_graph_bind(f.g, "target", target));
    CHECK_OK(tg_graph_run(f.g));
    if (f.pred && k == 0) memcpy(plain, f.pred->data, sizeof(float) * (size_t)n);
    if (f.pred && k == 1) CHECK_MSG(memcmp(plain, f.pred->data, sizeof(float) * (size_t)n) == 0,
                                    "dropout changed an inference forecast");
    if (f.pred && k == 2)
      CHECK_MSG(rel_err(f.pred->data, plain, n) > 1e-3, "dropout 0.3 left a training forecast as it was");
    tg_graph_free(f.g);
  }
  free(plain);
}

/* The graph's forecast for the window of the first `len` bars of past [B, L, F]. */
static void window_forecast(tg_store *s, const tg_forecast_cfg *c0, const tg_tensor *past, int len, float *pred) {
  int64_t B = past->shape[0], L = past->shape[1], F = past->shape[2];
  tg_forecast_cfg c = *c0;
  c.mamba.seq_len = len;
  float *win = malloc(sizeof(float) * (size_t)(B * len * F)); /* [B, len, F] */
  for (int64_t b = 0; b < B && win; b++)
    memcpy(win + b * len * F, (const float *)past->data + b * L * F, sizeof(float) * (size_t)(len * F));
  int64_t ws[3] = {B, len, F};
  tg_tensor wt;
  tg_tensor_view(&wt, "past", tg_cpu(0), TG_F32, 3, ws, win);
  fgraph f = fgraph_new(s, &c, B, 0);
  CHECK_OK(tg_graph_bind(f.g, "past", &wt));
  CHECK_OK(tg_graph_run(f.g));
  if (f.pred) memcpy(pred, f.pred->data, tg_nbytes(f.pred));
  tg_graph_free(f.g);
  free(win);
}

/* Stepping bar by bar reproduces the graph's forecast of every prefix window; no heap use per step. */
static void check_step(tg_store *s, const tg_forecast_cfg *c, const tg_tensor *past) {
  int64_t B = past->shape[0], L = past->shape[1], F = past->shape[2], n = B * c->horizons * c->nq;
  float *x = malloc(sizeof(float) * (size_t)(B * F)), *got = malloc(sizeof(float) * (size_t)n);
  float *want = malloc(sizeof(float) * (size_t)n), *first = malloc(sizeof(float) * (size_t)n);
  tg_mamba2_stepper *st = NULL;
  CHECK_OK(tg_mamba2_stepper_new(s, c, B, &st));
  if (!st || !x || !got || !want || !first) goto done;
  double worst = 0;
  int checked = 0;
  for (int rep = 0; rep < 2; rep++) {
    CHECK_OK(tg_mamba2_stepper_reset(st));
    for (int64_t t = 0; t < L; t++) {
      for (int64_t b = 0; b < B; b++)
        memcpy(x + b * F, (const float *)past->data + (b * L + t) * F, sizeof(float) * (size_t)F);
      long heap = tg_test_heap_calls();
      CHECK_OK(tg_mamba2_step(st, x, got));
      heap = tg_test_heap_calls() - heap;
      CHECK_MSG(heap == 0, "tg_mamba2_step made %ld heap calls at bar %lld", heap, (long long)t);
      if (rep == 1) { /* after reset the stepper starts over */
        if (t == 0) CHECK_MSG(memcmp(got, first, sizeof(float) * (size_t)n) == 0, "reset did not clear the state");
        continue;
      }
      if (t == 0) memcpy(first, got, sizeof(float) * (size_t)n);
      int probe = t < 3 || t == 7 || t == 8 || t == 15 || t == L - 1;
      if (!probe) continue;
      window_forecast(s, c, past, (int)t + 1, want);
      double e = rel_err(got, want, n);
      CHECK_MSG(e <= STEP_TOL, "step after %lld bars differs from the graph by %.3g relative", (long long)t + 1, e);
      worst = fmax(worst, e);
      checked++;
    }
  }
  printf("recurrent step vs graph over %d prefix windows: %.2e relative\n", checked, worst);
done:
  tg_mamba2_stepper_free(st);
  free(x), free(got), free(want), free(first);
}

/* Without any graph op: declare the reference's parameters by name in a cpu:1 store, step through the window,
 * compare the last forecast with PyTorch's. */
static void check_step_vs_torch(const tg_forecast_cfg *c, const tg_safetensors *ref, const tg_tensor *past) {
  tg_store *s = tg_store_new(tg_cpu(1), 1); /* cpu:1: the stepper copies the weights through the backend */
  tg_graph *g = tg_graph_new(s, "declare");
  for (int i = 0; i < tg_safetensors_count(ref); i++) {
    const tg_tensor *t = tg_safetensors_at(ref, i);
    if (strncmp(t->name, "init.", 5) == 0) CHECK(tg_param(g, t->name + 5, t->ndim, t->shape, (tg_init){0}) != NULL);
  }
  CHECK_OK(tg_store_finalize(s));
  load_init(s, ref);
  int64_t B = past->shape[0], L = past->shape[1], F = past->shape[2], n = B * c->horizons * c->nq;
  float *x = malloc(sizeof(float) * (size_t)(B * F)), *got = malloc(sizeof(float) * (size_t)n);
  tg_mamba2_stepper *st = NULL;
  CHECK_OK(tg_mamba2_stepper_new(s, c, B, &st));
  const tg_tensor *want = need(ref, "pred");
  for (int64_t t = 0; st && x && got && want && t < L; t++) {
    for (int64_t b = 0; b < B; b++)
      memcpy(x + b * F, (const float *)past->data + (b * L + t) * F, sizeof(float) * (size_t)F);
    CHECK_OK(tg_mamba2_step(st, x, got));
  }
  if (st && x && got && want) {
    double e = rel_err(got, want->data, n);
    printf("recurrent step after %lld bars vs PyTorch: %.2e relative\n", (long long)L, e);
    CHECK_MSG(e <= REF_TOL, "recurrent step vs PyTorch: relative error %.3g", e);
  }
  tg_mamba2_stepper_free(st);
  free(x), free(got);
  tg_graph_free(g);
  tg_store_free(s);
}

/* Bad configs and inputs are clear errors. */
static void check_errors(const tg_forecast_cfg *c0) {
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_forecast_cfg c = *c0;
  c.mamba.headdim = 24; /* d_inner 64 is not a multiple */
  tg_graph *g = tg_graph_new(s, "bad");
  int64_t ps[3] = {2, c.mamba.seq_len, c.n_past};
  tg_forecast_inputs in = {tg_input(g, "past", TG_F32, 3, ps), NULL, NULL};
  CHECK(tg_forecast_build(g, &c, &in) == NULL);
  CHECK(tg_graph_status(g) == TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "headdim") != NULL, "message: %s", tg_last_error());
  tg_graph_free(g);

  c = *c0; /* a past window of the wrong length */
  g = tg_graph_new(s, "bad_past");
  int64_t bad[3] = {2, c.mamba.seq_len + 1, c.n_past};
  in.past = tg_input(g, "past", TG_F32, 3, bad);
  CHECK(tg_forecast_build(g, &c, &in) == NULL);
  CHECK(tg_graph_status(g) == TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "past") && strstr(tg_last_error(), "seq_len"), "message: %s", tg_last_error());
  tg_graph_free(g);

  g = tg_graph_new(s, "no_past");
  in.past = NULL;
  CHECK(tg_forecast_build(g, &c, &in) == NULL);
  CHECK(tg_graph_status(g) == TG_ERR_INVALID);
  tg_graph_free(g);

  tg_mamba2_stepper *st = NULL; /* stepper: unallocated store, bad config, missing or mis-shaped weights */
  CHECK_STATUS(tg_mamba2_stepper_new(s, &c, 1, &st), TG_ERR_INVALID);
  CHECK_OK(tg_store_finalize(s));
  CHECK_STATUS(tg_mamba2_stepper_new(s, &c, 1, &st), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "mamba2.embed.weight") != NULL, "message: %s", tg_last_error());
  CHECK_STATUS(tg_mamba2_stepper_new(s, &c, 0, &st), TG_ERR_INVALID);
  c.mamba.ngroups = 3;
  CHECK_STATUS(tg_mamba2_stepper_new(s, &c, 1, &st), TG_ERR_INVALID);
  CHECK(st == NULL);
  tg_store_free(s);

  c = *c0;
  s = tg_store_new(tg_cpu(0), 1);
  fgraph f = fgraph_new(s, &c, 1, 0);
  tg_graph_free(f.g);
  c.mamba.d_state *= 2;
  CHECK_STATUS(tg_mamba2_stepper_new(s, &c, 1, &st), TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "in_proj.weight") != NULL, "message: %s", tg_last_error());
  tg_store_free(s);
}

/* The default config: parameter count (models.md 2.1's formula) and the section 2.2 initialisation. */
static void check_defaults(void) {
  tg_forecast_cfg c = tg_forecast_defaults(TG_MODEL_MAMBA2);
  c.n_past = 16;
  c.horizons = 8;
  tg_store *s = tg_store_new(tg_cpu(0), 42);
  fgraph f = fgraph_new(s, &c, 1, 1);
  if (!f.loss) {
    tg_graph_free(f.g);
    tg_store_free(s);
    return;
  }
  size_t count = 0;
  for (int i = 0; i < tg_store_count(s); i++) count += tg_store_param(s, i).numel;
  int64_t d = 128, E = 256, H = 8, GN = 64, K = 4;
  int64_t layer = d * (2 * E + 2 * GN + H) + (E + 2 * GN) * (K + 1) + 3 * H + E + E * d + d;
  int64_t want = 2 * layer + (16 * d + d) + d + (d * 24 + 24);
  printf("default config: %zu parameters\n", count);
  CHECK_MSG((int64_t)count == want, "default config has %zu parameters, formula %lld", count, (long long)want);
  double lo_a = 1e9, hi_a = -1e9, lo_dt = 1e9, hi_dt = -1e9;
  for (int l = 0; l < 2; l++) {
    char name[96];
    snprintf(name, sizeof name, "mamba2.layers.%d.mixer.A_log", l);
    tg_tensor a = tg_store_tensor(s, tg_store_find(s, name), 0);
    snprintf(name, sizeof name, "mamba2.layers.%d.mixer.dt_bias", l);
    tg_tensor b = tg_store_tensor(s, tg_store_find(s, name), 0);
    snprintf(name, sizeof name, "mamba2.layers.%d.mixer.D", l);
    tg_tensor D = tg_store_tensor(s, tg_store_find(s, name), 0);
    for (int h = 0; h < H; h++) {
      double av = ((float *)a.data)[h], dt = log1p(exp(((float *)b.data)[h]));
      lo_a = fmin(lo_a, av), hi_a = fmax(hi_a, av), lo_dt = fmin(lo_dt, dt), hi_dt = fmax(hi_dt, dt);
      CHECK(((float *)D.data)[h] == 1.0f);
    }
  }
  CHECK_MSG(lo_a >= 0.0 && hi_a <= log(16.0) + 1e-6 && hi_a > lo_a, "A_log in [%g, %g]", lo_a, hi_a);
  CHECK_MSG(lo_dt >= 1e-3 * (1 - 1e-5) && hi_dt <= 0.1 * (1 + 1e-5) && hi_dt > lo_dt, "softplus(dt_bias) in [%g, %g]",
            lo_dt, hi_dt);
  tg_tensor w = tg_store_tensor(s, tg_store_find(s, "mamba2.layers.0.mixer.out_proj.weight"), 0);
  float bound = (float)(1.0 / sqrt((double)E * 2)), mx = 0;
  for (int64_t i = 0; i < tg_numel(&w); i++) mx = fmaxf(mx, fabsf(((float *)w.data)[i]));
  CHECK_MSG(mx <= bound && mx > 0.9f * bound, "out_proj max |w| %g, bound %g", (double)mx, (double)bound);
  tg_graph_free(f.g);
  tg_store_free(s);
}

int main(void) {
  const char *src = getenv("TG_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/reference/data/mamba2_ref.safetensors", src ? src : "..");
  tg_safetensors *ref = NULL;
  CHECK_OK(tg_safetensors_load(path, &ref));
  if (!ref) return tg_test_finish();
  tg_forecast_cfg c = ref_cfg(ref);
  const tg_tensor *past = need(ref, "past"), *target = need(ref, "target");
  if (!past || !target) return tg_test_finish();
  CHECK_OK(tg_forecast_check(&c));

  check_step_vs_torch(&c, ref, past);
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  check_reference(s, &c, ref, past, target);
  check_chunks(s, &c, past);
  check_dropout(s, &c, past, target);
  check_step(s, &c, past);
  tg_store_free(s);
  check_errors(&c);
  check_defaults();
  tg_safetensors_free(ref);
  return tg_test_finish();
}
