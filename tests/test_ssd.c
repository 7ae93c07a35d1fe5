/* ssd_scan: chunked == sequential in double, the float op against the double oracle, chunk-size
 * invariance, exact gradients of all six inputs, accumulation, thread-count independence, and build errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "ops/ssd_ref.h"
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/graph.h"
#include "tickgrad/rng.h"
#include "tickgrad/tickgrad.h"

enum { X, DT, AA, BM, CM, DD, NIN }; /* operand order of the op */
static const char *const k_names[NIN] = {"x", "dt", "A", "Bm", "Cm", "D"};

/* One problem: dims, and the inputs as floats and as the same values in double. */
typedef struct ssd_in {
  tg_ssd_dims d;
  int has_D;
  int ndim[NIN];
  int64_t shape[NIN][4];
  int64_t n[NIN];
  float *f[NIN];
  double *v[NIN];
} ssd_in;

static double softplus(double v) { return v > 20 ? v : log1p(exp(v)); }

/* Realistic inputs (as ssd_check.py): x, Bm, Cm, D ~ N(0, 1), dt = softplus(N(0, 1) - 4),
 * A = -exp(U(0, 1)). strong: dt = softplus(N(0, 1)), A = -U(1, 16) (decays down to exp(-100)). */
static ssd_in make_in(int64_t B, int64_t L, int64_t H, int64_t P, int64_t G, int64_t N, int has_D, int strong,
                      uint64_t seed) {
  ssd_in in;
  memset(&in, 0, sizeof in);
  in.d = tg_ssd_dims_make(B, L, H, P, G, N, 1);
  in.has_D = has_D;
  const int64_t sh[NIN][4] = {{B, L, H, P}, {B, L, H}, {H}, {B, L, G, N}, {B, L, G, N}, {H}};
  const int nd[NIN] = {4, 3, 1, 4, 4, 1};
  for (int k = 0; k < NIN; k++) {
    in.ndim[k] = nd[k];
    in.n[k] = 1;
    for (int i = 0; i < nd[k]; i++) in.n[k] *= (in.shape[k][i] = sh[k][i]);
    in.f[k] = malloc((size_t)in.n[k] * sizeof(float));
    in.v[k] = malloc((size_t)in.n[k] * sizeof(double));
    for (int64_t e = 0; e < in.n[k]; e++) {
      double z = tg_rng_normal(seed, (uint64_t)k, (uint64_t)e),
             u = tg_rng_uniform(seed, 10 + (uint64_t)k, (uint64_t)e);
      double val = k == DT   ? softplus(z - (strong ? 0.0 : 4.0))
                   : k == AA ? (strong ? -(1.0 + 15.0 * u) : -exp(u))
                             : z;
      in.f[k][e] = (float)val;
      in.v[k][e] = in.f[k][e];
    }
  }
  return in;
}

static void free_in(ssd_in *in) {
  for (int k = 0; k < NIN; k++) {
    free(in->f[k]);
    free(in->v[k]);
  }
}

static int64_t numel_y(const tg_ssd_dims *d) { return d->B * d->L * d->H * d->P; }

/* The double sequential oracle. */
static double *seq_d(const ssd_in *in) {
  const tg_ssd_dims *d = &in->d;
  double *y = malloc((size_t)numel_y(d) * sizeof(double)), *h = malloc((size_t)(d->N * d->P) * sizeof(double));
  for (int64_t pair = 0; pair < d->B * d->H; pair++)
    tg_ssd_seq_pair_d(d, pair, in->v[X], in->v[DT], in->v[AA], in->v[BM], in->v[CM],
                      in->has_D ? in->v[DD] : NULL, y, h);
  free(h);
  return y;
}

/* The chunked algorithm of ssd_ref.h in double with chunk Q. */
static double *chunked_d(const ssd_in *in, int64_t Q) {
  const tg_ssd_dims d = tg_ssd_dims_make(in->d.B, in->d.L, in->d.H, in->d.P, in->d.G, in->d.N, Q);
  double *y = malloc((size_t)numel_y(&d) * sizeof(double));
  double *ws = malloc(tg_ssd_fwd_layout_of(&d).total * sizeof(double));
  for (int64_t pair = 0; pair < d.B * d.H; pair++)
    tg_ssd_fwd_pair_d(&d, pair, in->v[X], in->v[DT], in->v[AA], in->v[BM], in->v[CM],
                      in->has_D ? in->v[DD] : NULL, y, ws);
  free(ws);
  return y;
}

static double max_abs_d(const double *a, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}

/* max |a - b| / max |b| */
static double rel_err_d(const double *a, const double *b, int64_t n) {
  double e = 0;
  for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
  double m = max_abs_d(b, n);
  return m > 0 ? e / m : e;
}

static double rel_err_f(const float *a, const double *b, int64_t n) {
  double e = 0;
  for (int64_t i = 0; i < n; i++) e = isnan(a[i]) ? INFINITY : fmax(e, fabs((double)a[i] - b[i]));
  double m = max_abs_d(b, n);
  return m > 0 ? e / m : e;
}

/* ---- the float op through a graph ---- */

/* Runs tg_ssd_scan with chunk Q on cpu:0, every input a parameter. y [numel x] receives the output.
 * When dy is non-NULL, plans for training and back-propagates dy `passes` times without zeroing in
 * between; grads[k] (numel of input k) receives each input's gradient. Returns 1 on success. */
static int run_op(const ssd_in *in, int Q, float *y, const float *dy, int passes, float **grads) {
  tg_store *s = tg_store_new(tg_cpu(0), 3);
  tg_graph *g = tg_graph_new(s, "ssd");
  tg_tensor *t[NIN] = {0};
  for (int k = 0; k < NIN; k++)
    if (k != DD || in->has_D)
      t[k] = tg_param(g, k_names[k], in->ndim[k], in->shape[k], (tg_init){TG_INIT_ZEROS, 0, 0});
  tg_tensor *out = tg_ssd_scan(g, t[X], t[DT], t[AA], t[BM], t[CM], t[DD], Q);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.training = dy != NULL;
  o.poison = 1;
  o.guard_bytes = 64;
  tg_status st = out ? tg_graph_plan(g, &o) : tg_graph_status(g);
  for (int k = 0; st == TG_OK && k < NIN; k++)
    if (t[k])
      memcpy(tg_store_tensor(s, tg_store_find(s, k_names[k]), 0).data, in->f[k],
             (size_t)in->n[k] * sizeof(float));
  if (st == TG_OK) st = tg_graph_run(g);
  if (st == TG_OK) memcpy(y, out->data, (size_t)numel_y(&in->d) * sizeof(float));
  if (st == TG_OK && dy) {
    st = tg_store_zero_grads(s);
    for (int p = 0; st == TG_OK && p < passes; p++) st = tg_graph_backward_seeded(g, out, dy);
    for (int k = 0; st == TG_OK && k < NIN; k++)
      if (t[k])
        memcpy(grads[k], tg_store_tensor(s, tg_store_find(s, k_names[k]), 1).data,
               (size_t)in->n[k] * sizeof(float));
  }
  if (st == TG_OK) st = tg_graph_check_guards(g);
  CHECK_MSG(st == TG_OK, "ssd_scan graph (Q %d): %s", Q, tg_last_error());
  tg_graph_free(g);
  tg_store_free(s);
  return st == TG_OK;
}

/* ---- 1. chunked == sequential in double ---- */

static void check_chunked_vs_sequential(void) {
  const struct {
    int64_t B, L, H, P, G, N, Q;
    int has_D, strong;
  } k[] = {
      {1, 48, 2, 3, 1, 4, 16, 1, 0},  /* ssd_check.py's sizes */
      {2, 37, 4, 5, 2, 6, 8, 1, 0},   /* L not a multiple of Q, G = 2 */
      {1, 50, 6, 4, 3, 5, 64, 0, 0},  /* Q > L, G = 3, no D */
      {2, 29, 4, 3, 4, 3, 1, 1, 0},   /* Q = 1, G = H */
      {1, 100, 2, 4, 1, 3, 32, 1, 1}, /* strong decays: exponents down to about -100 */
      {1, 64, 2, 3, 2, 4, 7, 1, 1},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    ssd_in in = make_in(k[i].B, k[i].L, k[i].H, k[i].P, k[i].G, k[i].N, k[i].has_D, k[i].strong, 100 + i);
    double *ys = seq_d(&in), *yc = chunked_d(&in, k[i].Q);
    double e = rel_err_d(yc, ys, numel_y(&in.d));
    CHECK_MSG(e < 1e-10, "case %zu (L %lld, Q %lld): chunked vs sequential relative error %.3g", i,
              (long long)k[i].L, (long long)k[i].Q, e);
    CHECK(max_abs_d(ys, numel_y(&in.d)) > 0.1); /* a real signal, not all zeros */
    free(ys);
    free(yc);
    free_in(&in);
  }
}

/* ---- 2. the float op against the double oracle at a large size ---- */

static void check_float_large(void) {
  const int64_t ns[] = {64, 128};
  const int qs[] = {64, 256};
  for (int j = 0; j < 2; j++) {
    ssd_in in = make_in(1, 2048, 8, 64, 1, ns[j], 1, 0, 7);
    double *ys = seq_d(&in);
    float *y = malloc((size_t)numel_y(&in.d) * sizeof(float));
    for (int i = 0; i < 2; i++) {
      if (!run_op(&in, qs[i], y, NULL, 0, NULL)) continue;
      double e = rel_err_f(y, ys, numel_y(&in.d));
      printf("float op vs double oracle, L 2048 H 8 P 64 N %lld Q %d: relative error %.3g\n", (long long)ns[j],
             qs[i], e);
      CHECK_MSG(e < 1e-5, "N %lld Q %d: relative error %.3g", (long long)ns[j], qs[i], e);
    }
    free(y);
    free(ys);
    free_in(&in);
  }
}

/* ---- 3. chunk-size invariance ---- */

#define INVARIANCE_TOL 4e-6 /* max |y_Q - y_16| <= INVARIANCE_TOL * max |y|: float rounding only */

static void check_chunk_invariance(void) {
  ssd_in in = make_in(2, 300, 4, 16, 2, 16, 1, 0, 9);
  int64_t ny = numel_y(&in.d);
  double *ys = seq_d(&in), *y16 = malloc((size_t)ny * sizeof(double));
  float *y = malloc((size_t)ny * sizeof(float));
  const int qs[] = {16, 64, 256, 1000};
  double my = max_abs_d(ys, ny);
  for (int i = 0; i < 4; i++) {
    if (!run_op(&in, qs[i], y, NULL, 0, NULL)) continue;
    CHECK_MSG(rel_err_f(y, ys, ny) < 1e-5, "Q %d vs the oracle: %.3g", qs[i], rel_err_f(y, ys, ny));
    if (i == 0) {
      for (int64_t e = 0; e < ny; e++) y16[e] = y[e];
      continue;
    }
    double worst = 0;
    for (int64_t e = 0; e < ny; e++) worst = fmax(worst, fabs((double)y[e] - y16[e]));
    printf("chunk invariance: max |y_Q%d - y_Q16| / max |y| = %.3g\n", qs[i], worst / my);
    CHECK_MSG(worst <= INVARIANCE_TOL * my, "Q %d differs from Q 16 by %.3g (max |y| %.3g)", qs[i], worst, my);
  }
  free(y);
  free(y16);
  free(ys);
  free_in(&in);
}

/* ---- 4. gradients ---- */

/* op_check: x, dt, A, Bm, Cm[, D] as parameters; ctx holds {chunk, has_D}. */
typedef struct oc_ssd_ctx {
  int chunk, has_D;
} oc_ssd_ctx;

static tg_tensor *oc_build(tg_graph *g, tg_tensor **in, const void *ctx) {
  const oc_ssd_ctx *c = ctx;
  return tg_ssd_scan(g, in[0], in[1], in[2], in[3], in[4], c->has_D ? in[5] : NULL, c->chunk);
}

static void oc_ref(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const oc_ssd_ctx *c = ctx;
  const tg_ssd_dims d = tg_ssd_dims_make(spec[0].shape[0], spec[0].shape[1], spec[0].shape[2], spec[0].shape[3],
                                         spec[3].shape[2], spec[3].shape[3], c->chunk);
  double *h = malloc((size_t)(d.N * d.P) * sizeof(double));
  for (int64_t pair = 0; pair < d.B * d.H; pair++)
    tg_ssd_seq_pair_d(&d, pair, in[0], in[1], in[2], in[3], in[4], c->has_D ? in[5] : NULL, out, h);
  free(h);
}

/* Finite differences of the double oracle (op_check), float op gradients through a graph. */
static void check_gradients_op_check(unsigned long long seed) {
  static const oc_ssd_ctx with_d = {4, 1}, without_d = {4, 0}, long_chunk = {64, 1}, unit = {1, 1};
  const struct {
    const char *name;
    int64_t B, L, H, P, G, N;
    const oc_ssd_ctx *ctx;
  } k[] = {
      {"ssd_scan B2 L10 H2 P3 G1 N4 Q4 with D", 2, 10, 2, 3, 1, 4, &with_d},
      {"ssd_scan B1 L11 H4 P2 G2 N3 Q4 without D", 1, 11, 4, 2, 2, 3, &without_d},
      {"ssd_scan B2 L7 H3 P2 G3 N2 Q64 (Q > L)", 2, 7, 3, 2, 3, 2, &long_chunk},
      {"ssd_scan B1 L9 H2 P3 G2 N2 Q1", 1, 9, 2, 3, 2, 2, &unit},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    const int64_t xs[4] = {k[i].B, k[i].L, k[i].H, k[i].P}, bs[4] = {k[i].B, k[i].L, k[i].G, k[i].N},
                  hs[1] = {k[i].H};
    oc_case c = {.name = k[i].name, .build = oc_build, .ref = oc_ref, .ctx = k[i].ctx};
    c.in[c.n_in++] = oc_f32_input("x", 4, xs, 1, -1.0, 1.0);
    c.in[c.n_in++] = oc_f32_input("dt", 3, xs, 1, 0.05, 0.6);
    c.in[c.n_in++] = oc_f32_input("A", 1, hs, 1, -1.5, -0.3);
    c.in[c.n_in++] = oc_f32_input("Bm", 4, bs, 1, -1.0, 1.0);
    c.in[c.n_in++] = oc_f32_input("Cm", 4, bs, 1, -1.0, 1.0);
    if (k[i].ctx->has_D) c.in[c.n_in++] = oc_f32_input("D", 1, hs, 1, -1.0, 1.0);
    oc_run(&c, seed);
  }
}

/* The objective <w, y> of the double oracle (w [numel y]). */
static double objective(const ssd_in *in, const double *w) {
  double *y = seq_d(in), j = 0;
  for (int64_t e = 0; e < numel_y(&in->d); e++) j += w[e] * y[e];
  free(y);
  return j;
}

/* The backward of ssd_ref.h in double: grads[k] (numel of input k) = d <w, y> / d input k. */
static void bwd_d(const ssd_in *in, const double *w, double **grads) {
  const tg_ssd_dims *d = &in->d;
  tg_ssd_bwd_layout L = tg_ssd_bwd_layout_of(d);
  double *ws = malloc(L.total * sizeof(double));
  for (int k = 0; k < NIN; k++) memset(grads[k], 0, (size_t)in->n[k] * sizeof(double));
  const double *D = in->has_D ? in->v[DD] : NULL;
  for (int64_t pair = 0; pair < d->B * d->H; pair++)
    tg_ssd_bwd_pair_d(d, pair, in->v[X], in->v[DT], in->v[AA], in->v[BM], in->v[CM], D, w, grads[X], grads[DT],
                      1, 1, ws);
  for (int64_t bt = 0; bt < d->B * d->L; bt++) tg_ssd_reduce_row_d(d, bt, ws, grads[BM], grads[CM]);
  for (int64_t h = 0; h < d->H; h++) tg_ssd_reduce_head_d(d, h, ws, grads[AA], in->has_D ? grads[DD] : NULL);
  free(ws);
}

/* The backward algorithm in double against central differences of the double oracle: exact up to
 * the finite-difference error (about 1e-9 relative here). */
static void check_bwd_exact_double(void) {
  const struct {
    int64_t B, L, H, P, G, N;
    int has_D, strong;
  } k[] = {
      {2, 13, 4, 3, 2, 3, 1, 0}, /* K = 4 blocks of 4, 4, 4, 1 */
      {1, 16, 2, 2, 1, 3, 0, 0}, /* K divides L, no D */
      {1, 10, 3, 2, 3, 2, 1, 1}, /* strong decays */
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    ssd_in in = make_in(k[i].B, k[i].L, k[i].H, k[i].P, k[i].G, k[i].N, k[i].has_D, k[i].strong, 300 + i);
    int64_t ny = numel_y(&in.d);
    double *w = malloc((size_t)ny * sizeof(double)), *grads[NIN];
    for (int64_t e = 0; e < ny; e++) w[e] = 2.0 * tg_rng_uniform(5, 1, (uint64_t)e) - 1.0;
    for (int j = 0; j < NIN; j++) grads[j] = calloc((size_t)in.n[j], sizeof(double));
    bwd_d(&in, w, grads);
    for (int j = 0; j < NIN; j++) {
      if (j == DD && !in.has_D) continue;
      double worst = 0, scale = max_abs_d(grads[j], in.n[j]);
      for (int64_t e = 0; e < in.n[j]; e++) {
        double v = in.v[j][e], hstep = 1e-6 * (1.0 + fabs(v));
        in.v[j][e] = v + hstep;
        double jp = objective(&in, w);
        in.v[j][e] = v - hstep;
        double jm = objective(&in, w);
        in.v[j][e] = v;
        worst = fmax(worst, fabs((jp - jm) / (2 * hstep) - grads[j][e]));
      }
      CHECK_MSG(scale > 0 && worst <= 1e-7 * scale,
                "case %zu d%s: worst difference from finite differences %.3g "
                "(max |grad| %.3g)",
                i, k_names[j], worst, scale);
    }
    for (int j = 0; j < NIN; j++) free(grads[j]);
    free(w);
    free_in(&in);
  }
}

/* The float op's gradients (through a graph) against the double backward at a medium size, and
 * accumulation: a second backward pass without zeroing doubles every gradient. P and N of 32 or
 * more run the CPU kernels' vector tiles, smaller ones their element-wise edges; chunks of 16 and
 * 64 leave a last chunk of a length that is not a multiple of the tile rows. */
static void check_float_grads(int64_t P, int64_t N, int q0, int q1, uint64_t seed) {
  ssd_in in = make_in(2, 150, 4, P, 2, N, 1, 0, seed);
  int64_t ny = numel_y(&in.d);
  double *w = malloc((size_t)ny * sizeof(double)), *want[NIN];
  float *wf = malloc((size_t)ny * sizeof(float)), *y = malloc((size_t)ny * sizeof(float)), *got[NIN],
        *got2[NIN];
  for (int64_t e = 0; e < ny; e++) w[e] = wf[e] = 2.0f * tg_rng_uniform(6, 1, (uint64_t)e) - 1.0f;
  for (int j = 0; j < NIN; j++) {
    want[j] = calloc((size_t)in.n[j], sizeof(double));
    got[j] = calloc((size_t)in.n[j], sizeof(float));
    got2[j] = calloc((size_t)in.n[j], sizeof(float));
  }
  bwd_d(&in, w, want);
  const int qs[] = {q0, q1};
  for (int q = 0; q < 2; q++) {
    if (!run_op(&in, qs[q], y, wf, 1, got) || !run_op(&in, qs[q], y, wf, 2, got2)) continue;
    for (int j = 0; j < NIN; j++) {
      double e = rel_err_f(got[j], want[j], in.n[j]);
      printf("float gradient d%s (P %lld N %lld Q %d) vs double: relative error %.3g\n", k_names[j],
             (long long)P, (long long)N, qs[q], e);
      CHECK_MSG(e < 1e-4, "Q %d d%s: relative error %.3g", qs[q], k_names[j], e);
      int64_t bad = -1;
      for (int64_t i = 0; i < in.n[j] && bad < 0; i++)
        if (!(fabsf(got2[j][i] - 2.0f * got[j][i]) <= 1e-6f * (1.0f + fabsf(got[j][i])))) bad = i;
      CHECK_MSG(bad < 0, "d%s element %lld: two backward passes gave %.9g, one gave %.9g (must accumulate)",
                k_names[j], (long long)bad, bad < 0 ? 0.0 : got2[j][bad], bad < 0 ? 0.0 : got[j][bad]);
    }
  }
  for (int j = 0; j < NIN; j++) {
    free(want[j]);
    free(got[j]);
    free(got2[j]);
  }
  free(w);
  free(wf);
  free(y);
  free_in(&in);
}

/* The same output and gradients, bit for bit, at 1, 2 and 3 threads (pairs run in parallel; every
 * sum keeps its order whatever the thread count). */
static void check_threads_bitwise(void) {
  ssd_in in = make_in(2, 100, 4, 32, 2, 64, 1, 0, 44);
  int64_t ny = numel_y(&in.d);
  float *wf = malloc((size_t)ny * sizeof(float)), *y[3], *gr[3][NIN];
  for (int64_t e = 0; e < ny; e++) wf[e] = 2.0f * tg_rng_uniform(9, 1, (uint64_t)e) - 1.0f;
  const int threads[3] = {1, 2, 3}, before = tg_threads();
  for (int t = 0; t < 3; t++) {
    y[t] = malloc((size_t)ny * sizeof(float));
    for (int j = 0; j < NIN; j++) gr[t][j] = calloc((size_t)in.n[j], sizeof(float));
    CHECK_OK(tg_set_threads(threads[t]));
    CHECK(run_op(&in, 32, y[t], wf, 1, gr[t]));
  }
  CHECK_OK(tg_set_threads(before));
  for (int t = 1; t < 3; t++) {
    CHECK_MSG(memcmp(y[0], y[t], (size_t)ny * sizeof(float)) == 0, "y at %d threads differs from 1 thread",
              threads[t]);
    for (int j = 0; j < NIN; j++)
      CHECK_MSG(memcmp(gr[0][j], gr[t][j], (size_t)in.n[j] * sizeof(float)) == 0,
                "d%s at %d threads differs from 1 thread", k_names[j], threads[t]);
  }
  for (int t = 0; t < 3; t++) {
    free(y[t]);
    for (int j = 0; j < NIN; j++) free(gr[t][j]);
  }
  free(wf);
  free_in(&in);
}

/* A direct kernel call with only dA wanted (every other in_grad NULL) adds into dA (the +=
 * convention); a workspace smaller than tg_ssd_workspace says is an error. */
static void check_partial_grads(void) {
  ssd_in in = make_in(1, 12, 2, 3, 1, 2, 1, 0, 33);
  const tg_ssd_dims *d = &in.d;
  int64_t ny = numel_y(d);
  double *w = malloc((size_t)ny * sizeof(double)), *want[NIN];
  float *dy = malloc((size_t)ny * sizeof(float));
  for (int64_t e = 0; e < ny; e++) w[e] = dy[e] = 2.0f * tg_rng_uniform(8, 1, (uint64_t)e) - 1.0f;
  for (int j = 0; j < NIN; j++) want[j] = calloc((size_t)in.n[j], sizeof(double));
  bwd_d(&in, w, want);
  tg_tensor t[NIN + 1];
  tg_kernel_args a;
  memset(&a, 0, sizeof a);
  tg_attr attr = {0};
  attr.i[0] = 5;
  attr.i[1] = 1;
  for (int k = 0; k < NIN; k++) {
    tg_tensor_view(&t[k], k_names[k], tg_cpu(0), TG_F32, in.ndim[k], in.shape[k], in.f[k]);
    a.in[k] = &t[k];
  }
  a.n_in = NIN;
  a.out = &t[X];
  a.attr = &attr;
  a.node_name = "ssd_direct";
  float dA[2] = {10.0f, 20.0f};
  a.in_grad[AA] = dA;
  a.out_grad = dy;
  size_t bytes = tg_ssd_workspace(&a);
  a.ws = malloc(bytes);
  a.ws_bytes = bytes;
  CHECK_OK(tg_cpu_ssd_scan_bwd(&a));
  for (int h = 0; h < 2; h++)
    CHECK_MSG(fabs(dA[h] - (h ? 20.0 : 10.0) - want[AA][h]) <= 1e-5 * (1.0 + fabs(want[AA][h])),
              "dA[%d] = %.9g, want %.9g + %.9g", h, dA[h], h ? 20.0 : 10.0, want[AA][h]);
  a.ws_bytes = bytes - 4; /* a workspace too small is an error, not an overrun */
  CHECK_STATUS(tg_cpu_ssd_scan_bwd(&a), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "ssd_direct") && strstr(tg_last_error(), "workspace"), "message: %s",
            tg_last_error());
  free(a.ws);
  for (int j = 0; j < NIN; j++) free(want[j]);
  free(w);
  free(dy);
  free_in(&in);
}

/* ---- 5. the CPU kernels against ssd_ref.h's float algorithm, which the CUDA kernels mirror ---- */

#define PARITY_TOL 1e-5 /* test_cuda.c's PC_TOL: |cpu - cuda| <= PARITY_TOL * (1 + |cpu|) per element */

/* The worst |got - want| / (1 + |want|) over n floats (NaN gives NaN). */
static double parity_err(const float *got, const float *want, int64_t n) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - (double)want[i]) / (1.0 + fabs((double)want[i]));
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

/* test_cuda.c's ssd_scan cases (inputs as its parity runs draw them) and the benchmark's shape: the
 * CPU kernels (chunked matrix form) against tg_ssd_*_f (the recurrence whose arithmetic the CUDA
 * kernels follow step by step), within test_cuda.c's tolerance, so the two backends stay in parity
 * however the CPU kernels sum. */
static void check_ref_float_parity(void) {
  const struct {
    int64_t B, L, H, P, G, N;
    int Q, has_D;
  } k[] = {{2, 300, 4, 8, 2, 6, 160, 1}, {1, 37, 2, 3, 1, 300, 8, 0}, {2, 128, 8, 32, 1, 64, 64, 1}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    ssd_in in = make_in(k[i].B, k[i].L, k[i].H, k[i].P, k[i].G, k[i].N, k[i].has_D, 0, 50 + i);
    const double lo[NIN] = {-1, 0.05, -1.5, -1, -1, -1}, hi[NIN] = {1, 0.5, -0.5, 1, 1, 1};
    for (int j = 0; j < NIN; j++)
      for (int64_t e = 0; e < in.n[j]; e++)
        in.f[j][e] = (float)(lo[j] + (hi[j] - lo[j]) * tg_rng_uniform(60 + i, (uint64_t)j, (uint64_t)e));
    const tg_ssd_dims d = tg_ssd_dims_make(k[i].B, k[i].L, k[i].H, k[i].P, k[i].G, k[i].N, k[i].Q);
    int64_t ny = numel_y(&d);
    float *dy = malloc((size_t)ny * sizeof(float)), *y = malloc((size_t)ny * sizeof(float));
    float *yr = malloc((size_t)ny * sizeof(float)), *got[NIN], *want[NIN];
    for (int64_t e = 0; e < ny; e++) dy[e] = 2.0f * tg_rng_uniform(78, 1, (uint64_t)e) - 1.0f;
    for (int j = 0; j < NIN; j++) {
      got[j] = calloc((size_t)in.n[j], sizeof(float));
      want[j] = calloc((size_t)in.n[j], sizeof(float));
    }
    const float *D = k[i].has_D ? in.f[DD] : NULL;
    tg_ssd_bwd_layout bl = tg_ssd_bwd_layout_of(&d);
    size_t nws = tg_ssd_fwd_layout_of(&d).total > bl.total ? tg_ssd_fwd_layout_of(&d).total : bl.total;
    float *ws = malloc(nws * sizeof(float));
    for (int64_t pair = 0; pair < d.B * d.H; pair++)
      tg_ssd_fwd_pair_f(&d, pair, in.f[X], in.f[DT], in.f[AA], in.f[BM], in.f[CM], D, yr, ws);
    for (int64_t pair = 0; pair < d.B * d.H; pair++)
      tg_ssd_bwd_pair_f(&d, pair, in.f[X], in.f[DT], in.f[AA], in.f[BM], in.f[CM], D, dy, want[X], want[DT], 1, 1,
                        ws);
    for (int64_t bt = 0; bt < d.B * d.L; bt++) tg_ssd_reduce_row_f(&d, bt, ws, want[BM], want[CM]);
    for (int64_t h = 0; h < d.H; h++) tg_ssd_reduce_head_f(&d, h, ws, want[AA], k[i].has_D ? want[DD] : NULL);
    if (run_op(&in, k[i].Q, y, dy, 1, got)) {
      double e = parity_err(y, yr, ny);
      printf("cpu kernels vs ssd_ref float, x [%lld, %lld, %lld, %lld] N %lld Q %d: y %.3g", (long long)d.B,
             (long long)d.L, (long long)d.H, (long long)d.P, (long long)d.N, k[i].Q, e);
      CHECK_MSG(e <= PARITY_TOL, "case %zu y: worst error %.3g", i, e);
      for (int j = 0; j < NIN; j++) {
        if (j == DD && !k[i].has_D) continue;
        e = parity_err(got[j], want[j], in.n[j]);
        printf(", d%s %.3g", k_names[j], e);
        CHECK_MSG(e <= PARITY_TOL, "case %zu d%s: worst error %.3g", i, k_names[j], e);
      }
      printf("\n");
    }
    for (int j = 0; j < NIN; j++) {
      free(got[j]);
      free(want[j]);
    }
    free(ws);
    free(dy);
    free(y);
    free(yr);
    free_in(&in);
  }
}

/* ---- 6. build errors ---- */

typedef struct shapes {
  int64_t x[4], dt[3], A[1], Bm[4], Cm[4], D[1];
  int ndt; /* dims of dt (3 normally) */
  tg_dtype xdtype;
} shapes;

static shapes good_shapes(void) {
  shapes s = {{2, 10, 4, 3}, {2, 10, 4}, {4}, {2, 10, 2, 5}, {2, 10, 2, 5}, {4}, 3, TG_F32};
  return s;
}

static void expect_error(const char *what, shapes s, int chunk, tg_status want, const char *const *need) {
  tg_graph *g = tg_graph_new(NULL, "ssd_errors");
  tg_tensor *x = tg_input(g, "x", s.xdtype, 4, s.x), *dt = tg_input(g, "dt", TG_F32, s.ndt, s.dt);
  tg_tensor *A = tg_input(g, "A", TG_F32, 1, s.A), *Bm = tg_input(g, "Bm", TG_F32, 4, s.Bm);
  tg_tensor *Cm = tg_input(g, "Cm", TG_F32, 4, s.Cm), *D = tg_input(g, "D", TG_F32, 1, s.D);
  oc_expect_build_error(g, tg_ssd_scan(g, x, dt, A, Bm, Cm, D, chunk), want, what, need);
}

static void check_build_errors(void) {
  /* the good shapes build */
  shapes s = good_shapes();
  tg_graph *g = tg_graph_new(NULL, "ssd_ok");
  tg_tensor *y = tg_ssd_scan(g, tg_input(g, "x", TG_F32, 4, s.x), tg_input(g, "dt", TG_F32, 3, s.dt),
                             tg_input(g, "A", TG_F32, 1, s.A), tg_input(g, "Bm", TG_F32, 4, s.Bm),
                             tg_input(g, "Cm", TG_F32, 4, s.Cm), NULL, 3);
  CHECK(y != NULL && y->ndim == 4 && y->shape[0] == 2 && y->shape[1] == 10 && y->shape[2] == 4 &&
        y->shape[3] == 3);
  tg_graph_free(g);

  s = good_shapes();
  s.Bm[2] = s.Cm[2] = 3; /* H = 4 heads, G = 3 groups */
  expect_error("H % G != 0", s, 4, TG_ERR_SHAPE,
               (const char *const[]){"ssd_scan", "'x'", "'Bm'", "H = 4", "G = 3", "multiple of G", NULL});
  s = good_shapes();
  s.dt[2] = 5;
  expect_error("dt shape", s, 4, TG_ERR_SHAPE,
               (const char *const[]){"ssd_scan", "dt 'dt'", "[2, 10, 5]", "[2, 10, 4]", "[B, L, H]", NULL});
  s = good_shapes();
  s.ndt = 2;
  expect_error("dt rank", s, 4, TG_ERR_SHAPE, (const char *const[]){"dt 'dt'", "[2, 10]", "[2, 10, 4]", NULL});
  s = good_shapes();
  s.A[0] = 3;
  expect_error("A shape", s, 4, TG_ERR_SHAPE, (const char *const[]){"A 'A'", "[3]", "[4]", NULL});
  s = good_shapes();
  s.Cm[3] = 6;
  expect_error("Cm differs from Bm", s, 4, TG_ERR_SHAPE,
               (const char *const[]){"Cm 'Cm'", "[2, 10, 2, 6]", "[2, 10, 2, 5]", NULL});
  s = good_shapes();
  s.Bm[1] = 9;
  expect_error("Bm length", s, 4, TG_ERR_SHAPE,
               (const char *const[]){"Bm 'Bm'", "[2, 9, 2, 5]", "[2, 10, G, N]", NULL});
  s = good_shapes();
  s.D[0] = 2;
  expect_error("D shape", s, 4, TG_ERR_SHAPE, (const char *const[]){"D 'D'", "[2]", "[4]", NULL});
  s = good_shapes();
  s.xdtype = TG_I32;
  expect_error("x dtype", s, 4, TG_ERR_SHAPE, (const char *const[]){"x 'x'", "i32", "f32 [B, L, H, P]", NULL});
  s = good_shapes();
  expect_error("chunk 0", s, 0, TG_ERR_INVALID,
               (const char *const[]){"ssd_scan", "chunk length 0", ">= 1", NULL});
}

int main(void) {
  unsigned long long seed = tg_test_seed(20240531);
  check_chunked_vs_sequential();
  check_float_large();
  check_chunk_invariance();
  check_gradients_op_check(seed);
  check_bwd_exact_double();
  check_float_grads(8, 8, 16, 200, 21);
  check_float_grads(32, 64, 64, 37, 22);
  check_threads_bitwise();
  check_ref_float_parity();
  check_partial_grads();
  check_build_errors();
  return tg_test_finish();
}
