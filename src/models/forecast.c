/* The forecasting-model interface: defaults, checks, and dispatch to the builder of each kind. */
#include <stdio.h>
#include "graph/graph_internal.h"
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
  c.tft = (tg_tft_cfg){.hidden = 64, .heads = 4, .enc_len = 64, .dec_len = 8};
  c.mamba = (tg_mamba2_cfg){.d_model = 128, .n_layers = 2, .d_state = 64, .headdim = 32, .expand = 2,
                            .d_conv = 4, .ngroups = 1, .chunk = 64, .seq_len = 128};
  c.mlp = (tg_mlp_cfg){.window = 16, .hidden = 64};
  c.transformer = (tg_transformer_cfg){.d_model = 64, .n_heads = 4, .n_layers = 2, .seq_len = 64};
  return c;
}

#define NEED(cond, ...)                                   \
  do {                                                    \
    if (!(cond)) return tg_error(TG_ERR_INVALID, __VA_ARGS__); \
  } while (0)

tg_status tg_forecast_check(const tg_forecast_cfg *c) {
  NEED(c->kind == TG_MODEL_TFT || c->kind == TG_MODEL_MAMBA2 || c->kind == TG_MODEL_MLP ||
           c->kind == TG_MODEL_TRANSFORMER,
       "model: unknown kind %d", (int)c->kind);
  NEED(c->n_past >= 1, "model: n_past %d: at least one past feature is needed", c->n_past);
  NEED(c->n_static >= 1, "model: n_static %d must be >= 1", c->n_static);
  NEED(c->horizons >= 1, "model: horizons %d must be >= 1", c->horizons);
  NEED(c->nq >= 1 && c->nq <= TG_MAX_QUANTILES, "model: %d quantiles; 1..%d are supported", c->nq, TG_MAX_QUANTILES);
  for (int i = 0; i < c->nq; i++)
    NEED(c->q[i] > 0.0f && c->q[i] < 1.0f, "model: quantile %d is %g; quantiles lie in (0, 1)", i, (double)c->q[i]);
  NEED(c->n_cat >= 0 && c->n_cat <= TG_MAX_CAT_INPUTS && c->n_cat < c->n_past, "model: %d category inputs of %d past inputs; 0..%d are "
       "supported, and fewer than the past inputs", c->n_cat, c->n_past, TG_MAX_CAT_INPUTS);
  for (int k = 0; k < c->n_cat; k++)
    NEED(c->cat_card[k] >= 1, "model: category input %d has %d ids; at least 1 (the reserved id 0)", k, c->cat_card[k]);
  NEED(c->n_cat == 0 || (c->cat_dim >= 1 && c->cat_dim <= 1024), "model: cat_dim %d must be in 1..1024", c->cat_dim);
  NEED(c->n_classes >= 0 && c->n_classes <= TG_MAX_CLASSES && c->n_classes != 1,
       "model: %d classes; a classifier needs 2..%d (0: quantile forecasts)", c->n_classes, TG_MAX_CLASSES);
  NEED(c->dropout >= 0.0f && c->dropout < 1.0f, "model: dropout %g must be in [0, 1)", (double)c->dropout);
  if (c->kind == TG_MODEL_TFT) {
    const tg_tft_cfg *t = &c->tft;
    NEED(t->hidden >= 1 && t->heads >= 1 && t->hidden % t->heads == 0,
         "tft: hidden %d must be a positive multiple of heads %d", t->hidden, t->heads);
    NEED(t->enc_len >= 1 && t->dec_len >= 1, "tft: encoder %d and decoder %d steps must be >= 1", t->enc_len,
         t->dec_len);
    NEED(t->dec_len == c->horizons, "tft: decoder steps %d must equal horizons %d (one forecast per decoder step)",
         t->dec_len, c->horizons);
    NEED(c->n_future >= 1, "tft: n_future %d: the decoder needs at least one known-future feature", c->n_future);
    NEED(!t->vol_scale || (t->vol_scale == 1 && t->vol_col >= 0 && t->vol_col < c->n_past - c->n_cat),
         "tft: vol_scale %d reads past column %d; it must be 0 or 1, and the column one of the %d numeric inputs",
         t->vol_scale, t->vol_col, c->n_past - c->n_cat);
  } else if (c->kind == TG_MODEL_TRANSFORMER) {
    const tg_transformer_cfg *t = &c->transformer;
    NEED(t->d_model >= 1 && t->n_heads >= 1 && t->d_model % t->n_heads == 0,
         "transformer: d_model %d must be a positive multiple of n_heads %d", t->d_model, t->n_heads);
    NEED(t->n_layers >= 1, "transformer: n_layers %d must be >= 1", t->n_layers);
    NEED(t->seq_len >= 1, "transformer: seq_len %d must be >= 1", t->seq_len);
  } else if (c->kind == TG_MODEL_MLP) {
    NEED(c->mlp.window >= 1 && c->mlp.hidden >= 1, "mlp: window %d and hidden %d must be >= 1", c->mlp.window,
         c->mlp.hidden);
  } else {
    const tg_mamba2_cfg *m = &c->mamba;
    NEED(m->d_model >= 1 && m->n_layers >= 1 && m->d_state >= 1 && m->headdim >= 1 && m->expand >= 1,
         "mamba2: d_model %d, layers %d, d_state %d, headdim %d, expand %d must all be >= 1", m->d_model,
         m->n_layers, m->d_state, m->headdim, m->expand);
    NEED((m->expand * m->d_model) % m->headdim == 0, "mamba2: d_inner %d (expand x d_model) must be a multiple of headdim %d",
         m->expand * m->d_model, m->headdim);
    int heads = m->expand * m->d_model / m->headdim;
    NEED(m->ngroups >= 1 && heads % m->ngroups == 0, "mamba2: heads %d must be a multiple of ngroups %d", heads,
         m->ngroups);
    NEED(m->d_conv >= 1 && m->d_conv <= 16, "mamba2: d_conv %d must be in 1..16", m->d_conv);
    NEED(m->chunk >= 1, "mamba2: chunk %d must be >= 1", m->chunk);
    NEED(m->seq_len >= 1, "mamba2: seq_len %d must be >= 1", m->seq_len);
  }
  return TG_OK;
}

static tg_tensor *build_kind(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  if (c->kind == TG_MODEL_MLP) return tg_mlp_build(g, c, in);
  if (c->kind == TG_MODEL_TRANSFORMER) return tg_transformer_build(g, c, in);
  return c->kind == TG_MODEL_TFT ? tg_tft_build(g, c, in) : tg_mamba2_build(g, c, in);
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
  return with.past || !in->past ? build_kind(g, &inner, &with) : NULL;
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
