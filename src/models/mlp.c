/* The MLP baseline forecaster: the last `window` bars flattened -> Linear -> ReLU -> dropout -> Linear. */
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/models_internal.h"

/* past must be f32 [B, mlp.window, n_past]. */
static int mlp_check_past(tg_graph *g, const tg_forecast_cfg *c, const tg_tensor *past) {
  char sp[96];
  if (!past) {
    tg_graph_fail(g, TG_ERR_INVALID, "mlp: past is NULL; need f32 [B, %d, %d]", c->mlp.window, c->n_past);
    return 0;
  }
  if (past->dtype != TG_F32 || past->ndim != 3 || past->shape[1] != c->mlp.window || past->shape[2] != c->n_past) {
    tg_graph_fail(g, TG_ERR_SHAPE, "mlp: past '%s' is %s %s; need f32 [B, %d, %d] (window, n_past)", past->name,
                  tg_dtype_name(past->dtype), tg_shape_str(past, sp, sizeof sp), c->mlp.window, c->n_past);
    return 0;
  }
  return 1;
}

tg_tensor *tg_mlp_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  if (tg_graph_status(g) != TG_OK) return NULL;
  if (!mlp_check_past(g, c, in->past)) return NULL;
  int64_t B = in->past->shape[0], D = (int64_t)c->mlp.window * c->n_past, Hd = c->mlp.hidden;
  int64_t W = tg_forecast_step_width(c), out_n = (int64_t)c->horizons * W;
  int64_t s_flat[2] = {B, D}, s_w1[2] = {Hd, D}, s_b1[1] = {Hd}, s_w2[2] = {out_n, Hd}, s_b2[1] = {out_n};
  int64_t s_out[3] = {B, c->horizons, W};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  tg_tensor *w1 = tg_param(g, "mlp.l1.weight", 2, s_w1, fan);     /* [hidden, window*n_past] */
  tg_tensor *b1 = tg_param(g, "mlp.l1.bias", 1, s_b1, fan);       /* [hidden] */
  tg_tensor *w2 = tg_param(g, "mlp.l2.weight", 2, s_w2, fan);     /* [horizons*W, hidden], W = nq or n_classes */
  tg_tensor *b2 = tg_param(g, "mlp.l2.bias", 1, s_b2, fan);       /* [horizons*W] */
  tg_tensor *x = tg_reshape(g, in->past, 2, s_flat);              /* [B, window*n_past] */
  tg_graph_block_begin(g, "mlp.l1"); /* the hidden layer as a recomputation block: keeps x */
  tg_tensor *h = tg_relu(g, tg_linear(g, x, w1, b1));             /* [B, hidden] */
  if (c->dropout > 0.0f) h = tg_dropout(g, h, c->dropout);
  tg_graph_block_end(g);
  tg_tensor *y = tg_linear(g, h, w2, b2);                         /* [B, horizons*W] */
  return tg_reshape(g, y, 3, s_out);                              /* [B, horizons, W] */
}
