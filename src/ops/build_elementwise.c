/* Builders for the elementwise ops: binary ops with suffix broadcasting, scale and activations. */
#include <string.h>
#include "graph/graph_internal.h"

#define SHAPE_BUF 160

/* Shapes equal, or the shorter one equals the trailing dims of the longer one. */
static int shapes_broadcast(const tg_tensor *a, const tg_tensor *b) {
  const tg_tensor *big = a->ndim >= b->ndim ? a : b;
  const tg_tensor *small = big == a ? b : a;
  int off = big->ndim - small->ndim;
  for (int d = 0; d < small->ndim; d++)
    if (big->shape[off + d] != small->shape[d]) return 0;
  return 1;
}

static tg_tensor *build_binary(tg_graph *g, tg_op op, const char *name, tg_tensor *a,
                               tg_tensor *b) {
  tg_tensor *ins[2] = {a, b};
  if (!tg_graph_check_inputs(g, name, 2, ins)) return NULL;
  char sa[SHAPE_BUF], sb[SHAPE_BUF];
  tg_shape_str(a, sa, sizeof sa);
  tg_shape_str(b, sb, sizeof sb);
  if (a->dtype != TG_F32 || b->dtype != TG_F32)
    return tg_graph_fail(g, TG_ERR_SHAPE, "%s: operands must be f32; got a '%s' %s %s and b '%s' %s %s",
                         name, a->name, sa, tg_dtype_name(a->dtype), b->name, sb,
                         tg_dtype_name(b->dtype));
  if (!shapes_broadcast(a, b))
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "%s: shapes do not fit: a '%s' %s and b '%s' %s; they must be equal, or one "
                         "must equal the trailing dims of the other (e.g. [B, L, H] with [H] or "
                         "[L, H])",
                         name, a->name, sa, b->name, sb);
  const tg_tensor *big = a->ndim >= b->ndim ? a : b;
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  return tg_graph_add(g, op, 2, ins, TG_F32, big->ndim, big->shape, &attr);
}

static tg_tensor *build_unary(tg_graph *g, tg_op op, const char *name, tg_tensor *x, float f0) {
  tg_tensor *ins[1] = {x};
  if (!tg_graph_check_inputs(g, name, 1, ins)) return NULL;
  if (x->dtype != TG_F32) {
    char sx[SHAPE_BUF];
    return tg_graph_fail(g, TG_ERR_SHAPE, "%s: input '%s' %s is %s; it must be f32", name,
                         x->name, tg_shape_str(x, sx, sizeof sx), tg_dtype_name(x->dtype));
  }
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.f[0] = f0;
  return tg_graph_add(g, op, 1, ins, TG_F32, x->ndim, x->shape, &attr);
}

tg_tensor *tg_add(tg_graph *g, tg_tensor *a, tg_tensor *b) { return build_binary(g, TG_OP_ADD, "add", a, b); }
tg_tensor *tg_sub(tg_graph *g, tg_tensor *a, tg_tensor *b) { return build_binary(g, TG_OP_SUB, "sub", a, b); }
tg_tensor *tg_mul(tg_graph *g, tg_tensor *a, tg_tensor *b) { return build_binary(g, TG_OP_MUL, "mul", a, b); }
tg_tensor *tg_div(tg_graph *g, tg_tensor *a, tg_tensor *b) { return build_binary(g, TG_OP_DIV, "div", a, b); }

tg_tensor *tg_scale(tg_graph *g, tg_tensor *x, float s) { return build_unary(g, TG_OP_SCALE, "scale", x, s); }
tg_tensor *tg_relu(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_RELU, "relu", x, 0); }
tg_tensor *tg_tanh(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_TANH, "tanh", x, 0); }
tg_tensor *tg_sigmoid(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_SIGMOID, "sigmoid", x, 0); }
tg_tensor *tg_elu(tg_graph *g, tg_tensor *x, float alpha) { return build_unary(g, TG_OP_ELU, "elu", x, alpha); }
tg_tensor *tg_silu(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_SILU, "silu", x, 0); }
tg_tensor *tg_gelu(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_GELU, "gelu", x, 0); }
tg_tensor *tg_softplus(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_SOFTPLUS, "softplus", x, 0); }
tg_tensor *tg_exp(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_EXP, "exp", x, 0); }
tg_tensor *tg_log(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_LOG, "log", x, 0); }
tg_tensor *tg_sqrt(tg_graph *g, tg_tensor *x) { return build_unary(g, TG_OP_SQRT, "sqrt", x, 0); }
