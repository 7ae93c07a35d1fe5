/* Host-side sizes of matmul and linear calls and their GEMM int-range check, shared by the CPU and CUDA kernels. */
#ifndef TG_MATMUL_DIMS_H
#define TG_MATMUL_DIMS_H

#include <limits.h>
#include "ops/ops.h"

/* Product of dims [0, upto). */
static inline int64_t tg_mm_prod(const tg_tensor *t, int upto) {
  int64_t p = 1;
  for (int d = 0; d < upto; d++) p *= t->shape[d];
  return p;
}

static inline tg_status tg_mm_check_int(const tg_kernel_args *a, int64_t rows, int64_t m, int64_t n,
                                        int64_t k) {
  if (rows > INT_MAX || m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return tg_error(TG_ERR_UNSUPPORTED, "%s: a GEMM dimension exceeds %d (rows %lld, %lld x %lld x %lld)",
                    a->node_name, INT_MAX, (long long)rows, (long long)m, (long long)n, (long long)k);
  return TG_OK;
}

/* Sizes of one matmul call: a [batch.., a0, a1], b [batch.. or none, b0, b1]. */
typedef struct tg_mm_dims {
  int ta, tb;
  int64_t batch, m, n, k;
  int64_t a1, b1;     /* stored row widths (lda, ldb) */
  int64_t sa, sb, sc; /* per-batch strides in floats; sb = 0 when b is shared */
} tg_mm_dims;

/* Fills *d from a matmul call; an error when a GEMM dimension does not fit an int. */
static inline tg_status tg_mm_dims_of(const tg_kernel_args *a, tg_mm_dims *d) {
  const tg_tensor *A = a->in[0], *B = a->in[1];
  d->ta = a->attr->i[0] != 0;
  d->tb = a->attr->i[1] != 0;
  int64_t a0 = A->shape[A->ndim - 2], b0 = B->shape[B->ndim - 2];
  d->a1 = A->shape[A->ndim - 1];
  d->b1 = B->shape[B->ndim - 1];
  d->m = d->ta ? d->a1 : a0;
  d->k = d->ta ? a0 : d->a1;
  d->n = d->tb ? b0 : d->b1;
  d->batch = tg_mm_prod(A, A->ndim - 2);
  d->sa = a0 * d->a1;
  d->sb = B->ndim == 2 ? 0 : b0 * d->b1;
  d->sc = d->m * d->n;
  return tg_mm_check_int(a, d->batch * d->m, d->m, d->n, d->k);
}

/* op(A) [m, k], op(B) [k, n] and C [m, n] as (batch, row, column) element strides of the stored A, B and C, for a
 * GEMM that reads transposed operands in place (the CPU's planned primitives, the Vulkan kernels). */
static inline void tg_mm_op_strides(const tg_mm_dims *d, int64_t opa[3], int64_t opb[3], int64_t c[3]) {
  opa[0] = d->sa, opa[1] = d->ta ? 1 : d->a1, opa[2] = d->ta ? d->a1 : 1;
  opb[0] = d->sb, opb[1] = d->tb ? 1 : d->b1, opb[2] = d->tb ? d->b1 : 1;
  c[0] = d->sc, c[1] = d->n, c[2] = 1;
}

/* Sizes of one linear call: x [rows.., nin], w [nout, nin]; an error when a GEMM dimension does
 * not fit an int. */
static inline tg_status tg_linear_dims(const tg_kernel_args *a, int64_t *rows, int64_t *nin,
                                       int64_t *nout) {
  const tg_tensor *X = a->in[0], *W = a->in[1];
  *nout = W->shape[0];
  *nin = W->shape[1];
  *rows = tg_mm_prod(X, X->ndim - 1);
  return tg_mm_check_int(a, *rows, *rows, *nout, *nin);
}

/* Sizes of one stacked_linear call: x [rows.., G, nin], w [G, nout, nin]; an error when a GEMM
 * size or leading dimension (G nin, G nout) does not fit an int. */
static inline tg_status tg_stacked_dims(const tg_kernel_args *a, int64_t *rows, int64_t *groups,
                                        int64_t *nin, int64_t *nout) {
  const tg_tensor *X = a->in[0], *W = a->in[1];
  *groups = W->shape[0];
  *nout = W->shape[1];
  *nin = W->shape[2];
  *rows = tg_mm_prod(X, X->ndim - 2);
  return tg_mm_check_int(a, *rows, *groups * *nin, *groups * *nout, *nout * *nin);
}

#endif
