/* Mixed precision on the CPU: matmul, linear and stacked_linear planned with precision bf16 (operands rounded to bf16,
 * products accumulated in f32), forward and both gradients, under TICKGRAD_GEMM=openblas, =onednn and the default,
 * against float64 references of the bf16-rounded and of the unrounded operands; the f32 plan against the same
 * references (and far enough from the rounded one that an f32 kernel could not pass for a bf16 one); which library
 * each mode plans; under the default on a CPU with native bf16 GEMMs, the nodes settled to f32 (products without a
 * packed bf16 primitive: below oneDNN's size, or a transposed a) and their f32 results; the printed plan; an invalid
 * precision and an invalid TICKGRAD_GEMM.
 *
 * The bounds (per element, over the n terms t_i summed into it):
 *
 * bf16 keeps 8 significant bits: 7 stored and the implicit leading one. A normal x = 1.f * 2^e (|x| >= 2^e) rounded to
 * nearest moves by at most half a unit in the last place, 2^(e-7) / 2 = 2^(e-8) <= 2^-8 |x|: the unit roundoff is
 * U_BF16 = 2^-8, not 2^-9 (x = 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 and rounds to 1: a relative error of
 * 2^-8 / (1 + 2^-8)). f32 keeps 24 bits, U_F32 = 2^-24. bf16 has f32's exponent range and every value here is in
 * [-1, 1], so nothing overflows, and no operand or product comes near the subnormals (2^-126).
 *
 * Tight (bf16 plan against ref_rounded, the float64 sum of the rounded operands' products): a product of two bf16
 * values has at most 16 significant bits, so it is exact in f32 (by a multiply or inside an FMA) and only the additions
 * round. A sum of n terms in any order (blocked, split over K, in SIMD lanes, finished by a post-op) makes at most n - 1
 * additions on any term's path, so its error is at most gamma_(n-1) sum |t_i|, gamma_m = m u / (1 - m u) (Higham,
 * Accuracy and Stability of Numerical Algorithms, the summation and inner product chapters). n counts K products and
 * the bias; a gradient accumulates into a zeroed buffer, which adds nothing. We assert
 *     |got - ref_rounded| <= ACC_C * n * U_F32 * (sum |a~ b~| + |bias|)          (a~: a rounded to bf16)
 * with ACC_C = 2: the theory needs 1 / (1 - n u) < 1.0001 at these n (at most a few hundred); the rest covers a kernel
 * that rounds a partial sum once more than counted (OpenBLAS's alpha AB + beta C, oneDNN's bias and sum post-ops:
 * n + 1 <= 2n roundings). The f32 plan obeys the same form against the unrounded reference (its products round too:
 * gamma_n instead of gamma_(n-1), still within 2n u).
 *
 * Loose (bf16 plan against ref, the float64 sum of the unrounded products): a~ = a (1 + da), b~ = b (1 + db) with
 * |da|, |db| <= U_BF16, so |a~ b~ - a b| = |a b| |da + db + da db| <= (2 U_BF16 + U_BF16^2) |a b| = (2^-7 + 2^-16) |a b|;
 * with the tight bound above (the triangle inequality):
 *     |got - ref| <= (2 * 2^-8 + 2^-16) * sum |a b| + ACC_C * n * U_F32 * (sum |a~ b~| + |bias|).
 * The bias (forward) and the bias gradient are not rounded: the bias is a term of both references as it is, and the
 * bias gradient must match the f32 bound against the sum of the unrounded output gradient. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_gemm_plan.h"
#include "base/bf16.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

#define U_BF16 (1.0 / 256.0)      /* 2^-8 */
#define U_F32 (1.0 / 16777216.0)  /* 2^-24 */
#define ACC_C 2.0
#define BF16_REL (2.0 * U_BF16 + U_BF16 * U_BF16) /* |a~ b~ - a b| <= BF16_REL |a b| */

/* x rounded to bf16, to nearest with ties to even, by arithmetic rather than bits (base/bf16's way). */
static float round_bf16(float x) {
  if (x == 0.0f || !isfinite(x)) return x;
  int e;
  double m = frexp((double)x, &e); /* x = m 2^e, 0.5 <= |m| < 1: m 2^8 has 8 bits before the point */
  return (float)ldexp(nearbyint(m * 256.0), e - 8); /* nearbyint: the default mode, ties to even */
}

/* ---- the cases ---- */

typedef enum { MATMUL, LINEAR, STACKED } op_kind;

typedef struct gcase {
  char name[64];
  op_kind op;
  int ta, tb;  /* matmul */
  int n_in;    /* 2, or 3 with a bias */
  int ndim[3];
  int64_t shape[3][TG_MAX_DIMS];
  int a_input; /* 1: the first operand is a bound input (no gradient wanted), else a parameter */
} gcase;

static int64_t numel_of(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

/* matmul a [batch.., a0, a1] (op(a) [M, K]) times b [batch.., b0, b1] or [b0, b1] (shared; op(b) [K, N]) */
static gcase mm_case(const char *what, int ta, int tb, int nbatch, const int64_t *batch, int shared, int64_t M,
                     int64_t K, int64_t N) {
  gcase c;
  memset(&c, 0, sizeof c);
  snprintf(c.name, sizeof c.name, "matmul_%s_%c%c", what, ta ? 't' : 'n', tb ? 't' : 'n');
  c.op = MATMUL, c.ta = ta, c.tb = tb, c.n_in = 2;
  c.ndim[0] = nbatch + 2;
  c.ndim[1] = shared ? 2 : nbatch + 2;
  for (int d = 0; d < nbatch; d++) c.shape[0][d] = c.shape[1][d] = batch[d];
  c.shape[0][nbatch] = ta ? K : M, c.shape[0][nbatch + 1] = ta ? M : K;
  c.shape[1][c.ndim[1] - 2] = tb ? N : K, c.shape[1][c.ndim[1] - 1] = tb ? K : N;
  return c;
}

/* linear x [..., in] w [out, in] (+ bias [out]) */
static gcase lin_case(const char *name, int xndim, const int64_t *xshape, int64_t nout, int bias, int a_input) {
  gcase c;
  memset(&c, 0, sizeof c);
  snprintf(c.name, sizeof c.name, "%s", name);
  c.op = LINEAR, c.n_in = bias ? 3 : 2, c.a_input = a_input;
  c.ndim[0] = xndim, c.ndim[1] = 2, c.ndim[2] = 1;
  memcpy(c.shape[0], xshape, sizeof(int64_t) * (size_t)xndim);
  c.shape[1][0] = nout, c.shape[1][1] = xshape[xndim - 1];
  c.shape[2][0] = nout;
  return c;
}

/* stacked_linear x [..., G, in] w [G, out, in] (+ bias [G, out]) */
static gcase sl_case(const char *name, int xndim, const int64_t *xshape, int64_t nout, int bias) {
  gcase c;
  memset(&c, 0, sizeof c);
  snprintf(c.name, sizeof c.name, "%s", name);
  c.op = STACKED, c.n_in = bias ? 3 : 2;
  c.ndim[0] = xndim, c.ndim[1] = 3, c.ndim[2] = 2;
  memcpy(c.shape[0], xshape, sizeof(int64_t) * (size_t)xndim);
  int64_t G = xshape[xndim - 2], nin = xshape[xndim - 1];
  c.shape[1][0] = G, c.shape[1][1] = nout, c.shape[1][2] = nin;
  c.shape[2][0] = G, c.shape[2][1] = nout;
  return c;
}

/* The sizes of a case: a product's batch (groups for stacked), M (rows), K (in), N (out). */
typedef struct dims {
  int64_t batch, m, k, n;
  int64_t a1, b1, sb; /* matmul: stored row widths, b's batch stride (0: shared) */
} dims;

static dims dims_of(const gcase *c) {
  dims d;
  memset(&d, 0, sizeof d);
  const int64_t *A = c->shape[0], *B = c->shape[1];
  int na = c->ndim[0], nb = c->ndim[1];
  if (c->op == MATMUL) {
    int64_t a0 = A[na - 2], b0 = B[nb - 2];
    d.a1 = A[na - 1], d.b1 = B[nb - 1];
    d.batch = numel_of(na - 2, A);
    d.m = c->ta ? d.a1 : a0;
    d.k = c->ta ? a0 : d.a1;
    d.n = c->tb ? b0 : d.b1;
    d.sb = nb == 2 ? 0 : b0 * d.b1;
  } else if (c->op == LINEAR) {
    d.batch = 1, d.m = numel_of(na - 1, A), d.k = A[na - 1], d.n = B[0];
  } else {
    d.batch = B[0], d.m = numel_of(na - 2, A), d.k = B[2], d.n = B[1];
  }
  return d;
}

static int64_t macs_of(const gcase *c) {
  dims d = dims_of(c);
  return d.batch * d.m * d.k * d.n;
}

static int64_t out_numel(const gcase *c) {
  dims d = dims_of(c);
  return d.batch * d.m * d.n;
}

/* ---- the float64 references ---- */

/* One element's references: the terms summed into it with unrounded and with bf16-rounded operands. */
typedef struct acc {
  double v, vr; /* the sum: unrounded operands (ref); operands rounded to bf16 (ref_rounded) */
  double s, sr; /* the sum of the products' magnitudes: unrounded; rounded */
  double sb;    /* |bias|: a term added as it is (not rounded) */
  int64_t n;    /* terms */
} acc;

static void term(acc *e, float a, float b) {
  double ar = round_bf16(a), br = round_bf16(b);
  e->v += (double)a * b, e->vr += ar * br;
  e->s += fabs((double)a * b), e->sr += fabs(ar * br);
  e->n++;
}

static void bias_term(acc *e, float b) {
  e->v += b, e->vr += b, e->sb += fabs(b);
  e->n++;
}

/* r[0]: the output's elements; r[1 + k]: input k's gradient, from the seed gradient dy. The bias gradient's terms are
 * dy * 1, so its ref_rounded is the sum of the rounded dy: what a kernel that summed the GEMMs' operand would give. */
static void reference(const gcase *c, float *const *val, const float *dy, acc *const *r) {
  dims d = dims_of(c);
  const float *A = val[0], *B = val[1];
  acc *out = r[0], *dA = r[1], *dB = r[2];
  if (c->op == MATMUL) {
    for (int64_t bi = 0; bi < d.batch; bi++)
      for (int64_t i = 0; i < d.m; i++)
        for (int64_t j = 0; j < d.n; j++) {
          int64_t ic = (bi * d.m + i) * d.n + j;
          for (int64_t k = 0; k < d.k; k++) {
            int64_t ia = bi * d.m * d.k + (c->ta ? k * d.a1 + i : i * d.a1 + k); /* op(a)[i, k] */
            int64_t ib = bi * d.sb + (c->tb ? j * d.b1 + k : k * d.b1 + j);      /* op(b)[k, j] */
            term(&out[ic], A[ia], B[ib]);
            term(&dA[ia], dy[ic], B[ib]); /* d op(a) = dC op(b)^T */
            term(&dB[ib], A[ia], dy[ic]); /* d op(b) = op(a)^T dC, summed over the batches when b is shared */
          }
        }
    return;
  }
  /* linear is stacked_linear with one group: x [rows, G, in], w [G, out, in], y [rows, G, out] */
  int64_t G = d.batch, rows = d.m, nin = d.k, nout = d.n;
  for (int64_t row = 0; row < rows; row++)
    for (int64_t j = 0; j < G; j++)
      for (int64_t o = 0; o < nout; o++) {
        int64_t iy = (row * G + j) * nout + o;
        for (int64_t i = 0; i < nin; i++) {
          int64_t ix = (row * G + j) * nin + i, iw = (j * nout + o) * nin + i;
          term(&out[iy], A[ix], B[iw]);
          term(&dA[ix], dy[iy], B[iw]);
          term(&dB[iw], dy[iy], A[ix]);
        }
        if (c->n_in > 2) {
          bias_term(&out[iy], val[2][j * nout + o]);
          term(&r[3][j * nout + o], dy[iy], 1.0f);
        }
      }
}

/* ---- running a plan ---- */

static const char *const k_names[3] = {"a", "b", "bias"};

static tg_tensor *build(tg_graph *g, const gcase *c, tg_tensor **in) {
  if (c->op == MATMUL) return tg_matmul(g, in[0], in[1], c->ta, c->tb);
  if (c->op == LINEAR) return tg_linear(g, in[0], in[1], c->n_in > 2 ? in[2] : NULL);
  return tg_stacked_linear(g, in[0], in[1], c->n_in > 2 ? in[2] : NULL);
}

/* 1 when the printed plan of g holds want. */
static int plan_says(const tg_graph *g, const char *want) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return 0;
  tg_graph_print_plan(g, f);
  fclose(f);
  int ok = text && strstr(text, want) != NULL;
  if (!ok) fprintf(stderr, "plan text lacks \"%s\":\n%s", want, text ? text : "");
  free(text);
  return ok;
}

/* Plans c with precision prec under the current TICKGRAD_GEMM, runs forward and backward seeded with dy, and copies
 * the output to res[0] and input k's gradient to res[1 + k] (left alone for a bound input). 0 on success. */
static int run_plan(const gcase *c, const char *mode, float *const *val, const float *dy, tg_dtype prec, int settled,
                    float *const *res) {
  int failed = 1;
  tg_store *store = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(store, c->name);
  tg_tensor *in[3];
  for (int k = 0; k < c->n_in; k++)
    in[k] = k == 0 && c->a_input ? tg_input(g, k_names[k], TG_F32, c->ndim[k], c->shape[k])
                                 : tg_param(g, k_names[k], c->ndim[k], c->shape[k], (tg_init){TG_INIT_ZEROS, 0, 0});
  tg_tensor *out = build(g, c, in);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.training = 1;
  opts.poison = 1;
  opts.guard_bytes = 64;
  opts.precision = prec;
  tg_status st = out ? tg_graph_plan(g, &opts) : tg_graph_status(g);
  CHECK_MSG(st == TG_OK, "%s [TICKGRAD_GEMM=%s, %s]: plan: %s", c->name, mode, tg_dtype_name(prec), tg_last_error());
  if (st != TG_OK) goto done;
  if (prec == TG_BF16)
    CHECK_MSG(plan_says(g, settled ? "precision bf16: 0 GEMM ops with bf16 operands and f32 accumulation; 1 GEMM ops "
                                     "in f32 (too small for the device's bf16 GEMMs"
                                   : "precision bf16: 1 GEMM ops with bf16 operands and f32 accumulation; the other 0 ops"),
              "%s [TICKGRAD_GEMM=%s]: the plan's precision line", c->name, mode);
  for (int k = 0; k < c->n_in; k++) {
    size_t bytes = sizeof(float) * (size_t)numel_of(c->ndim[k], c->shape[k]);
    if (k == 0 && c->a_input) {
      tg_tensor t;
      tg_tensor_view(&t, k_names[k], tg_cpu(0), TG_F32, c->ndim[k], c->shape[k], val[k]);
      if ((st = tg_graph_bind(g, k_names[k], &t)) != TG_OK) break;
    } else {
      memcpy(tg_store_tensor(store, tg_store_find(store, k_names[k]), 0).data, val[k], bytes);
    }
  }
  if (st == TG_OK) st = tg_graph_run(g);
  if (st == TG_OK) st = tg_graph_check_guards(g);
  if (st == TG_OK) {
    memcpy(res[0], out->data, sizeof(float) * (size_t)tg_numel(out));
    st = tg_store_zero_grads(store);
  }
  if (st == TG_OK) st = tg_graph_backward_seeded(g, out, dy);
  if (st == TG_OK) st = tg_graph_check_guards(g);
  CHECK_MSG(st == TG_OK, "%s [TICKGRAD_GEMM=%s, %s]: run or backward: %s", c->name, mode, tg_dtype_name(prec),
            tg_last_error());
  if (st != TG_OK) goto done;
  for (int k = 0; k < c->n_in; k++)
    if (!(k == 0 && c->a_input))
      memcpy(res[1 + k], tg_store_tensor(store, tg_store_find(store, k_names[k]), 1).data,
             sizeof(float) * (size_t)numel_of(c->ndim[k], c->shape[k]));
  failed = 0;
done:
  tg_graph_free(g);
  tg_store_free(store);
  return failed;
}

/* ---- the comparisons ---- */

/* ACC_C n U_F32 (sum of the magnitudes + |bias|): the f32 accumulation bound; rounded picks the rounded operands'. */
static double acc_bound(const acc *e, int rounded) {
  return ACC_C * (double)e->n * U_F32 * ((rounded ? e->sr : e->s) + e->sb);
}

/* The first element of n that breaks a check, for the message. */
typedef struct worst {
  int64_t i;
  double got, want, bound;
} worst;

static void note(worst *w, int64_t i, double got, double want, double bound) {
  if (!(fabs(got - want) <= bound) && w->i < 0) *w = (worst){i, got, want, bound};
}

/* One check: no element of w broke its bound; label says which tensor, plan and reference. */
static void check_worst(const worst *w, const char *label) {
  CHECK_MSG(w->i < 0, "%s: element %lld got %.9g, want %.9g, bound %.3g", label, (long long)w->i, w->got, w->want,
            w->bound);
}

/* One tensor of n elements: gb from the bf16 plan, gf from the f32 plan, r its references. gemm: 1 for a product's
 * result (the output, an operand's gradient), 0 for the bias gradient (summed from the unrounded dy). settled: the
 * bf16 plan ran the node in f32, so gb obeys the f32 bound against the unrounded reference instead. */
static void compare(const char *cname, const char *mode, const char *what, const acc *r, int64_t n, const float *gb,
                    const float *gf, int gemm, int settled) {
  if (settled) {
    worst f32b = {-1, 0, 0, 0}, f32f = {-1, 0, 0, 0};
    for (int64_t i = 0; i < n; i++) {
      note(&f32b, i, gb[i], r[i].v, acc_bound(&r[i], 0));
      note(&f32f, i, gf[i], r[i].v, acc_bound(&r[i], 0));
    }
    char label[192];
    snprintf(label, sizeof label, "%s [TICKGRAD_GEMM=%s] %s, bf16 plan settled to f32, against ref (f32 bound)", cname,
             mode, what);
    check_worst(&f32b, label);
    snprintf(label, sizeof label, "%s [TICKGRAD_GEMM=%s] %s, f32 plan, against ref (f32 bound)", cname, mode, what);
    check_worst(&f32f, label);
    return;
  }
  worst tight = {-1, 0, 0, 0}, loose = {-1, 0, 0, 0}, f32 = {-1, 0, 0, 0};
  int64_t apart = 0; /* elements where a kernel computing the other way would break the tight bound */
  for (int64_t i = 0; i < n; i++) {
    const acc *e = &r[i];
    if (gemm) {
      note(&tight, i, gb[i], e->vr, acc_bound(e, 1));
      note(&loose, i, gb[i], e->v, BF16_REL * e->s + acc_bound(e, 1));
      apart += fabs(gf[i] - e->vr) > 2.0 * acc_bound(e, 1); /* the f32 plan: not what bf16 operands give */
    } else {
      note(&tight, i, gb[i], e->v, acc_bound(e, 0));
      apart += fabs(gb[i] - e->vr) > 2.0 * acc_bound(e, 1); /* the bf16 plan: not the sum of the rounded dy */
    }
    note(&f32, i, gf[i], e->v, acc_bound(e, 0));
  }
  char label[192];
  snprintf(label, sizeof label, "%s [TICKGRAD_GEMM=%s] %s, bf16 plan, against %s", cname, mode, what,
           gemm ? "ref_rounded (tight bound)" : "the unrounded sum (f32 bound)");
  check_worst(&tight, label);
  if (gemm) {
    snprintf(label, sizeof label, "%s [TICKGRAD_GEMM=%s] %s, bf16 plan, against ref (bf16 bound)", cname, mode, what);
    check_worst(&loose, label);
  }
  snprintf(label, sizeof label, "%s [TICKGRAD_GEMM=%s] %s, f32 plan, against ref (f32 bound)", cname, mode, what);
  check_worst(&f32, label);
  CHECK_MSG(apart > 0, "%s [TICKGRAD_GEMM=%s] %s: %s", cname, mode, what,
            gemm ? "the f32 plan is within the tight bound of ref_rounded everywhere: the test cannot tell bf16 from f32"
                 : "the bias gradient is the sum of the rounded dy");
}

/* tg_cpu_prepare on c's node under TICKGRAD_GEMM=onednn: with oneDNN in the build, a primitive for the forward and for
 * each wanted gradient, so the comparisons below do run oneDNN's strided layouts rather than a silent fallback to
 * OpenBLAS. The one product left to OpenBLAS by design: the gradient of a b without batch dims under ta, which sums
 * over a's batches (cpu_gemm_plan.c decides that from b's shape alone, so also when a has no batch dims). Returns 1
 * when the default (TICKGRAD_GEMM unset) settles the node to f32: in bf16, on a CPU with native bf16 GEMMs, exactly
 * when it plans no packed bf16 primitives (checked here); else 0. */
static int check_prepared(const gcase *c, tg_dtype compute) {
  if (!*tg_gemm_prim_library()) return 0;
  static float dummy[1];
  dims d = dims_of(c);
  tg_tensor in[3], out;
  int64_t so[TG_MAX_DIMS];
  int nd = c->ndim[0];
  memcpy(so, c->shape[0], sizeof so);
  if (c->op == MATMUL) so[nd - 2] = d.m, so[nd - 1] = d.n;
  else so[nd - 1] = d.n;
  for (int k = 0; k < c->n_in; k++) tg_tensor_view(&in[k], k_names[k], tg_cpu(0), TG_F32, c->ndim[k], c->shape[k], NULL);
  tg_tensor_view(&out, "out", tg_cpu(0), TG_F32, nd, so, NULL);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = c->op == MATMUL ? c->ta : c->n_in > 2;
  attr.i[1] = c->op == MATMUL ? c->tb : 0;
  tg_kernel_args a;
  memset(&a, 0, sizeof a);
  a.n_in = c->n_in, a.out = &out, a.attr = &attr, a.node_name = c->name, a.compute = compute;
  for (int k = 0; k < c->n_in; k++) a.in[k] = &in[k], a.in_grad[k] = k == 0 && c->a_input ? NULL : dummy;
  int op = c->op == MATMUL ? TG_OP_MATMUL : c->op == LINEAR ? TG_OP_LINEAR : TG_OP_STACKED_LINEAR;
  int b_summed = c->op == MATMUL && d.sb == 0 && c->ta; /* b without batch dims, transposed a: dB by OpenBLAS */
  void *state = NULL;
  setenv("TICKGRAD_GEMM", "onednn", 1);
  CHECK_OK(tg_cpu_prepare(op, &a, &state));
  const tg_cpu_gemm_plan *p = state;
  CHECK_MSG(p && p->fwd && (p->d_a != NULL) == !c->a_input && (p->d_b != NULL) == !b_summed,
            "%s (%s): TICKGRAD_GEMM=onednn planned fwd %d d_a %d d_b %d", c->name, tg_dtype_name(compute),
            p && p->fwd, p && p->d_a, p && p->d_b);
  tg_cpu_unprepare(state);
  if (compute != TG_BF16) return 0;
  unsetenv("TICKGRAD_GEMM");
  a.prepared = NULL;
  CHECK_OK(tg_cpu_prepare(op, &a, &state));
  p = state;
  int packed = p && p->packed_bf16, settled = tg_gemm_prim_has_bf16() && !packed;
  CHECK_MSG(a.compute == (settled ? TG_F32 : TG_BF16), "%s: default plan: packed bf16 %d, has_bf16 %d, compute %s",
            c->name, packed, tg_gemm_prim_has_bf16(), tg_dtype_name(a.compute));
  tg_cpu_unprepare(state);
  return settled;
}

static const char *const k_modes[3] = {"openblas", "onednn", NULL}; /* NULL: TICKGRAD_GEMM unset (auto) */

static void set_mode(const char *mode) {
  if (mode) setenv("TICKGRAD_GEMM", mode, 1);
  else unsetenv("TICKGRAD_GEMM");
}

/* Runs c in both precisions under every mode and checks every tensor; big: whether c is meant to be at least
 * TG_GEMM_PRIM_MIN_MACS (a oneDNN primitive by default), so the shapes keep covering both sides. */
static void run_case(const gcase *c, int big, unsigned long long seed) {
  CHECK_MSG((macs_of(c) >= TG_GEMM_PRIM_MIN_MACS) == big, "%s: %lld multiply-adds, meant to be %s %d", c->name,
            (long long)macs_of(c), big ? "at least" : "below", TG_GEMM_PRIM_MIN_MACS);
  int64_t n[4] = {out_numel(c), 0, 0, 0};
  for (int k = 0; k < c->n_in; k++) n[1 + k] = numel_of(c->ndim[k], c->shape[k]);
  float *val[3] = {NULL, NULL, NULL}, *dy = malloc(sizeof(float) * (size_t)n[0]);
  float *rb[4] = {NULL, NULL, NULL, NULL}, *rf[4] = {NULL, NULL, NULL, NULL};
  acc *r[4] = {NULL, NULL, NULL, NULL};
  int ok = dy != NULL;
  for (int t = 0; t < 1 + c->n_in; t++) {
    rb[t] = calloc((size_t)n[t], sizeof(float)), rf[t] = calloc((size_t)n[t], sizeof(float));
    r[t] = calloc((size_t)n[t], sizeof(acc));
    ok = ok && rb[t] && rf[t] && r[t];
    if (t > 0) ok = ok && (val[t - 1] = malloc(sizeof(float) * (size_t)n[t])) != NULL;
  }
  if (!ok) {
    CHECK_MSG(0, "%s: out of memory", c->name);
    goto done;
  }
  for (int k = 0; k < c->n_in; k++)
    for (int64_t e = 0; e < n[1 + k]; e++) val[k][e] = 2.0f * tg_rng_uniform(seed, 10 + (uint64_t)k, (uint64_t)e) - 1.0f;
  for (int64_t e = 0; e < n[0]; e++) dy[e] = 2.0f * tg_rng_uniform(seed, 20, (uint64_t)e) - 1.0f;
  reference(c, val, dy, r);
  check_prepared(c, TG_F32);
  int settles = check_prepared(c, TG_BF16); /* by default: see the loop */
  static const char *const what[4] = {"output", "gradient of a", "gradient of b", "gradient of bias"};
  for (int m = 0; m < 3; m++) {
    const char *mode = k_modes[m] ? k_modes[m] : "(unset)";
    /* the default on a CPU with native bf16: a node without packed bf16 primitives (below oneDNN's size; a transposed
     * a, which oneDNN 2.6's bf16 brgemm gets wrong; interleaved groups, which it has no bf16 brgemm for) runs in f32 */
    int settled = !k_modes[m] && settles;
    CHECK_MSG(!settled || !big || (c->op == MATMUL && c->ta) || (c->op == STACKED && dims_of(c).batch > 1),
              "%s: settled to f32 by default, though oneDNN should have packed bf16 primitives for it", c->name);
    set_mode(k_modes[m]);
    if (run_plan(c, mode, val, dy, TG_BF16, settled, rb) || run_plan(c, mode, val, dy, TG_F32, 0, rf)) continue;
    for (int t = 0; t < 1 + c->n_in; t++)
      if (!(t == 1 && c->a_input)) compare(c->name, mode, what[t], r[t], n[t], rb[t], rf[t], t != 3, settled);
  }
  set_mode(NULL);
done:
  free(dy);
  for (int t = 0; t < 4; t++) free(rb[t]), free(rf[t]), free(r[t]);
  for (int k = 0; k < 3; k++) free(val[k]);
}

static void test_matmul(unsigned long long seed) {
  const int64_t b3[1] = {3}, b4[1] = {4}, b23[2] = {2, 3};
  for (int t = 0; t < 4; t++) {
    int ta = t & 1, tb = t >> 1;
    gcase c;
    c = mm_case("2d_small", ta, tb, 0, NULL, 0, 5, 12, 7);
    run_case(&c, 0, seed + 100 + (unsigned)t);
    c = mm_case("2d_big", ta, tb, 0, NULL, 0, 48, 40, 36);
    run_case(&c, 1, seed + 110 + (unsigned)t);
    c = mm_case("batched_small", ta, tb, 1, b3, 0, 4, 9, 6);
    run_case(&c, 0, seed + 120 + (unsigned)t);
    c = mm_case("batched_big", ta, tb, 1, b3, 0, 24, 32, 20);
    run_case(&c, 1, seed + 130 + (unsigned)t);
    /* a shared 2-D b: flattened into one product without ta, batched with a broadcast b with it */
    c = mm_case("shared_b_small", ta, tb, 1, b4, 1, 3, 10, 5);
    run_case(&c, 0, seed + 140 + (unsigned)t);
    c = mm_case("shared_b_big", ta, tb, 1, b4, 1, 16, 24, 28);
    run_case(&c, 1, seed + 150 + (unsigned)t);
  }
  gcase c = mm_case("4d_big", 0, 1, 2, b23, 0, 12, 20, 24);
  run_case(&c, 1, seed + 160);
  c = mm_case("4d_shared_b_big", 1, 0, 2, b23, 1, 12, 20, 24);
  run_case(&c, 1, seed + 161);
}

static void test_linear(unsigned long long seed) {
  const int64_t x2s[2] = {6, 10}, x3s[3] = {2, 3, 10}, x2b[2] = {64, 24}, x3b[3] = {4, 16, 24};
  gcase c;
  c = lin_case("linear_bias_small", 2, x2s, 5, 1, 0), run_case(&c, 0, seed + 200);
  c = lin_case("linear_no_bias_small", 2, x2s, 5, 0, 0), run_case(&c, 0, seed + 201);
  c = lin_case("linear_3d_bias_small", 3, x3s, 5, 1, 0), run_case(&c, 0, seed + 202);
  c = lin_case("linear_bias_big", 2, x2b, 40, 1, 0), run_case(&c, 1, seed + 210);
  c = lin_case("linear_no_bias_big", 2, x2b, 40, 0, 0), run_case(&c, 1, seed + 211);
  c = lin_case("linear_3d_bias_big", 3, x3b, 40, 1, 0), run_case(&c, 1, seed + 212);
  c = lin_case("linear_3d_no_bias_big", 3, x3b, 40, 0, 0), run_case(&c, 1, seed + 213);
  /* x an input: no input gradient, so no primitive for it */
  c = lin_case("linear_x_input_small", 2, x2s, 5, 1, 1), run_case(&c, 0, seed + 220);
  c = lin_case("linear_x_input_big", 3, x3b, 40, 1, 1), run_case(&c, 1, seed + 221);
}

static void test_stacked(unsigned long long seed) {
  const int64_t xs[3] = {4, 3, 6}, xb[3] = {32, 4, 16}, x4b[4] = {2, 16, 4, 16};
  gcase c;
  c = sl_case("stacked_bias_small", 3, xs, 5, 1), run_case(&c, 0, seed + 300);
  c = sl_case("stacked_no_bias_small", 3, xs, 5, 0), run_case(&c, 0, seed + 301);
  c = sl_case("stacked_bias_big", 3, xb, 24, 1), run_case(&c, 1, seed + 310);
  c = sl_case("stacked_no_bias_big", 3, xb, 24, 0), run_case(&c, 1, seed + 311);
  c = sl_case("stacked_4d_bias_big", 4, x4b, 24, 1), run_case(&c, 1, seed + 312);
}

/* ---- the rounding itself, the library each mode plans, the printed plan, errors ---- */

/* round_bf16 (arithmetic) and base/bf16 (bits) agree, ties to even included, and the error is within U_BF16. */
static void test_rounding(unsigned long long seed) {
  int64_t bad = -1;
  double worst_rel = 0.0;
  float x = 0.0f, rb = 0.0f, want = 0.0f;
  for (int64_t i = 0; i < 20000 && bad < 0; i++) {
    x = 2.0f * tg_rng_uniform(seed, 30, (uint64_t)i) - 1.0f;
    if (i % 4 == 1) { /* a tie: the 16 dropped bits are exactly half, with both parities of the kept last bit */
      uint32_t u;
      memcpy(&u, &x, 4);
      u = (u & 0xffff0000u) | 0x8000u;
      memcpy(&x, &u, 4);
    }
    tg_f32_round_bf16(&rb, &x, 1);
    want = round_bf16(x);
    if (rb != want) bad = i;
    if (x != 0.0f) worst_rel = fmax(worst_rel, fabs((double)want - x) / fabs((double)x));
  }
  CHECK_MSG(bad < 0, "rounding %.9g: base/bf16 gives %.9g, round to nearest even %.9g", x, rb, want);
  CHECK_MSG(worst_rel <= U_BF16, "relative rounding error %g above 2^-8", worst_rel);
  CHECK_MSG(worst_rel > U_BF16 / 2, "relative rounding error at most %g: never near 2^-8 (ties not reached)", worst_rel);
  /* the worst case of the derivation, and ties to even in both directions */
  const float in[4] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -(1.0f + 0x1p-8f), 1.0f + 0x1p-8f + 0x1p-20f};
  const float out[4] = {1.0f, 1.0f + 0x1p-6f, -1.0f, 1.0f + 0x1p-7f};
  for (int i = 0; i < 4; i++) {
    tg_f32_round_bf16(&rb, &in[i], 1);
    CHECK_MSG(rb == out[i] && round_bf16(in[i]) == out[i], "bf16(%.9g): base/bf16 %.9g, test %.9g, want %.9g",
              in[i], rb, round_bf16(in[i]), out[i]);
  }
}

/* tg_cpu_prepare for a linear node of rows x in x out under each mode: a oneDNN plan (every product, bf16 operands where
 * oneDNN has a bf16 matmul) exactly when oneDNN is here and the mode asks for one, or by default when the size does
 * and oneDNN has its brgemm kernels on this CPU (on AVX2 its GEMM allocates per call and lost to OpenBLAS). */
static void test_policy(void) {
  int have = *tg_gemm_prim_library() != '\0';
  static float dummy[1];
  for (int big = 0; big < 2; big++)
    for (int m = 0; m < 3; m++)
      for (int bf16 = 0; bf16 < 2; bf16++) {
        int64_t rows = big ? 64 : 4, nin = big ? 32 : 8, nout = big ? 32 : 8; /* 65536 or 256 multiply-adds */
        const int64_t sx[2] = {rows, nin}, sw[2] = {nout, nin}, sy[2] = {rows, nout};
        tg_tensor tx, tw, ty;
        tg_tensor_view(&tx, "x", tg_cpu(0), TG_F32, 2, sx, NULL);
        tg_tensor_view(&tw, "w", tg_cpu(0), TG_F32, 2, sw, NULL);
        tg_tensor_view(&ty, "y", tg_cpu(0), TG_F32, 2, sy, NULL);
        tg_attr attr;
        memset(&attr, 0, sizeof attr);
        tg_kernel_args a;
        memset(&a, 0, sizeof a);
        a.n_in = 2, a.in[0] = &tx, a.in[1] = &tw, a.out = &ty, a.attr = &attr;
        a.in_grad[0] = a.in_grad[1] = dummy;
        a.node_name = "policy";
        a.compute = bf16 ? TG_BF16 : TG_F32;
        set_mode(k_modes[m]);
        void *state = NULL;
        const char *mode = k_modes[m] ? k_modes[m] : "(unset)";
        CHECK_OK(tg_cpu_prepare(TG_OP_LINEAR, &a, &state));
        /* the default settles a small bf16 node to f32 where bf16 GEMMs are native; the other modes never do */
        int settled = bf16 && m == 2 && !big && tg_gemm_prim_has_bf16();
        CHECK_MSG(a.compute == (bf16 && !settled ? TG_BF16 : TG_F32), "TICKGRAD_GEMM=%s, %s, %lld multiply-adds: "
                  "compute %s after prepare", mode, bf16 ? "bf16" : "f32", (long long)(rows * nin * nout),
                  tg_dtype_name(a.compute));
        int want = have && (m == 1 || (m == 2 && big && tg_gemm_prim_has_brgemm()));
        const tg_cpu_gemm_plan *p = state;
        CHECK_MSG((p != NULL) == want, "TICKGRAD_GEMM=%s, %s, %lld multiply-adds: %s plan, want %s", mode,
                  bf16 ? "bf16" : "f32", (long long)(rows * nin * nout), p ? "a oneDNN" : "no", want ? "one" : "none");
        if (p) {
          CHECK_MSG(p->fwd && p->d_a && p->d_b, "TICKGRAD_GEMM=%s: a primitive for each of the three products", mode);
          CHECK_MSG(p->packed_bf16 == (bf16 && tg_gemm_prim_has_bf16()),
                    "TICKGRAD_GEMM=%s, %s: packed_bf16 %d with has_bf16 %d", mode, bf16 ? "bf16" : "f32",
                    p->packed_bf16, tg_gemm_prim_has_bf16());
          /* packed: x and w (no mirrors here, both gradients wanted) kept in bf16 for the backward, and counted */
          size_t kept = tg_cpu_prepared_bytes(state), want_kept = p->packed_bf16 ? 2 * (size_t)(rows * nin + nout * nin) : 0;
          CHECK_MSG(kept == want_kept, "TICKGRAD_GEMM=%s, %s: %zu bytes kept, want %zu", mode, bf16 ? "bf16" : "f32", kept,
                    want_kept);
        }
        tg_cpu_unprepare(state);
      }
  set_mode(NULL);
  printf("GEMMs here: %s; %s\n", have ? tg_gemm_prim_library() : "OpenBLAS only",
         tg_gemm_prim_has_bf16() ? "packed bf16 primitives (the bf16 operands path)"
                                 : "no bf16 matmul: bf16 GEMMs run rounded operands in f32");
}

/* linear -> relu -> matmul -> sum: the bf16 plan counts 2 GEMM ops in bf16 and 2 in f32 under TICKGRAD_GEMM=openblas,
 * and by default the same, or on a CPU with native bf16 GEMMs both GEMM ops settled to f32 (too small); the f32 plan
 * says nothing. */
static void test_plan_text(void) {
  const int64_t sx[2] = {8, 16}, sw[2] = {12, 16}, sb[1] = {12};
  for (int run = 0; run < 3; run++) {
    int prec = run > 0, deflt = run == 2;
    set_mode(deflt ? NULL : "openblas");
    tg_store *store = tg_store_new(tg_cpu(0), 3);
    tg_graph *g = tg_graph_new(store, "mixed");
    tg_tensor *x = tg_param(g, "x", 2, sx, (tg_init){TG_INIT_UNIFORM, -1, 1});
    tg_tensor *w = tg_param(g, "w", 2, sw, (tg_init){TG_INIT_UNIFORM, -1, 1});
    tg_tensor *b = tg_param(g, "bias", 1, sb, (tg_init){TG_INIT_UNIFORM, -1, 1});
    tg_tensor *h = tg_relu(g, tg_linear(g, x, w, b));
    tg_tensor *loss = tg_sum(g, tg_matmul(g, h, h, 1, 0));
    tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
    opts.precision = prec ? TG_BF16 : TG_F32;
    CHECK_OK(loss ? tg_graph_plan(g, &opts) : tg_graph_status(g));
    if (prec && deflt && tg_gemm_prim_has_bf16()) {
      CHECK(plan_says(g, "precision bf16: 0 GEMM ops with bf16 operands and f32 accumulation; 2 GEMM ops in f32 (too "
                         "small for the device's bf16 GEMMs: rounding them would cost more than it saves); the other 2 "
                         "ops in f32 (no bf16 kernels"));
      CHECK_OK(tg_graph_run(g));
    } else if (prec) {
      CHECK(plan_says(g, "precision bf16: 2 GEMM ops with bf16 operands and f32 accumulation; the other 2 ops in f32"));
      CHECK_OK(tg_graph_run(g));
      CHECK_OK(tg_graph_backward(g, loss));
    } else {
      char *text = NULL;
      size_t len = 0;
      FILE *f = open_memstream(&text, &len);
      CHECK(f != NULL);
      if (f) {
        tg_graph_print_plan(g, f);
        fclose(f);
        CHECK_MSG(text && !strstr(text, "bf16"), "an f32 plan mentions bf16:\n%s", text ? text : "");
      }
      free(text);
    }
    tg_graph_free(g);
    tg_store_free(store);
  }
  set_mode(NULL);
}

/* 1 when the last error holds every string of want (NULL-terminated); prints it otherwise. */
static int error_has(const char *const *want) {
  for (int i = 0; want[i]; i++)
    if (!strstr(tg_last_error(), want[i])) {
      fprintf(stderr, "error \"%s\" lacks \"%s\"\n", tg_last_error(), want[i]);
      return 0;
    }
  return 1;
}

/* A plan of one linear node with the given precision under TICKGRAD_GEMM=mode; its status. */
static tg_status plan_linear(tg_dtype prec, const char *mode) {
  const int64_t sx[2] = {4, 8}, sw[2] = {3, 8};
  tg_store *store = tg_store_new(tg_cpu(0), 4);
  tg_graph *g = tg_graph_new(store, "errors");
  tg_tensor *y = tg_linear(g, tg_param(g, "x", 2, sx, (tg_init){TG_INIT_ZEROS, 0, 0}),
                           tg_param(g, "w", 2, sw, (tg_init){TG_INIT_ZEROS, 0, 0}), NULL);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.precision = prec;
  set_mode(mode);
  tg_status st = y ? tg_graph_plan(g, &opts) : tg_graph_status(g);
  set_mode(NULL);
  tg_graph_free(g);
  tg_store_free(store);
  return st;
}

static void test_errors(void) {
  CHECK_STATUS(plan_linear((tg_dtype)7, NULL), TG_ERR_INVALID);
  CHECK(error_has((const char *const[]){"errors", "precision 7", "f32, bf16", NULL}));
  CHECK_STATUS(plan_linear(TG_I32, NULL), TG_ERR_INVALID);
  CHECK(error_has((const char *const[]){"precision i32", NULL}));
  for (int prec = 0; prec < 2; prec++) {
    CHECK_STATUS(plan_linear(prec ? TG_BF16 : TG_F32, "bogus"), TG_ERR_INVALID);
    CHECK(error_has((const char *const[]){"TICKGRAD_GEMM=bogus", "auto, openblas or onednn", NULL}));
  }
  CHECK_OK(plan_linear(TG_BF16, "auto"));
}

int main(void) {
  unsigned long long seed = tg_test_seed(2024);
  test_rounding(seed);
  test_policy();
  test_plan_text();
  test_errors();
  test_matmul(seed);
  test_linear(seed);
  test_stacked(seed);
  return tg_test_finish();
}
