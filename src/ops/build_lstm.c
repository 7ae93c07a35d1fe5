/* Builder for lstm (stub). */
#include "graph/graph_internal.h"

tg_tensor *tg_lstm(tg_graph *g, tg_tensor *x, tg_tensor *h0, tg_tensor *c0, tg_tensor *w_ih, tg_tensor *w_hh,
                   tg_tensor *bias) {
  (void)x; (void)h0; (void)c0; (void)w_ih; (void)w_hh; (void)bias;
  return tg_graph_fail(g, TG_ERR_INVALID, "lstm: not implemented");
}

size_t tg_lstm_workspace(const tg_kernel_args *a) {
  (void)a;
  return 0;
}
