/* CPU kernels for the reductions (sum, mean, sum/mean/max/argmax over the last dim) and dropout. */
#include <math.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_philox.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"

#define PAR_MIN 32768 /* elements below which a loop stays serial */

/* ---- sum, mean: x [n] -> out [] ---- */

static double sum_all(const tg_tensor *x) {
  const float *v = x->data; /* [n] */
  int64_t n = tg_numel(x);
  double acc = 0.0;
  TG_PAR_FOR(n > PAR_MIN, reduction(+ : acc) schedule(static),
  for (int64_t i = 0; i < n; i++) acc += v[i];);
  return acc;
}

/* gx [n] += g */
static void add_const(float *gx, int64_t n, float g) {
  TG_PAR_FOR(n > PAR_MIN, schedule(static),
  for (int64_t i = 0; i < n; i++) gx[i] += g;);
}

tg_status tg_cpu_sum_fwd(const tg_kernel_args *a) {
  *(float *)a->out->data = (float)sum_all(a->in[0]);
  return TG_OK;
}

tg_status tg_cpu_sum_bwd(const tg_kernel_args *a) {
  if (a->in_grad[0]) add_const(a->in_grad[0], tg_numel(a->in[0]), a->out_grad[0]);
  return TG_OK;
}

tg_status tg_cpu_mean_fwd(const tg_kernel_args *a) {
  *(float *)a->out->data = (float)(sum_all(a->in[0]) / (double)tg_numel(a->in[0]));
  return TG_OK;
}

tg_status tg_cpu_mean_bwd(const tg_kernel_args *a) {
  int64_t n = tg_numel(a->in[0]);
  if (a->in_grad[0]) add_const(a->in_grad[0], n, (float)((double)a->out_grad[0] / (double)n));
  return TG_OK;
}

/* ---- over the last dim: x [R, D] -> out [R] ---- */

static int64_t last_dim(const tg_tensor *x) { return x->shape[x->ndim - 1]; }

/* out[r] = scale * sum_j x[r, j] */
static void sum_rows(const tg_kernel_args *a, int mean) {
  const tg_tensor *x = a->in[0];
  int64_t D = last_dim(x), R = tg_numel(x) / D;
  const float *v = x->data;  /* [R, D] */
  float *out = a->out->data; /* [R] */
  double scale = mean ? 1.0 / (double)D : 1.0;
  TG_PAR_FOR(R * D > PAR_MIN, schedule(static),
  for (int64_t r = 0; r < R; r++) {
    double acc = 0.0;
    for (int64_t j = 0; j < D; j++) acc += v[r * D + j];
    out[r] = (float)(acc * scale);
  });
}

/* gx[r, j] += scale * gy[r] */
static void sum_rows_bwd(const tg_kernel_args *a, int mean) {
  float *gx = a->in_grad[0]; /* [R, D] */
  if (!gx) return;
  const tg_tensor *x = a->in[0];
  int64_t D = last_dim(x), R = tg_numel(x) / D;
  const float *gy = a->out_grad; /* [R] */
  double scale = mean ? 1.0 / (double)D : 1.0;
  TG_PAR_FOR(R * D > PAR_MIN, schedule(static),
  for (int64_t r = 0; r < R; r++) {
    float g = (float)((double)gy[r] * scale);
    for (int64_t j = 0; j < D; j++) gx[r * D + j] += g;
  });
}

tg_status tg_cpu_sum_last_fwd(const tg_kernel_args *a) {
  sum_rows(a, 0);
  return TG_OK;
}
tg_status tg_cpu_sum_last_bwd(const tg_kernel_args *a) {
  sum_rows_bwd(a, 0);
  return TG_OK;
}
tg_status tg_cpu_mean_last_fwd(const tg_kernel_args *a) {
  sum_rows(a, 1);
  return TG_OK;
}
tg_status tg_cpu_mean_last_bwd(const tg_kernel_args *a) {
  sum_rows_bwd(a, 1);
  return TG_OK;
}

/* Index of the first maximum of v[0..D); a NaN counts as the maximum (the first NaN wins), so a
 * NaN input propagates to max_last's output. */
static int64_t row_argmax(const float *v, int64_t D) {
  int64_t best = 0;
  if (isnan(v[0])) return 0;
  for (int64_t j = 1; j < D; j++) {
    if (isnan(v[j])) return j;
    if (v[j] > v[best]) best = j;
  }
  return best;
}

tg_status tg_cpu_max_last_fwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  int64_t D = last_dim(x), R = tg_numel(x) / D;
  const float *v = x->data;  /* [R, D] */
  float *out = a->out->data; /* [R] */
  TG_PAR_FOR(R * D > PAR_MIN, schedule(static),
  for (int64_t r = 0; r < R; r++) out[r] = v[r * D + row_argmax(v + r * D, D)];);
  return TG_OK;
}

tg_status tg_cpu_max_last_bwd(const tg_kernel_args *a) {
  float *gx = a->in_grad[0]; /* [R, D] */
  if (!gx) return TG_OK;
  const tg_tensor *x = a->in[0];
  int64_t D = last_dim(x), R = tg_numel(x) / D;
  const float *v = x->data;      /* [R, D] */
  const float *gy = a->out_grad; /* [R] */
  TG_PAR_FOR(R * D > PAR_MIN, schedule(static),
  for (int64_t r = 0; r < R; r++) gx[r * D + row_argmax(v + r * D, D)] += gy[r];);
  return TG_OK;
}

tg_status tg_cpu_argmax_last_fwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  int64_t D = last_dim(x), R = tg_numel(x) / D;
  const float *v = x->data;    /* [R, D] */
  int64_t *out = a->out->data; /* [R] i64 */
  TG_PAR_FOR(R * D > PAR_MIN, schedule(static),
  for (int64_t r = 0; r < R; r++) out[r] = row_argmax(v + r * D, D););
  return TG_OK;
}

/* ---- dropout: x [n] -> out [n]; element e kept when uniform(seed, stream key, e) >= p ---- */

/* src * scale where keep has all bits set, +0 where it is 0: a bit mask, so the loops that use it
 * stay branch-free and vectorise. */
static inline float drop_keep(float v, uint32_t keep) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  u &= keep;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* How dropout_apply writes dst: overwrite (the forward), add (the backward), or add into +0 in place of an unzeroed
 * gradient (the backward told grad_fresh). */
enum { DROP_SET, DROP_ADD, DROP_ADD_FRESH };

/* One block of dropout: elements [0, len) of src/dst with their Philox words w [len].
 * Element e is kept when tg_u32_to_unit(w[e]) >= p, i.e. when its top 24 bits >= thr. */
TG_CPU_CLONES static void drop_block(const float *restrict src, float *restrict dst, const uint32_t *restrict w,
                                     int64_t len, uint32_t thr, float scale, int mode) {
  if (mode == DROP_ADD)
    for (int64_t j = 0; j < len; j++) dst[j] += drop_keep(src[j] * scale, 0u - (uint32_t)((w[j] >> 8) >= thr));
  else if (mode == DROP_ADD_FRESH)
    for (int64_t j = 0; j < len; j++)
      dst[j] = 0.0f + drop_keep(src[j] * scale, 0u - (uint32_t)((w[j] >> 8) >= thr));
  else
    for (int64_t j = 0; j < len; j++) dst[j] = drop_keep(src[j] * scale, 0u - (uint32_t)((w[j] >> 8) >= thr));
}

/* mask-and-scale: dst[e] (+)= keep(e) ? src[e] * scale : 0. The uniforms are exactly
 * tg_rng_uniform(seed, key, e): word e % 4 of Philox counter e / 4, one counter per 4 elements.
 * u = (w >> 8) / 2^24 >= p exactly when w >> 8 >= ceil(p 2^24) (both sides exact in double). */
static void dropout_apply(const tg_kernel_args *a, const float *src, float *dst, int64_t n, int mode) {
  float p = a->attr->f[0], scale = 1.0f / (1.0f - p);
  uint64_t key = (a->rng_offset << 20) | a->rng_stream, seed = a->seed;
  uint32_t thr = (uint32_t)ceil((double)p * 16777216.0);
  tg_philox16_fn philox16 = tg_cpu_philox16();
  const int64_t per = 4 * TG_PHILOX_BLOCK; /* elements per block */
  int64_t nb = (n + per - 1) / per;
  TG_PAR_FOR(n > PAR_MIN, schedule(static),
  for (int64_t bi = 0; bi < nb; bi++) {
    uint32_t w[4 * TG_PHILOX_BLOCK]; /* [per] */
    philox16(seed, key, (uint64_t)(bi * TG_PHILOX_BLOCK), w);
    int64_t e0 = bi * per, len = n - e0 < per ? n - e0 : per;
    drop_block(src + e0, dst + e0, w, len, thr, scale, mode);
  });
}

tg_status tg_cpu_dropout_fwd(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0];
  int64_t n = tg_numel(x);
  if (!a->attr->i[0]) { /* inference plan: identity */
    memcpy(a->out->data, x->data, (size_t)n * sizeof(float));
    return TG_OK;
  }
  dropout_apply(a, x->data, a->out->data, n, DROP_SET);
  return TG_OK;
}

tg_status tg_cpu_dropout_bwd(const tg_kernel_args *a) {
  float *gx = a->in_grad[0]; /* [n] */
  if (!gx) return TG_OK;
  int64_t n = tg_numel(a->in[0]);
  int fresh = (a->grad_fresh & 1u) != 0;
  if (!a->attr->i[0]) {
    for (int64_t i = 0; i < n; i++) gx[i] = tg_grad_base(fresh, gx[i]) + a->out_grad[i];
    return TG_OK;
  }
  dropout_apply(a, a->out_grad, gx, n, fresh ? DROP_ADD_FRESH : DROP_ADD);
  return TG_OK;
}
