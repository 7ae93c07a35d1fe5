/* Builder for ssd_scan (stub). */
#include "graph/graph_internal.h"

tg_tensor *tg_ssd_scan(tg_graph *g, tg_tensor *x, tg_tensor *dt, tg_tensor *A, tg_tensor *Bm, tg_tensor *Cm,
                       tg_tensor *D, int chunk) {
  (void)x; (void)dt; (void)A; (void)Bm; (void)Cm; (void)D; (void)chunk;
  return tg_graph_fail(g, TG_ERR_INVALID, "ssd_scan: not implemented");
}

size_t tg_ssd_workspace(const tg_kernel_args *a) {
  (void)a;
  return 0;
}
