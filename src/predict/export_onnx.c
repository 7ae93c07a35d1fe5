/* tickgrad export: a forecaster run (raw feature windows -> quantiles) or a DQN/PPO run (observations -> action values,
 * or logits and value) as an ONNX file, through the graph walk of src/graph/onnx_export.c. */
#include <stdio.h>
#include <string.h>
#include "agents/policy_graph.h"
#include "base/alloc.h"
#include "base/files.h"
#include "base/run_lock.h"
#include "base/text.h"
#include "graph/onnx.h"
#include "models/model_table.h"
#include "predict/predict_internal.h"
#include "tickgrad/agents.h"
#include "tickgrad/export.h"

/* Two batch sizes the model is built at: what differs between them is the file's dynamic batch axis. */
static const int64_t k_batch[2] = {2, 3};

/* What a forecaster's file holds besides its graph: the constants and the metadata text. */
typedef struct fc_export {
  tg_graph *g[2];
  float *mean, *std, *scale; /* [F], [F], [H, W] */
  float *cat_offset;         /* [F] 0, then each cat: column's offset into the one embedding table (n_cat > 0) */
  char *features;            /* the feature names, comma-separated: F * TG_NAME_MAX bytes hold them */
  char quantiles[TG_MAX_QUANTILES * 40], meta_num[3][32];
} fc_export;

static void fc_free(fc_export *e) {
  tg_graph_free(e->g[0]);
  tg_graph_free(e->g[1]);
  tg_free(e->mean);
  tg_free(e->std);
  tg_free(e->scale);
  tg_free(e->cat_offset);
  tg_free(e->features);
}

/* Graph j: features [B, L, F] -> (x - mean) / std (+ the cat: ids' offsets) -> the model -> quantiles [B, H, nq] times the target scales (a
 * classifier: the softmax of its last step's logits, probabilities [B, C]). */
static tg_tensor *fc_build(tg_graph *g, const tg_forecast_cfg *m, int64_t B, int H, int W) {
  int64_t L = tg_forecast_window(m), F = m->n_past, s_x[3] = {B, L, F}, s_f[1] = {F}, s_sc[2] = {H, W};
  tg_tensor *raw = tg_input(g, "features", TG_F32, 3, s_x);
  tg_tensor *x = tg_div(g, tg_sub(g, raw, tg_input(g, "norm_mean", TG_F32, 1, s_f)),
                        tg_input(g, "norm_std", TG_F32, 1, s_f)); /* [B, L, F] as the predictor normalises */
  if (m->n_cat > 0) x = tg_add(g, x, tg_input(g, "cat_offset", TG_F32, 1, s_f));
  tg_forecast_inputs in = {x, NULL, NULL};
  if (tg_model_caps(m->kind) & TG_CAP_FUTURE) {
    int64_t s_fut[3] = {B, m->tft.dec_len, m->n_future}, s_inst[1] = {B};
    in.future = tg_input(g, "future", TG_F32, 3, s_fut);
    in.inst = tg_input(g, "instrument", TG_I64, 1, s_inst);
  }
  tg_tensor *pred = tg_forecast_build(g, m, &in); /* [B, H, W] */
  if (!m->n_classes) return tg_mul(g, pred, tg_input(g, "target_scales", TG_F32, 2, s_sc));
  int64_t s_p[2] = {B, W};
  return tg_reshape(g, tg_softmax(g, tg_slice(g, pred, 1, H - 1, 1)), 2, s_p);
}

static tg_status fc_export_run(const tg_predictor *p, const char *out) {
  const tg_train_config *cfg = pr_config(p);
  const tg_forecast_cfg *m = &cfg->model;
  const pr_meta *mt = pr_meta_of(p);
  const char *kind = tg_model_name(m->kind);
  int F = m->n_past, H = m->horizons, W = tg_forecast_step_width(m);
  fc_export e;
  memset(&e, 0, sizeof e);
  e.mean = tg_malloc((size_t)F * sizeof(float));
  e.std = tg_malloc((size_t)F * sizeof(float));
  e.scale = tg_malloc((size_t)(H * W) * sizeof(float));
  e.cat_offset = tg_calloc((size_t)F, sizeof(float));
  e.features = tg_calloc((size_t)F, TG_NAME_MAX); /* each name under TG_NAME_MAX bytes, its comma in place of the NUL */
  tg_status st = e.mean && e.std && e.scale && e.cat_offset && e.features ? TG_OK
                                                                          : tg_error(TG_ERR_NOMEM, "export: out of memory");
  for (int k = 0, off = 0; k < m->n_cat; k++) { /* as the predictor: one table, each input's ids after the last's */
    e.cat_offset[F - m->n_cat + k] = (float)off;
    off += m->cat_card[k];
  }
  for (int f = 0; st == TG_OK && f < F; f++) e.mean[f] = (float)mt->mean[f], e.std[f] = (float)mt->std[f];
  for (int h = 0; st == TG_OK && h < H; h++)
    for (int q = 0; q < W; q++) e.scale[h * W + q] = (float)mt->scale[h];
  tg_onnx_spec s = {.batch = {k_batch[0], k_batch[1]}, .model = kind, .n_in = 1, .in_name = {"features"}};
  tg_forecast_cfg whole = *m; /* the same nodes at both batch sizes: no layer splits its work by the batch */
  whole.whole = 1;
  for (int j = 0; st == TG_OK && j < 2; j++) {
    e.g[j] = tg_graph_new(pr_store(p), "export");
    if (!e.g[j]) st = tg_error(TG_ERR_NOMEM, "export: out of memory");
    else s.out[0][j] = fc_build(e.g[j], &whole, k_batch[j], H, W);
    if (st == TG_OK) st = tg_graph_status(e.g[j]);
  }
  if (st == TG_OK) {
    s.graph[0] = e.g[0], s.graph[1] = e.g[1];
    if (tg_model_caps(m->kind) & TG_CAP_FUTURE) s.in_name[s.n_in++] = "future", s.in_name[s.n_in++] = "instrument";
    const char *cn[4] = {"norm_mean", "norm_std", "target_scales", "cat_offset"};
    const float *cd[4] = {e.mean, e.std, e.scale, e.cat_offset};
    for (int k = 0; k < 4; k++) /* the graph names only those it reads */
      if ((k != 2 || !m->n_classes) && (k != 3 || m->n_cat > 0))
        s.const_name[s.n_const] = cn[k], s.const_data[s.n_const++] = cd[k];
    s.n_out = 1;
    s.out_name[0] = m->n_classes ? "probabilities" : "quantiles";
    size_t at = 0;
    char num[40];
    for (int f = 0; f < F; f++)
      at += (size_t)snprintf(e.features + at, (size_t)F * TG_NAME_MAX - at, "%s%s", f ? "," : "", mt->names[f]);
    at = 0;
    for (int q = 0; q < m->nq && !m->n_classes; q++)
      at += (size_t)snprintf(e.quantiles + at, sizeof e.quantiles - at, "%s%s", q ? "," : "",
                             tg_format_real(num, (double)m->q[q], 1)); /* the shortest text that reads back */
    snprintf(e.meta_num[0], sizeof e.meta_num[0], "%lld", (long long)tg_forecast_window(m));
    snprintf(e.meta_num[1], sizeof e.meta_num[1], "%d", H);
    snprintf(e.meta_num[2], sizeof e.meta_num[2], "%d", mt->warmup);
    const char *keys[] = {"tickgrad.kind", "tickgrad.features", "tickgrad.window", "tickgrad.horizons",
                          "tickgrad.quantiles", "tickgrad.warmup", "tickgrad.normalisation"};
    const char *vals[] = {kind, e.features, e.meta_num[0], e.meta_num[1], e.quantiles, e.meta_num[2],
                          "inside the graph: features are the raw feature values of the window's bars (oldest first, "
                          "in tickgrad.features order); the graph computes (features - norm_mean) / norm_std with the "
                          "training split's statistics and multiplies the model's outputs by target_scales, the "
                          "training split's target std per horizon: quantiles are log returns"};
    s.n_meta = 7;
    for (int k = 0; k < s.n_meta; k++) s.meta_key[k] = keys[k], s.meta_value[k] = vals[k];
    s.doc = "tickgrad forecaster: raw feature windows [batch, window, features] -> quantiles [batch, horizons, "
            "quantiles] of the forward log return (docs/EXPORT.md)";
    st = tg_onnx_export(&s, out);
  }
  fc_free(&e);
  return st;
}

static tg_status policy_export_run(const char *model, const char *run, const char *out) {
  rl_policy_graph pg;
  tg_status st = rl_policy_graph_open(model, run, k_batch, &pg);
  if (st != TG_OK) return st;
  char width[32], actions[32];
  snprintf(width, sizeof width, "%lld", (long long)pg.obs_width);
  snprintf(actions, sizeof actions, "%d", pg.n_actions);
  tg_onnx_spec s = {.graph = {pg.g[0], pg.g[1]}, .batch = {k_batch[0], k_batch[1]}, .model = pg.model, .n_in = 1,
                    .in_name = {"obs"}, .n_out = pg.n_out, .n_meta = 3,
                    .meta_key = {"tickgrad.kind", "tickgrad.obs_width", "tickgrad.actions"},
                    .meta_value = {pg.model, width, actions},
                    .doc = "tickgrad policy: observations [batch, obs_width] -> action values (dqn), or logits and value "
                           "(ppo); the greedy action is the argmax (docs/EXPORT.md)"};
  for (int k = 0; k < pg.n_out; k++) s.out[k][0] = pg.out[k][0], s.out[k][1] = pg.out[k][1], s.out_name[k] = pg.out_name[k];
  st = tg_onnx_export(&s, out);
  rl_policy_graph_close(&pg);
  return st;
}

/* The run, locked against a writer while it is read: a DQN/PPO run (env.json) or a forecaster. */
static tg_status export_locked(const char *run, const char *out, const char *weights) {
  char path[TG_PATH_MAX + 32], model[32];
  snprintf(path, sizeof path, "%s/env.json", run);
  if (tg_file_exists(path)) {
    tg_agent_env env;
    tg_status st = tg_agent_env_read(run, model, sizeof model, &env);
    return st == TG_OK ? policy_export_run(model, run, out) : st;
  }
  snprintf(path, sizeof path, "%s/config.json", run);
  char *text = NULL;
  size_t len = 0;
  int agent = tg_read_file(path, &text, &len) == TG_OK && (strstr(text, "\"tickgrad-dqn-config") || strstr(text, "\"tickgrad-ppo-config"));
  tg_free(text);
  if (agent) /* an agent trained through the library without tickgrad train's env.json */
    return tg_error(TG_ERR_FORMAT, "export: %s is a DQN or PPO run without env.json, which says the environment its "
                    "observations come from (tickgrad train writes it; a program training through the library writes it "
                    "with tg_agent_env_write)", run);
  tg_predictor *p = NULL;
  tg_predictor_opts po = {.weights = weights ? weights : "best"};
  tg_status st = tg_predictor_open(run, &po, &p);
  if (st == TG_OK) st = fc_export_run(p, out);
  tg_predictor_free(p);
  return st;
}

tg_status tg_run_export(const char *run_dir, const char *format, const char *out_path, const char *weights) {
  if (!run_dir || !out_path || !out_path[0]) return tg_error(TG_ERR_INVALID, "export: a run folder and --out are required");
  if (!format || strcmp(format, "onnx") != 0)
    return tg_error(TG_ERR_INVALID, "export: unknown format '%s' (known: onnx)", format ? format : "(none)");
  char why[512];
  if (!tg_onnx_available(why, sizeof why)) return tg_error(TG_ERR_UNSUPPORTED, "export: %s", why);
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run_dir);
  if (!tg_file_exists(path)) return tg_error(TG_ERR_IO, "export: %s: no such file (is %s a training run?)", path, run_dir);
  int fd = -1;
  tg_status st = tg_run_lock_advice(run_dir, "export", "export it once that process has finished writing it", &fd);
  if (st != TG_OK) return tg_error(st, "export: %s", tg_last_error());
  st = export_locked(run_dir, out_path, weights);
  tg_run_unlock(fd);
  if (st != TG_OK && strncmp(tg_last_error(), "export", 6) != 0) { /* the reader's or writer's message, said as export's */
    char why[1024];
    snprintf(why, sizeof why, "%s", tg_last_error());
    st = tg_error(st, "export: %s", why);
  }
  return st;
}
