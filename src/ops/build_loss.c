/* Builders for the scalar-mean losses: mse, huber, pinball, softmax cross-entropy. */
#include <math.h>
#include "graph/graph_internal.h"

#define SHAPE_BUF 96

static tg_tensor *loss_add(tg_graph *g, tg_op op, tg_tensor *a, tg_tensor *b, const tg_attr *attr) {
  tg_tensor *ins[2] = {a, b};
  int64_t scalar_shape[1] = {1}; /* unused for ndim 0 */
  return tg_graph_add(g, op, 2, ins, TG_F32, 0, scalar_shape, attr);
}

/* pred and target: both f32, same shape. */
static int loss_check_same(tg_graph *g, const char *op, const tg_tensor *pred,
                           const tg_tensor *target) {
  char sp[SHAPE_BUF], st[SHAPE_BUF];
  if (pred->dtype != TG_F32 || target->dtype != TG_F32) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: pred '%s' is %s and target '%s' is %s; both must be f32", op,
                  pred->name, tg_dtype_name(pred->dtype), target->name,
                  tg_dtype_name(target->dtype));
    return 0;
  }
  if (!tg_shape_eq(pred, target)) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: pred '%s' %s and target '%s' %s must have the same shape",
                  op, pred->name, tg_shape_str(pred, sp, sizeof sp), target->name,
                  tg_shape_str(target, st, sizeof st));
    return 0;
  }
  return 1;
}

tg_tensor *tg_mse_loss(tg_graph *g, tg_tensor *pred, tg_tensor *target) {
  tg_tensor *ins[2] = {pred, target};
  if (!tg_graph_check_inputs(g, "mse_loss", 2, ins)) return NULL;
  if (!loss_check_same(g, "mse_loss", pred, target)) return NULL;
  tg_attr attr = {0};
  return loss_add(g, TG_OP_MSE_LOSS, pred, target, &attr);
}

tg_tensor *tg_huber_loss(tg_graph *g, tg_tensor *pred, tg_tensor *target, float delta) {
  tg_tensor *ins[2] = {pred, target};
  if (!tg_graph_check_inputs(g, "huber_loss", 2, ins)) return NULL;
  if (!loss_check_same(g, "huber_loss", pred, target)) return NULL;
  if (!(delta > 0.0f) || isinf(delta))
    return tg_graph_fail(g, TG_ERR_INVALID, "huber_loss: delta %g must be finite and > 0",
                         (double)delta);
  tg_attr attr = {0};
  attr.f[0] = delta;
  return loss_add(g, TG_OP_HUBER_LOSS, pred, target, &attr);
}

tg_tensor *tg_pinball_loss(tg_graph *g, tg_tensor *pred, tg_tensor *target, int nq, const float *q) {
  tg_tensor *ins[2] = {pred, target};
  char sp[SHAPE_BUF], st[SHAPE_BUF];
  if (!tg_graph_check_inputs(g, "pinball_loss", 2, ins)) return NULL;
  if (pred->dtype != TG_F32 || target->dtype != TG_F32)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "pinball_loss: pred '%s' is %s and target '%s' is %s; both must be f32",
                         pred->name, tg_dtype_name(pred->dtype), target->name,
                         tg_dtype_name(target->dtype));
  if (nq < 1 || nq > TG_MAX_QUANTILES || !q)
    return tg_graph_fail(g, TG_ERR_INVALID,
                         "pinball_loss: %d quantiles%s; need 1 to %d (TG_MAX_QUANTILES)", nq,
                         q ? "" : " with a NULL quantile array", TG_MAX_QUANTILES);
  int shapes_ok = pred->ndim >= 1 && pred->shape[pred->ndim - 1] == nq &&
                  target->ndim == pred->ndim - 1;
  for (int d = 0; shapes_ok && d < target->ndim; d++) shapes_ok = target->shape[d] == pred->shape[d];
  if (!shapes_ok)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "pinball_loss: pred '%s' %s and target '%s' %s do not fit %d quantiles; "
                         "need pred [..., %d] and target [...] (pred's shape without its last dim)",
                         pred->name, tg_shape_str(pred, sp, sizeof sp), target->name,
                         tg_shape_str(target, st, sizeof st), nq, nq);
  tg_attr attr = {0};
  attr.i[0] = nq;
  for (int k = 0; k < nq; k++) {
    if (!(q[k] > 0.0f && q[k] < 1.0f))
      return tg_graph_fail(g, TG_ERR_INVALID, "pinball_loss: quantile %d is %g; each must be in (0, 1)",
                           k, (double)q[k]);
    attr.f[k] = q[k];
  }
  return loss_add(g, TG_OP_PINBALL_LOSS, pred, target, &attr);
}

tg_tensor *tg_softmax_cross_entropy(tg_graph *g, tg_tensor *logits, tg_tensor *labels) {
  tg_tensor *ins[2] = {logits, labels};
  char sl[SHAPE_BUF], sy[SHAPE_BUF];
  if (!tg_graph_check_inputs(g, "softmax_cross_entropy", 2, ins)) return NULL;
  if (logits->dtype != TG_F32 || (labels->dtype != TG_I32 && labels->dtype != TG_I64))
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "softmax_cross_entropy: logits '%s' is %s and labels '%s' is %s; need f32 "
                         "logits and i32 or i64 labels",
                         logits->name, tg_dtype_name(logits->dtype), labels->name,
                         tg_dtype_name(labels->dtype));
  if (logits->ndim != 2 || labels->ndim != 1 || labels->shape[0] != logits->shape[0] ||
      logits->shape[1] < 1)
    return tg_graph_fail(g, TG_ERR_SHAPE,
                         "softmax_cross_entropy: logits '%s' %s and labels '%s' %s do not fit; need "
                         "logits [N, C] with C >= 1 and labels [N]",
                         logits->name, tg_shape_str(logits, sl, sizeof sl), labels->name,
                         tg_shape_str(labels, sy, sizeof sy));
  tg_attr attr = {0};
  return loss_add(g, TG_OP_SOFTMAX_XENT, logits, labels, &attr);
}
