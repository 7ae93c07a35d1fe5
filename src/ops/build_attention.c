/* Builder for attention (operand checks, output shape, attributes) and the size of its kernel workspace. */
#include <limits.h>
#include <math.h>
#include "graph/graph_internal.h"
#include "ops/attention_args.h"

#define SHAPE_BUF 160

/* t must be f32 [B, T, d] with every dim >= 1. */
static int attn_check_rows(tg_graph *g, const char *role, const tg_tensor *t) {
  char s[SHAPE_BUF];
  if (t->dtype == TG_F32 && t->ndim == 3 && t->shape[0] >= 1 && t->shape[1] >= 1 && t->shape[2] >= 1) return 1;
  tg_graph_fail(g, TG_ERR_SHAPE, "attention: %s '%s' is %s %s; it must be f32 [B, T, heads*dh] with every dim >= 1",
                role, t->name, tg_dtype_name(t->dtype), tg_shape_str(t, s, sizeof s));
  return 0;
}

/* k and v [B, Tk, d] against q [B, Tq, d]: the same B and d, and the same Tk for both. */
static int attn_check_match(tg_graph *g, const tg_tensor *q, const tg_tensor *k, const tg_tensor *v) {
  char sq[SHAPE_BUF], sk[SHAPE_BUF], sv[SHAPE_BUF];
  if (k->shape[0] == q->shape[0] && v->shape[0] == q->shape[0] && k->shape[2] == q->shape[2] &&
      v->shape[2] == q->shape[2] && v->shape[1] == k->shape[1])
    return 1;
  tg_graph_fail(g, TG_ERR_SHAPE,
                "attention: q '%s' %s, k '%s' %s and v '%s' %s do not match; they must be [B, Tq, d], [B, Tk, d] "
                "and [B, Tk, d]",
                q->name, tg_shape_str(q, sq, sizeof sq), k->name, tg_shape_str(k, sk, sizeof sk), v->name,
                tg_shape_str(v, sv, sizeof sv));
  return 0;
}

tg_tensor *tg_attention(tg_graph *g, tg_tensor *q, tg_tensor *k, tg_tensor *v, int64_t heads, int causal,
                        int64_t offset, float scale) {
  tg_tensor *in[3] = {q, k, v};
  if (!tg_graph_check_inputs(g, "attention", 3, in)) return NULL;
  if (!attn_check_rows(g, "q", q) || !attn_check_rows(g, "k", k) || !attn_check_rows(g, "v", v)) return NULL;
  if (!attn_check_match(g, q, k, v)) return NULL;
  int64_t d = q->shape[2];
  if (heads < 1 || d % heads != 0)
    return tg_graph_fail(g, TG_ERR_SHAPE, "attention: %lld heads do not divide the rows of q '%s' (%lld wide)",
                         (long long)heads, q->name, (long long)d);
  if (!isfinite(scale))
    return tg_graph_fail(g, TG_ERR_INVALID, "attention: scale %g is not finite", (double)scale);
  if (k->shape[1] > INT32_MAX)
    return tg_graph_fail(g, TG_ERR_UNSUPPORTED, "attention: k '%s' has %lld keys; at most %d are supported", k->name,
                         (long long)k->shape[1], INT32_MAX);
  tg_attr attr = {0};
  attr.i[0] = heads;
  attr.i[1] = causal != 0;
  attr.i[2] = causal ? offset : 0;
  attr.f[0] = scale;
  return tg_graph_add(g, TG_OP_ATTENTION, 3, in, TG_F32, 3, q->shape, &attr);
}

size_t tg_attention_workspace(const tg_kernel_args *a) {
  const tg_attn_dims d = tg_attn_dims_of(a);
  if (a->out->device.kind == TG_CPU)
    return sizeof(float) * (size_t)(tg_attn_cpu_slots(&d) * tg_attn_cpu_slot_floats(&d));
  return sizeof(float) * (size_t)tg_attn_dev_ws_floats(&d);
}
