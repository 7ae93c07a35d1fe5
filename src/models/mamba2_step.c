/* Mamba-2 recurrent inference on the host: one new bar per call, O(1) in the bars already seen. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "graph/graph_internal.h"
#include "tickgrad/device.h"
#include "tickgrad/models.h"

/* Host views of one layer's weights (into the stepper's weight copy). */
typedef struct m2s_layer {
  const float *norm_w;  /* [d] */
  const float *in_w;    /* [2E+2GN+H, d] */
  const float *conv_w;  /* [C, K], C = E+2GN */
  const float *conv_b;  /* [C] */
  const float *dt_bias; /* [H] */
  const float *a_log;   /* [H] */
  const float *D;       /* [H] */
  const float *gnorm_w; /* [E] */
  const float *out_w;   /* [d, E] */
  float *conv_state;    /* [batch, K-1, C]: the last K-1 conv inputs, oldest first */
  float *ssm_state;     /* [batch, H, P, N] */
} m2s_layer;

struct tg_mamba2_stepper {
  tg_forecast_cfg cfg;
  int64_t batch, d, E, H, P, G, N, K, C, proj_out, n_out;
  float *weights;   /* [store numel] host copy of the store's values */
  float *state;     /* every layer's conv and SSM state, one block */
  float *scratch;   /* u | hn | proj | y | xbc, one block */
  size_t state_len; /* floats in state */
  float *u, *hn;    /* [batch, d] each: the residual stream and its normalised copy */
  float *proj;      /* [batch, 2E+2GN+H]: in_proj output */
  float *y;         /* [batch, E]: gated, normalised SSM output */
  float *xbc;       /* [C]: one row's conv input / output */
  const float *emb_w, *emb_b, *normf_w, *head_w, *head_b; /* [d, n_past] [d] [d] [n_out, d] [n_out] */
  m2s_layer *layers; /* [n_layers] */
};

/* The host copy of parameter "mamba2.<prefix><leaf>", checking its shape. */
static tg_status m2s_find(tg_mamba2_stepper *s, tg_store *store, const char *prefix, const char *leaf, int ndim,
                          int64_t d0, int64_t d1, const float **out) {
  char name[128];
  snprintf(name, sizeof name, "mamba2.%s%s", prefix, leaf);
  int i = tg_store_find(store, name);
  if (i < 0)
    return tg_error(TG_ERR_INVALID, "mamba2 stepper: parameter '%s' is not in the store (build a mamba2 graph "
                    "with this config on the store first)", name);
  tg_param_info p = tg_store_param(store, i);
  if (p.ndim != ndim || p.shape[0] != d0 || (ndim == 2 && p.shape[1] != d1)) {
    char have[96], want[48];
    tg_tensor t = tg_store_tensor(store, i, 0);
    if (ndim == 1) snprintf(want, sizeof want, "[%lld]", (long long)d0);
    else snprintf(want, sizeof want, "[%lld, %lld]", (long long)d0, (long long)d1);
    return tg_error(TG_ERR_SHAPE, "mamba2 stepper: parameter '%s' is %s in the store; this config needs %s", name,
                    tg_shape_str(&t, have, sizeof have), want);
  }
  *out = s->weights + p.offset;
  return TG_OK;
}

static tg_status m2s_bind_layer(tg_mamba2_stepper *s, tg_store *store, int i) {
  char pre[64], mix[64];
  snprintf(pre, sizeof pre, "layers.%d.", i);
  snprintf(mix, sizeof mix, "layers.%d.mixer.", i);
  m2s_layer *l = &s->layers[i];
  tg_status st = m2s_find(s, store, pre, "norm.weight", 1, s->d, 0, &l->norm_w);
  if (st == TG_OK) st = m2s_find(s, store, mix, "in_proj.weight", 2, s->proj_out, s->d, &l->in_w);
  if (st == TG_OK) st = m2s_find(s, store, mix, "conv1d.weight", 2, s->C, s->K, &l->conv_w);
  if (st == TG_OK) st = m2s_find(s, store, mix, "conv1d.bias", 1, s->C, 0, &l->conv_b);
  if (st == TG_OK) st = m2s_find(s, store, mix, "dt_bias", 1, s->H, 0, &l->dt_bias);
  if (st == TG_OK) st = m2s_find(s, store, mix, "A_log", 1, s->H, 0, &l->a_log);
  if (st == TG_OK) st = m2s_find(s, store, mix, "D", 1, s->H, 0, &l->D);
  if (st == TG_OK) st = m2s_find(s, store, mix, "norm.weight", 1, s->E, 0, &l->gnorm_w);
  if (st == TG_OK) st = m2s_find(s, store, mix, "out_proj.weight", 2, s->d, s->E, &l->out_w);
  return st;
}

static tg_status m2s_bind(tg_mamba2_stepper *s, tg_store *store) {
  int64_t n_past = s->cfg.n_past;
  tg_status st = m2s_find(s, store, "", "embed.weight", 2, s->d, n_past, &s->emb_w);
  if (st == TG_OK) st = m2s_find(s, store, "", "embed.bias", 1, s->d, 0, &s->emb_b);
  if (st == TG_OK) st = m2s_find(s, store, "", "norm_f.weight", 1, s->d, 0, &s->normf_w);
  if (st == TG_OK) st = m2s_find(s, store, "", "head.weight", 2, s->n_out, s->d, &s->head_w);
  if (st == TG_OK) st = m2s_find(s, store, "", "head.bias", 1, s->n_out, 0, &s->head_b);
  for (int i = 0; i < s->cfg.mamba.n_layers && st == TG_OK; i++) st = m2s_bind_layer(s, store, i);
  return st;
}

/* Sizes, the weight copy, states and scratch. */
static tg_status m2s_alloc(tg_mamba2_stepper *s, tg_store *store) {
  const tg_mamba2_cfg *m = &s->cfg.mamba;
  s->d = m->d_model;
  s->E = (int64_t)m->expand * m->d_model;
  s->P = m->headdim;
  s->H = s->E / s->P;
  s->G = m->ngroups;
  s->N = m->d_state;
  s->K = m->d_conv;
  s->C = s->E + 2 * s->G * s->N;
  s->proj_out = s->E + s->C + s->H;
  s->n_out = (int64_t)s->cfg.horizons * tg_forecast_step_width(&s->cfg);
  size_t per_layer = (size_t)(s->batch * ((s->K - 1) * s->C + s->H * s->P * s->N));
  s->state_len = per_layer * (size_t)m->n_layers;
  size_t numel = tg_store_numel(store);
  size_t scratch = (size_t)(s->batch * (2 * s->d + s->proj_out + s->E) + s->C);
  s->weights = tg_malloc((numel ? numel : 1) * sizeof(float));
  s->state = tg_malloc((s->state_len ? s->state_len : 1) * sizeof(float));
  s->scratch = tg_malloc(scratch * sizeof(float));
  s->layers = tg_calloc((size_t)m->n_layers, sizeof *s->layers);
  if (!s->weights || !s->state || !s->scratch || !s->layers)
    return tg_error(TG_ERR_NOMEM, "mamba2 stepper: no host memory for %zu weights and %zu state floats", numel,
                    s->state_len);
  s->u = s->scratch;
  s->hn = s->u + s->batch * s->d;
  s->proj = s->hn + s->batch * s->d;
  s->y = s->proj + s->batch * s->proj_out;
  s->xbc = s->y + s->batch * s->E;
  tg_status st = tg_device_download(tg_store_device(store), s->weights, tg_store_values_read(store), numel * sizeof(float));
  for (int i = 0; i < m->n_layers; i++) {
    s->layers[i].conv_state = s->state + per_layer * (size_t)i;
    s->layers[i].ssm_state = s->layers[i].conv_state + s->batch * (s->K - 1) * s->C;
  }
  return st;
}

tg_status tg_mamba2_stepper_new(tg_store *store, const tg_forecast_cfg *c, int64_t batch, tg_mamba2_stepper **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "mamba2 stepper: NULL out");
  *out = NULL;
  if (!store || !c) return tg_error(TG_ERR_INVALID, "mamba2 stepper: NULL store or config");
  if (c->kind != TG_MODEL_MAMBA2)
    return tg_error(TG_ERR_INVALID, "mamba2 stepper: config kind %d is not TG_MODEL_MAMBA2", (int)c->kind);
  tg_status st = tg_forecast_check(c);
  if (st != TG_OK) return st;
  if (batch < 1) return tg_error(TG_ERR_INVALID, "mamba2 stepper: batch %lld must be >= 1", (long long)batch);
  if (!tg_store_is_final(store))
    return tg_error(TG_ERR_INVALID, "mamba2 stepper: the store has no values yet (plan a graph on it first)");
  tg_mamba2_stepper *s = tg_calloc(1, sizeof *s);
  if (!s) return tg_error(TG_ERR_NOMEM, "mamba2 stepper: out of host memory");
  s->cfg = *c;
  s->batch = batch;
  st = m2s_alloc(s, store);
  if (st == TG_OK) st = m2s_bind(s, store);
  if (st == TG_OK) st = tg_mamba2_stepper_reset(s);
  if (st != TG_OK) {
    tg_mamba2_stepper_free(s);
    return st;
  }
  *out = s;
  return TG_OK;
}

tg_status tg_mamba2_stepper_reset(tg_mamba2_stepper *s) {
  if (!s) return tg_error(TG_ERR_INVALID, "mamba2 stepper: NULL stepper");
  memset(s->state, 0, s->state_len * sizeof(float));
  return TG_OK;
}

void tg_mamba2_stepper_free(tg_mamba2_stepper *s) {
  if (!s) return;
  tg_free(s->weights);
  tg_free(s->state);
  tg_free(s->scratch);
  tg_free(s->layers);
  tg_free(s);
}

/* ---- one step ---- */

/* Y [rows, n_out] = X [rows, n_in] W^T (+ b), W [n_out, n_in]; accumulate: Y += X W^T instead. */
static void m2s_linear(const float *x, const float *w, const float *b, int64_t rows, int64_t n_in, int64_t n_out,
                       int accumulate, float *y) {
  if (b)
    for (int64_t r = 0; r < rows; r++) memcpy(y + r * n_out, b, (size_t)n_out * sizeof(float));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)n_out, (int)n_in, 1.0f, x, (int)n_in, w,
              (int)n_in, b || accumulate ? 1.0f : 0.0f, y, (int)n_out);
}

/* y = x / sqrt(mean(x^2) + 1e-5) * w over n. */
static void m2s_rmsnorm(const float *x, const float *w, int64_t n, float *y) {
  double ss = 0.0;
  for (int64_t i = 0; i < n; i++) ss += (double)x[i] * x[i];
  double r = 1.0 / sqrt(ss / (double)n + 1e-5);
  for (int64_t i = 0; i < n; i++) y[i] = (float)(x[i] * r) * w[i];
}

/* sum_n a[n] b[n] in 8 float lanes (vectorisable without reassociating one sum). */
static float m2s_dot(const float *a, const float *b, int64_t n) {
  float lane[8] = {0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) lane[k] += a[i + k] * b[i + k];
  float acc = 0.0f;
  for (; i < n; i++) acc += a[i] * b[i];
  for (int k = 0; k < 8; k++) acc += lane[k];
  return acc;
}

static float m2s_silu(float v) { return (float)(v / (1.0 + exp(-(double)v))); }
static float m2s_softplus(float v) { return v > 20.0f ? v : (float)log1p(exp((double)v)); }

/* The causal conv of row b at the new step, then SiLU: xbc [C] in place; shifts the conv state. */
static void m2s_conv(const tg_mamba2_stepper *s, const m2s_layer *l, int64_t b, float *xbc) {
  int64_t K = s->K, C = s->C;
  float *st = l->conv_state + b * (K - 1) * C; /* [K-1, C], oldest first */
  for (int64_t c = 0; c < C; c++) {
    const float *w = l->conv_w + c * K; /* w[k] multiplies x[t-K+1+k] */
    double acc = l->conv_b[c];
    for (int64_t k = 0; k < K - 1; k++) acc += (double)w[k] * st[k * C + c];
    acc += (double)w[K - 1] * xbc[c];
    for (int64_t k = 0; k + 1 < K - 1; k++) st[k * C + c] = st[(k + 1) * C + c];
    if (K > 1) st[(K - 2) * C + c] = xbc[c];
    xbc[c] = m2s_silu((float)acc);
  }
}

/* SSM update of row b for every head; writes y [E] = (C h + D x) (before the gate). */
static void m2s_ssm(const tg_mamba2_stepper *s, const m2s_layer *l, int64_t b, const float *xbc, const float *dt_raw,
                    float *y) {
  int64_t H = s->H, P = s->P, N = s->N, G = s->G;
  const float *x = xbc, *Bm = xbc + s->E, *Cm = xbc + s->E + G * N; /* [H, P] [G, N] [G, N] */
  for (int64_t h = 0; h < H; h++) {
    int64_t g = h / (H / G);
    const float *Bg = Bm + g * N, *Cg = Cm + g * N;
    float dt = m2s_softplus(dt_raw[h] + l->dt_bias[h]);
    float A = -expf(l->a_log[h]);
    float decay = (float)exp((double)dt * A);
    float *hs = l->ssm_state + ((b * H + h) * P) * N; /* [P, N] */
    for (int64_t p = 0; p < P; p++) {
      float xv = x[h * P + p], dx = dt * xv;
      float *hr = hs + p * N;
      for (int64_t n = 0; n < N; n++) hr[n] = decay * hr[n] + dx * Bg[n];
      y[h * P + p] = m2s_dot(hr, Cg, N) + l->D[h] * xv;
    }
  }
}

/* u [batch, d] += Mixer(RMSNorm(u)) for layer l. */
static void m2s_layer_step(tg_mamba2_stepper *s, const m2s_layer *l) {
  int64_t B = s->batch, d = s->d, E = s->E, C = s->C, W = s->proj_out;
  for (int64_t b = 0; b < B; b++) m2s_rmsnorm(s->u + b * d, l->norm_w, d, s->hn + b * d);
  m2s_linear(s->hn, l->in_w, NULL, B, d, W, 0, s->proj); /* rows [z (E) | xBC (C) | dt (H)] */
  for (int64_t b = 0; b < B; b++) {
    const float *pr = s->proj + b * W;
    float *y = s->y + b * E;
    memcpy(s->xbc, pr + E, (size_t)C * sizeof(float));
    m2s_conv(s, l, b, s->xbc);
    m2s_ssm(s, l, b, s->xbc, pr + E + C, y);
    for (int64_t e = 0; e < E; e++) y[e] *= m2s_silu(pr[e]);
    m2s_rmsnorm(y, l->gnorm_w, E, y);
  }
  m2s_linear(s->y, l->out_w, NULL, B, E, d, 1, s->u); /* the residual add */
}

tg_status tg_mamba2_step(tg_mamba2_stepper *s, const float *x, float *pred) {
  if (!s || !x || !pred) return tg_error(TG_ERR_INVALID, "mamba2 step: NULL stepper, input or prediction");
  int64_t B = s->batch, d = s->d;
  m2s_linear(x, s->emb_w, s->emb_b, B, s->cfg.n_past, d, 0, s->u);
  for (int i = 0; i < s->cfg.mamba.n_layers; i++) m2s_layer_step(s, &s->layers[i]);
  for (int64_t b = 0; b < B; b++) m2s_rmsnorm(s->u + b * d, s->normf_w, d, s->hn + b * d);
  m2s_linear(s->hn, s->head_w, s->head_b, B, d, s->n_out, 0, pred);
  return TG_OK;
}
