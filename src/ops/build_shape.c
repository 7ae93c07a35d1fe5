/* Graph builders for the shape ops: concat, slice, reshape (a view), transpose, gather_rows. */
#include "graph/graph_internal.h"

/* Python-style dim (-1 = last) to [0, ndim); -1 when out of range. */
static int norm_dim(int dim, int ndim) {
  int d = dim < 0 ? dim + ndim : dim;
  return (d >= 0 && d < ndim) ? d : -1;
}

tg_tensor *tg_concat(tg_graph *g, int n, tg_tensor *const *xs, int dim) {
  char s0[96], s1[96];
  if (!g) return NULL;
  if (n < 1 || n > TG_MAX_INPUTS || !xs)
    return tg_graph_fail(g, TG_ERR_INVALID, "concat: %d inputs (need 1..%d)", n, TG_MAX_INPUTS);
  if (!tg_graph_check_inputs(g, "concat", n, xs)) return NULL;
  const tg_tensor *x0 = xs[0];
  int d = norm_dim(dim, x0->ndim);
  if (d < 0)
    return tg_graph_fail(g, TG_ERR_SHAPE, "concat: dim %d is out of range for input 0 '%s' %s", dim,
                         x0->name, tg_shape_str(x0, s0, sizeof s0));
  int64_t shape[TG_MAX_DIMS]; /* [..., sum of sizes along d, ...] */
  for (int i = 0; i < x0->ndim; i++) shape[i] = x0->shape[i];
  for (int k = 1; k < n; k++) {
    const tg_tensor *x = xs[k];
    if (x->dtype != x0->dtype)
      return tg_graph_fail(g, TG_ERR_SHAPE, "concat: input %d '%s' is %s but input 0 '%s' is %s", k,
                           x->name, tg_dtype_name(x->dtype), x0->name, tg_dtype_name(x0->dtype));
    int same = x->ndim == x0->ndim;
    for (int i = 0; same && i < x0->ndim; i++)
      if (i != d && x->shape[i] != x0->shape[i]) same = 0;
    if (!same)
      return tg_graph_fail(g, TG_ERR_SHAPE,
                           "concat: input %d '%s' %s does not match input 0 '%s' %s outside dim %d", k,
                           x->name, tg_shape_str(x, s1, sizeof s1), x0->name,
                           tg_shape_str(x0, s0, sizeof s0), d);
    shape[d] += x->shape[d];
  }
  tg_attr attr = {0};
  attr.i[0] = d;
  return tg_graph_add(g, TG_OP_CONCAT, n, xs, x0->dtype, x0->ndim, shape, &attr);
}

tg_tensor *tg_slice(tg_graph *g, tg_tensor *x, int dim, int64_t start, int64_t len) {
  char s0[96];
  if (!tg_graph_check_inputs(g, "slice", 1, &x)) return NULL;
  int d = norm_dim(dim, x->ndim);
  if (d < 0)
    return tg_graph_fail(g, TG_ERR_SHAPE, "slice: dim %d is out of range for '%s' %s", dim, x->name,
                         tg_shape_str(x, s0, sizeof s0));
  if (start < 0 || len < 1 || start > x->shape[d] - len)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "slice: start %lld len %lld does not fit dim %d (size %lld) of '%s' %s "
                         "(need start >= 0, len >= 1, start + len <= size)",
                         (long long)start, (long long)len, d, (long long)x->shape[d], x->name,
                         tg_shape_str(x, s0, sizeof s0));
  int64_t shape[TG_MAX_DIMS]; /* x's shape with dim d = len */
  for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
  shape[d] = len;
  tg_attr attr = {0};
  attr.i[0] = d;
  attr.i[1] = start;
  attr.i[2] = len;
  return tg_graph_add(g, TG_OP_SLICE, 1, &x, x->dtype, x->ndim, shape, &attr);
}

tg_tensor *tg_reshape(tg_graph *g, tg_tensor *x, int ndim, const int64_t *shape) {
  char s0[96];
  if (!tg_graph_check_inputs(g, "reshape", 1, &x)) return NULL;
  if (ndim < 0 || ndim > TG_MAX_DIMS || (ndim > 0 && !shape))
    return tg_graph_fail(g, TG_ERR_SHAPE, "reshape: '%s' %s to %d dims (need 0..%d and a shape)",
                         x->name, tg_shape_str(x, s0, sizeof s0), ndim, TG_MAX_DIMS);
  int64_t out[TG_MAX_DIMS]; /* the requested shape with -1 resolved */
  int64_t known = 1;
  int infer = -1;
  for (int i = 0; i < ndim; i++) {
    out[i] = shape[i];
    if (shape[i] == -1 && infer < 0) {
      infer = i;
    } else if (shape[i] < 1) {
      return tg_graph_fail(g, TG_ERR_SHAPE,
                           "reshape: entry %d of the new shape for '%s' %s is %lld (need >= 1, or one -1)",
                           i, x->name, tg_shape_str(x, s0, sizeof s0), (long long)shape[i]);
    } else {
      known *= shape[i];
    }
  }
  int64_t n = tg_numel(x);
  if (infer >= 0) {
    if (n % known != 0)
      return tg_graph_fail(g, TG_ERR_SHAPE,
                           "reshape: cannot infer entry %d: %lld elements of '%s' %s are not a multiple "
                           "of %lld", infer, (long long)n, x->name, tg_shape_str(x, s0, sizeof s0),
                           (long long)known);
    out[infer] = n / known;
    known *= out[infer];
  }
  if (known != n)
    return tg_graph_fail(g, TG_ERR_SHAPE, "reshape: '%s' %s has %lld elements, the new shape has %lld",
                         x->name, tg_shape_str(x, s0, sizeof s0), (long long)n, (long long)known);
  tg_attr attr = {0};
  return tg_graph_add(g, TG_OP_RESHAPE, 1, &x, x->dtype, ndim, out, &attr);
}

tg_tensor *tg_transpose(tg_graph *g, tg_tensor *x, int dim0, int dim1) {
  char s0[96];
  if (!tg_graph_check_inputs(g, "transpose", 1, &x)) return NULL;
  int d0 = norm_dim(dim0, x->ndim), d1 = norm_dim(dim1, x->ndim);
  if (d0 < 0 || d1 < 0)
    return tg_graph_fail(g, TG_ERR_SHAPE, "transpose: dims (%d, %d) are out of range for '%s' %s",
                         dim0, dim1, x->name, tg_shape_str(x, s0, sizeof s0));
  int64_t shape[TG_MAX_DIMS]; /* x's shape with d0 and d1 swapped */
  for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
  shape[d0] = x->shape[d1];
  shape[d1] = x->shape[d0];
  tg_attr attr = {0};
  attr.i[0] = d0;
  attr.i[1] = d1;
  return tg_graph_add(g, TG_OP_TRANSPOSE, 1, &x, x->dtype, x->ndim, shape, &attr);
}

tg_tensor *tg_gather_rows(tg_graph *g, tg_tensor *table, tg_tensor *idx) {
  char s0[96], s1[96];
  tg_tensor *ins[2] = {table, idx};
  if (!tg_graph_check_inputs(g, "gather_rows", 2, ins)) return NULL;
  if (table->dtype != TG_F32 || table->ndim != 2)
    return tg_graph_fail(g, TG_ERR_SHAPE, "gather_rows: table '%s' is %s %s (need f32 [V, D])",
                         table->name, tg_dtype_name(table->dtype), tg_shape_str(table, s0, sizeof s0));
  if (idx->dtype != TG_I32 && idx->dtype != TG_I64)
    return tg_graph_fail(g, TG_ERR_SHAPE, "gather_rows: indices '%s' %s are %s (need i32 or i64)",
                         idx->name, tg_shape_str(idx, s1, sizeof s1), tg_dtype_name(idx->dtype));
  if (idx->ndim + 1 > TG_MAX_DIMS)
    return tg_graph_fail(g, TG_ERR_SHAPE, "gather_rows: indices '%s' %s have %d dims (at most %d)",
                         idx->name, tg_shape_str(idx, s1, sizeof s1), idx->ndim, TG_MAX_DIMS - 1);
  int64_t shape[TG_MAX_DIMS]; /* [..., D] */
  for (int i = 0; i < idx->ndim; i++) shape[i] = idx->shape[i];
  shape[idx->ndim] = table->shape[1];
  tg_attr attr = {0};
  return tg_graph_add(g, TG_OP_GATHER_ROWS, 2, ins, TG_F32, idx->ndim + 1, shape, &attr);
}
