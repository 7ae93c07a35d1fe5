/* The TFT graph must match its PyTorch twin (reference/tft.py): forecast, loss and every gradient. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/json.h"
#include "models/tft_internal.h"
#include "support/check.h"
#include "support/reference.h"
#include "tickgrad/tickgrad.h"

#define TOL 1e-4
#define MAX_GROUPS 48

/* ---- reference file ---- */

/* The config stored in the file's metadata ("config": JSON), and its batch size. */
static int ref_config(const tg_safetensors *ref, tg_forecast_cfg *c, int64_t *batch) {
  const char *text = tg_safetensors_meta(ref, "config");
  CHECK_MSG(text != NULL, "reference metadata has no 'config'");
  if (!text) return 0;
  tg_json_doc *doc = NULL;
  CHECK_OK(tg_json_parse(text, strlen(text), "tft_ref config", 0, &doc));
  if (!doc) return 0;
  const tg_json *o = tg_json_root(doc);
  *c = tg_forecast_defaults(TG_MODEL_TFT);
  c->tft.hidden = (int)tg_test_json_int(o, "hidden");
  c->tft.heads = (int)tg_test_json_int(o, "heads");
  c->tft.enc_len = (int)tg_test_json_int(o, "enc_len");
  c->tft.dec_len = c->horizons = (int)tg_test_json_int(o, "dec_len");
  c->n_past = (int)tg_test_json_int(o, "n_past");
  c->n_future = (int)tg_test_json_int(o, "n_future");
  c->n_static = (int)tg_test_json_int(o, "n_static");
  c->nq = (int)tg_test_json_int(o, "nq");
  *batch = tg_test_json_int(o, "batch");
  const tg_json *q = tg_json_get(o, "quantiles"), *p = tg_json_get(o, "dropout");
  int ok = q && q->type == TG_JSON_ARRAY && q->count == c->nq && p;
  CHECK_MSG(ok, "config quantiles / dropout missing or inconsistent");
  if (ok) {
    int k = 0;
    for (const tg_json *e = q->first; e; e = e->next) c->q[k++] = (float)e->num;
    c->dropout = (float)p->num;
  }
  tg_json_free(doc);
  return ok;
}

/* ---- the model in a graph ---- */

typedef struct model {
  tg_graph *g;
  tg_tensor *pred, *loss;
  tg_tft_taps taps;
} model;

/* Builds the TFT with its loss on inputs named past, future, inst, target. */
static model build(tg_store *s, const char *name, const tg_forecast_cfg *c, int64_t B) {
  model m = {0};
  m.g = tg_graph_new(s, name);
  int64_t ps[3] = {B, c->tft.enc_len, c->n_past}, fs[3] = {B, c->tft.dec_len, c->n_future};
  int64_t is[1] = {B}, ts[2] = {B, c->tft.dec_len};
  tg_forecast_inputs in = {tg_input(m.g, "past", TG_F32, 3, ps), tg_input(m.g, "future", TG_F32, 3, fs),
                           tg_input(m.g, "inst", TG_I64, 1, is)};
  m.pred = tg_tft_build_taps(m.g, c, &in, &m.taps);
  m.loss = tg_pinball_loss(m.g, m.pred, tg_input(m.g, "target", TG_F32, 2, ts), c->nq, c->q);
  CHECK_OK(tg_graph_status(m.g));
  return m;
}

static void bind_ref(model *m, const tg_safetensors *ref) {
  static const char *names[4] = {"past", "future", "inst", "target"};
  for (int i = 0; i < 4; i++) {
    char key[32];
    snprintf(key, sizeof key, "in.%s", names[i]);
    const tg_tensor *t = tg_test_ref_need(ref, key);
    if (t) CHECK_OK(tg_graph_bind(m->g, names[i], t));
  }
}

/* ---- error bookkeeping per module ("tft.<module>.…") ---- */

typedef struct group {
  char name[TG_NAME_MAX];
  double worst;
  char worst_tensor[TG_NAME_MAX];
  int tensors;
} group;

static group groups[MAX_GROUPS];
static int n_groups;
static double worst_all;
static char worst_all_name[TG_NAME_MAX + 8];

static void record(const char *group_name, const char *tensor, double e) {
  int k = 0;
  while (k < n_groups && strcmp(groups[k].name, group_name) != 0) k++;
  if (k == n_groups && n_groups < MAX_GROUPS) snprintf(groups[n_groups++].name, TG_NAME_MAX, "%s", group_name);
  if (k == n_groups) return;
  groups[k].tensors++;
  if (e >= groups[k].worst) {
    groups[k].worst = e;
    snprintf(groups[k].worst_tensor, TG_NAME_MAX, "%s", tensor);
  }
  if (e >= worst_all) {
    worst_all = e;
    snprintf(worst_all_name, sizeof worst_all_name, "%s", tensor);
  }
}

/* "grad:<module>" for "tft.<module>.<...>". */
static void grad_group(const char *param, char *out, size_t n) {
  const char *m = strncmp(param, "tft.", 4) == 0 ? param + 4 : param;
  size_t len = strcspn(m, ".");
  snprintf(out, n, "grad:%.*s", (int)len, m);
}

static void compare(const char *group_name, const char *what, const float *got, const tg_tensor *want) {
  if (!got || !want) return;
  double e = tg_test_rel_err(got, want);
  record(group_name, what, e);
  CHECK_MSG(e <= TOL, "%s: relative error %.3g > %.0e", what, e, TOL);
}

/* ---- tests ---- */

/* Forward, loss, taps and every gradient against PyTorch; then the taps' own properties. */
static void test_reference(const tg_safetensors *ref, const tg_forecast_cfg *c, int64_t B) {
  tg_store *s = tg_store_new(tg_cpu(0), 7);
  model m = build(s, "tft_ref", c, B);
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = 1;
  po.no_reuse = 1; /* the taps stay readable after the run */
  po.poison = 1;
  po.guard_bytes = 64;
  CHECK_OK(tg_graph_plan(m.g, &po));
  if (tg_graph_status(m.g) != TG_OK || !m.pred) {
    tg_graph_free(m.g);
    tg_store_free(s);
    return;
  }
  const char *np = tg_safetensors_meta(ref, "params"), *nn = tg_safetensors_meta(ref, "numel");
  CHECK_MSG(np && tg_store_count(s) == atoi(np), "%d parameters, PyTorch has %s", tg_store_count(s), np);
  CHECK_MSG(nn && tg_test_param_count(s) == atoll(nn), "%lld values, PyTorch has %s", tg_test_param_count(s), nn);
  CHECK(tg_test_ref_load_params(s, ref));
  bind_ref(&m, ref);
  CHECK_OK(tg_graph_run(m.g));
  CHECK_OK(tg_graph_backward(m.g, m.loss));
  CHECK_OK(tg_graph_check_guards(m.g));
  int64_t want_shape[3] = {B, c->tft.dec_len, c->nq};
  CHECK_MSG(m.pred->ndim == 3 && memcmp(m.pred->shape, want_shape, sizeof want_shape) == 0,
            "pred must be [B, dec, nq]");
  compare("forward", "out.pred", m.pred->data, tg_test_ref_need(ref, "out.pred"));
  compare("forward", "out.loss", m.loss->data, tg_test_ref_need(ref, "out.loss"));
  compare("taps", "out.past_vsn_weights", m.taps.past_vsn_weights->data, tg_test_ref_need(ref, "out.past_vsn_weights"));
  compare("taps", "out.future_vsn_weights", m.taps.future_vsn_weights->data, tg_test_ref_need(ref, "out.future_vsn_weights"));
  compare("taps", "out.attention", m.taps.attention->data, tg_test_ref_need(ref, "out.attention"));
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_param_info pi = tg_store_param(s, i);
    char key[TG_NAME_MAX + 8], grp[TG_NAME_MAX];
    snprintf(key, sizeof key, "grad.%s", pi.name);
    grad_group(pi.name, grp, sizeof grp);
    tg_tensor gt = tg_store_tensor(s, i, 1);
    compare(grp, key, gt.data, tg_test_ref_need(ref, key));
  }
  printf("%-24s %8s  %s\n", "group", "max rel", "worst tensor");
  for (int k = 0; k < n_groups; k++)
    printf("%-24s %8.2e  %s (%d tensors)\n", groups[k].name, groups[k].worst, groups[k].worst_tensor,
           groups[k].tensors);
  printf("worst overall: %s, %.3g\n", worst_all_name, worst_all);
  CHECK_MSG(worst_all <= TOL, "worst tensor %s: relative error %.3g", worst_all_name, worst_all);

  /* VSN weights: each row sums to 1; attention: rows sum to 1, exactly 0 where j > enc + i */
  const tg_tensor *vw[2] = {m.taps.past_vsn_weights, m.taps.future_vsn_weights};
  for (int v = 0; v < 2; v++) {
    int64_t mv = vw[v]->shape[2], rows = tg_numel(vw[v]) / mv;
    double worst = 0;
    for (int64_t r = 0; r < rows; r++) {
      double sum = 0;
      for (int64_t j = 0; j < mv; j++) sum += ((const float *)vw[v]->data)[r * mv + j];
      worst = fmax(worst, fabs(sum - 1.0));
    }
    CHECK_MSG(worst < 1e-5, "%s VSN weights: a row sums to 1 %+.3g", v ? "future" : "past", worst);
  }
  const tg_tensor *a = m.taps.attention;
  int64_t dec = a->shape[2], T = a->shape[3], enc = c->tft.enc_len, leaks = 0;
  double worst = 0;
  for (int64_t r = 0; r < tg_numel(a) / T; r++) {
    int64_t i = r % dec;
    double sum = 0;
    for (int64_t j = 0; j < T; j++) {
      float v = ((const float *)a->data)[r * T + j];
      sum += v;
      if (j > enc + i && v != 0.0f) leaks++;
    }
    worst = fmax(worst, fabs(sum - 1.0));
  }
  CHECK_MSG(leaks == 0, "%lld attention weights above the mask are not exactly 0", (long long)leaks);
  CHECK_MSG(worst < 1e-5, "attention rows sum to 1 %+.3g", worst);

  /* the same gradients from an ordinary plan (buffers reused) of a second graph on the store */
  model r = build(s, "tft_reuse", c, B);
  tg_plan_opts pr = tg_plan_defaults(tg_cpu(0));
  pr.training = 1;
  CHECK_OK(tg_graph_plan(r.g, &pr));
  if (tg_graph_status(r.g) == TG_OK) {
    bind_ref(&r, ref);
    CHECK_OK(tg_graph_run(r.g));
    CHECK_OK(tg_graph_backward(r.g, r.loss));
    double worst_r = tg_test_rel_err(r.loss->data, tg_test_ref_need(ref, "out.loss"));
    for (int i = 0; i < tg_store_count(s); i++) {
      char key[TG_NAME_MAX + 8];
      snprintf(key, sizeof key, "grad.%s", tg_store_param(s, i).name);
      tg_tensor gt = tg_store_tensor(s, i, 1);
      const tg_tensor *want = tg_test_ref_need(ref, key);
      if (want) worst_r = fmax(worst_r, tg_test_rel_err(gt.data, want));
    }
    CHECK_MSG(worst_r <= TOL, "reusing plan: worst relative error %.3g", worst_r);
  }
  tg_graph_free(r.g);
  tg_graph_free(m.g);
  tg_store_free(s);
}

/* A training graph (dropout active) and an evaluation graph on one store share every parameter;
 * evaluation ignores dropout, so it reproduces PyTorch's loss with the reference weights. Both use
 * ordinary (reusing) plans; the loss is a graph output, so it stays readable. */
static void test_shared_store(const tg_safetensors *ref, tg_forecast_cfg c, int64_t B) {
  c.dropout = 0.25f;
  tg_store *s = tg_store_new(tg_cpu(0), 11);
  model tr = build(s, "tft_train", &c, B);
  int count = tg_store_count(s);
  long long numel = tg_test_param_count(s);
  model ev = build(s, "tft_eval", &c, B);
  CHECK_MSG(tg_store_count(s) == count && tg_test_param_count(s) == numel,
            "the second build declared new parameters (%d -> %d)", count, tg_store_count(s));
  tg_plan_opts pt = tg_plan_defaults(tg_cpu(0)), pe = tg_plan_defaults(tg_cpu(0));
  pt.training = 1;
  pe.training = 0; /* plans default to training */
  CHECK_OK(tg_graph_plan(tr.g, &pt));
  CHECK_OK(tg_graph_plan(ev.g, &pe));
  const tg_tensor *want = tg_test_ref_need(ref, "out.loss");
  if (want && tg_graph_status(tr.g) == TG_OK && tg_graph_status(ev.g) == TG_OK && tg_test_ref_load_params(s, ref)) {
    bind_ref(&tr, ref);
    bind_ref(&ev, ref);
    CHECK_OK(tg_graph_set_seed(tr.g, 5, 0));
    CHECK_OK(tg_graph_run(ev.g));
    CHECK_OK(tg_graph_run(tr.g));
    CHECK_OK(tg_graph_backward(tr.g, tr.loss));
    double e_eval = tg_test_rel_err(ev.loss->data, want), e_train = tg_test_rel_err(tr.loss->data, want);
    CHECK_MSG(e_eval <= TOL, "evaluation graph: loss relative error %.3g against PyTorch", e_eval);
    CHECK_MSG(e_train > 1e-3, "training graph with dropout 0.25 gave the evaluation loss (%.3g)", e_train);
    float lt = *(const float *)tr.loss->data;
    CHECK_MSG(isfinite(lt), "training loss %g", (double)lt);
    double gsum = 0;
    const float *gr = tg_store_grads(s);
    for (size_t i = 0; i < tg_store_numel(s); i++) gsum += fabs(gr[i]);
    CHECK_MSG(isfinite(gsum) && gsum > 0, "training gradients: sum |g| = %g", gsum);
    printf("shared store: %d parameters; eval loss error %.2e; train loss with dropout %.6f (eval %.6f)\n", count,
           e_eval, lt, (double)*(const float *)ev.loss->data);
  }
  tg_graph_free(tr.g);
  tg_graph_free(ev.g);
  tg_store_free(s);
}

/* tft.vol_scale: the same weights and inputs give each window's quantiles times its volatility scale, computed here in
 * double from past column vol_col (sqrt(softplus(100 m) / 100), m the mean square over the encoder). */
static void test_vol_scale(const tg_safetensors *ref, tg_forecast_cfg c, int64_t B) {
  tg_forecast_cfg cv = c;
  cv.tft.vol_scale = 1;
  cv.tft.vol_col = 2;
  tg_store *s = tg_store_new(tg_cpu(0), 13);
  model plain = build(s, "tft_plain", &c, B), scaled = build(s, "tft_vol", &cv, B);
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = 0;
  CHECK_OK(tg_graph_plan(plain.g, &po));
  CHECK_OK(tg_graph_plan(scaled.g, &po));
  const tg_tensor *past = tg_test_ref_need(ref, "in.past");
  if (past && tg_graph_status(scaled.g) == TG_OK && tg_test_ref_load_params(s, ref)) {
    bind_ref(&plain, ref);
    bind_ref(&scaled, ref);
    CHECK_OK(tg_graph_run(plain.g));
    CHECK_OK(tg_graph_run(scaled.g));
    int64_t T = c.tft.enc_len, per = (int64_t)c.tft.dec_len * c.nq;
    const float *x = past->data, *p0 = plain.pred->data, *p1 = scaled.pred->data;
    double worst = 0, vmin = INFINITY, vmax = 0;
    for (int64_t b = 0; b < B; b++) {
      double m = 0;
      for (int64_t t = 0; t < T; t++) m += (double)x[(b * T + t) * c.n_past + 2] * x[(b * T + t) * c.n_past + 2];
      double k = 100.0 * m / (double)T, v = sqrt((k > 20 ? k : log1p(exp(k))) / 100.0);
      vmin = fmin(vmin, v), vmax = fmax(vmax, v);
      for (int64_t i = 0; i < per; i++)
        worst = fmax(worst, fabs(p1[b * per + i] - p0[b * per + i] * v) / fmax(1e-3, fabs(p0[b * per + i] * v)));
    }
    CHECK_MSG(worst < 1e-5, "vol_scale: quantiles differ from the plain ones times the scale by %.3g (relative)", worst);
    CHECK_MSG(vmax > vmin, "vol_scale: every window had the same scale %g; the test shows nothing", vmin);
    printf("vol_scale: %lld windows, scales %.4f..%.4f, worst relative error %.2e\n", (long long)B, vmin, vmax, worst);
  }
  tg_graph_free(plain.g);
  tg_graph_free(scaled.g);
  tg_store_free(s);
}

/* The default config's parameter count (reference/tft.py --count agrees). */
static void test_default_count(void) {
  tg_forecast_cfg c = tg_forecast_defaults(TG_MODEL_TFT);
  c.n_past = 16;
  c.n_future = 4;
  c.n_static = 1;
  c.horizons = c.tft.dec_len;
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  model m = build(s, "tft_default", &c, 2);
  long long n = tg_test_param_count(s);
  printf("default config (hidden 64, heads 4, enc 64, dec 8, n_past 16, n_future 4): %lld parameters in %d tensors\n",
         n, tg_store_count(s));
  CHECK_MSG(n == 679911, "default parameter count %lld (PyTorch twin: 679911)", n);
  CHECK(m.pred && m.pred->shape[1] == 8 && m.pred->shape[2] == 3);
  tg_graph_free(m.g);
  tg_store_free(s);
}

/* The smallest shapes (one head, one step each side, one variable each, i32 instruments) build and
 * train: finite loss and gradients, and the forecast shape [B, 1, nq]. */
static void test_edge_config(void) {
  tg_forecast_cfg c = tg_forecast_defaults(TG_MODEL_TFT);
  c.tft = (tg_tft_cfg){.hidden = 8, .heads = 1, .enc_len = 1, .dec_len = 1};
  c.horizons = 1;
  c.n_past = c.n_future = 1;
  c.n_static = 2;
  c.nq = 1;
  c.q[0] = 0.5f;
  enum { B = 3 };
  tg_store *s = tg_store_new(tg_cpu(0), 3);
  tg_graph *g = tg_graph_new(s, "tft_edge");
  int64_t ps[3] = {B, 1, 1}, is[1] = {B}, ts[2] = {B, 1};
  tg_forecast_inputs in = {tg_input(g, "past", TG_F32, 3, ps), tg_input(g, "future", TG_F32, 3, ps),
                           tg_input(g, "inst", TG_I32, 1, is)};
  tg_tensor *pred = tg_forecast_build(g, &c, &in);
  tg_tensor *loss = tg_pinball_loss(g, pred, tg_input(g, "target", TG_F32, 2, ts), c.nq, c.q);
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  CHECK_OK(tg_graph_plan(g, &po));
  if (loss && tg_graph_status(g) == TG_OK) {
    float past[B] = {0.5f, -1.0f, 2.0f}, fut[B] = {1.0f, 0.0f, -0.5f}, y[B] = {0.1f, 0.2f, -0.3f};
    int32_t inst[B] = {1, 0, 1};
    tg_tensor t;
    CHECK_OK(tg_tensor_view(&t, "past", tg_cpu(0), TG_F32, 3, ps, past));
    CHECK_OK(tg_graph_bind(g, "past", &t));
    CHECK_OK(tg_tensor_view(&t, "future", tg_cpu(0), TG_F32, 3, ps, fut));
    CHECK_OK(tg_graph_bind(g, "future", &t));
    CHECK_OK(tg_tensor_view(&t, "inst", tg_cpu(0), TG_I32, 1, is, inst));
    CHECK_OK(tg_graph_bind(g, "inst", &t));
    CHECK_OK(tg_tensor_view(&t, "target", tg_cpu(0), TG_F32, 2, ts, y));
    CHECK_OK(tg_graph_bind(g, "target", &t));
    CHECK_OK(tg_graph_run(g));
    CHECK_OK(tg_graph_backward(g, loss));
    double gsum = 0;
    for (size_t i = 0; i < tg_store_numel(s); i++) gsum += fabs(tg_store_grads(s)[i]);
    CHECK_MSG(isfinite(*(const float *)loss->data) && isfinite(gsum) && gsum > 0, "edge config: loss %g, sum |g| %g",
              (double)*(const float *)loss->data, gsum);
    CHECK(pred->ndim == 3 && pred->shape[0] == B && pred->shape[1] == 1 && pred->shape[2] == 1);
  }
  tg_graph_free(g);
  tg_store_free(s);
}

/* A bad config or input shape fails the build with a message naming it. */
static void expect_fail(const tg_forecast_cfg *c, int64_t enc_in, tg_status want, const char *needle) {
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "tft_bad");
  int64_t ps[3] = {2, enc_in, c->n_past}, fs[3] = {2, c->tft.dec_len, c->n_future > 0 ? c->n_future : 1};
  int64_t is[1] = {2};
  tg_forecast_inputs in = {tg_input(g, "past", TG_F32, 3, ps), tg_input(g, "future", TG_F32, 3, fs),
                           tg_input(g, "inst", TG_I64, 1, is)};
  tg_tensor *pred = tg_forecast_build(g, c, &in);
  CHECK_MSG(pred == NULL && tg_graph_status(g) == want, "expected %s for '%s', got %s", tg_status_name(want),
            needle, tg_status_name(tg_graph_status(g)));
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  CHECK_STATUS(tg_graph_plan(g, &po), want);
  CHECK_MSG(strstr(tg_last_error(), needle) != NULL, "error '%s' does not mention '%s'", tg_last_error(), needle);
  tg_graph_free(g);
  tg_store_free(s);
}

static void test_bad_configs(const tg_forecast_cfg *good) {
  tg_forecast_cfg c = *good;
  c.tft.heads = 3; /* 16 % 3 != 0 */
  expect_fail(&c, c.tft.enc_len, TG_ERR_INVALID, "heads");
  c = *good;
  c.horizons = c.tft.dec_len + 1;
  expect_fail(&c, c.tft.enc_len, TG_ERR_INVALID, "horizons");
  c = *good;
  c.n_future = 0;
  expect_fail(&c, c.tft.enc_len, TG_ERR_INVALID, "n_future");
  c = *good;
  c.dropout = 1.0f;
  expect_fail(&c, c.tft.enc_len, TG_ERR_INVALID, "dropout");
  c = *good;
  c.tft.vol_scale = 1;
  c.tft.vol_col = c.n_past; /* no such column */
  expect_fail(&c, c.tft.enc_len, TG_ERR_INVALID, "vol_scale");
  c = *good;
  expect_fail(&c, c.tft.enc_len + 1, TG_ERR_SHAPE, "past");
}

int main(void) {
  const char *src = getenv("TG_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/reference/data/tft_ref.safetensors", src ? src : "..");
  tg_safetensors *ref = NULL;
  CHECK_OK(tg_safetensors_load(path, &ref));
  if (!ref) return tg_test_finish();
  tg_forecast_cfg c;
  int64_t B = 0;
  if (ref_config(ref, &c, &B)) {
    test_reference(ref, &c, B);
    test_shared_store(ref, c, B);
    test_vol_scale(ref, c, B);
    test_bad_configs(&c);
  }
  test_default_count();
  test_edge_config();
  tg_safetensors_free(ref);
  return tg_test_finish();
}
