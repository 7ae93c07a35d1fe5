/* Builders for the dense ops: matmul, linear and stacked_linear (operand checks, output shape, attributes). */
#include <string.h>
#include "graph/graph_internal.h"

#define SHAPE_BUF 160

/* Fails with a message naming the op, the operand and its dtype unless t is f32. */
static int dense_check_f32(tg_graph *g, const char *op, const char *role, const tg_tensor *t) {
  if (t->dtype == TG_F32) return 1;
  char s[SHAPE_BUF];
  tg_graph_fail(g, TG_ERR_SHAPE, "%s: %s '%s' %s is %s; it must be f32", op, role, t->name,
                tg_shape_str(t, s, sizeof s), tg_dtype_name(t->dtype));
  return 0;
}

tg_tensor *tg_matmul(tg_graph *g, tg_tensor *a, tg_tensor *b, int trans_a, int trans_b) {
  tg_tensor *ins[2] = {a, b};
  if (!tg_graph_check_inputs(g, "matmul", 2, ins)) return NULL;
  if (!dense_check_f32(g, "matmul", "a", a) || !dense_check_f32(g, "matmul", "b", b)) return NULL;
  char sa[SHAPE_BUF], sb[SHAPE_BUF];
  tg_shape_str(a, sa, sizeof sa);
  tg_shape_str(b, sb, sizeof sb);
  if (a->ndim < 2 || b->ndim < 2)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "matmul: both operands need at least 2 dims; got a '%s' %s and b '%s' %s "
                         "(reshape a vector to [1, K] or [K, 1])",
                         a->name, sa, b->name, sb);
  int batch_ok = b->ndim == 2;
  if (b->ndim == a->ndim) {
    batch_ok = 1;
    for (int d = 0; d < a->ndim - 2; d++) batch_ok &= a->shape[d] == b->shape[d];
  }
  if (!batch_ok)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "matmul: batch dims differ: a '%s' %s and b '%s' %s; b's leading dims "
                         "must equal a's, or b must be 2-D (shared by every batch)",
                         a->name, sa, b->name, sb);
  int ta = trans_a != 0, tb = trans_b != 0;
  int64_t a0 = a->shape[a->ndim - 2], a1 = a->shape[a->ndim - 1];
  int64_t b0 = b->shape[b->ndim - 2], b1 = b->shape[b->ndim - 1];
  int64_t m = ta ? a1 : a0, ka = ta ? a0 : a1;
  int64_t kb = tb ? b1 : b0, n = tb ? b0 : b1;
  if (ka != kb)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "matmul: inner dims differ: a '%s' %s%s has K=%lld but b '%s' %s%s has "
                         "K=%lld (set trans_a / trans_b for an operand stored transposed)",
                         a->name, sa, ta ? " (transposed)" : "", (long long)ka, b->name, sb,
                         tb ? " (transposed)" : "", (long long)kb);
  int64_t shape[TG_MAX_DIMS]; /* [..., M, N] */
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  shape[a->ndim - 2] = m;
  shape[a->ndim - 1] = n;
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = ta;
  attr.i[1] = tb;
  return tg_graph_add(g, TG_OP_MATMUL, 2, ins, TG_F32, a->ndim, shape, &attr);
}

tg_tensor *tg_linear(tg_graph *g, tg_tensor *x, tg_tensor *w, tg_tensor *bias) {
  tg_tensor *ins[3] = {x, w, bias};
  int n_in = bias ? 3 : 2;
  if (!tg_graph_check_inputs(g, "linear", n_in, ins)) return NULL;
  if (!dense_check_f32(g, "linear", "x", x) || !dense_check_f32(g, "linear", "w", w)) return NULL;
  if (bias && !dense_check_f32(g, "linear", "bias", bias)) return NULL;
  char sx[SHAPE_BUF], sw[SHAPE_BUF], sbias[SHAPE_BUF];
  tg_shape_str(x, sx, sizeof sx);
  tg_shape_str(w, sw, sizeof sw);
  if (w->ndim != 2)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "linear: weight '%s' %s must be 2-D [out, in] (input x '%s' %s)", w->name,
                         sw, x->name, sx);
  if (x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "linear: x '%s' %s must end in in=%lld to match weight '%s' %s [out, in]",
                         x->name, sx, (long long)w->shape[1], w->name, sw);
  if (bias && (bias->ndim != 1 || bias->shape[0] != w->shape[0]))
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "linear: bias '%s' %s must be [%lld] to match weight '%s' %s [out, in]",
                         bias->name, tg_shape_str(bias, sbias, sizeof sbias),
                         (long long)w->shape[0], w->name, sw);
  int64_t shape[TG_MAX_DIMS]; /* [..., out] */
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  shape[x->ndim - 1] = w->shape[0];
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = bias != NULL;
  return tg_graph_add(g, TG_OP_LINEAR, n_in, ins, TG_F32, x->ndim, shape, &attr);
}

tg_tensor *tg_stacked_linear(tg_graph *g, tg_tensor *x, tg_tensor *w, tg_tensor *bias) {
  tg_tensor *ins[3] = {x, w, bias};
  int n_in = bias ? 3 : 2;
  if (!tg_graph_check_inputs(g, "stacked_linear", n_in, ins)) return NULL;
  if (!dense_check_f32(g, "stacked_linear", "x", x) || !dense_check_f32(g, "stacked_linear", "w", w))
    return NULL;
  if (bias && !dense_check_f32(g, "stacked_linear", "bias", bias)) return NULL;
  char sx[SHAPE_BUF], sw[SHAPE_BUF], sbias[SHAPE_BUF];
  tg_shape_str(x, sx, sizeof sx);
  tg_shape_str(w, sw, sizeof sw);
  if (w->ndim != 3)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "stacked_linear: weight '%s' %s must be 3-D [G, out, in] (input x '%s' %s)",
                         w->name, sw, x->name, sx);
  int64_t G = w->shape[0], nout = w->shape[1], nin = w->shape[2];
  if (x->ndim < 2 || x->shape[x->ndim - 2] != G || x->shape[x->ndim - 1] != nin)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "stacked_linear: x '%s' %s must end in [G=%lld, in=%lld] to match weight '%s' "
                         "%s [G, out, in]",
                         x->name, sx, (long long)G, (long long)nin, w->name, sw);
  if (bias && (bias->ndim != 2 || bias->shape[0] != G || bias->shape[1] != nout))
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "stacked_linear: bias '%s' %s must be [%lld, %lld] to match weight '%s' %s "
                         "[G, out, in]",
                         bias->name, tg_shape_str(bias, sbias, sizeof sbias), (long long)G,
                         (long long)nout, w->name, sw);
  int64_t shape[TG_MAX_DIMS]; /* [..., G, out] */
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  shape[x->ndim - 1] = nout;
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = bias != NULL;
  return tg_graph_add(g, TG_OP_STACKED_LINEAR, n_in, ins, TG_F32, x->ndim, shape, &attr);
}
