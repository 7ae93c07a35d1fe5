/* The TFT's volatility scale: each window's quantiles times its recent volatility, in the graph and on the host. */
#include <string.h>
#include "graph/graph_internal.h"
#include "models/tft_internal.h"

#define VOL_SHARP 100.0f /* v = sqrt(softplus(VOL_SHARP m) / VOL_SHARP): about sqrt(m), floored at sqrt(ln 2 / 100) */

tg_status tg_tft_vol_col(tg_forecast_cfg *c, const char (*names)[TG_NAME_MAX], int n) {
  c->tft.vol_col = -1;
  if (c->kind != TG_MODEL_TFT || !c->tft.vol_scale) return TG_OK;
  if (c->n_classes > 0) { /* a classifier's logits are not quantiles: they stay as they come */
    c->tft.vol_scale = 0;
    return TG_OK;
  }
  for (int j = 0; j < n; j++)
    if (strcmp(names[j], TG_TFT_VOL_FEATURE) == 0) c->tft.vol_col = j;
  if (c->tft.vol_col >= 0) return TG_OK;
  return tg_error(TG_ERR_INVALID, "tft: --vol-scale 1 scales the forecasts by the recent volatility of the '%s' "
                  "feature, which the features lack; add %s to --features or pass --vol-scale 0", TG_TFT_VOL_FEATURE,
                  TG_TFT_VOL_FEATURE);
}

int tg_tft_vol_window_col(const tg_forecast_cfg *c) { return c->tft.vol_scale ? c->tft.vol_col : -1; }

tg_tensor *tg_tft_vol_window(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *past) {
  int64_t s[2] = {past->shape[0], past->shape[1]};
  return tg_reshape(g, tg_slice(g, past, 2, c->tft.vol_col, 1), 2, s);
}

tg_tensor *tg_tft_vol(tg_graph *g, tg_tensor *x) {
  tg_tensor *m = tg_mean_last(g, tg_mul(g, x, x)); /* [B] */
  return tg_sqrt(g, tg_scale(g, tg_softplus(g, tg_scale(g, m, VOL_SHARP)), 1.0f / VOL_SHARP));
}

tg_tensor *tg_tft_vol_apply(tg_graph *g, tg_tensor *pred, tg_tensor *vol) {
  /* binary ops broadcast a suffix: [B, dec, nq] goes through [nq, dec, B] and back */
  return tg_transpose(g, tg_mul(g, tg_transpose(g, pred, 0, 2), vol), 0, 2);
}
