/* Graph builders for the reductions (sum, mean, *_last, argmax_last) and dropout. */
#include <math.h>
#include "graph/graph_internal.h"

/* Checks x is a non-empty f32 tensor with at least min_ndim dims; sets the sticky error if not. */
static int check_f32(tg_graph *g, const char *op, tg_tensor *x, int min_ndim) {
  char s0[96];
  if (!tg_graph_check_inputs(g, op, 1, &x)) return 0;
  if (x->dtype != TG_F32) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: '%s' %s is %s (need f32)", op, x->name,
                  tg_shape_str(x, s0, sizeof s0), tg_dtype_name(x->dtype));
    return 0;
  }
  if (x->ndim < min_ndim || tg_numel(x) < 1) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: '%s' %s needs at least %d dim(s) and one element", op,
                  x->name, tg_shape_str(x, s0, sizeof s0), min_ndim);
    return 0;
  }
  return 1;
}

static tg_tensor *reduce_all(tg_graph *g, tg_op op, const char *name, tg_tensor *x) {
  if (!check_f32(g, name, x, 0)) return NULL;
  tg_attr attr = {0};
  return tg_graph_add(g, op, 1, &x, TG_F32, 0, NULL, &attr);
}

/* x [..., D] -> out [...] of dtype dt */
static tg_tensor *reduce_last(tg_graph *g, tg_op op, const char *name, tg_tensor *x, tg_dtype dt) {
  if (!check_f32(g, name, x, 1)) return NULL;
  tg_attr attr = {0};
  return tg_graph_add(g, op, 1, &x, dt, x->ndim - 1, x->shape, &attr);
}

tg_tensor *tg_sum(tg_graph *g, tg_tensor *x) { return reduce_all(g, TG_OP_SUM, "sum", x); }
tg_tensor *tg_mean(tg_graph *g, tg_tensor *x) { return reduce_all(g, TG_OP_MEAN, "mean", x); }

tg_tensor *tg_sum_last(tg_graph *g, tg_tensor *x) {
  return reduce_last(g, TG_OP_SUM_LAST, "sum_last", x, TG_F32);
}
tg_tensor *tg_mean_last(tg_graph *g, tg_tensor *x) {
  return reduce_last(g, TG_OP_MEAN_LAST, "mean_last", x, TG_F32);
}
tg_tensor *tg_max_last(tg_graph *g, tg_tensor *x) {
  return reduce_last(g, TG_OP_MAX_LAST, "max_last", x, TG_F32);
}
tg_tensor *tg_argmax_last(tg_graph *g, tg_tensor *x) {
  return reduce_last(g, TG_OP_ARGMAX_LAST, "argmax_last", x, TG_I64);
}

tg_tensor *tg_dropout(tg_graph *g, tg_tensor *x, float p) {
  char s0[96];
  if (!tg_graph_check_inputs(g, "dropout", 1, &x)) return NULL;
  if (x->dtype != TG_F32)
    return tg_graph_fail(g, TG_ERR_SHAPE, "dropout: '%s' %s is %s (need f32)", x->name,
                         tg_shape_str(x, s0, sizeof s0), tg_dtype_name(x->dtype));
  if (!(p >= 0.0f && p < 1.0f)) /* also rejects NaN */
    return tg_graph_fail(g, TG_ERR_INVALID, "dropout: p = %g for '%s' is outside [0, 1)", (double)p,
                         x->name);
  tg_attr attr = {0};
  attr.f[0] = p;
  attr.i[0] = 0; /* set to 1 by the planner for a training plan */
  return tg_graph_add(g, TG_OP_DROPOUT, 1, &x, TG_F32, x->ndim, x->shape, &attr);
}

tg_tensor *tg_sample_rows(tg_graph *g, int64_t rows, int64_t b) {
  if (!g) return NULL;
  if (rows < 1 || b < 0)
    return tg_graph_fail(g, TG_ERR_INVALID, "sample_rows: %lld draws from %lld rows (need rows >= 1, draws >= 0)",
                         (long long)b, (long long)rows);
  tg_attr attr = {0};
  attr.i[0] = rows;
  return tg_graph_add(g, TG_OP_SAMPLE_ROWS, 0, NULL, TG_I64, 1, &b, &attr);
}
