/* The gate_add_norm op's operands and workspace, shared by its builder and the CPU and CUDA kernels. */
#ifndef TG_GATE_NORM_ARGS_H
#define TG_GATE_NORM_ARGS_H

#include <stddef.h>
#include "ops/ops.h"

/* Rows per chunk of the CPU backward: the chunk's z and sigmoid rows live in the workspace, and its
 * gamma/beta sums are added to the float gradients chunk by chunk (as layernorm's). */
#define TG_GAN_CHUNK_ROWS 2048

/* One gate_add_norm call: inputs a, skip, then gamma and beta when attr.i[0]; f[0] = eps.
 * z = skip + a[:, :D] * sigmoid(a[:, D:]), y = layernorm(z) * gamma[r % S] + beta[r % S]. */
typedef struct tg_gan_args {
  int64_t rows, D;               /* skip and y as [rows, D], a as [rows, 2D] */
  int64_t S;                     /* affine slots: gamma, beta [S, D]; row r uses slot r % S */
  const float *a;                /* [rows, 2D]: value | gate */
  const float *skip;             /* [rows, D] */
  const float *gamma, *beta;     /* [S, D] each, or both NULL */
  float *y;                      /* [rows, D]: the forward output */
  const float *dy;               /* [rows, D]: the backward's output gradient */
  float *da, *dskip;             /* like a, skip; NULL where no gradient is wanted */
  float *dgamma, *dbeta;         /* like gamma, beta, or NULL */
  int fresh_a, fresh_skip;       /* da, dskip are unzeroed (tg_kernel_args.grad_fresh; CPU only) */
  double eps;
} tg_gan_args;

static inline tg_gan_args tg_gan_args_of(const tg_kernel_args *a) {
  tg_gan_args g;
  const tg_tensor *sk = a->in[1];
  int affine = a->attr->i[0] != 0;
  g.D = sk->ndim > 0 ? sk->shape[sk->ndim - 1] : 1;
  g.rows = g.D > 0 ? tg_numel(sk) / g.D : 0;
  g.S = affine && g.D > 0 ? tg_numel(a->in[2]) / g.D : 1;
  g.a = (const float *)a->in[0]->data;
  g.skip = (const float *)sk->data;
  g.gamma = affine ? (const float *)a->in[2]->data : NULL;
  g.beta = affine ? (const float *)a->in[3]->data : NULL;
  g.y = (float *)a->out->data;
  g.dy = a->out_grad;
  g.da = a->in_grad[0];
  g.dskip = a->in_grad[1];
  g.dgamma = affine ? a->in_grad[2] : NULL;
  g.dbeta = affine ? a->in_grad[3] : NULL;
  g.fresh_a = (a->grad_fresh & 1u) != 0;
  g.fresh_skip = (a->grad_fresh & 2u) != 0;
  g.eps = a->attr->f[0];
  return g;
}

/* Rows of one CPU backward chunk: a whole number of affine periods S (at least one), at most
 * the rows there are. */
static inline int64_t tg_gan_chunk_rows(int64_t rows, int64_t S) {
  int64_t c = S >= TG_GAN_CHUNK_ROWS ? S : TG_GAN_CHUNK_ROWS / S * S;
  return c < rows ? c : rows;
}

/* Workspace bytes (any backend): the CPU backward's z and sigmoid(gate) of one chunk, [chunk, D]
 * floats each, and its mean and rstd [chunk] doubles each. */
size_t tg_gan_workspace(const tg_kernel_args *a);

#endif
