/* CPU optimizer kernels: sum of squares, SGD (momentum) and Adam/AdamW steps (contracts in backend.h). */
#include <math.h>
#include "backend/cpu/cpu_bf16_pack.h"
#include "backend/cpu/cpu_optim.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_simd.h"
#include "ops/lr_schedule.h"

/* Below this many elements a kernel runs on one thread. */
#define TG_OPTIM_PAR_MIN 32768
/* sum_squares splits its input into at most this many chunks whose partial sums are added in
 * order, so the result depends only on n, never on the thread count. */
#define TG_SSQ_CHUNKS 256
/* Elements per OpenMP work item in the update kernels. */
#define TG_OPTIM_BLOCK 16384
#define TG_SSQ_MIN_CHUNK 4096

/* Sum of squares of x[0..n) in 8 double lanes added in a fixed order (vectorises without
 * reassociating, so the result is the same on every machine). */
TG_CPU_CLONES static double ssq_range(const float *x, size_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) lane[k] += (double)x[i + k] * (double)x[i + k];
  for (; i < n; i++) lane[i & 7] += (double)x[i] * (double)x[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

tg_status tg_cpu_sum_squares(tg_device d, const float *g, size_t n, double *out) {
  (void)d;
  if (!out) return tg_error(TG_ERR_INVALID, "sum_squares: out is NULL");
  if (n == 0) {
    *out = 0.0;
    return TG_OK;
  }
  if (!g) return tg_error(TG_ERR_INVALID, "sum_squares: input is NULL");
  size_t chunks = (n + TG_SSQ_MIN_CHUNK - 1) / TG_SSQ_MIN_CHUNK;
  if (chunks > TG_SSQ_CHUNKS) chunks = TG_SSQ_CHUNKS;
  size_t chunk = (n + chunks - 1) / chunks;
  double part[TG_SSQ_CHUNKS]; /* [chunks] */
  long nc = (long)chunks;
  TG_PAR_FOR(n >= TG_OPTIM_PAR_MIN, schedule(static),
  for (long c = 0; c < nc; c++) {
    size_t lo = (size_t)c * chunk, hi = lo + chunk < n ? lo + chunk : n;
    part[c] = ssq_range(g + lo, hi - lo);
  });
  double total = 0.0;
  for (size_t c = 0; c < chunks; c++) total += part[c];
  *out = total;
  return TG_OK;
}

/* One update kernel over a range: p, g, m, v [n] from the given element on (v NULL for SGD). */
typedef void (*range_fn)(float *p, const float *g, float *m, float *v, size_t n, const void *consts);

/* Runs f over [0, n) in blocks of TG_OPTIM_BLOCK (on the OpenMP threads when n is large); with pb, each block's new
 * values are rounded into pb [n] right after the block is updated, while they are still in cache. */
static void update_blocks(range_fn f, const void *consts, float *p, const float *g, float *m, float *v, uint16_t *pb,
                          size_t n) {
  long nb = (long)((n + TG_OPTIM_BLOCK - 1) / TG_OPTIM_BLOCK);
  TG_PAR_FOR(n >= TG_OPTIM_PAR_MIN, schedule(static),
  for (long b = 0; b < nb; b++) {
    size_t lo = (size_t)b * TG_OPTIM_BLOCK, len = n - lo < TG_OPTIM_BLOCK ? n - lo : TG_OPTIM_BLOCK;
    f(p + lo, g + lo, m ? m + lo : NULL, v ? v + lo : NULL, len, consts);
    if (pb) tg_cpu_bf16_pack(pb + lo, p + lo, len);
  });
}

typedef struct sgd_consts {
  float lr, momentum, wd, gscale;
} sgd_consts;

static void sgd_range(float *p, const float *g, float *m, float *v, size_t n, const void *consts) {
  (void)v;
  const sgd_consts *c = consts;
  if (c->momentum != 0.0f) {
    for (size_t i = 0; i < n; i++) {
      float gi = g[i] * c->gscale + c->wd * p[i];
      float b = c->momentum * m[i] + gi;
      m[i] = b;
      p[i] -= c->lr * b;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      float gi = g[i] * c->gscale + c->wd * p[i];
      p[i] -= c->lr * gi;
    }
  }
}

/* PyTorch SGD with dampening 0: d = g*gscale + wd*p; buf = momentum*buf + d (a zeroed buffer gives
 * buf = d on the first step, as PyTorch's clone does); p -= lr*buf (or lr*d without momentum). */
tg_status tg_cpu_sgd_step(tg_device d, float *p, uint16_t *pb, const float *g, float *m, size_t n, float lr,
                          float momentum, float wd, float gscale) {
  (void)d;
  if (n == 0) return TG_OK;
  if (!p || !g) return tg_error(TG_ERR_INVALID, "sgd_step: parameter or gradient is NULL");
  if (momentum != 0.0f && !m)
    return tg_error(TG_ERR_INVALID, "sgd_step: momentum %g needs a momentum buffer", momentum);
  const sgd_consts k = {lr, momentum, wd, gscale};
  update_blocks(sgd_range, &k, p, g, momentum != 0.0f ? m : NULL, NULL, pb, n);
  return TG_OK;
}

typedef struct adam_consts {
  float beta1, beta2, one_b1, one_b2, eps, l2, decay, step_size, bc2_sqrt, gscale;
} adam_consts;

TG_CPU_CLONES static void adam_range(float *restrict p, const float *restrict g, float *restrict m,
                                     float *restrict v, size_t n, const void *consts) {
  const adam_consts *c = consts;
  for (size_t i = 0; i < n; i++) {
    float pi = p[i];
    float gi = g[i] * c->gscale + c->l2 * pi;
    pi *= c->decay;
    float mi = c->beta1 * m[i] + c->one_b1 * gi;
    float vi = c->beta2 * v[i] + c->one_b2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    float denom = sqrtf(vi) / c->bc2_sqrt + c->eps;
    p[i] = pi - c->step_size * (mi / denom);
  }
}

/* torch.optim.Adam / AdamW (amsgrad off, maximize off):
 *   g = g*gscale (+ wd*p for Adam);  AdamW: p *= 1 - lr*wd
 *   m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g^2
 *   p -= (lr/bc1) * m / (sqrt(v)/sqrt(bc2) + eps) */
tg_status tg_cpu_adam_step(tg_device d, float *p, uint16_t *pb, const float *g, float *m, float *v, size_t n,
                           float lr, float beta1, float beta2, float eps, float wd, int decoupled,
                           float bc1, float bc2, float gscale) {
  (void)d;
  if (n == 0) return TG_OK;
  if (!p || !g || !m || !v)
    return tg_error(TG_ERR_INVALID, "adam_step: parameter, gradient or state buffer is NULL");
  if (!(bc1 > 0.0f) || !(bc2 > 0.0f))
    return tg_error(TG_ERR_INVALID, "adam_step: bias corrections must be > 0 (got %g, %g)", bc1, bc2);
  const float step_size = (float)((double)lr / (double)bc1);
  const float bc2_sqrt = (float)sqrt((double)bc2);
  const float decay = decoupled ? (float)(1.0 - (double)lr * (double)wd) : 1.0f;
  const float l2 = decoupled ? 0.0f : wd;
  const float one_b1 = 1.0f - beta1, one_b2 = 1.0f - beta2;
  const adam_consts k = {beta1, beta2, one_b1, one_b2, eps, l2, decay, step_size, bc2_sqrt, gscale};
  update_blocks(adam_range, &k, p, g, m, v, pb, n);
  return TG_OK;
}

tg_status tg_cpu_optim_update(tg_device d, const tg_optim_update *u) {
  tg_optim_scalars *sc = u->scalars; /* host memory on the CPU */
  double ss = 0.0;
  tg_status st = tg_cpu_sum_squares(d, u->grads, u->numel, &ss);
  if (st != TG_OK) return st;
  double norm = sqrt(ss);
  sc->sumsq = ss;
  sc->norm = (float)norm;
  sc->skipped = !isfinite(norm);
  if (sc->skipped) return TG_OK;
  float gscale = 1.0f;
  if (u->clip_norm > 0.0f && norm > (double)u->clip_norm) gscale = (float)((double)u->clip_norm / norm);
  float lr = tg_lr_eval(&u->schedule, u->lr, sc->step);
  int64_t t = sc->step + 1;
  double bc1 = 1.0 - pow((double)u->beta1, (double)t);
  double bc2 = 1.0 - pow((double)u->beta2, (double)t);
  for (int i = 0; i < u->n_seg; i++) {
    const tg_optim_seg *s = &u->segs[i];
    float *p = u->values + s->offset;
    uint16_t *pb = u->values_bf16 ? u->values_bf16 + s->offset : NULL;
    const float *g = u->grads + s->offset;
    if (u->kind == TG_SGD)
      st = tg_cpu_sgd_step(d, p, pb, g, u->m ? u->m + s->offset : NULL, s->numel, lr, u->momentum, s->wd, gscale);
    else
      st = tg_cpu_adam_step(d, p, pb, g, u->m + s->offset, u->v + s->offset, s->numel, lr, u->beta1, u->beta2,
                            u->eps, s->wd, u->kind == TG_ADAMW, (float)bc1, (float)bc2, gscale);
    if (st != TG_OK) return st;
  }
  sc->step = t;
  sc->bc1 = bc1;
  sc->bc2 = bc2;
  sc->lr = lr;
  sc->gscale = gscale;
  return TG_OK;
}
