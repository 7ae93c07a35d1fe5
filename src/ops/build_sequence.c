/* Builders for the sequence ops causal_softmax and conv1d_causal (operand checks, output shape, attributes). */
#include "graph/graph_internal.h"

#define SHAPE_BUF 160

/* Fails with a message naming the op, the operand, its shape and dtype unless t is f32. */
static int seq_check_f32(tg_graph *g, const char *op, const char *role, const tg_tensor *t) {
  if (t->dtype == TG_F32) return 1;
  char s[SHAPE_BUF];
  tg_graph_fail(g, TG_ERR_SHAPE, "%s: %s '%s' %s is %s; it must be f32", op, role, t->name,
                tg_shape_str(t, s, sizeof s), tg_dtype_name(t->dtype));
  return 0;
}

tg_tensor *tg_causal_softmax(tg_graph *g, tg_tensor *x, int64_t offset) {
  if (!tg_graph_check_inputs(g, "causal_softmax", 1, &x)) return NULL;
  if (!seq_check_f32(g, "causal_softmax", "x", x)) return NULL;
  if (x->ndim < 2) {
    char sx[SHAPE_BUF];
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "causal_softmax: x '%s' is %s; it needs at least 2 dims [..., Tq, Tk] "
                         "(queries, keys)",
                         x->name, tg_shape_str(x, sx, sizeof sx));
  }
  tg_attr attr = {0};
  attr.i[0] = offset;
  return tg_graph_add(g, TG_OP_CAUSAL_SOFTMAX, 1, &x, TG_F32, x->ndim, x->shape, &attr);
}

/* x must be 3-D [B, L, C]; w 2-D [C, K] with K >= 1; bias [C] when given. */
static int conv_check_shapes(tg_graph *g, const tg_tensor *x, const tg_tensor *w,
                             const tg_tensor *bias) {
  char sx[SHAPE_BUF], sw[SHAPE_BUF], sb[SHAPE_BUF];
  tg_shape_str(x, sx, sizeof sx);
  tg_shape_str(w, sw, sizeof sw);
  if (x->ndim != 3) {
    tg_graph_fail(g, TG_ERR_SHAPE, "conv1d_causal: x '%s' is %s; it must be 3-D [B, L, C]",
                  x->name, sx);
    return 0;
  }
  int64_t C = x->shape[2];
  if (w->ndim != 2 || w->shape[0] != C || w->shape[1] < 1) {
    tg_graph_fail(g, TG_ERR_SHAPE,
                  "conv1d_causal: w '%s' is %s but x '%s' is %s; w must be [C, K] = [%lld, K] "
                  "(one filter per channel of x, K >= 1 taps)",
                  w->name, sw, x->name, sx, (long long)C);
    return 0;
  }
  if (bias && (bias->ndim != 1 || bias->shape[0] != C)) {
    tg_graph_fail(g, TG_ERR_SHAPE,
                  "conv1d_causal: bias '%s' is %s but x '%s' is %s; bias must be [%lld] (x's "
                  "channels)",
                  bias->name, tg_shape_str(bias, sb, sizeof sb), x->name, sx, (long long)C);
    return 0;
  }
  return 1;
}

tg_tensor *tg_conv1d_causal(tg_graph *g, tg_tensor *x, tg_tensor *w, tg_tensor *bias) {
  tg_tensor *ins[3] = {x, w, bias};
  int n_in = bias ? 3 : 2;
  if (!tg_graph_check_inputs(g, "conv1d_causal", n_in, ins)) return NULL;
  if (!seq_check_f32(g, "conv1d_causal", "x", x) || !seq_check_f32(g, "conv1d_causal", "w", w))
    return NULL;
  if (bias && !seq_check_f32(g, "conv1d_causal", "bias", bias)) return NULL;
  if (!conv_check_shapes(g, x, w, bias)) return NULL;
  tg_attr attr = {0};
  attr.i[0] = bias != NULL;
  return tg_graph_add(g, TG_OP_CONV1D_CAUSAL, n_in, ins, TG_F32, 3, x->shape, &attr);
}
