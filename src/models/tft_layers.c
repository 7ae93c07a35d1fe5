/* Layer builders of the Temporal Fusion Transformer: dense, GLU gate + add&norm, GRN, stacked per-variable GRNs. */
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/tft_internal.h"

#define TFT_LN_EPS 1e-5f

static const tg_init INIT_ZEROS = {TG_INIT_ZEROS, 0.0f, 0.0f};
static const tg_init INIT_ONES = {TG_INIT_ONES, 0.0f, 0.0f};
static const tg_init INIT_XAVIER = {TG_INIT_XAVIER, 0.0f, 0.0f};

/* 1 when the build can go on (every tensor present, no sticky error). */
static int alive(tft_b *b, const tg_tensor *x) { return x && tg_graph_status(b->g) == TG_OK; }

static int64_t last_dim(const tg_tensor *x) { return x->shape[x->ndim - 1]; }

tg_tensor *tft_param(tft_b *b, const char *prefix, const char *leaf, int ndim, const int64_t *shape,
                     tg_init init) {
  char name[TG_NAME_MAX];
  int n = snprintf(name, sizeof name, "%s.%s", prefix, leaf);
  if (n < 0 || n >= (int)sizeof name)
    return tg_graph_fail(b->g, TG_ERR_INVALID, "tft: parameter name '%s.%s' is longer than %d bytes",
                         prefix, leaf, TG_NAME_MAX - 1);
  return tg_param(b->g, name, ndim, shape, init);
}

tg_tensor *tft_drop(tft_b *b, tg_tensor *x) { return b->p > 0.0f ? tg_dropout(b->g, x, b->p) : x; }

tg_tensor *tft_dense(tft_b *b, const char *prefix, tg_tensor *x, int64_t n_out, int bias) {
  if (!alive(b, x)) return NULL;
  int64_t ws[2] = {n_out, last_dim(x)}; /* [out, in] */
  tg_tensor *w = tft_param(b, prefix, "weight", 2, ws, INIT_XAVIER);
  tg_tensor *bv = bias ? tft_param(b, prefix, "bias", 1, ws, INIT_ZEROS) : NULL;
  if (!w || (bias && !bv)) return NULL;
  return tg_linear(b->g, x, w, bv);
}

tg_tensor *tft_add_ctx(tft_b *b, tg_tensor *x, tg_tensor *c) {
  if (!alive(b, x) || !alive(b, c)) return NULL;
  if (x->ndim == 2) return tg_add(b->g, x, c);
  /* suffix broadcasting only: [T, B, h] + [B, h], then back to batch first */
  tg_tensor *tm = tg_add(b->g, tg_transpose(b->g, x, 0, 1), c);
  return tg_transpose(b->g, tm, 0, 1);
}

tg_tensor *tft_gate_add_norm(tft_b *b, const char *prefix, tg_tensor *x, tg_tensor *skip, int drop) {
  if (!alive(b, x) || !alive(b, skip)) return NULL;
  tg_graph *g = b->g;
  char glu[TG_NAME_MAX], norm[TG_NAME_MAX];
  snprintf(glu, sizeof glu, "%s.glu", prefix);
  snprintf(norm, sizeof norm, "%s.norm", prefix);
  int64_t out = last_dim(skip);
  int64_t ws[2] = {2 * out, last_dim(x)}; /* [2 out, h]: rows [0, out) value, [out, 2 out) gate */
  tg_tensor *w = tft_param(b, glu, "weight", 2, ws, INIT_XAVIER);
  tg_tensor *bias = tft_param(b, glu, "bias", 1, ws, INIT_ZEROS);
  if (!w || !bias) return NULL;
  tg_tensor *xd = drop ? tft_drop(b, x) : x;
  int64_t ns[1] = {out};
  tg_tensor *gamma = tft_param(b, norm, "weight", 1, ns, INIT_ONES);
  tg_tensor *beta = tft_param(b, norm, "bias", 1, ns, INIT_ZEROS);
  if (!gamma || !beta) return NULL;
  /* value | gate [.., 2 out] in one GEMM; gate, residual add and layernorm in one op */
  return tg_gate_add_norm(g, tg_linear(g, xd, w, bias), skip, gamma, beta, TFT_LN_EPS);
}

tg_tensor *tft_grn(tft_b *b, const char *prefix, tg_tensor *a, tg_tensor *c, int64_t d_hidden,
                   int64_t n_out) {
  if (!alive(b, a)) return NULL;
  char name[TG_NAME_MAX];
  snprintf(name, sizeof name, "%s.fc1", prefix);
  tg_tensor *h = tft_dense(b, name, a, d_hidden, 1); /* [.., hidden] */
  if (c) {
    snprintf(name, sizeof name, "%s.ctx", prefix);
    h = tft_add_ctx(b, h, tft_dense(b, name, c, d_hidden, 0));
  }
  if (!alive(b, h)) return NULL;
  h = tg_elu(b->g, h, 1.0f);
  snprintf(name, sizeof name, "%s.fc2", prefix);
  h = tft_dense(b, name, h, d_hidden, 1);
  tg_tensor *skip = a;
  if (last_dim(a) != n_out) {
    snprintf(name, sizeof name, "%s.skip", prefix);
    skip = tft_dense(b, name, a, n_out, 1); /* [.., out] */
  }
  return tft_gate_add_norm(b, prefix, h, skip, 1);
}

/* "<prefix>.<leaf>.weight" [m, out, in] and ".bias" [m, out]. */
static int stacked_params(tft_b *b, const char *prefix, const char *leaf, int64_t m, int64_t out,
                          int64_t in, tg_tensor **w, tg_tensor **bias) {
  char name[TG_NAME_MAX];
  snprintf(name, sizeof name, "%s.%s", prefix, leaf);
  int64_t ws[3] = {m, out, in};
  *w = tft_param(b, name, "weight", 3, ws, INIT_XAVIER);
  *bias = tft_param(b, name, "bias", 2, ws, INIT_ZEROS);
  return *w && *bias;
}

int tft_var_grn_params(tft_b *b, const char *prefix, int64_t m, int64_t d, tft_var_params *p) {
  if (!stacked_params(b, prefix, "fc1", m, d, d, &p->w1, &p->b1) ||
      !stacked_params(b, prefix, "fc2", m, d, d, &p->w2, &p->b2) ||
      !stacked_params(b, prefix, "glu", m, 2 * d, d, &p->wg, &p->bg))
    return 0;
  char norm[TG_NAME_MAX];
  snprintf(norm, sizeof norm, "%s.norm", prefix);
  int64_t ns[2] = {m, d};
  p->gamma = tft_param(b, norm, "weight", 2, ns, INIT_ONES);
  p->beta = tft_param(b, norm, "bias", 2, ns, INIT_ZEROS);
  return p->gamma && p->beta;
}

/* Slots [lo, lo + n) of a stacked parameter [m, ...]: itself when that is all of it, else a slice. */
static tg_tensor *slots(tg_graph *g, tg_tensor *t, int64_t lo, int64_t n) {
  return t && n == t->shape[0] ? t : tg_slice(g, t, 0, lo, n);
}

tg_tensor *tft_var_grns(tft_b *b, const char *prefix, const tft_var_params *p, tg_tensor *x, int64_t lo,
                        int inner_block) {
  if (!alive(b, x)) return NULL;
  tg_graph *g = b->g;
  int64_t n = x->shape[1];
  /* every tensor stays position-major [N, n, d]: no transposes. The inner recomputation block goes up to the
   * dropout: the GLU Linear and the gate-add-norm after it stay outside, so their backward, the largest moment of
   * the whole backward ([N, n, 2d] and its gradient), comes before the block is recomputed */
  if (inner_block) tg_graph_block_begin(g, prefix);
  tg_tensor *h = tg_elu(g, tg_stacked_linear(g, x, slots(g, p->w1, lo, n), slots(g, p->b1, lo, n)), 1.0f);
  h = tft_drop(b, tg_stacked_linear(g, h, slots(g, p->w2, lo, n), slots(g, p->b2, lo, n)));
  if (inner_block) tg_graph_block_end(g);
  /* value | gate [N, n, 2d], then gate, residual add and layernorm with the per-variable affine */
  tg_tensor *z = tg_stacked_linear(g, h, slots(g, p->wg, lo, n), slots(g, p->bg, lo, n));
  return tg_gate_add_norm(g, z, x, slots(g, p->gamma, lo, n), slots(g, p->beta, lo, n), TFT_LN_EPS);
}
