/* Host-side splits of a tensor's dims into outer/inner blocks for concat, slice and transpose, shared by the CPU and CUDA kernels. */
#ifndef TG_SHAPE_SPLIT_H
#define TG_SHAPE_SPLIT_H

#include "ops/ops.h"

/* Product of t's dims in [lo, hi). */
static inline int64_t tg_dims_prod(const tg_tensor *t, int lo, int hi) {
  int64_t p = 1;
  for (int i = lo; i < hi; i++) p *= t->shape[i];
  return p;
}

/* t as [A, S, C] around dim d: A the dims before d, S = shape[d], C the dims after. */
static inline void tg_split_at(const tg_tensor *t, int d, int64_t *A, int64_t *S, int64_t *C) {
  *A = tg_dims_prod(t, 0, d);
  *S = t->shape[d];
  *C = tg_dims_prod(t, d + 1, t->ndim);
}

/* ---- transpose: x [A, P, B, Q, C] -> out [A, Q, B, P, C] (P, Q the swapped dims) ---- */

typedef struct tg_tr_dims {
  int64_t A, P, B, Q, C;
} tg_tr_dims;

static inline tg_tr_dims tg_tr_split(const tg_tensor *x, int d0, int d1) {
  int p = d0 < d1 ? d0 : d1, q = d0 < d1 ? d1 : d0;
  tg_tr_dims t;
  t.A = tg_dims_prod(x, 0, p);
  t.P = x->shape[p];
  t.B = tg_dims_prod(x, p + 1, q);
  t.Q = x->shape[q];
  t.C = tg_dims_prod(x, q + 1, x->ndim);
  if (p == q) { /* no swap: one contiguous block */
    t.A = tg_numel(x);
    t.P = t.B = t.Q = t.C = 1;
  }
  return t;
}

#endif
