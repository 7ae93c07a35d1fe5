/* CPU kernels for the elementwise ops: binary ops with suffix broadcasting, scale and activations. */
#include <math.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"

/* Loops of fewer elements than this run on the calling thread with no OpenMP at all. */
#define TG_EW_PAR_MIN (1 << 16)
/* Elements per parallel chunk of a flat loop. */
#define TG_EW_BLOCK (1 << 14)
/* Columns per chunk of a broadcast-gradient reduction (also its stack accumulator size). */
#define TG_EW_COLS 256

typedef enum ew_bin { EW_ADD, EW_SUB, EW_MUL, EW_DIV } ew_bin;

/* Everything a range body reads; unused fields stay NULL / 0. */
typedef struct ew_ctx {
  const float *x;  /* unary input            [n] */
  const float *y;  /* op output (read)       [n] */
  const float *dy; /* d objective / d output [n] */
  float *out;      /* forward destination    [n] */
  float *dx;       /* unary input gradient   [n] */
  int fa, fb;      /* the gradient of input 0 (dx or ga), 1 (gb) is unzeroed (tg_kernel_args.grad_fresh) */
  float s;         /* scale factor, elu alpha */
  /* binary */
  ew_bin op;
  const float *a, *b; /* [na], [nb]: one of them has n elements, the other divides n */
  float *ga, *gb;     /* like a, like b, or NULL */
  int64_t n, na, nb;
} ew_ctx;

typedef void (*ew_range_fn)(const ew_ctx *c, int64_t lo, int64_t hi);

/* Calls fn over [0, n_items) in chunks of `block` items, across threads only when `parallel`. */
static void ew_run(int64_t n_items, int64_t block, int parallel, ew_range_fn fn, const ew_ctx *c) {
  if (!parallel || n_items <= block) {
    fn(c, 0, n_items);
    return;
  }
  int64_t nblk = (n_items + block - 1) / block;
  TG_PAR_FOR(1, schedule(static),
  for (int64_t bi = 0; bi < nblk; bi++) {
    int64_t lo = bi * block;
    int64_t hi = lo + block < n_items ? lo + block : n_items;
    fn(c, lo, hi);
  });
}

static void ew_flat(int64_t n, ew_range_fn fn, const ew_ctx *c) {
  ew_run(n, TG_EW_BLOCK, n >= TG_EW_PAR_MIN, fn, c);
}

static int64_t ew_numel(const tg_tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

/* Overflow-free logistic function: exp of a non-positive argument only. */
static inline float ew_sigmoid(float x) {
  float e = expf(-fabsf(x));
  float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

/* ---- binary ops ---- */

/* Output elements [lo, hi), in segments where both operands are contiguous. */
TG_CPU_CLONES static void bin_fwd_range(const ew_ctx *c, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi;) {
    int64_t ia = i % c->na, ib = i % c->nb, len = hi - i;
    if (c->na - ia < len) len = c->na - ia;
    if (c->nb - ib < len) len = c->nb - ib;
    const float *pa = c->a + ia, *pb = c->b + ib; /* [len] */
    float *po = c->out + i;                      /* [len] */
    switch (c->op) {
      case EW_ADD: for (int64_t k = 0; k < len; k++) po[k] = pa[k] + pb[k]; break;
      case EW_SUB: for (int64_t k = 0; k < len; k++) po[k] = pa[k] - pb[k]; break;
      case EW_MUL: for (int64_t k = 0; k < len; k++) po[k] = pa[k] * pb[k]; break;
      case EW_DIV: for (int64_t k = 0; k < len; k++) po[k] = pa[k] / pb[k]; break;
    }
    i += len;
  }
}

/* Gradients of the operands that have the output's size, over output elements [lo, hi). */
TG_CPU_CLONES static void bin_bwd_full_range(const ew_ctx *c, int64_t lo, int64_t hi) {
  float *ga = c->na == c->n ? c->ga : NULL;
  float *gb = c->nb == c->n ? c->gb : NULL;
  for (int64_t i = lo; i < hi;) {
    int64_t ia = i % c->na, ib = i % c->nb, len = hi - i;
    if (c->na - ia < len) len = c->na - ia;
    if (c->nb - ib < len) len = c->nb - ib;
    const float *pa = c->a + ia, *pb = c->b + ib; /* [len] */
    const float *dy = c->dy + i;                 /* [len] */
    if (ga) {
      float *g = ga + i; /* [len] */
      int f = c->fa;
      switch (c->op) {
        case EW_ADD:
        case EW_SUB: for (int64_t k = 0; k < len; k++) g[k] = tg_grad_base(f, g[k]) + dy[k]; break;
        case EW_MUL: for (int64_t k = 0; k < len; k++) g[k] = tg_grad_base(f, g[k]) + dy[k] * pb[k]; break;
        case EW_DIV: for (int64_t k = 0; k < len; k++) g[k] = tg_grad_base(f, g[k]) + dy[k] / pb[k]; break;
      }
    }
    if (gb) {
      float *g = gb + i;         /* [len] */
      const float *y = c->y + i; /* [len], div only */
      int f = c->fb;
      switch (c->op) {
        case EW_ADD: for (int64_t k = 0; k < len; k++) g[k] = tg_grad_base(f, g[k]) + dy[k]; break;
        case EW_SUB: for (int64_t k = 0; k < len; k++) g[k] = tg_grad_base(f, g[k]) - dy[k]; break;
        case EW_MUL: for (int64_t k = 0; k < len; k++) g[k] = tg_grad_base(f, g[k]) + dy[k] * pa[k]; break;
        case EW_DIV: for (int64_t k = 0; k < len; k++) g[k] = tg_grad_base(f, g[k]) - dy[k] * y[k] / pb[k]; break;
      }
    }
    i += len;
  }
}

/* Gradient of the broadcast (smaller) operand, columns [lo, hi) of its [ns] elements: sums over
 * the n / ns leading repetitions, in double. */
TG_CPU_CLONES static void bin_bwd_small_range(const ew_ctx *c, int64_t lo, int64_t hi) {
  int small_a = c->na < c->n;
  int64_t ns = small_a ? c->na : c->nb, reps = c->n / ns;
  float *g = small_a ? c->ga : c->gb; /* [ns] */
  int f = small_a ? c->fa : c->fb;
  for (int64_t j0 = lo; j0 < hi; j0 += TG_EW_COLS) {
    int64_t w = hi - j0 < TG_EW_COLS ? hi - j0 : TG_EW_COLS;
    double acc[TG_EW_COLS] = {0}; /* [w] */
    for (int64_t r = 0; r < reps; r++) {
      int64_t base = r * ns + j0;
      const float *dy = c->dy + base; /* [w] */
      if (small_a) {
        const float *pb = c->b + base; /* full b [w] */
        switch (c->op) {
          case EW_ADD:
          case EW_SUB: for (int64_t k = 0; k < w; k++) acc[k] += dy[k]; break;
          case EW_MUL: for (int64_t k = 0; k < w; k++) acc[k] += dy[k] * pb[k]; break;
          case EW_DIV: for (int64_t k = 0; k < w; k++) acc[k] += dy[k] / pb[k]; break;
        }
      } else {
        const float *pa = c->a + base; /* full a [w] */
        const float *pb = c->b + j0;   /* small b [w] */
        const float *y = c->y + base;  /* [w], div only */
        switch (c->op) {
          case EW_ADD: for (int64_t k = 0; k < w; k++) acc[k] += dy[k]; break;
          case EW_SUB: for (int64_t k = 0; k < w; k++) acc[k] -= dy[k]; break;
          case EW_MUL: for (int64_t k = 0; k < w; k++) acc[k] += dy[k] * pa[k]; break;
          case EW_DIV: for (int64_t k = 0; k < w; k++) acc[k] -= dy[k] * y[k] / pb[k]; break;
        }
      }
    }
    for (int64_t k = 0; k < w; k++) g[j0 + k] = tg_grad_base(f, g[j0 + k]) + (float)acc[k];
  }
}

static ew_ctx bin_ctx(const tg_kernel_args *a, ew_bin op) {
  ew_ctx c = {0};
  c.op = op;
  c.a = (const float *)a->in[0]->data;
  c.b = (const float *)a->in[1]->data;
  c.n = ew_numel(a->out);
  c.na = ew_numel(a->in[0]);
  c.nb = ew_numel(a->in[1]);
  return c;
}

static tg_status bin_fwd(const tg_kernel_args *a, ew_bin op) {
  ew_ctx c = bin_ctx(a, op);
  c.out = (float *)a->out->data;
  if (c.n > 0) ew_flat(c.n, bin_fwd_range, &c);
  return TG_OK;
}

static tg_status bin_bwd(const tg_kernel_args *a, ew_bin op) {
  ew_ctx c = bin_ctx(a, op);
  c.dy = a->out_grad;
  c.y = (const float *)a->out->data; /* read by div only (bwd_needs IN | OUT) */
  c.ga = a->in_grad[0];
  c.gb = a->in_grad[1];
  c.fa = (a->grad_fresh & 1u) != 0;
  c.fb = (a->grad_fresh & 2u) != 0;
  if (c.n == 0) return TG_OK;
  if ((c.ga && c.na == c.n) || (c.gb && c.nb == c.n)) ew_flat(c.n, bin_bwd_full_range, &c);
  if (c.ga && c.na < c.n) ew_run(c.na, TG_EW_COLS, c.n >= TG_EW_PAR_MIN, bin_bwd_small_range, &c);
  if (c.gb && c.nb < c.n) ew_run(c.nb, TG_EW_COLS, c.n >= TG_EW_PAR_MIN, bin_bwd_small_range, &c);
  return TG_OK;
}

tg_status tg_cpu_add_fwd(const tg_kernel_args *a) { return bin_fwd(a, EW_ADD); }
tg_status tg_cpu_add_bwd(const tg_kernel_args *a) { return bin_bwd(a, EW_ADD); }
tg_status tg_cpu_sub_fwd(const tg_kernel_args *a) { return bin_fwd(a, EW_SUB); }
tg_status tg_cpu_sub_bwd(const tg_kernel_args *a) { return bin_bwd(a, EW_SUB); }
tg_status tg_cpu_mul_fwd(const tg_kernel_args *a) { return bin_fwd(a, EW_MUL); }
tg_status tg_cpu_mul_bwd(const tg_kernel_args *a) { return bin_bwd(a, EW_MUL); }
tg_status tg_cpu_div_fwd(const tg_kernel_args *a) { return bin_fwd(a, EW_DIV); }
tg_status tg_cpu_div_bwd(const tg_kernel_args *a) { return bin_bwd(a, EW_DIV); }

/* ---- unary ops: forward bodies write out from x; backward bodies add into dx ---- */

static tg_status un_fwd(const tg_kernel_args *a, ew_range_fn fn) {
  ew_ctx c = {0};
  c.x = (const float *)a->in[0]->data;
  c.out = (float *)a->out->data;
  c.s = a->attr ? a->attr->f[0] : 0.0f;
  ew_flat(ew_numel(a->out), fn, &c);
  return TG_OK;
}

/* Body pointers follow op_table.c's bwd_needs: x only for IN ops, y only for OUT ops. */
static tg_status un_bwd(const tg_kernel_args *a, ew_range_fn fn) {
  if (!a->in_grad[0]) return TG_OK;
  ew_ctx c = {0};
  c.x = (const float *)a->in[0]->data;
  c.y = (const float *)a->out->data;
  c.dy = a->out_grad;
  c.dx = a->in_grad[0];
  c.fa = (a->grad_fresh & 1u) != 0;
  c.s = a->attr ? a->attr->f[0] : 0.0f;
  ew_flat(ew_numel(a->out), fn, &c);
  return TG_OK;
}

static void scale_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *x = c->x; float *o = c->out; float s = c->s;
  for (int64_t i = lo; i < hi; i++) o[i] = x[i] * s;
}
static void scale_b(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *dy = c->dy; float *dx = c->dx; float s = c->s; int f = c->fa;
  for (int64_t i = lo; i < hi; i++) dx[i] = tg_grad_base(f, dx[i]) + dy[i] * s;
}

static void relu_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *x = c->x; float *o = c->out;
  for (int64_t i = lo; i < hi; i++) o[i] = x[i] < 0.0f ? 0.0f : x[i]; /* NaN passes through */
}
static void relu_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads y */
  const float *y = c->y, *dy = c->dy; float *dx = c->dx; int f = c->fa;
  for (int64_t i = lo; i < hi; i++) {
    float g = dy[i]; /* loaded on both paths so the loop vectorizes as a select */
    dx[i] = tg_grad_base(f, dx[i]) + (y[i] > 0.0f ? g : 0.0f);
  }
}

TG_CPU_CLONES static void tanh_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *restrict x = c->x; float *restrict o = c->out;
  for (int64_t i = lo; i < hi; i++) o[i] = tg_vtanhf(x[i]);
}
static void tanh_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads y */
  const float *y = c->y, *dy = c->dy; float *dx = c->dx; int f = c->fa;
  for (int64_t i = lo; i < hi; i++) dx[i] = tg_grad_base(f, dx[i]) + dy[i] * (1.0f - y[i] * y[i]);
}

TG_CPU_CLONES static void sigmoid_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *restrict x = c->x; float *restrict o = c->out;
  for (int64_t i = lo; i < hi; i++) o[i] = tg_vsigmoid(x[i]);
}
TG_CPU_CLONES static void sigmoid_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads y */
  const float *y = c->y, *dy = c->dy; float *dx = c->dx; int f = c->fa;
  for (int64_t i = lo; i < hi; i++) dx[i] = tg_grad_base(f, dx[i]) + dy[i] * y[i] * (1.0f - y[i]);
}

TG_CPU_CLONES static void elu_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *restrict x = c->x; float *restrict o = c->out; float alpha = c->s;
  for (int64_t i = lo; i < hi; i++) {
    float v = x[i];
    o[i] = tg_vsel(v > 0.0f, v, alpha * tg_vexpm1f(v));
  }
}
/* With alpha > 0, y > 0 exactly where x > 0 (x <= 0 gives alpha * expm1(x) <= 0, NaN stays NaN), so the backward
 * then reads y alone: one stream fewer from memory, the same bits. */
TG_CPU_CLONES static void elu_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads y, and x when alpha <= 0 */
  const float *restrict x = c->x, *restrict y = c->y, *restrict dy = c->dy;
  float *restrict dx = c->dx;
  float alpha = c->s;
  int f = c->fa;
  if (alpha > 0.0f)
    for (int64_t i = lo; i < hi; i++) /* y[i] + alpha: d elu / dx for x <= 0 */
      dx[i] = tg_grad_base(f, dx[i]) + dy[i] * tg_vsel(y[i] > 0.0f, 1.0f, y[i] + alpha);
  else
    for (int64_t i = lo; i < hi; i++)
      dx[i] = tg_grad_base(f, dx[i]) + dy[i] * tg_vsel(x[i] > 0.0f, 1.0f, y[i] + alpha);
}

TG_CPU_CLONES static void silu_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *restrict x = c->x; float *restrict o = c->out;
  for (int64_t i = lo; i < hi; i++) o[i] = x[i] * tg_vsigmoid(x[i]);
}
TG_CPU_CLONES static void silu_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads x */
  const float *restrict x = c->x, *restrict dy = c->dy; float *restrict dx = c->dx; int f = c->fa;
  for (int64_t i = lo; i < hi; i++) {
    float s = tg_vsigmoid(x[i]);
    dx[i] = tg_grad_base(f, dx[i]) + dy[i] * s * (1.0f + x[i] * (1.0f - s));
  }
}

/* Exact GELU, PyTorch's nn.GELU() default: x Phi(x), Phi the standard normal CDF (erf form, not the tanh one). */
TG_CPU_CLONES static void gelu_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *restrict x = c->x; float *restrict o = c->out;
  for (int64_t i = lo; i < hi; i++) {
    float v = x[i];
    o[i] = v * tg_vnormcdf_e(v, tg_vexpf_nonpos(-0.5f * v * v));
  }
}
/* dy * d gelu / dx = dy (Phi(x) + x phi(x)), phi(x) = exp(-x^2 / 2) / sqrt(2 pi): one exp for both. */
TG_CPU_INLINE float gelu_grad(float v, float g) {
  float e = tg_vexpf_nonpos(-0.5f * v * v);
  return g * (tg_vnormcdf_e(v, e) + v * (0.398942280401432678f * e));
}
/* A fresh dx is written without being read (+0 + v, the bits of a zeroed buffer): the load of a 2 MB gradient that is
 * about to be overwritten was a third of this memory-bound loop's reads. */
TG_CPU_CLONES static void gelu_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads x */
  const float *restrict x = c->x, *restrict dy = c->dy; float *restrict dx = c->dx;
  if (c->fa)
    for (int64_t i = lo; i < hi; i++) dx[i] = 0.0f + gelu_grad(x[i], dy[i]);
  else
    for (int64_t i = lo; i < hi; i++) dx[i] += gelu_grad(x[i], dy[i]);
}

/* PyTorch Softplus(beta=1, threshold=20): x above the threshold passes through. */
static void softplus_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *x = c->x; float *o = c->out;
  for (int64_t i = lo; i < hi; i++) o[i] = x[i] > 20.0f ? x[i] : log1pf(expf(x[i]));
}
static void softplus_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads x */
  const float *x = c->x, *dy = c->dy; float *dx = c->dx; int f = c->fa;
  for (int64_t i = lo; i < hi; i++)
    dx[i] = tg_grad_base(f, dx[i]) + (x[i] > 20.0f ? dy[i] : dy[i] * ew_sigmoid(x[i]));
}

static void exp_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *x = c->x; float *o = c->out;
  for (int64_t i = lo; i < hi; i++) o[i] = expf(x[i]);
}
static void exp_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads y */
  const float *y = c->y, *dy = c->dy; float *dx = c->dx; int f = c->fa;
  for (int64_t i = lo; i < hi; i++) dx[i] = tg_grad_base(f, dx[i]) + dy[i] * y[i];
}

static void log_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *x = c->x; float *o = c->out;
  for (int64_t i = lo; i < hi; i++) o[i] = logf(x[i]);
}
static void log_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads x */
  const float *x = c->x, *dy = c->dy; float *dx = c->dx; int f = c->fa;
  for (int64_t i = lo; i < hi; i++) dx[i] = tg_grad_base(f, dx[i]) + dy[i] / x[i];
}

static void sqrt_f(const ew_ctx *c, int64_t lo, int64_t hi) {
  const float *x = c->x; float *o = c->out;
  for (int64_t i = lo; i < hi; i++) o[i] = sqrtf(x[i]);
}
static void sqrt_b(const ew_ctx *c, int64_t lo, int64_t hi) { /* reads y */
  const float *y = c->y, *dy = c->dy; float *dx = c->dx; int f = c->fa;
  for (int64_t i = lo; i < hi; i++) dx[i] = tg_grad_base(f, dx[i]) + dy[i] / (2.0f * y[i]);
}

tg_status tg_cpu_scale_fwd(const tg_kernel_args *a) { return un_fwd(a, scale_f); }
tg_status tg_cpu_scale_bwd(const tg_kernel_args *a) { return un_bwd(a, scale_b); }
tg_status tg_cpu_relu_fwd(const tg_kernel_args *a) { return un_fwd(a, relu_f); }
tg_status tg_cpu_relu_bwd(const tg_kernel_args *a) { return un_bwd(a, relu_b); }
tg_status tg_cpu_tanh_fwd(const tg_kernel_args *a) { return un_fwd(a, tanh_f); }
tg_status tg_cpu_tanh_bwd(const tg_kernel_args *a) { return un_bwd(a, tanh_b); }
tg_status tg_cpu_sigmoid_fwd(const tg_kernel_args *a) { return un_fwd(a, sigmoid_f); }
tg_status tg_cpu_sigmoid_bwd(const tg_kernel_args *a) { return un_bwd(a, sigmoid_b); }
tg_status tg_cpu_elu_fwd(const tg_kernel_args *a) { return un_fwd(a, elu_f); }
tg_status tg_cpu_elu_bwd(const tg_kernel_args *a) { return un_bwd(a, elu_b); }
tg_status tg_cpu_silu_fwd(const tg_kernel_args *a) { return un_fwd(a, silu_f); }
tg_status tg_cpu_silu_bwd(const tg_kernel_args *a) { return un_bwd(a, silu_b); }
tg_status tg_cpu_gelu_fwd(const tg_kernel_args *a) { return un_fwd(a, gelu_f); }
tg_status tg_cpu_gelu_bwd(const tg_kernel_args *a) { return un_bwd(a, gelu_b); }
tg_status tg_cpu_softplus_fwd(const tg_kernel_args *a) { return un_fwd(a, softplus_f); }
tg_status tg_cpu_softplus_bwd(const tg_kernel_args *a) { return un_bwd(a, softplus_b); }
tg_status tg_cpu_exp_fwd(const tg_kernel_args *a) { return un_fwd(a, exp_f); }
tg_status tg_cpu_exp_bwd(const tg_kernel_args *a) { return un_bwd(a, exp_b); }
tg_status tg_cpu_log_fwd(const tg_kernel_args *a) { return un_fwd(a, log_f); }
tg_status tg_cpu_log_bwd(const tg_kernel_args *a) { return un_bwd(a, log_b); }
tg_status tg_cpu_sqrt_fwd(const tg_kernel_args *a) { return un_fwd(a, sqrt_f); }
tg_status tg_cpu_sqrt_bwd(const tg_kernel_args *a) { return un_bwd(a, sqrt_b); }
