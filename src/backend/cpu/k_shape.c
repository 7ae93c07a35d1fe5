/* CPU kernels for the shape ops: concat, slice, reshape (a view: no-op), transpose, gather_rows. */
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "ops/index_errors.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"
#include "ops/shape_split.h"

#define PAR_MIN 32768 /* elements below which a loop stays serial */

/* ---- concat: in[k] [A, S_k, C] -> out [A, S, C], S = sum S_k, along dim d ---- */

tg_status tg_cpu_concat_fwd(const tg_kernel_args *a) {
  int d = (int)a->attr->i[0];
  const tg_tensor *o = a->out;
  size_t es = tg_dtype_size(o->dtype);
  int64_t A, S, C;
  tg_split_at(o, d, &A, &S, &C);
  char *out = o->data; /* [A, S, C] */
  int64_t off = 0;     /* start of input k along d */
  for (int k = 0; k < a->n_in; k++) {
    int64_t Sk = a->in[k]->shape[d];
    const char *x = a->in[k]->data; /* [A, Sk, C] */
    size_t row = (size_t)(Sk * C) * es;
    TG_PAR_FOR(A * Sk * C > PAR_MIN, schedule(static),
    for (int64_t i = 0; i < A; i++) memcpy(out + (size_t)((i * S + off) * C) * es, x + (size_t)i * row, row););
    off += Sk;
  }
  return TG_OK;
}

tg_status tg_cpu_concat_bwd(const tg_kernel_args *a) {
  int d = (int)a->attr->i[0];
  const tg_tensor *o = a->out;
  int64_t A, S, C;
  tg_split_at(o, d, &A, &S, &C);
  const float *gy = a->out_grad; /* [A, S, C] */
  int64_t off = 0;
  for (int k = 0; k < a->n_in; k++) {
    int64_t Sk = a->in[k]->shape[d];
    float *gx = a->in_grad[k]; /* [A, Sk, C] */
    int fresh = (a->grad_fresh >> k & 1u) != 0;
    if (gx) {
      int64_t row = Sk * C;
      TG_PAR_FOR(A * row > PAR_MIN, schedule(static),
      for (int64_t i = 0; i < A; i++) {
        const float *src = gy + (i * S + off) * C;
        float *dst = gx + i * row;
        for (int64_t j = 0; j < row; j++) dst[j] = tg_grad_base(fresh, dst[j]) + src[j];
      });
    }
    off += Sk;
  }
  return TG_OK;
}

/* ---- slice: x [A, S, C] -> out [A, len, C] = x[:, start:start+len, :] ---- */

tg_status tg_cpu_slice_fwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  int d = (int)a->attr->i[0];
  int64_t start = a->attr->i[1], len = a->attr->i[2];
  size_t es = tg_dtype_size(x->dtype);
  int64_t A, S, C;
  tg_split_at(x, d, &A, &S, &C);
  const char *src = x->data; /* [A, S, C] */
  char *dst = a->out->data;  /* [A, len, C] */
  size_t row = (size_t)(len * C) * es;
  TG_PAR_FOR(A * len * C > PAR_MIN, schedule(static),
  for (int64_t i = 0; i < A; i++) memcpy(dst + (size_t)i * row, src + (size_t)((i * S + start) * C) * es, row););
  return TG_OK;
}

tg_status tg_cpu_slice_bwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  float *gx = a->in_grad[0]; /* [A, S, C] */
  if (!gx) return TG_OK;
  int d = (int)a->attr->i[0];
  int64_t start = a->attr->i[1], len = a->attr->i[2];
  int64_t A, S, C;
  tg_split_at(x, d, &A, &S, &C);
  const float *gy = a->out_grad; /* [A, len, C] */
  int64_t row = len * C;
  int fresh = (a->grad_fresh & 1u) != 0;
  TG_PAR_FOR((fresh ? A * S * C : A * row) > PAR_MIN, schedule(static),
  for (int64_t i = 0; i < A; i++) {
    float *dst = gx + (i * S + start) * C;
    const float *src = gy + i * row;
    if (fresh) { /* what zeroing would have left outside the slice */
      memset(gx + i * S * C, 0, sizeof(float) * (size_t)(start * C));
      memset(dst + row, 0, sizeof(float) * (size_t)((S - start - len) * C));
    }
    for (int64_t j = 0; j < row; j++) dst[j] = tg_grad_base(fresh, dst[j]) + src[j];
  });
  return TG_OK;
}

/* ---- reshape: the planner aliases the output (and its gradient) to input 0's ---- */

tg_status tg_cpu_reshape_fwd(const tg_kernel_args *a) {
  (void)a;
  return TG_OK;
}

tg_status tg_cpu_reshape_bwd(const tg_kernel_args *a) {
  (void)a;
  return TG_OK;
}

/* ---- transpose: x [A, P, B, Q, C] -> out [A, Q, B, P, C] (P, Q the swapped dims) ---- */

/* Output line (i, q) of a float transpose: its B * P chunks of C floats, each copied by a loop (a short chunk, such as
 * an attention head's 16 floats, costs less copied in place than through a memcpy call). */
TG_CPU_CLONES static void tr_fwd_line(const tg_tr_dims *t, const float *x, float *y, int64_t i, int64_t q) {
  for (int64_t b = 0; b < t->B; b++)
    for (int64_t p = 0; p < t->P; p++) {
      const float *restrict src = x + (((i * t->P + p) * t->B + b) * t->Q + q) * t->C; /* [C] */
      float *restrict dst = y + (((i * t->Q + q) * t->B + b) * t->P + p) * t->C;       /* [C] */
      for (int64_t c = 0; c < t->C; c++) dst[c] = src[c];
    }
}

tg_status tg_cpu_transpose_fwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  tg_tr_dims t = tg_tr_split(x, (int)a->attr->i[0], (int)a->attr->i[1]);
  size_t es = tg_dtype_size(x->dtype), chunk = (size_t)t.C * es;
  const char *src = x->data; /* [A, P, B, Q, C] */
  char *dst = a->out->data;  /* [A, Q, B, P, C] */
  if (es == sizeof(float)) {
    TG_PAR_FOR(tg_numel(x) > PAR_MIN, collapse(2) schedule(static),
    for (int64_t i = 0; i < t.A; i++)
      for (int64_t q = 0; q < t.Q; q++) tr_fwd_line(&t, (const float *)src, (float *)dst, i, q););
    return TG_OK;
  }
  TG_PAR_FOR(tg_numel(x) > PAR_MIN, collapse(2) schedule(static),
  for (int64_t i = 0; i < t.A; i++)
    for (int64_t q = 0; q < t.Q; q++)
      for (int64_t b = 0; b < t.B; b++)
        for (int64_t p = 0; p < t.P; p++) {
          int64_t so = (((i * t.P + p) * t.B + b) * t.Q + q) * t.C;
          int64_t doff = (((i * t.Q + q) * t.B + b) * t.P + p) * t.C;
          memcpy(dst + (size_t)doff * es, src + (size_t)so * es, chunk);
        });
  return TG_OK;
}

/* Input-gradient line (i, p): gx[i, p, b, q, :] (+)= gy[i, q, b, p, :]; a fresh gx is written without being read (+0 + v,
 * the bits of a zeroed buffer). */
TG_CPU_CLONES static void tr_bwd_line(const tg_tr_dims *t, const float *gy, float *gx, int fresh, int64_t i, int64_t p) {
  for (int64_t b = 0; b < t->B; b++)
    for (int64_t q = 0; q < t->Q; q++) {
      float *restrict dst = gx + (((i * t->P + p) * t->B + b) * t->Q + q) * t->C;       /* [C] */
      const float *restrict src = gy + (((i * t->Q + q) * t->B + b) * t->P + p) * t->C; /* [C] */
      if (fresh)
        for (int64_t c = 0; c < t->C; c++) dst[c] = 0.0f + src[c];
      else
        for (int64_t c = 0; c < t->C; c++) dst[c] += src[c];
    }
}

tg_status tg_cpu_transpose_bwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  float *gx = a->in_grad[0]; /* [A, P, B, Q, C] */
  if (!gx) return TG_OK;
  tg_tr_dims t = tg_tr_split(x, (int)a->attr->i[0], (int)a->attr->i[1]);
  const float *gy = a->out_grad; /* [A, Q, B, P, C] */
  int fresh = (a->grad_fresh & 1u) != 0;
  TG_PAR_FOR(tg_numel(x) > PAR_MIN, collapse(2) schedule(static),
  for (int64_t i = 0; i < t.A; i++)
    for (int64_t p = 0; p < t.P; p++) tr_bwd_line(&t, gy, gx, fresh, i, p););
  return TG_OK;
}

/* ---- gather_rows: table [V, D], idx [N] (any shape, flattened) -> out [N, D] ---- */

static int64_t idx_at(const tg_tensor *idx, int64_t i) {
  return idx->dtype == TG_I32 ? (int64_t)((const int32_t *)idx->data)[i] : ((const int64_t *)idx->data)[i];
}

/* TG_OK if every index is in [0, V); otherwise an error naming the node, position and value. */
static tg_status check_indices(const tg_kernel_args *a, const tg_tensor *idx, int64_t V) {
  int64_t n = tg_numel(idx);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = idx_at(idx, i);
    if (v < 0 || v >= V) return tg_gather_bad_index(a, i, v);
  }
  return TG_OK;
}

tg_status tg_cpu_gather_rows_fwd(const tg_kernel_args *a) {
  const tg_tensor *table = a->in[0], *idx = a->in[1];
  int64_t V = table->shape[0], D = table->shape[1], N = tg_numel(idx);
  tg_status st = check_indices(a, idx, V);
  if (st != TG_OK) return st;
  const float *w = table->data; /* [V, D] */
  float *out = a->out->data;    /* [N, D] */
  TG_PAR_FOR(N * D > PAR_MIN, schedule(static),
  for (int64_t i = 0; i < N; i++) memcpy(out + i * D, w + idx_at(idx, i) * D, (size_t)D * sizeof(float)););
  return TG_OK;
}

#define GATHER_COLS 16 /* columns per parallel block: 64 bytes, so threads never share a cache line */

tg_status tg_cpu_gather_rows_bwd(const tg_kernel_args *a) {
  const tg_tensor *table = a->in[0], *idx = a->in[1];
  float *gw = a->in_grad[0]; /* [V, D] */
  if (!gw) return TG_OK;
  int64_t V = table->shape[0], D = table->shape[1], N = tg_numel(idx);
  tg_status st = check_indices(a, idx, V);
  if (st != TG_OK) return st;
  const float *gy = a->out_grad; /* [N, D] */
  /* Rows may repeat, so threads split the columns, never the rows: each block of columns is
   * accumulated by one thread in index order (deterministic). */
  int64_t nblk = (D + GATHER_COLS - 1) / GATHER_COLS;
  TG_PAR_FOR(N * D > PAR_MIN && nblk > 1, schedule(static),
  for (int64_t blk = 0; blk < nblk; blk++) {
    int64_t c0 = blk * GATHER_COLS, c1 = c0 + GATHER_COLS < D ? c0 + GATHER_COLS : D;
    for (int64_t i = 0; i < N; i++) {
      float *dst = gw + idx_at(idx, i) * D;
      const float *src = gy + i * D;
      for (int64_t c = c0; c < c1; c++) dst[c] += src[c];
    }
  });
  return TG_OK;
}
