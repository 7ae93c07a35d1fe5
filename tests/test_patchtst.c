/* PatchTST against its PyTorch twin (reference/patchtst.py), its dropout, parameter count and config errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "models/models_internal.h"
#include "support/check.h"
#include "support/reference.h"
#include "tickgrad/tickgrad.h"

#define TOL 1e-4      /* against float64 PyTorch, relative to the tensor's largest value */

/* ---- reference file ---- */

/* The config stored in the file's metadata ("config": JSON), and its batch size. */
static int ref_config(const tg_safetensors *ref, tg_forecast_cfg *c, int64_t *batch) {
  const char *text = tg_safetensors_meta(ref, "config");
  CHECK_MSG(text != NULL, "reference metadata has no 'config'");
  if (!text) return 0;
  tg_json_doc *doc = NULL;
  CHECK_OK(tg_json_parse(text, strlen(text), "patchtst_ref config", 0, &doc));
  if (!doc) return 0;
  const tg_json *o = tg_json_root(doc);
  *c = tg_forecast_defaults(TG_MODEL_PATCHTST);
  c->patchtst.d_model = (int)tg_test_json_int(o, "d_model");
  c->patchtst.n_heads = (int)tg_test_json_int(o, "n_heads");
  c->patchtst.n_layers = (int)tg_test_json_int(o, "n_layers");
  c->patchtst.seq_len = (int)tg_test_json_int(o, "seq_len");
  c->patchtst.patch_len = (int)tg_test_json_int(o, "patch_len");
  c->patchtst.stride = (int)tg_test_json_int(o, "stride");
  c->n_past = (int)tg_test_json_int(o, "n_past");
  c->horizons = (int)tg_test_json_int(o, "horizons");
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
} model;

/* The forecaster on input "past" [B, seq_len, n_past] through tg_forecast_build, with the pinball loss against input
 * "target" [B, horizons]. */
static model build(tg_store *s, const char *name, const tg_forecast_cfg *c, int64_t B) {
  model m = {0};
  m.g = tg_graph_new(s, name);
  int64_t ps[3] = {B, c->patchtst.seq_len, c->n_past}, ts[2] = {B, c->horizons};
  tg_forecast_inputs in = {tg_input(m.g, "past", TG_F32, 3, ps), NULL, NULL};
  m.pred = tg_forecast_build(m.g, c, &in);
  m.loss = tg_pinball_loss(m.g, m.pred, tg_input(m.g, "target", TG_F32, 2, ts), c->nq, c->q);
  CHECK_OK(tg_graph_status(m.g));
  return m;
}

static int plan(model *m, int training) {
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = training;
  po.no_reuse = 1; /* pred stays readable after backward */
  po.poison = 1;
  po.guard_bytes = 64;
  CHECK_OK(tg_graph_plan(m->g, &po));
  return tg_graph_status(m->g) == TG_OK && m->pred;
}

static void bind_ref(model *m, const tg_safetensors *ref) {
  const tg_tensor *t = tg_test_ref_need(ref, "in.past");
  if (t) CHECK_OK(tg_graph_bind(m->g, "past", t));
  if (m->loss && (t = tg_test_ref_need(ref, "in.target"))) CHECK_OK(tg_graph_bind(m->g, "target", t));
}

static double compare(const char *what, const float *got, const tg_tensor *want) {
  return tg_test_ref_check(what, got, want, TOL);
}

/* Every parameter gradient against "grad.<name>"; the worst relative error (its name into worst_name). */
static double compare_grads(tg_store *s, const tg_safetensors *ref, char *worst_name, size_t n) {
  return tg_test_ref_check_grads(s, ref, TOL, worst_name, n);
}

/* ---- tests ---- */

/* Forward, loss and every gradient against PyTorch, with a debug plan and with an ordinary (reusing) one and recompute =
 * blocks. */
static void test_reference(const tg_safetensors *ref, const tg_forecast_cfg *c, int64_t B) {
  tg_store *s = tg_store_new(tg_cpu(0), 7);
  model m = build(s, "patchtst_ref", c, B);
  CHECK_MSG(tg_store_count(s) == 7 + 12 * c->patchtst.n_layers, "%d parameters", tg_store_count(s));
  if (!plan(&m, 1)) {
    tg_graph_free(m.g), tg_store_free(s);
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
  CHECK_MSG(m.pred->ndim == 3 && m.pred->shape[0] == B && m.pred->shape[1] == c->horizons &&
                m.pred->shape[2] == c->nq,
            "pred must be [B, horizons, nq]");
  double e_pred = compare("out.pred", m.pred->data, tg_test_ref_need(ref, "out.pred"));
  double e_loss = compare("out.loss", m.loss->data, tg_test_ref_need(ref, "out.loss"));
  char worst[TG_NAME_MAX] = "";
  double e_grad = compare_grads(s, ref, worst, sizeof worst);
  printf("against PyTorch (float64): pred %.2e, loss %.2e, gradients %.2e (worst %s), %d tensors\n", e_pred, e_loss,
         e_grad, worst, tg_store_count(s));

  /* the same loss and gradients from an ordinary plan and from recompute = blocks, on the same store */
  for (int mode = TG_RECOMPUTE_NONE; mode <= TG_RECOMPUTE_BLOCKS; mode++) {
    model r = build(s, "patchtst_plain", c, B);
    tg_plan_opts pr = tg_plan_defaults(tg_cpu(0));
    pr.training = 1;
    pr.recompute = mode;
    CHECK_OK(tg_graph_plan(r.g, &pr));
    if (tg_graph_status(r.g) == TG_OK) {
      bind_ref(&r, ref);
      CHECK_OK(tg_graph_run(r.g));
      CHECK_OK(tg_graph_backward(r.g, r.loss));
      double e = fmax(tg_test_rel_err(r.loss->data, tg_test_ref_need(ref, "out.loss")), compare_grads(s, ref, NULL, 0));
      CHECK_MSG(e <= TOL, "plan with recompute %s: worst relative error %.3g", tg_recompute_name(mode), e);
      if (mode == TG_RECOMPUTE_BLOCKS)
        CHECK_MSG(tg_graph_stats(r.g).segments == c->patchtst.n_layers, "%d segments recomputed",
                  tg_graph_stats(r.g).segments);
    }
    tg_graph_free(r.g);
  }
  tg_graph_free(m.g);
  tg_store_free(s);
}

/* A training graph (dropout active) and an evaluation graph on one store share every parameter; evaluation ignores
 * dropout, so it reproduces PyTorch's loss with the reference weights. */
static void test_shared_store(const tg_safetensors *ref, tg_forecast_cfg c, int64_t B) {
  c.dropout = 0.25f;
  tg_store *s = tg_store_new(tg_cpu(0), 11);
  model tr = build(s, "patchtst_train", &c, B);
  int count = tg_store_count(s);
  model ev = build(s, "patchtst_eval", &c, B);
  CHECK_MSG(tg_store_count(s) == count, "the second build declared new parameters (%d -> %d)", count,
            tg_store_count(s));
  tg_plan_opts pt = tg_plan_defaults(tg_cpu(0)), pe = tg_plan_defaults(tg_cpu(0));
  pt.training = 1;
  pe.training = 0;
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
    double gsum = 0;
    const float *gr = tg_store_grads(s);
    for (size_t i = 0; i < tg_store_numel(s); i++) gsum += fabs(gr[i]);
    CHECK_MSG(isfinite(*(const float *)tr.loss->data) && isfinite(gsum) && gsum > 0,
              "training: loss %g, sum |g| = %g", (double)*(const float *)tr.loss->data, gsum);
  }
  tg_graph_free(tr.g);
  tg_graph_free(ev.g);
  tg_store_free(s);
}

/* The default config's parameter count (reference/patchtst.py --count agrees): 7 patches of 16 steps every 8. */
static void test_default_count(void) {
  tg_forecast_cfg c = tg_forecast_defaults(TG_MODEL_PATCHTST);
  c.n_past = 16;
  c.horizons = 8;
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  model m = build(s, "patchtst_default", &c, 2);
  long long n = tg_test_param_count(s);
  printf("default config (d_model 64, 4 heads, 2 layers, seq 64, patch 16, stride 8, n_past 16, 8 horizons): %lld "
         "parameters in %d tensors\n", n, tg_store_count(s));
  CHECK_MSG(n == 273688, "default parameter count %lld (PyTorch twin: 273688)", n);
  CHECK(m.pred && m.pred->shape[1] == 8 && m.pred->shape[2] == 3);
  tg_graph_free(m.g);
  tg_store_free(s);
}

/* Category inputs: their embeddings are channels (n_past - n_cat + n_cat * cat_dim of them), and the model builds. */
static void test_categories(const tg_forecast_cfg *good) {
  tg_forecast_cfg c = *good;
  c.n_past += 1;
  c.n_cat = 1;
  c.cat_card[0] = 5;
  c.cat_dim = 2;
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  model m = build(s, "patchtst_cat", &c, 2);
  int64_t want = (int64_t)(good->n_past + 2) * tg_patchtst_patches(&c.patchtst) * c.patchtst.d_model;
  int64_t got = -1;
  for (int i = 0; i < tg_store_count(s); i++)
    if (strcmp(tg_store_param(s, i).name, "patchtst.head.weight") == 0) got = tg_store_param(s, i).shape[1];
  CHECK_MSG(m.pred && got == want, "the head reads %lld values; want %lld", (long long)got, (long long)want);
  tg_graph_free(m.g);
  tg_store_free(s);
}

/* A bad config or input shape fails the build with a message naming it. */
static void expect_fail(const tg_forecast_cfg *c, int64_t L_in, tg_status want, const char *needle) {
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "patchtst_bad");
  int64_t ps[3] = {2, L_in, c->n_past};
  tg_forecast_inputs in = {tg_input(g, "past", TG_F32, 3, ps), NULL, NULL};
  tg_tensor *pred = tg_forecast_build(g, c, &in);
  CHECK_MSG(pred == NULL && tg_graph_status(g) == want, "expected %s for '%s', got %s", tg_status_name(want), needle,
            tg_status_name(tg_graph_status(g)));
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  CHECK_STATUS(tg_graph_plan(g, &po), want);
  CHECK_MSG(strstr(tg_last_error(), needle) != NULL, "error '%s' does not mention '%s'", tg_last_error(), needle);
  tg_graph_free(g);
  tg_store_free(s);
}

static void test_bad_configs(const tg_forecast_cfg *good) {
  tg_forecast_cfg c = *good;
  int L = good->patchtst.seq_len;
  c.patchtst.n_heads = 3; /* 8 % 3 != 0 */
  expect_fail(&c, L, TG_ERR_INVALID, "n_heads");
  c = *good;
  c.patchtst.n_layers = 0;
  expect_fail(&c, L, TG_ERR_INVALID, "n_layers");
  c = *good;
  c.patchtst.patch_len = L + 1;
  expect_fail(&c, L, TG_ERR_INVALID, "patch_len");
  c = *good;
  c.patchtst.stride = 0;
  expect_fail(&c, L, TG_ERR_INVALID, "stride");
  c = *good;
  c.patchtst.seq_len = 300;
  c.patchtst.patch_len = 1;
  c.patchtst.stride = 1;
  expect_fail(&c, 300, TG_ERR_INVALID, "patches");
  c = *good;
  c.dropout = 1.0f;
  expect_fail(&c, L, TG_ERR_INVALID, "dropout");
  c = *good;
  expect_fail(&c, L + 1, TG_ERR_SHAPE, "seq_len");
}

int main(void) {
  const char *src = getenv("TG_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/reference/data/patchtst_ref.safetensors", src ? src : "..");
  tg_safetensors *ref = NULL;
  CHECK_OK(tg_safetensors_load(path, &ref));
  if (!ref) return tg_test_finish();
  tg_forecast_cfg c;
  int64_t B = 0;
  if (ref_config(ref, &c, &B)) {
    test_reference(ref, &c, B);
    test_shared_store(ref, c, B);
    test_bad_configs(&c);
    test_categories(&c);
  }
  test_default_count();
  tg_safetensors_free(ref);
  return tg_test_finish();
}
