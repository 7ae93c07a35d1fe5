/* Graph builder for window_rows: each window's last row t -> the row indices of its window (not differentiable). */
#include "graph/graph_internal.h"

tg_tensor *tg_window_rows(tg_graph *g, tg_tensor *t, int64_t window, int64_t rows) {
  char s0[96];
  tg_tensor *ins[1] = {t};
  if (!tg_graph_check_inputs(g, "window_rows", 1, ins)) return NULL;
  if (t->dtype != TG_F32 && t->dtype != TG_I64)
    return tg_graph_fail(g, TG_ERR_SHAPE, "window_rows: t '%s' %s is %s (need f32 or i64 rows)", t->name,
                         tg_shape_str(t, s0, sizeof s0), tg_dtype_name(t->dtype));
  if (t->ndim + 1 > TG_MAX_DIMS)
    return tg_graph_fail(g, TG_ERR_SHAPE, "window_rows: t '%s' %s has %d dims (at most %d)", t->name,
                         tg_shape_str(t, s0, sizeof s0), t->ndim, TG_MAX_DIMS - 1);
  if (window < 1 || rows < window || rows > TG_WINDOW_ROWS_MAX)
    return tg_graph_fail(g, TG_ERR_INVALID,
                         "window_rows: window %lld and rows %lld of t '%s'; need 1 <= window <= rows <= 2^24 (rows a "
                         "float holds exactly)", (long long)window, (long long)rows, t->name);
  int64_t shape[TG_MAX_DIMS]; /* [..., window] */
  for (int i = 0; i < t->ndim; i++) shape[i] = t->shape[i];
  shape[t->ndim] = window;
  tg_attr attr = {0};
  attr.i[0] = window;
  attr.i[1] = rows;
  return tg_graph_add(g, TG_OP_WINDOW_ROWS, 1, ins, TG_I64, t->ndim + 1, shape, &attr);
}
