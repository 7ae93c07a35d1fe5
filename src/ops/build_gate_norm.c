/* Builder for gate_add_norm (GLU gate + residual add + layernorm, operand checks) and its workspace size. */
#include <math.h>
#include <string.h>
#include "graph/graph_internal.h"
#include "ops/gate_norm_args.h"

#define SHAPE_BUF 160

/* Fails with a message naming the operand unless t is f32. */
static int gan_check_f32(tg_graph *g, const char *role, const tg_tensor *t) {
  if (t->dtype == TG_F32) return 1;
  char s[SHAPE_BUF];
  tg_graph_fail(g, TG_ERR_SHAPE, "gate_add_norm: %s '%s' %s is %s; it must be f32", role, t->name,
                tg_shape_str(t, s, sizeof s), tg_dtype_name(t->dtype));
  return 0;
}

/* skip [..., D] and a [..., 2D] with the same leading dims. */
static int gan_check_a_skip(tg_graph *g, const tg_tensor *a, const tg_tensor *skip) {
  int ok = skip->ndim >= 1 && a->ndim == skip->ndim;
  for (int d = 0; ok && d < skip->ndim - 1; d++) ok = a->shape[d] == skip->shape[d];
  if (ok) ok = a->shape[a->ndim - 1] == 2 * skip->shape[skip->ndim - 1];
  if (ok) return 1;
  char sa[SHAPE_BUF], ss[SHAPE_BUF];
  tg_graph_fail(g, TG_ERR_SHAPE,
                "gate_add_norm: a '%s' %s must be [..., 2D] (value | gate) for skip '%s' %s [..., D], "
                "with the same leading dims",
                a->name, tg_shape_str(a, sa, sizeof sa), skip->name, tg_shape_str(skip, ss, sizeof ss));
  return 0;
}

/* gamma or beta: [S..., D] where [S..., D] is a suffix of skip's shape (at least [D]). */
static int gan_check_affine(tg_graph *g, const char *role, const tg_tensor *p, const tg_tensor *skip) {
  int ok = p->ndim >= 1 && p->ndim <= skip->ndim;
  for (int d = 1; ok && d <= p->ndim; d++) ok = p->shape[p->ndim - d] == skip->shape[skip->ndim - d];
  if (ok) return 1;
  char sp[SHAPE_BUF], ss[SHAPE_BUF];
  tg_graph_fail(g, TG_ERR_SHAPE,
                "gate_add_norm: %s '%s' %s must be a suffix of skip '%s' %s: [D] or [..., D] (one affine "
                "per slot of the trailing dims)",
                role, p->name, tg_shape_str(p, sp, sizeof sp), skip->name, tg_shape_str(skip, ss, sizeof ss));
  return 0;
}

tg_tensor *tg_gate_add_norm(tg_graph *g, tg_tensor *a, tg_tensor *skip, tg_tensor *gamma, tg_tensor *beta,
                            float eps) {
  tg_tensor *ins[4] = {a, skip, gamma, beta};
  int n = gamma || beta ? 4 : 2;
  if (!tg_graph_check_inputs(g, "gate_add_norm", n, ins)) return NULL;
  if (!gan_check_f32(g, "a", a) || !gan_check_f32(g, "skip", skip)) return NULL;
  if (n == 4 && (!gan_check_f32(g, "gamma", gamma) || !gan_check_f32(g, "beta", beta))) return NULL;
  if (!gan_check_a_skip(g, a, skip)) return NULL;
  if (n == 4) {
    if (!gan_check_affine(g, "gamma", gamma, skip) || !gan_check_affine(g, "beta", beta, skip)) return NULL;
    if (!tg_shape_eq(gamma, beta)) {
      char sg[SHAPE_BUF], sb[SHAPE_BUF];
      return tg_graph_fail(g, TG_ERR_SHAPE, "gate_add_norm: gamma '%s' %s and beta '%s' %s must have one shape",
                           gamma->name, tg_shape_str(gamma, sg, sizeof sg), beta->name,
                           tg_shape_str(beta, sb, sizeof sb));
    }
  }
  if (!(eps >= 0.0f) || isinf(eps))
    return tg_graph_fail(g, TG_ERR_INVALID, "gate_add_norm: eps %g must be finite and >= 0", (double)eps);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = n == 4;
  attr.f[0] = eps;
  return tg_graph_add(g, TG_OP_GATE_ADD_NORM, n, ins, TG_F32, skip->ndim, skip->shape, &attr);
}

size_t tg_gan_workspace(const tg_kernel_args *a) {
  if (!a->out_grad) return 0;
  tg_gan_args p = tg_gan_args_of(a);
  int64_t c = tg_gan_chunk_rows(p.rows, p.S);
  return (size_t)c * (2 * sizeof(float) * (size_t)p.D + 2 * sizeof(double));
}
