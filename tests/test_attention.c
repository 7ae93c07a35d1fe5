/* Op tests for attention: float64 references and finite-difference gradients, the unfused chain it replaces at
 * threaded sizes, thread-count invariance, hidden keys that are NaN, builder errors. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/rng.h"
#include "tickgrad/tickgrad.h"

typedef struct at_ctx {
  int64_t heads;
  int causal;
  int64_t offset;
  float scale;
} at_ctx;

/* Keys visible to query row i (causal: j <= i + offset), clamped to [0, Tk], in long double so that offsets near the
 * int64 limits stay exact enough. */
static int64_t ref_visible(const at_ctx *c, int64_t i, int64_t Tk) {
  if (!c->causal) return Tk;
  long double lim = (long double)i + (long double)c->offset + 1.0L;
  if (lim <= 0.0L) return 0;
  if (lim >= (long double)Tk) return Tk;
  return (int64_t)lim;
}

/* q [B, Tq, d], k and v [B, Tk, d] -> out [B, Tq, d], per batch and head in float64. */
static void ref_attention_loop(const double *q, const double *k, const double *v, int64_t B, int64_t Tq, int64_t Tk,
                               int64_t d, const at_ctx *c, double *out) {
  int64_t H = c->heads, dh = d / H;
  double *s = malloc(sizeof(double) * (size_t)Tk);
  if (!s) return;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = 0; i < Tq; i++) {
        const double *qi = q + (b * Tq + i) * d + h * dh;
        double *oi = out + (b * Tq + i) * d + h * dh;
        int64_t n = ref_visible(c, i, Tk);
        double m = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < n; j++) {
          const double *kj = k + (b * Tk + j) * d + h * dh;
          double dot = 0.0;
          for (int64_t x = 0; x < dh; x++) dot += qi[x] * kj[x];
          s[j] = (double)c->scale * dot;
          m = fmax(m, s[j]);
        }
        for (int64_t j = 0; j < n; j++) sum += exp(s[j] - m);
        for (int64_t x = 0; x < dh; x++) oi[x] = 0.0;
        for (int64_t j = 0; j < n; j++) {
          double p = exp(s[j] - m) / sum;
          const double *vj = v + (b * Tk + j) * d + h * dh;
          for (int64_t x = 0; x < dh; x++) oi[x] += p * vj[x];
        }
      }
  free(s);
}

static tg_tensor *build_attention(tg_graph *g, tg_tensor **in, const void *ctx) {
  const at_ctx *c = ctx;
  return tg_attention(g, in[0], in[1], in[2], c->heads, c->causal, c->offset, c->scale);
}

static void ref_attention(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  ref_attention_loop(in[0], in[1], in[2], spec[0].shape[0], spec[0].shape[1], spec[1].shape[1], spec[0].shape[2], ctx,
                     out);
}

/* ---- reference and gradient cases (finite differences through op_check) ---- */

static void run_cases(unsigned long long seed) {
  static const at_ctx c0 = {2, 1, 0, 0.5f}, cm2 = {2, 1, -2, 1.0f}, cfull = {2, 0, 0, 0.7f}, c1h = {1, 1, 0, 1.0f},
                      clast = {3, 1, 5, 0.4f}, cbig = {2, 1, 1, 1.0f}, cmax = {2, 1, INT64_MAX, 1.0f},
                      cmin = {2, 1, INT64_MIN, 1.0f}, c5 = {5, 1, 2, 0.3f}, c2off = {2, 1, 3, 0.5f};
  struct {
    const char *name;
    const at_ctx *ctx;
    int64_t B, Tq, Tk, d;
    double lo, hi;
  } cases[] = {
      {"attention causal offset 0, B2 T5 H2 dh3, scale 0.5", &c0, 2, 5, 5, 6, -1.5, 1.5},
      {"attention causal offset -2 (rows 0-1 see nothing)", &cm2, 2, 5, 5, 4, -1.5, 1.5},
      {"attention not causal, Tq 3 Tk 6", &cfull, 2, 3, 6, 4, -1.5, 1.5},
      {"attention one head dh 1", &c1h, 3, 4, 4, 1, -2.0, 2.0},
      {"attention last step only: Tq 1, offset Tk-1", &clast, 2, 1, 6, 6, -1.5, 1.5},
      {"attention causal Tq 4 Tk 7 offset 3", &c2off, 2, 4, 7, 4, -1.5, 1.5},
      {"attention offset INT64_MAX (all visible)", &cmax, 1, 4, 5, 4, -1.5, 1.5},
      {"attention offset INT64_MIN (nothing visible)", &cmin, 1, 4, 5, 4, -1.5, 1.5},
      {"attention 5 heads of dh 3, 19 keys (two key blocks)", &c5, 1, 19, 19, 15, -1.5, 1.5},
      {"attention dh 17 (a column block and a tail), 18 keys", &c1h, 1, 18, 18, 17, -1.0, 1.0},
      {"attention scores far from 0 (max shift)", &cbig, 1, 4, 4, 4, 8.0, 10.0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t sq[3] = {cases[i].B, cases[i].Tq, cases[i].d}, sk[3] = {cases[i].B, cases[i].Tk, cases[i].d};
    oc_case c = {.name = cases[i].name, .n_in = 3, .build = build_attention, .ref = ref_attention,
                 .ctx = cases[i].ctx};
    c.in[0] = oc_f32_input("q", 3, sq, 1, cases[i].lo, cases[i].hi);
    c.in[1] = oc_f32_input("k", 3, sk, 1, cases[i].lo, cases[i].hi);
    c.in[2] = oc_f32_input("v", 3, sk, 1, -1.0, 1.0);
    oc_run(&c, seed);
  }
  /* Only some inputs need gradients: the kernel must skip the NULL ones and fill the others. */
  const int64_t s[3] = {2, 6, 4};
  oc_case c = {.name = "attention q and k bound, v gradient only", .n_in = 3, .build = build_attention,
               .ref = ref_attention, .ctx = &c0};
  c.in[0] = oc_f32_input("q", 3, s, 0, -1.5, 1.5);
  c.in[1] = oc_f32_input("k", 3, s, 0, -1.5, 1.5);
  c.in[2] = oc_f32_input("v", 3, s, 1, -1.0, 1.0);
  oc_run(&c, seed);
  c.name = "attention v bound, q and k gradients";
  c.in[0].diff = c.in[1].diff = 1;
  c.in[2].diff = 0;
  oc_run(&c, seed);
  c.name = "attention k only";
  c.in[0].diff = 0;
  oc_run(&c, seed);
}

/* ---- the unfused chain at threaded sizes ---- */

/* One graph holding attention(q, k, v) and the chain it replaces (heads transposed, scaled scores, causal_softmax or
 * softmax, the product with v, transposed back), both read by one sum of squares weighted per element. */
typedef struct at_pair {
  tg_store *st;
  tg_graph *g;
  tg_tensor *q, *k, *v, *fused, *chain;
} at_pair;

static tg_tensor *heads_of(tg_graph *g, tg_tensor *x, int64_t H) {
  int64_t s[4] = {x->shape[0], x->shape[1], H, x->shape[2] / H};
  return tg_transpose(g, tg_reshape(g, x, 4, s), 1, 2);
}

static int pair_new(at_pair *p, int64_t B, int64_t Tq, int64_t Tk, const at_ctx *c, uint64_t seed, int with_chain) {
  int64_t d = 16 * c->heads, sq[3] = {B, Tq, d}, sk[3] = {B, Tk, d};
  p->st = tg_store_new(tg_cpu(0), seed);
  p->g = tg_graph_new(p->st, "attention_vs_chain");
  tg_graph *g = p->g;
  tg_init u = {TG_INIT_UNIFORM, -1.5f, 1.5f};
  p->q = tg_param(g, "q", 3, sq, u);
  p->k = tg_param(g, "k", 3, sk, u);
  p->v = tg_param(g, "v", 3, sk, u);
  p->fused = tg_attention(g, p->q, p->k, p->v, c->heads, c->causal, c->offset, c->scale);
  p->chain = NULL;
  if (with_chain) {
  tg_tensor *sc = tg_matmul(g, heads_of(g, tg_scale(g, p->q, c->scale), c->heads), heads_of(g, p->k, c->heads), 0, 1);
  tg_tensor *pr = c->causal ? tg_causal_softmax(g, sc, c->offset) : tg_softmax(g, sc);
  tg_tensor *o = tg_transpose(g, tg_matmul(g, pr, heads_of(g, p->v, c->heads), 0, 0), 1, 2);
  p->chain = tg_reshape(g, o, 3, sq);
  }
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = 1;
  po.no_reuse = 1;
  CHECK_OK(tg_graph_plan(g, &po));
  return tg_graph_status(g) == TG_OK;
}

/* Gradients of q, k, v (concatenated into grads) after a backward seeded at out with seed values w. */
static void pair_grads(at_pair *p, tg_tensor *out, const float *w, float *grads) {
  CHECK_OK(tg_store_zero_grads(p->st));
  CHECK_OK(tg_graph_backward_seeded(p->g, out, w));
  tg_tensor *leaf[3] = {p->q, p->k, p->v};
  int64_t off = 0;
  for (int k = 0; k < 3; k++) {
    int64_t n = tg_numel(leaf[k]);
    memcpy(grads + off, tg_graph_grad(p->g, leaf[k]), sizeof(float) * (size_t)n);
    off += n;
  }
}

/* The worst |a - b| / (1 + |b|) over n. */
static double worst_rel(const float *a, const float *b, int64_t n, int64_t *at) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)a[i] - b[i]) / (1.0 + fabs((double)b[i]));
    if (!(e <= worst)) worst = e, *at = i; /* a NaN counts as worst */
  }
  return worst;
}

static void check_against_chain(const char *name, int64_t B, int64_t Tq, int64_t Tk, const at_ctx *c) {
  at_pair p;
  if (!pair_new(&p, B, Tq, Tk, c, 17, 1)) goto done;
  CHECK_OK(tg_graph_run(p.g));
  int64_t n = tg_numel(p.fused), nk = tg_numel(p.k), at = 0;
  double e = worst_rel(p.fused->data, p.chain->data, n, &at);
  CHECK_MSG(e <= 1e-5, "%s: forward differs from the chain by %.3g at %lld", name, e, (long long)at);
  float *w = malloc(sizeof(float) * (size_t)n), *gf = malloc(sizeof(float) * (size_t)(n + 2 * nk)),
        *gc = malloc(sizeof(float) * (size_t)(n + 2 * nk));
  if (w && gf && gc) {
    for (int64_t i = 0; i < n; i++) w[i] = tg_rng_uniform(5, 2, (uint64_t)i) - 0.5f;
    pair_grads(&p, p.fused, w, gf);
    pair_grads(&p, p.chain, w, gc);
    e = worst_rel(gf, gc, n + 2 * nk, &at);
    CHECK_MSG(e <= 1e-4, "%s: gradients differ from the chain's by %.3g at %lld (q, k, v concatenated)", name, e,
              (long long)at);
  } else {
    CHECK_MSG(0, "out of memory");
  }
  free(w);
  free(gf);
  free(gc);
done:
  tg_graph_free(p.g);
  tg_store_free(p.st);
}

/* Forward and gradients with one thread and with four: the same bits (each batch and head is one task). */
static void check_threads(void) {
  const at_ctx c = {4, 1, 0, 0.25f};
  const int64_t B = 8, T = 64;
  float *out[2] = {NULL, NULL}, *gr[2] = {NULL, NULL};
  int prev = tg_threads();
  for (int pass = 0; pass < 2; pass++) {
    CHECK_OK(tg_set_threads(pass == 0 ? 1 : 4));
    at_pair p;
    if (!pair_new(&p, B, T, T, &c, 23, 0)) {
      tg_graph_free(p.g);
      tg_store_free(p.st);
      break;
    }
    int64_t n = tg_numel(p.fused);
    out[pass] = malloc(sizeof(float) * (size_t)n);
    gr[pass] = malloc(sizeof(float) * (size_t)(3 * n));
    float *w = malloc(sizeof(float) * (size_t)n);
    if (out[pass] && gr[pass] && w) {
      CHECK_OK(tg_graph_run(p.g));
      memcpy(out[pass], p.fused->data, sizeof(float) * (size_t)n);
      for (int64_t i = 0; i < n; i++) w[i] = tg_rng_uniform(9, 4, (uint64_t)i) - 0.5f;
      pair_grads(&p, p.fused, w, gr[pass]);
    }
    free(w);
    tg_graph_free(p.g);
    tg_store_free(p.st);
  }
  tg_set_threads(prev);
  int64_t n = B * T * 64;
  if (out[0] && out[1] && gr[0] && gr[1]) {
    CHECK_MSG(memcmp(out[0], out[1], sizeof(float) * (size_t)n) == 0,
              "attention forward differs between 1 and 4 threads");
    CHECK_MSG(memcmp(gr[0], gr[1], sizeof(float) * (size_t)(3 * n)) == 0,
              "attention gradients differ between 1 and 4 threads");
  }
  for (int k = 0; k < 2; k++) free(out[k]), free(gr[k]);
}

/* A key a row does not see never enters its result: the last key and value set to NaN change only the last row (causal,
 * offset 0), whose output becomes NaN; every other row keeps its bits, and so do their gradients of q. */
static void check_hidden_nan(void) {
  const at_ctx c = {2, 1, 0, 1.0f};
  const int64_t B = 2, T = 21, d = 32;
  float *before = malloc(sizeof(float) * (size_t)(B * T * d)), *dq = malloc(sizeof(float) * (size_t)(B * T * d));
  at_pair p;
  if (!before || !dq || !pair_new(&p, B, T, T, &c, 31, 0)) {
    CHECK_MSG(0, "setup failed");
    free(before);
    free(dq);
    return;
  }
  float *w = malloc(sizeof(float) * (size_t)(B * T * d));
  for (int64_t i = 0; w && i < B * T * d; i++) w[i] = (i / d) % T == T - 1 ? 0.0f : 1.0f; /* no seed on the last row */
  CHECK_OK(tg_graph_run(p.g));
  memcpy(before, p.fused->data, sizeof(float) * (size_t)(B * T * d));
  CHECK_OK(tg_store_zero_grads(p.st));
  CHECK_OK(tg_graph_backward_seeded(p.g, p.fused, w));
  memcpy(dq, tg_graph_grad(p.g, p.q), sizeof(float) * (size_t)(B * T * d));
  float *k = p.k->data, *v = p.v->data;
  for (int64_t b = 0; b < B; b++)
    for (int64_t x = 0; x < d; x++) k[(b * T + T - 1) * d + x] = v[(b * T + T - 1) * d + x] = NAN;
  CHECK_OK(tg_graph_run(p.g));
  CHECK_OK(tg_store_zero_grads(p.st));
  CHECK_OK(tg_graph_backward_seeded(p.g, p.fused, w));
  const float *after = p.fused->data, *dq2 = tg_graph_grad(p.g, p.q);
  int64_t bad = -1, bad_grad = -1, last_nan = 0;
  for (int64_t i = 0; i < B * T * d; i++) {
    if ((i / d) % T == T - 1) {
      last_nan += isnan(after[i]) != 0;
      continue;
    }
    if (memcmp(&after[i], &before[i], sizeof(float)) != 0) bad = i;
    if (memcmp(&dq2[i], &dq[i], sizeof(float)) != 0) bad_grad = i;
  }
  CHECK_MSG(bad < 0, "attention: a hidden NaN key changed visible row element %lld", (long long)bad);
  CHECK_MSG(bad_grad < 0, "attention: a hidden NaN key changed q's gradient at %lld", (long long)bad_grad);
  CHECK_MSG(last_nan == B * d, "attention: the row that sees the NaN key has %lld NaN of %lld", (long long)last_nan,
            (long long)(B * d));
  free(w);
  free(before);
  free(dq);
  tg_graph_free(p.g);
  tg_store_free(p.st);
}

/* ---- builder errors ---- */

static void check_errors(void) {
  tg_init z = {TG_INIT_ZEROS, 0.0f, 0.0f};
  struct {
    const char *what;
    int64_t q[3], k[3], v[3];
    int64_t heads;
    float scale;
    tg_status want;
    const char *need[4];
  } cases[] = {
      {"heads do not divide d", {2, 4, 6}, {2, 4, 6}, {2, 4, 6}, 4, 1.0f, TG_ERR_SHAPE,
       {"attention", "4 heads", "6 wide"}},
      {"zero heads", {2, 4, 6}, {2, 4, 6}, {2, 4, 6}, 0, 1.0f, TG_ERR_SHAPE, {"attention", "0 heads"}},
      {"k of another width", {2, 4, 6}, {2, 4, 8}, {2, 4, 6}, 2, 1.0f, TG_ERR_SHAPE, {"'q'", "'k'", "[2, 4, 8]"}},
      {"v with other keys", {2, 4, 6}, {2, 4, 6}, {2, 5, 6}, 2, 1.0f, TG_ERR_SHAPE, {"'v'", "[2, 5, 6]", "[B, Tk, d]"}},
      {"another batch", {3, 4, 6}, {2, 4, 6}, {2, 4, 6}, 2, 1.0f, TG_ERR_SHAPE, {"'q'", "[3, 4, 6]"}},
      {"scale not finite", {2, 4, 6}, {2, 4, 6}, {2, 4, 6}, 2, INFINITY, TG_ERR_INVALID, {"attention", "scale"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tg_store *st = tg_store_new(tg_cpu(0), 1);
    tg_graph *g = tg_graph_new(st, "errors");
    tg_tensor *q = tg_param(g, "q", 3, cases[i].q, z), *k = tg_param(g, "k", 3, cases[i].k, z);
    tg_tensor *v = tg_param(g, "v", 3, cases[i].v, z);
    tg_tensor *t = tg_attention(g, q, k, v, cases[i].heads, 1, 0, cases[i].scale);
    const char *need[5] = {cases[i].need[0], cases[i].need[1], cases[i].need[2], cases[i].need[3], NULL};
    oc_expect_build_error(g, t, cases[i].want, cases[i].what, need);
    tg_store_free(st);
  }
  tg_store *st = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(st, "errors");
  const int64_t s2[2] = {4, 6}, s3[3] = {2, 4, 6};
  tg_tensor *q2 = tg_param(g, "q2", 2, s2, z), *k = tg_param(g, "k", 3, s3, z);
  oc_expect_build_error(g, tg_attention(g, q2, k, k, 2, 1, 0, 1.0f), TG_ERR_SHAPE, "q 2-D",
                        (const char *const[]){"attention", "'q2'", "[4, 6]", "[B, T, heads*dh]", NULL});
  tg_store_free(st);
  st = tg_store_new(tg_cpu(0), 1);
  g = tg_graph_new(st, "errors");
  k = tg_param(g, "k", 3, s3, z);
  oc_expect_build_error(g, tg_attention(g, NULL, k, k, 2, 1, 0, 1.0f), TG_ERR_INVALID, "q NULL",
                        (const char *const[]){"attention", NULL});
  tg_store_free(st);
}

int main(void) {
  unsigned long long seed = tg_test_seed(20261207ull);
  run_cases(seed);
  static const at_ctx causal = {4, 1, 0, 0.25f}, last = {4, 1, 63, 0.25f}, full = {3, 0, 0, 0.3f},
                      early = {2, 1, -9, 1.0f};
  check_against_chain("attention vs chain: the transformer's B32 T64 H4 dh16, causal", 32, 64, 64, &causal);
  check_against_chain("attention vs chain: its last step only, Tq 1 offset 63", 32, 1, 64, &last);
  check_against_chain("attention vs chain: PatchTST-like, not causal, B16 T13 H3", 16, 13, 13, &full);
  check_against_chain("attention vs chain: B5 T70 H2, offset -9 (the first rows see nothing)", 5, 70, 70, &early);
  check_threads();
  check_hidden_nan();
  check_errors();
  return tg_test_finish();
}
