/* Builders for the last-dim normalisations: softmax, log_softmax, layernorm, rmsnorm. */
#include <math.h>
#include "graph/graph_internal.h"

#define SHAPE_BUF 96

/* x must be f32 with at least one dim. */
static int norm_check_x(tg_graph *g, const char *op, const tg_tensor *x) {
  char sx[SHAPE_BUF];
  if (x->dtype != TG_F32) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: x '%s' %s is %s; %s needs f32", op, x->name,
                  tg_shape_str(x, sx, sizeof sx), tg_dtype_name(x->dtype), op);
    return 0;
  }
  if (x->ndim < 1) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: x '%s' is a scalar %s; %s works over a last dim [..., D]",
                  op, x->name, tg_shape_str(x, sx, sizeof sx), op);
    return 0;
  }
  return 1;
}

/* An affine parameter (gamma, beta, weight) must be f32 [D] with D = x's last dim. */
static int norm_check_param(tg_graph *g, const char *op, const char *role, const tg_tensor *p,
                            const tg_tensor *x) {
  char sp[SHAPE_BUF], sx[SHAPE_BUF];
  int64_t D = x->shape[x->ndim - 1];
  if (p->dtype != TG_F32 || p->ndim != 1 || p->shape[0] != D) {
    tg_graph_fail(g, TG_ERR_SHAPE,
                  "%s: %s '%s' is %s %s but x '%s' is %s; %s must be f32 [%lld] (x's last dim)",
                  op, role, p->name, tg_dtype_name(p->dtype), tg_shape_str(p, sp, sizeof sp),
                  x->name, tg_shape_str(x, sx, sizeof sx), role, (long long)D);
    return 0;
  }
  return 1;
}

static int norm_check_eps(tg_graph *g, const char *op, float eps) {
  if (!(eps >= 0.0f) || isinf(eps)) {
    tg_graph_fail(g, TG_ERR_INVALID, "%s: eps %g must be finite and >= 0", op, (double)eps);
    return 0;
  }
  return 1;
}

static tg_tensor *softmax_like(tg_graph *g, tg_op op, const char *name, tg_tensor *x) {
  if (!tg_graph_check_inputs(g, name, 1, &x)) return NULL;
  if (!norm_check_x(g, name, x)) return NULL;
  tg_attr attr = {0};
  return tg_graph_add(g, op, 1, &x, TG_F32, x->ndim, x->shape, &attr);
}

tg_tensor *tg_softmax(tg_graph *g, tg_tensor *x) {
  return softmax_like(g, TG_OP_SOFTMAX, "softmax", x);
}

tg_tensor *tg_log_softmax(tg_graph *g, tg_tensor *x) {
  return softmax_like(g, TG_OP_LOG_SOFTMAX, "log_softmax", x);
}

tg_tensor *tg_layernorm(tg_graph *g, tg_tensor *x, tg_tensor *gamma, tg_tensor *beta, float eps) {
  tg_tensor *ins[3];
  int n = 0;
  ins[n++] = x;
  if (gamma) ins[n++] = gamma;
  if (beta) ins[n++] = beta;
  if (!tg_graph_check_inputs(g, "layernorm", n, ins)) return NULL;
  if (!norm_check_x(g, "layernorm", x)) return NULL;
  if (gamma && !norm_check_param(g, "layernorm", "gamma", gamma, x)) return NULL;
  if (beta && !norm_check_param(g, "layernorm", "beta", beta, x)) return NULL;
  if (!norm_check_eps(g, "layernorm", eps)) return NULL;
  tg_attr attr = {0};
  attr.i[0] = gamma != NULL;
  attr.i[1] = beta != NULL;
  attr.f[0] = eps;
  return tg_graph_add(g, TG_OP_LAYERNORM, n, ins, TG_F32, x->ndim, x->shape, &attr);
}

tg_tensor *tg_rmsnorm(tg_graph *g, tg_tensor *x, tg_tensor *weight, float eps) {
  tg_tensor *ins[2];
  int n = 0;
  ins[n++] = x;
  if (weight) ins[n++] = weight;
  if (!tg_graph_check_inputs(g, "rmsnorm", n, ins)) return NULL;
  if (!norm_check_x(g, "rmsnorm", x)) return NULL;
  if (weight && !norm_check_param(g, "rmsnorm", "weight", weight, x)) return NULL;
  if (!norm_check_eps(g, "rmsnorm", eps)) return NULL;
  tg_attr attr = {0};
  attr.i[0] = weight != NULL;
  attr.f[0] = eps;
  return tg_graph_add(g, TG_OP_RMSNORM, n, ins, TG_F32, x->ndim, x->shape, &attr);
}
