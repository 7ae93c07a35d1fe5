/* Builders for causal_softmax and conv1d_causal (stub). */
#include "graph/graph_internal.h"

tg_tensor *tg_causal_softmax(tg_graph *g, tg_tensor *x, int64_t offset) {
  (void)x; (void)offset;
  return tg_graph_fail(g, TG_ERR_INVALID, "causal_softmax: not implemented");
}

tg_tensor *tg_conv1d_causal(tg_graph *g, tg_tensor *x, tg_tensor *w, tg_tensor *bias) {
  (void)x; (void)w; (void)bias;
  return tg_graph_fail(g, TG_ERR_INVALID, "conv1d_causal: not implemented");
}
