/* Host-side sizes and operands of the last-dim kernels (softmax family, layernorm, rmsnorm), shared by the CPU and CUDA kernels. */
#ifndef TG_NORM_ARGS_H
#define TG_NORM_ARGS_H

#include <stddef.h>
#include "ops/ops.h"

/* The last dim D of t and the number of rows before it. */
static inline void tg_norm_dims(const tg_tensor *t, int64_t *rows, int64_t *D) {
  *D = t->ndim > 0 ? t->shape[t->ndim - 1] : 1;
  *rows = *D > 0 ? tg_numel(t) / *D : 0;
}

/* A layernorm call: inputs x, then gamma if attr.i[0], then beta if attr.i[1]; f[0] = eps. */
typedef struct tg_ln_args {
  int64_t rows, D;            /* x as [rows, D] */
  const float *x;             /* [rows, D] */
  const float *gamma, *beta;  /* [D] each, or NULL */
  float *y;                   /* [rows, D]: the forward output */
  const float *dy;            /* [rows, D]: the backward's output gradient */
  float *dx, *dgamma, *dbeta; /* like x, gamma, beta; NULL where no gradient is wanted */
  int fresh_x;                /* dx is unzeroed (tg_kernel_args.grad_fresh; CPU only) */
  double eps;
} tg_ln_args;

static inline tg_ln_args tg_ln_args_of(const tg_kernel_args *a) {
  tg_ln_args l;
  tg_norm_dims(a->in[0], &l.rows, &l.D);
  int gi = a->attr->i[0] ? 1 : -1;
  int bi = a->attr->i[1] ? (a->attr->i[0] ? 2 : 1) : -1;
  l.x = (const float *)a->in[0]->data;
  l.gamma = gi >= 0 ? (const float *)a->in[gi]->data : NULL;
  l.beta = bi >= 0 ? (const float *)a->in[bi]->data : NULL;
  l.y = (float *)a->out->data;
  l.dy = a->out_grad;
  l.dx = a->in_grad[0];
  l.dgamma = gi >= 0 ? a->in_grad[gi] : NULL;
  l.dbeta = bi >= 0 ? a->in_grad[bi] : NULL;
  l.fresh_x = (a->grad_fresh & 1u) != 0;
  l.eps = a->attr->f[0];
  return l;
}

/* An rmsnorm call: inputs x, then the weight w if attr.i[0]; f[0] = eps. */
typedef struct tg_rms_args {
  int64_t rows, D;  /* x as [rows, D] */
  const float *x;   /* [rows, D] */
  const float *w;   /* [D] or NULL */
  float *y;         /* [rows, D]: the forward output */
  const float *dy;  /* [rows, D]: the backward's output gradient */
  float *dx, *dw;   /* like x, w; NULL where no gradient is wanted */
  double eps;
} tg_rms_args;

static inline tg_rms_args tg_rms_args_of(const tg_kernel_args *a) {
  tg_rms_args r;
  tg_norm_dims(a->in[0], &r.rows, &r.D);
  int has_w = a->attr->i[0] != 0;
  r.x = (const float *)a->in[0]->data;
  r.w = has_w ? (const float *)a->in[1]->data : NULL;
  r.y = (float *)a->out->data;
  r.dy = a->out_grad;
  r.dx = a->in_grad[0];
  r.dw = has_w ? a->in_grad[1] : NULL;
  r.eps = a->attr->f[0];
  return r;
}

#endif
