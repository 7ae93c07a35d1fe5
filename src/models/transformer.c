/* The causal pre-norm transformer forecaster as a graph (the architecture: tg_transformer_cfg in models.h). */
/* models.h documents the architecture; reference/transformer.py builds exactly this in PyTorch with the same names; the
 * layers are tr_layers.c's (the last layer's last-step shortcut is described there). */
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/models_internal.h"
#include "models/tr_layers.h"

/* The whole model: [B, horizons, nq] from the last step, or (all_steps) [B, L, horizons, nq] from every step. */
static tg_tensor *tr_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in, int all_steps) {
  if (!g) return NULL;
  if (!c || !in) return tg_graph_fail(g, TG_ERR_INVALID, "transformer: NULL config or inputs");
  if (c->kind != TG_MODEL_TRANSFORMER)
    return tg_graph_fail(g, TG_ERR_INVALID, "transformer: config kind %d is not TG_MODEL_TRANSFORMER", (int)c->kind);
  if (tg_forecast_check(c) != TG_OK) return tg_graph_fail(g, TG_ERR_INVALID, "%s", tg_last_error());
  if (tg_graph_status(g) != TG_OK || (in->past && !tg_graph_check_inputs(g, "transformer", 1, &in->past)) ||
      !tg_forecast_check_past(g, c, "transformer", in->past))
    return NULL;
  const tg_transformer_cfg *t = &c->transformer;
  tr_b b = {g, "transformer", in->past->shape[0], t->seq_len, t->d_model, t->n_heads, c->dropout, 1};
  int64_t ps[2] = {b.L, b.d}, out_n = (int64_t)c->horizons * tg_forecast_step_width(c);
  tg_tensor *pos = tr_param(&b, "", "pos_embed", 2, ps, (tg_init){TG_INIT_NORMAL, 0.0f, 0.02f});
  tg_tensor *x = tg_add(g, tr_linear(&b, "", "in_proj", in->past, b.d), pos); /* [B, L, d] */
  for (int i = 0; i < t->n_layers && x; i++) {
    char block[48];
    snprintf(block, sizeof block, "transformer.layers.%d", i);
    tg_graph_block_begin(g, block); /* a recomputation block: the layer keeps only its input x */
    x = tr_block(&b, i, x, !all_steps && i == t->n_layers - 1);
    tg_graph_block_end(g);
  }
  tg_tensor *y = tr_linear(&b, "", "head", tr_norm(&b, "", "norm_f", x), out_n); /* [B, 1 or L, horizons * nq] */
  if (!y) return NULL;
  int64_t w = tg_forecast_step_width(c), s_last[3] = {b.B, c->horizons, w}, s_all[4] = {b.B, b.L, c->horizons, w};
  return all_steps ? tg_reshape(g, y, 4, s_all) : tg_reshape(g, y, 3, s_last);
}

tg_tensor *tg_transformer_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  return tr_build(g, c, in, 0);
}

tg_tensor *tg_transformer_build_steps(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  return tr_build(g, c, in, 1);
}
