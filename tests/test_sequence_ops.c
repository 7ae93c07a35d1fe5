/* Op tests for causal_softmax and conv1d_causal: float64 references, gradients, masking properties, build errors. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/rng.h"
#include "tickgrad/tickgrad.h"

/* ---- float64 references ---- */

/* Keys visible to query q (j <= q + offset), clamped to [0, Tk]; computed in long double so that
 * offsets near the int64 limits stay exact enough to compare. */
static int64_t ref_visible(int64_t q, int64_t offset, int64_t Tk) {
  long double lim = (long double)q + (long double)offset + 1.0L;
  if (lim <= 0.0L) return 0;
  if (lim >= (long double)Tk) return Tk;
  return (int64_t)lim;
}

/* Causal softmax of x [rows, Tk] (query index r % Tq): softmax over the visible keys, 0 elsewhere. */
static void ref_causal_rows(const double *x, int64_t rows, int64_t Tq, int64_t Tk, int64_t offset,
                            double *y) {
  for (int64_t r = 0; r < rows; r++) {
    const double *xr = x + r * Tk;
    double *yr = y + r * Tk;
    int64_t n = ref_visible(r % Tq, offset, Tk);
    double m = -INFINITY, s = 0.0;
    for (int64_t j = 0; j < n; j++) m = fmax(m, xr[j]);
    for (int64_t j = 0; j < n; j++) s += exp(xr[j] - m);
    for (int64_t j = 0; j < Tk; j++) yr[j] = j < n ? exp(xr[j] - m) / s : 0.0;
  }
}

typedef struct cs_ctx {
  int64_t offset;
} cs_ctx;

static tg_tensor *build_causal(tg_graph *g, tg_tensor **in, const void *ctx) {
  return tg_causal_softmax(g, in[0], ((const cs_ctx *)ctx)->offset);
}

static void ref_causal(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  int64_t Tk = spec[0].shape[spec[0].ndim - 1], Tq = spec[0].shape[spec[0].ndim - 2];
  ref_causal_rows(in[0], oc_numel(&spec[0]) / Tk, Tq, Tk, ((const cs_ctx *)ctx)->offset, out);
}

/* out[b,t,c] = bias[c] + sum_k w[c,k] x[b,t-K+1+k,c], x = 0 before t = 0: the direct double loop. */
static void ref_conv_loop(const double *x, const double *w, const double *bias, int64_t B, int64_t L,
                          int64_t C, int64_t K, double *out) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < L; t++)
      for (int64_t c = 0; c < C; c++) {
        double s = bias ? bias[c] : 0.0;
        for (int64_t k = 0; k < K; k++) {
          int64_t u = t - K + 1 + k;
          if (u >= 0) s += w[c * K + k] * x[(b * L + u) * C + c];
        }
        out[(b * L + t) * C + c] = s;
      }
}

typedef struct conv_ctx {
  int has_bias;
} conv_ctx;

static tg_tensor *build_conv(tg_graph *g, tg_tensor **in, const void *ctx) {
  const conv_ctx *c = ctx;
  return tg_conv1d_causal(g, in[0], in[1], c->has_bias ? in[2] : NULL);
}

static void ref_conv(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const conv_ctx *c = ctx;
  ref_conv_loop(in[0], in[1], c->has_bias ? in[2] : NULL, spec[0].shape[0], spec[0].shape[1],
                spec[0].shape[2], spec[1].shape[1], out);
}

/* ---- reference and gradient cases (finite differences through op_check) ---- */

static void run_causal_cases(unsigned long long seed) {
  const int64_t s46[] = {4, 6}, s4[] = {2, 3, 4, 5}, s53[] = {5, 3}, s314[] = {3, 1, 4};
  static const cs_ctx off_m2 = {-2}, off_0 = {0}, off_2 = {2}, off_tk = {6}, off_9 = {9},
                      off_m1 = {-1}, off_1 = {1}, off_m9 = {-9}, off_max = {INT64_MAX},
                      off_min = {INT64_MIN};
  struct {
    const char *name;
    const cs_ctx *ctx;
    int ndim;
    const int64_t *shape;
  } cases[] = {
      {"causal_softmax [4,6] offset -2 (rows 0-1 see nothing)", &off_m2, 2, s46},
      {"causal_softmax [4,6] offset 0", &off_0, 2, s46},
      {"causal_softmax [4,6] offset 2", &off_2, 2, s46},
      {"causal_softmax [4,6] offset 6 = Tk (all visible)", &off_tk, 2, s46},
      {"causal_softmax [4,6] offset 9 beyond Tk", &off_9, 2, s46},
      {"causal_softmax [4,6] offset -9 (nothing visible)", &off_m9, 2, s46},
      {"causal_softmax [2,3,4,5] batch dims offset 0", &off_0, 4, s4},
      {"causal_softmax [2,3,4,5] batch dims offset -1", &off_m1, 4, s4},
      {"causal_softmax [2,3,4,5] batch dims offset 1", &off_1, 4, s4},
      {"causal_softmax [5,3] Tq > Tk offset 0", &off_0, 2, s53},
      {"causal_softmax [3,1,4] Tq = 1 offset 2", &off_2, 3, s314},
      {"causal_softmax [4,6] offset INT64_MAX", &off_max, 2, s46},
      {"causal_softmax [4,6] offset INT64_MIN", &off_min, 2, s46},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    oc_case c = {.name = cases[i].name, .n_in = 1, .build = build_causal, .ref = ref_causal,
                 .ctx = cases[i].ctx};
    c.in[0] = oc_f32_input("x", cases[i].ndim, cases[i].shape, 1, -3.0, 3.0);
    oc_run(&c, seed);
  }
  /* logits far from 0: overflow without the max shift over the visible keys */
  oc_case big = {.name = "causal_softmax [4,6] offset 1, logits in [90, 100)", .n_in = 1,
                 .build = build_causal, .ref = ref_causal, .ctx = &off_1};
  big.in[0] = oc_f32_input("x", 2, s46, 1, 90.0, 100.0);
  oc_run(&big, seed);
}

static void run_conv_cases(unsigned long long seed) {
  static const conv_ctx bias = {1}, nobias = {0};
  struct {
    const char *name;
    const conv_ctx *ctx;
    int64_t B, L, C, K;
  } cases[] = {
      {"conv1d_causal K=1 bias", &bias, 2, 5, 3, 1},
      {"conv1d_causal K=1 no bias", &nobias, 2, 5, 3, 1},
      {"conv1d_causal K=4 bias", &bias, 2, 7, 3, 4},
      {"conv1d_causal K=4 no bias", &nobias, 3, 6, 2, 4},
      {"conv1d_causal K=6 > L=3 bias", &bias, 2, 3, 2, 6},
      {"conv1d_causal K=5 > L=1 no bias", &nobias, 2, 1, 3, 5},
      {"conv1d_causal C=18 K=17 (several channel and tap blocks) bias", &bias, 2, 20, 18, 17},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t sx[] = {cases[i].B, cases[i].L, cases[i].C}, sw[] = {cases[i].C, cases[i].K};
    oc_case c = {.name = cases[i].name, .n_in = 2, .build = build_conv, .ref = ref_conv,
                 .ctx = cases[i].ctx};
    c.in[0] = oc_f32_input("x", 3, sx, 1, -1.0, 1.0);
    c.in[1] = oc_f32_input("w", 2, sw, 1, -1.0, 1.0);
    if (cases[i].ctx->has_bias) c.in[c.n_in++] = oc_f32_input("bias", 1, &sx[2], 1, -1.0, 1.0);
    oc_run(&c, seed);
  }
  /* Only some inputs need gradients: the kernel must skip the NULL ones and fill the others. */
  const int64_t sx[] = {2, 6, 3}, sw[] = {3, 3}, sc[] = {3};
  oc_case c = {.name = "conv1d_causal x bound (no dx), w and bias gradients", .n_in = 3,
               .build = build_conv, .ref = ref_conv, .ctx = &bias};
  c.in[0] = oc_f32_input("x", 3, sx, 0, -1.0, 1.0);
  c.in[1] = oc_f32_input("w", 2, sw, 1, -1.0, 1.0);
  c.in[2] = oc_f32_input("bias", 1, sc, 1, -1.0, 1.0);
  oc_run(&c, seed);
  c.name = "conv1d_causal w and bias bound (no dw, dbias), x gradient";
  c.in[0].diff = 1;
  c.in[1].diff = 0;
  c.in[2].diff = 0;
  oc_run(&c, seed);
}

/* ---- shared operands: each backward must add into a gradient another op already wrote ---- */

/* mse(causal_softmax(x, 1), x): x's gradient comes from mse first, then causal_softmax adds. */
static tg_tensor *build_causal_shared(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  tg_tensor *y = tg_causal_softmax(g, in[0], 1);
  return tg_mse_loss(g, y, in[0]);
}

static void ref_causal_shared(const double *const *in, const oc_input *spec, double *out,
                              const void *ctx) {
  (void)ctx;
  int64_t n = oc_numel(&spec[0]), Tk = spec[0].shape[spec[0].ndim - 1];
  double *y = malloc((size_t)n * sizeof(double)); /* like x */
  ref_causal_rows(in[0], n / Tk, spec[0].shape[spec[0].ndim - 2], Tk, 1, y);
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (y[i] - in[0][i]) * (y[i] - in[0][i]);
  out[0] = s / (double)n;
  free(y);
}

/* mse(conv(conv(x, w, b), w, b), x): x, w and b have two consumers each. */
static tg_tensor *build_conv_shared(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  tg_tensor *h = tg_conv1d_causal(g, in[0], in[1], in[2]);
  tg_tensor *y = tg_conv1d_causal(g, h, in[1], in[2]);
  return tg_mse_loss(g, y, in[0]);
}

static void ref_conv_shared(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  int64_t n = oc_numel(&spec[0]), B = spec[0].shape[0], L = spec[0].shape[1], C = spec[0].shape[2];
  int64_t K = spec[1].shape[1];
  double *h = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double)); /* like x */
  ref_conv_loop(in[0], in[1], in[2], B, L, C, K, h);
  ref_conv_loop(h, in[1], in[2], B, L, C, K, y);
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (y[i] - in[0][i]) * (y[i] - in[0][i]);
  out[0] = s / (double)n;
  free(h);
  free(y);
}

static void run_shared_cases(unsigned long long seed) {
  const int64_t sc[] = {2, 4, 5}, sx[] = {2, 6, 3}, sw[] = {3, 4}, sb[] = {3};
  oc_case c = {.name = "causal_softmax then mse with x: shared x", .n_in = 1,
               .build = build_causal_shared, .ref = ref_causal_shared};
  c.in[0] = oc_f32_input("x", 3, sc, 1, -2.0, 2.0);
  oc_run(&c, seed);
  oc_case v = {.name = "conv1d_causal twice then mse with x: shared x, w, bias", .n_in = 3,
               .build = build_conv_shared, .ref = ref_conv_shared};
  v.in[0] = oc_f32_input("x", 3, sx, 1, -1.0, 1.0);
  v.in[1] = oc_f32_input("w", 2, sw, 1, -1.0, 1.0);
  v.in[2] = oc_f32_input("bias", 1, sb, 1, -1.0, 1.0);
  oc_run(&v, seed);
}

/* ---- direct runs: outputs and gradients read back for property checks ---- */

typedef struct dr_leaf {
  const char *name;
  int ndim;
  int64_t shape[4];
  const float *vals; /* [numel] values copied into the parameter */
  float *grad;       /* [numel] gradient copied out after backward */
} dr_leaf;

static int64_t dr_numel(const dr_leaf *l) {
  int64_t n = 1;
  for (int d = 0; d < l->ndim; d++) n *= l->shape[d];
  return n;
}

/* Plans a training graph (poisoned activations, guard bytes) over parameters leaf[0..n), runs it,
 * copies the output to out and, after backward seeded with dy, each leaf's gradient to its grad.
 * Returns 1 on success. */
static int dr_run(const char *name, int n, dr_leaf *leaf, oc_build_fn build, const void *ctx,
                  float *out, const float *dy) {
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, name);
  tg_tensor *x[OC_MAX_IN];
  for (int k = 0; k < n; k++)
    x[k] = tg_param(g, leaf[k].name, leaf[k].ndim, leaf[k].shape, (tg_init){TG_INIT_ZEROS, 0, 0});
  tg_tensor *y = build(g, x, ctx);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.training = 1;
  o.poison = 1;
  o.guard_bytes = 64;
  tg_status st = y ? tg_graph_plan(g, &o) : tg_graph_status(g);
  for (int k = 0; st == TG_OK && k < n; k++) {
    tg_tensor pv = tg_store_tensor(s, tg_store_find(s, leaf[k].name), 0);
    memcpy(pv.data, leaf[k].vals, (size_t)dr_numel(&leaf[k]) * sizeof(float));
  }
  if (st == TG_OK) st = tg_graph_run(g);
  if (st == TG_OK) st = tg_graph_check_guards(g);
  if (st == TG_OK) memcpy(out, y->data, (size_t)tg_numel(y) * sizeof(float));
  if (st == TG_OK) st = tg_store_zero_grads(s);
  if (st == TG_OK) st = tg_graph_backward_seeded(g, y, dy);
  if (st == TG_OK) st = tg_graph_check_guards(g);
  for (int k = 0; st == TG_OK && k < n; k++) {
    tg_tensor gv = tg_store_tensor(s, tg_store_find(s, leaf[k].name), 1);
    memcpy(leaf[k].grad, gv.data, (size_t)dr_numel(&leaf[k]) * sizeof(float));
  }
  CHECK_MSG(st == TG_OK, "%s: %s", name, tg_last_error());
  tg_graph_free(g);
  tg_store_free(s);
  return st == TG_OK;
}

/* Uniform floats in [lo, hi) from (seed, stream). */
static void fill_uniform(float *v, int64_t n, unsigned long long seed, uint64_t stream, double lo, double hi) {
  for (int64_t i = 0; i < n; i++) v[i] = (float)(lo + (hi - lo) * tg_rng_uniform(seed, stream, (uint64_t)i));
}

static int is_pos_zero(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits == 0u;
}

/* Bad values (+inf, NaN, 1e30) at every hidden key: a masked (-1e9 bias) softmax would turn them
 * into NaN or 1; skipping them leaves the result exact. Checks per row: hidden outputs and their
 * gradients exactly +0, visible outputs positive and summing to 1, a row with no visible key all 0
 * with zero gradient, values and gradients against float64, and the gradient summing to 0. */
static void check_causal_properties(const char *name, int ndim, const int64_t *shape, int64_t offset,
                                    unsigned long long seed) {
  dr_leaf x = {.name = "x", .ndim = ndim};
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= (x.shape[d] = shape[d]);
  int64_t Tk = shape[ndim - 1], Tq = shape[ndim - 2], rows = n / Tk;
  float *xv = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
  float *dy = malloc((size_t)n * sizeof(float)), *dx = malloc((size_t)n * sizeof(float));
  double *xd = malloc((size_t)n * sizeof(double)), *want = malloc((size_t)n * sizeof(double));
  fill_uniform(xv, n, seed, 1, -4.0, 4.0);
  fill_uniform(dy, n, seed, 2, -1.0, 1.0);
  const float bad[3] = {INFINITY, NAN, 1e30f};
  for (int64_t i = 0; i < n; i++) {
    if (i % Tk >= ref_visible((i / Tk) % Tq, offset, Tk)) xv[i] = bad[i % 3];
    xd[i] = isfinite(xv[i]) ? xv[i] : 0.0; /* hidden: never read by the reference */
  }
  x.vals = xv;
  x.grad = dx;
  cs_ctx ctx = {offset};
  if (!dr_run(name, 1, &x, build_causal, &ctx, y, dy)) goto done;
  ref_causal_rows(xd, rows, Tq, Tk, offset, want);
  int64_t bad_hidden = -1, bad_value = -1, bad_grad = -1, bad_sum = -1, bad_gsum = -1, empty = 0;
  for (int64_t r = 0; r < rows; r++) {
    int64_t nv = ref_visible(r % Tq, offset, Tk);
    double s = 0.0, dot = 0.0, gs = 0.0;
    empty += nv == 0;
    for (int64_t j = 0; j < nv; j++) dot += (double)dy[r * Tk + j] * y[r * Tk + j];
    for (int64_t j = 0; j < Tk; j++) {
      int64_t i = r * Tk + j;
      if (j >= nv) {
        if (!is_pos_zero(y[i]) || !is_pos_zero(dx[i])) bad_hidden = i;
        continue;
      }
      s += y[i];
      gs += dx[i];
      if (!(y[i] > 0.0f) || !(fabs(y[i] - want[i]) <= 1e-6 * (1.0 + want[i]))) bad_value = i;
      double g = (double)y[i] * ((double)dy[i] - dot);
      if (!(fabs(dx[i] - g) <= 1e-5 * (1.0 + fabs(g)))) bad_grad = i;
    }
    if (nv > 0 && !(fabs(s - 1.0) <= 1e-5)) bad_sum = r;
    if (nv > 0 && !(fabs(gs) <= 1e-5)) bad_gsum = r;
  }
  CHECK_MSG(bad_hidden < 0, "%s: hidden element %lld is y=%g dx=%g, want exactly +0", name,
            (long long)bad_hidden, bad_hidden < 0 ? 0.0 : y[bad_hidden], bad_hidden < 0 ? 0.0 : dx[bad_hidden]);
  CHECK_MSG(bad_value < 0, "%s: visible element %lld is %.9g, want %.9g (positive)", name,
            (long long)bad_value, bad_value < 0 ? 0.0 : y[bad_value], bad_value < 0 ? 0.0 : want[bad_value]);
  CHECK_MSG(bad_grad < 0, "%s: gradient element %lld is %.9g", name, (long long)bad_grad,
            bad_grad < 0 ? 0.0 : dx[bad_grad]);
  CHECK_MSG(bad_sum < 0, "%s: row %lld does not sum to 1 over its visible keys", name, (long long)bad_sum);
  CHECK_MSG(bad_gsum < 0, "%s: row %lld's gradient does not sum to 0", name, (long long)bad_gsum);
  if (empty > 0) printf("%s: %lld of %lld rows see no key (all 0, gradient 0)\n", name, (long long)empty, (long long)rows);
done:
  free(xv);
  free(y);
  free(dy);
  free(dx);
  free(xd);
  free(want);
}

static void run_causal_properties(unsigned long long seed) {
  const int64_t s4[] = {2, 3, 5, 7}, big[] = {3, 120, 100}; /* big: past the threading threshold */
  const int64_t offsets[] = {-6, -2, 0, 1, 3, 7, 50, INT64_MAX, INT64_MIN};
  for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
    char name[96];
    snprintf(name, sizeof name, "causal_softmax [2,3,5,7] properties, offset %lld", (long long)offsets[i]);
    check_causal_properties(name, 4, s4, offsets[i], seed);
  }
  check_causal_properties("causal_softmax [3,120,100] threaded, offset 0", 3, big, 0, seed);
  check_causal_properties("causal_softmax [3,120,100] threaded, offset -30", 3, big, -30, seed);
}

/* ---- conv1d_causal at a size past the threading thresholds, against analytic float64 gradients ---- */

/* Forward and dx, dw, dbias against double loops, then the same again with one thread and with
 * four: the weight and bias sums must not depend on the thread count (bitwise). */
static void check_conv_large(unsigned long long seed) {
  const int64_t B = 4, L = 300, C = 40, K = 20, n = B * L * C;
  dr_leaf leaf[3] = {{"x", 3, {B, L, C}, NULL, NULL}, {"w", 2, {C, K}, NULL, NULL}, {"bias", 1, {C}, NULL, NULL}};
  float *vals[3], *grads[2][3];
  double *vd[3];
  for (int k = 0; k < 3; k++) {
    int64_t m = dr_numel(&leaf[k]);
    vals[k] = malloc((size_t)m * sizeof(float));
    vd[k] = malloc((size_t)m * sizeof(double));
    grads[0][k] = malloc((size_t)m * sizeof(float));
    grads[1][k] = malloc((size_t)m * sizeof(float));
    fill_uniform(vals[k], m, seed, 10 + (uint64_t)k, -1.0, 1.0);
    for (int64_t i = 0; i < m; i++) vd[k][i] = vals[k][i];
    leaf[k].vals = vals[k];
  }
  float *y = malloc((size_t)n * sizeof(float)), *dy = malloc((size_t)n * sizeof(float));
  double *want = malloc((size_t)n * sizeof(double));
  fill_uniform(dy, n, seed, 20, -1.0, 1.0);
  static const conv_ctx bias = {1};
  int prev = tg_threads(), ok = 1;
  for (int pass = 0; pass < 2 && ok; pass++) {
    tg_set_threads(pass == 0 ? 1 : 4);
    for (int k = 0; k < 3; k++) leaf[k].grad = grads[pass][k];
    ok = dr_run("conv1d_causal [4,300,40] K=20", 3, leaf, build_conv, &bias, y, dy);
  }
  tg_set_threads(prev);
  if (ok) {
    ref_conv_loop(vd[0], vd[1], vd[2], B, L, C, K, want);
    int64_t bad = -1;
    for (int64_t i = 0; i < n; i++)
      if (!(fabs(y[i] - want[i]) <= 1e-5 * (1.0 + fabs(want[i])))) bad = i;
    CHECK_MSG(bad < 0, "conv1d_causal large forward: element %lld differs", (long long)bad);
    /* analytic gradients of <dy, out> in double */
    double *gx = calloc((size_t)n, sizeof(double)), *gw = calloc((size_t)(C * K), sizeof(double));
    double *gb = calloc((size_t)C, sizeof(double));
    for (int64_t b = 0; b < B; b++)
      for (int64_t t = 0; t < L; t++)
        for (int64_t c = 0; c < C; c++) {
          double g = dy[(b * L + t) * C + c];
          gb[c] += g;
          for (int64_t k = 0; k < K; k++) {
            int64_t u = t - K + 1 + k;
            if (u < 0) continue;
            gx[(b * L + u) * C + c] += g * vd[1][c * K + k];
            gw[c * K + k] += g * vd[0][(b * L + u) * C + c];
          }
        }
    const double *gwant[3] = {gx, gw, gb};
    for (int k = 0; k < 3; k++) {
      int64_t m = dr_numel(&leaf[k]);
      bad = -1;
      for (int64_t i = 0; i < m; i++)
        if (!(fabs(grads[0][k][i] - gwant[k][i]) <= 1e-5 * (1.0 + fabs(gwant[k][i])))) bad = i;
      CHECK_MSG(bad < 0, "conv1d_causal large: gradient of '%s' element %lld is %.9g, want %.9g", leaf[k].name,
                (long long)bad, bad < 0 ? 0.0 : grads[0][k][bad], bad < 0 ? 0.0 : gwant[k][bad]);
      CHECK_MSG(memcmp(grads[0][k], grads[1][k], (size_t)m * sizeof(float)) == 0,
                "conv1d_causal large: gradient of '%s' differs between 1 and 4 threads", leaf[k].name);
    }
    free(gx);
    free(gw);
    free(gb);
  }
  for (int k = 0; k < 3; k++) {
    free(vals[k]);
    free(vd[k]);
    free(grads[0][k]);
    free(grads[1][k]);
  }
  free(y);
  free(dy);
  free(want);
}

/* ---- build errors ---- */

/* A fresh graph with inputs x [2, 5, 3] f32, x2 [5, 3] f32, xi [2, 5, 3] i32, w [3, 4], w4 [4, 2],
 * w1 [3], w0 [3, 0], b3 [3], b4 [4], b13 [1, 3], v [5] f32. */
typedef struct err_env {
  tg_graph *g;
  tg_tensor *x, *x2, *xi, *w, *w4, *w1, *w0, *b3, *b4, *b13, *v;
} err_env;

static err_env err_env_new(void) {
  const int64_t sx[] = {2, 5, 3}, sx2[] = {5, 3}, sw[] = {3, 4}, sw4[] = {4, 2}, s3[] = {3},
                sw0[] = {3, 0}, s4[] = {4}, s13[] = {1, 3}, s5[] = {5};
  err_env e;
  e.g = tg_graph_new(NULL, "sequence_errors");
  e.x = tg_input(e.g, "x", TG_F32, 3, sx);
  e.x2 = tg_input(e.g, "x2", TG_F32, 2, sx2);
  e.xi = tg_input(e.g, "xi", TG_I32, 3, sx);
  e.w = tg_input(e.g, "w", TG_F32, 2, sw);
  e.w4 = tg_input(e.g, "w4", TG_F32, 2, sw4);
  e.w1 = tg_input(e.g, "w1", TG_F32, 1, s3);
  e.w0 = tg_input(e.g, "w0", TG_F32, 2, sw0);
  e.b3 = tg_input(e.g, "b3", TG_F32, 1, s3);
  e.b4 = tg_input(e.g, "b4", TG_F32, 1, s4);
  e.b13 = tg_input(e.g, "b13", TG_F32, 2, s13);
  e.v = tg_input(e.g, "v", TG_F32, 1, s5);
  return e;
}

static void test_build_errors(void) {
  err_env e;
  tg_tensor *t;

  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.x, e.w4, e.b3);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "conv1d_causal w's C 4 vs x's 3",
                        (const char *const[]){"conv1d_causal", "w", "'w4'", "[4, 2]", "'x'", "[2, 5, 3]", "[3, K]", NULL});

  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.x, e.w1, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "conv1d_causal w 1-D",
                        (const char *const[]){"conv1d_causal", "'w1'", "[3]", "[C, K]", NULL});

  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.x, e.w0, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "conv1d_causal w with K = 0",
                        (const char *const[]){"conv1d_causal", "'w0'", "[3, 0]", "K >= 1", NULL});

  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.x, e.w, e.b4);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "conv1d_causal bias [4] vs C 3",
                        (const char *const[]){"conv1d_causal", "bias", "'b4'", "[4]", "'x'", "[2, 5, 3]", "[3]", NULL});

  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.x, e.w, e.b13);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "conv1d_causal bias [1, 3]",
                        (const char *const[]){"conv1d_causal", "bias", "'b13'", "[1, 3]", NULL});

  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.x2, e.w, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "conv1d_causal x 2-D",
                        (const char *const[]){"conv1d_causal", "'x2'", "[5, 3]", "3-D [B, L, C]", NULL});

  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.xi, e.w, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "conv1d_causal x i32",
                        (const char *const[]){"conv1d_causal", "'xi'", "i32", "f32", NULL});

  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.x, NULL, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_INVALID, "conv1d_causal w NULL",
                        (const char *const[]){"conv1d_causal", "NULL", NULL});

  e = err_env_new();
  t = tg_causal_softmax(e.g, e.v, 0);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "causal_softmax x 1-D",
                        (const char *const[]){"causal_softmax", "'v'", "[5]", "[..., Tq, Tk]", NULL});

  e = err_env_new();
  t = tg_causal_softmax(e.g, e.xi, 0);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "causal_softmax x i32",
                        (const char *const[]){"causal_softmax", "'xi'", "i32", NULL});

  e = err_env_new();
  t = tg_causal_softmax(e.g, NULL, 0);
  oc_expect_build_error(e.g, t, TG_ERR_INVALID, "causal_softmax NULL", (const char *const[]){"causal_softmax", NULL});

  /* The first error sticks: a later valid call returns NULL and keeps it. */
  e = err_env_new();
  t = tg_conv1d_causal(e.g, e.x, e.w4, NULL);
  t = tg_causal_softmax(e.g, e.x, 0);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "sticky error after conv1d_causal",
                        (const char *const[]){"conv1d_causal", "'w4'", NULL});

  /* Valid calls: the output shapes. */
  e = err_env_new();
  tg_tensor *c = tg_conv1d_causal(e.g, e.x, e.w, e.b3), *s = tg_causal_softmax(e.g, e.x, -3);
  CHECK_MSG(c && c->ndim == 3 && c->shape[0] == 2 && c->shape[1] == 5 && c->shape[2] == 3 && c->dtype == TG_F32,
            "conv1d_causal output shape: %s", tg_last_error());
  CHECK_MSG(s && s->ndim == 3 && s->shape[0] == 2 && s->shape[1] == 5 && s->shape[2] == 3 && s->dtype == TG_F32,
            "causal_softmax output shape: %s", tg_last_error());
  tg_graph_free(e.g);
}

int main(void) {
  unsigned long long seed = tg_test_seed(20240722ull);
  run_causal_cases(seed);
  run_conv_cases(seed);
  run_shared_cases(seed);
  run_causal_properties(seed);
  check_conv_large(seed);
  test_build_errors();
  return tg_test_finish();
}
