/* The forecasting-model interface: defaults, checks, and the build through the model table. */
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/model_table.h"
#include "models/models_internal.h"
#include "tickgrad/status.h"

tg_forecast_cfg tg_forecast_defaults(tg_model_kind kind) {
  tg_forecast_cfg c = {0};
  c.kind = kind;
  c.n_static = 1;
  c.nq = 3;
  c.q[0] = 0.1f;
  c.q[1] = 0.5f;
  c.q[2] = 0.9f;
  c.dropout = 0.1f;
  c.cat_dim = 4;
  for (int k = 0; k < tg_model_count(); k++) tg_model_get((tg_model_kind)k)->defaults(&c);
  return c;
}

tg_status tg_forecast_check(const tg_forecast_cfg *c) {
  const tg_model_def *def = tg_model_get(c->kind);
  TG_NEED(def, "model: unknown kind %d", (int)c->kind);
  TG_NEED(c->n_past >= 1, "model: n_past %d: at least one past feature is needed", c->n_past);
  TG_NEED(c->n_static >= 1, "model: n_static %d must be >= 1", c->n_static);
  TG_NEED(c->horizons >= 1, "model: horizons %d must be >= 1", c->horizons);
  TG_NEED(c->nq >= 1 && c->nq <= TG_MAX_QUANTILES, "model: %d quantiles; 1..%d are supported", c->nq, TG_MAX_QUANTILES);
  for (int i = 0; i < c->nq; i++)
    TG_NEED(c->q[i] > 0.0f && c->q[i] < 1.0f, "model: quantile %d is %g; quantiles lie in (0, 1)", i, (double)c->q[i]);
  TG_NEED(c->n_cat >= 0 && c->n_cat <= TG_MAX_CAT_INPUTS && c->n_cat < c->n_past, "model: %d category inputs of %d past inputs; 0..%d are "
          "supported, and fewer than the past inputs", c->n_cat, c->n_past, TG_MAX_CAT_INPUTS);
  for (int k = 0; k < c->n_cat; k++)
    TG_NEED(c->cat_card[k] >= 1, "model: category input %d has %d ids; at least 1 (the reserved id 0)", k, c->cat_card[k]);
  TG_NEED(c->n_cat == 0 || (c->cat_dim >= 1 && c->cat_dim <= 1024), "model: cat_dim %d must be in 1..1024", c->cat_dim);
  TG_NEED(c->n_classes >= 0 && c->n_classes <= TG_MAX_CLASSES && c->n_classes != 1,
          "model: %d classes; a classifier needs 2..%d (0: quantile forecasts)", c->n_classes, TG_MAX_CLASSES);
  TG_NEED(c->dropout >= 0.0f && c->dropout < 1.0f, "model: dropout %g must be in [0, 1)", (double)c->dropout);
  return def->check(c);
}

tg_tensor *tg_forecast_embed(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *past, tg_forecast_cfg *inner) {
  *inner = *c;
  if (c->n_cat == 0 || !past) return past;
  int64_t rows = 0, n_num = c->n_past - c->n_cat;
  for (int k = 0; k < c->n_cat; k++) rows += c->cat_card[k];
  int64_t s_tab[2] = {rows, c->cat_dim}, s_ids[3] = {past->shape[0], past->shape[1], c->n_cat};
  int64_t s_emb[3] = {past->shape[0], past->shape[1], (int64_t)c->n_cat * c->cat_dim};
  tg_tensor *table = tg_param(g, "cat_embed.weight", 2, s_tab, (tg_init){TG_INIT_NORMAL, 0.0f, 1.0f}); /* [rows, e] */
  /* the ids as indices: window_rows of one row is t itself, as i64 (an id that is not an integer in range fails) */
  tg_tensor *ids = tg_reshape(g, tg_window_rows(g, tg_slice(g, past, 2, n_num, c->n_cat), 1, rows), 3, s_ids);
  tg_tensor *emb = tg_reshape(g, tg_gather_rows(g, table, ids), 3, s_emb); /* [B, L, n_cat * e] */
  tg_tensor *xs[2] = {tg_slice(g, past, 2, 0, n_num), emb};                 /* numbers, embeddings */
  inner->n_past = (int)n_num + c->n_cat * c->cat_dim;
  inner->n_cat = 0;
  return tg_concat(g, 2, xs, 2); /* [B, L, n_num + n_cat * e] */
}

tg_tensor *tg_forecast_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  if (!g) return NULL;
  if (!c || !in) return tg_graph_fail(g, TG_ERR_INVALID, "forecast: NULL config or inputs");
  if (tg_forecast_check(c) != TG_OK) return tg_graph_fail(g, TG_ERR_INVALID, "%s", tg_last_error());
  tg_forecast_cfg inner;
  tg_forecast_inputs with = *in;
  with.past = tg_forecast_embed(g, c, in->past, &inner);
  return with.past || !in->past ? tg_model_get(c->kind)->build(g, &inner, &with) : NULL;
}

int tg_forecast_check_past(tg_graph *g, const tg_forecast_cfg *c, const char *model, const tg_tensor *past) {
  char sp[96];
  int L = tg_forecast_window(c);
  if (!past) {
    tg_graph_fail(g, TG_ERR_INVALID, "%s: inputs.past is NULL; it must be f32 [B, %d, %d]", model, L, c->n_past);
    return 0;
  }
  if (past->dtype != TG_F32 || past->ndim != 3 || past->shape[1] != L || past->shape[2] != c->n_past) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: past '%s' is %s %s; expected f32 [B, %d (seq_len), %d (n_past)]", model,
                  past->name, tg_dtype_name(past->dtype), tg_shape_str(past, sp, sizeof sp), L, c->n_past);
    return 0;
  }
  return 1;
}
