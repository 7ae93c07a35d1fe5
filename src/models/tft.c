/* The tft forecaster as a graph (stub). */
#include "graph/graph_internal.h"
#include "models/models_internal.h"

tg_tensor *tg_tft_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  (void)c; (void)in;
  return tg_graph_fail(g, TG_ERR_INVALID, "tft: not implemented");
}
