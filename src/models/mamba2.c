/* The Mamba-2 forecaster as a graph: embed, pre-norm SSD mixer blocks, final norm, last-step quantile head. */
#include <math.h>
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/models_internal.h"

/* Model sizes derived from the config (models.md section 2.1). */
typedef struct m2_dims {
  int64_t B, L, d, E, H, P, G, N, K; /* batch, steps, d_model, d_inner, heads, headdim, groups, d_state, d_conv */
  int64_t conv_ch, proj_out;         /* E + 2GN, 2E + 2GN + H */
} m2_dims;

static m2_dims m2_dims_of(const tg_forecast_cfg *c, int64_t batch) {
  const tg_mamba2_cfg *m = &c->mamba;
  m2_dims k;
  k.B = batch;
  k.L = m->seq_len;
  k.d = m->d_model;
  k.E = (int64_t)m->expand * m->d_model;
  k.P = m->headdim;
  k.H = k.E / k.P;
  k.G = m->ngroups;
  k.N = m->d_state;
  k.K = m->d_conv;
  k.conv_ch = k.E + 2 * k.G * k.N;
  k.proj_out = 2 * k.E + 2 * k.G * k.N + k.H;
  return k;
}

/* Declares "mamba2.<prefix><leaf>" (prefix "" or "layers.<i>."). */
static tg_tensor *m2_param(tg_graph *g, const char *prefix, const char *leaf, int ndim, const int64_t *shape,
                           tg_init init) {
  char name[128];
  snprintf(name, sizeof name, "mamba2.%s%s", prefix, leaf);
  return tg_param(g, name, ndim, shape, init);
}

static tg_init init_fan_in(void) { return (tg_init){TG_INIT_FAN_IN, 0, 0}; }
static tg_init init_const(tg_init_kind k) { return (tg_init){k, 0, 0}; }
static tg_init init_sym(double bound) { return (tg_init){TG_INIT_UNIFORM, (float)-bound, (float)bound}; }

/* The mixer of one layer: h [B, L, d] -> [B, L, d] (section 2.1, whole-d_inner gated RMSNorm). */
static tg_tensor *m2_mixer(tg_graph *g, const tg_forecast_cfg *c, const m2_dims *k, int layer, tg_tensor *h) {
  char pre[64];
  snprintf(pre, sizeof pre, "layers.%d.mixer.", layer);
  int64_t s_in[2] = {k->proj_out, k->d}, s_conv[2] = {k->conv_ch, k->K}, s_ch[1] = {k->conv_ch};
  int64_t s_h[1] = {k->H}, s_e[1] = {k->E}, s_out[2] = {k->d, k->E};
  tg_tensor *w_in = m2_param(g, pre, "in_proj.weight", 2, s_in, init_fan_in());            /* [2E+2GN+H, d] */
  tg_tensor *w_conv = m2_param(g, pre, "conv1d.weight", 2, s_conv, init_fan_in());         /* [E+2GN, K] */
  tg_tensor *b_conv = m2_param(g, pre, "conv1d.bias", 1, s_ch, init_sym(1.0 / sqrt((double)k->K))); /* [E+2GN] */
  tg_tensor *dt_bias = m2_param(g, pre, "dt_bias", 1, s_h, (tg_init){TG_INIT_DT_BIAS, 1e-3f, 0.1f}); /* [H] */
  tg_tensor *a_log = m2_param(g, pre, "A_log", 1, s_h, (tg_init){TG_INIT_LOG_UNIFORM, 1.0f, 16.0f});  /* [H] */
  tg_tensor *D = m2_param(g, pre, "D", 1, s_h, init_const(TG_INIT_ONES));                  /* [H] */
  tg_tensor *w_norm = m2_param(g, pre, "norm.weight", 1, s_e, init_const(TG_INIT_ONES));   /* [E] */
  /* kaiming_uniform(a=sqrt 5) / sqrt(n_layers): U(+-1/sqrt(E n_layers)) */
  tg_tensor *w_out = m2_param(g, pre, "out_proj.weight", 2, s_out,
                              init_sym(1.0 / sqrt((double)k->E * c->mamba.n_layers))); /* [d, E] */

  tg_tensor *zxbcdt = tg_linear(g, h, w_in, NULL); /* [B, L, 2E+2GN+H] */
  tg_tensor *z = tg_slice(g, zxbcdt, 2, 0, k->E);  /* [B, L, E] */
  tg_tensor *xbc = tg_slice(g, zxbcdt, 2, k->E, k->conv_ch);
  tg_tensor *dt_raw = tg_slice(g, zxbcdt, 2, k->E + k->conv_ch, k->H); /* [B, L, H] */
  xbc = tg_silu(g, tg_conv1d_causal(g, xbc, w_conv, b_conv));         /* [B, L, E+2GN] */
  int64_t s_x[4] = {k->B, k->L, k->H, k->P}, s_bc[4] = {k->B, k->L, k->G, k->N};
  tg_tensor *x = tg_reshape(g, tg_slice(g, xbc, 2, 0, k->E), 4, s_x);                     /* [B, L, H, P] */
  tg_tensor *Bm = tg_reshape(g, tg_slice(g, xbc, 2, k->E, k->G * k->N), 4, s_bc);         /* [B, L, G, N] */
  tg_tensor *Cm = tg_reshape(g, tg_slice(g, xbc, 2, k->E + k->G * k->N, k->G * k->N), 4, s_bc);
  tg_tensor *dt = tg_softplus(g, tg_add(g, dt_raw, dt_bias)); /* [B, L, H] */
  tg_tensor *A = tg_scale(g, tg_exp(g, a_log), -1.0f);        /* [H] */
  tg_tensor *y = tg_ssd_scan(g, x, dt, A, Bm, Cm, D, c->mamba.chunk); /* [B, L, H, P], includes D x */
  int64_t s_y[3] = {k->B, k->L, k->E};
  y = tg_mul(g, tg_reshape(g, y, 3, s_y), tg_silu(g, z)); /* [B, L, E] */
  y = tg_rmsnorm(g, y, w_norm, 1e-5f);
  return tg_linear(g, y, w_out, NULL); /* [B, L, d] */
}


tg_tensor *tg_mamba2_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  if (in->past && !tg_graph_check_inputs(g, "mamba2", 1, &in->past)) return NULL;
  if (!tg_forecast_check_past(g, c, "mamba2", in->past)) return NULL;
  m2_dims k = m2_dims_of(c, in->past->shape[0]);
  int64_t s_emb[2] = {k.d, c->n_past}, s_d[1] = {k.d}, s_head[2] = {(int64_t)c->horizons * tg_forecast_step_width(c), k.d};
  int64_t s_hb[1] = {(int64_t)c->horizons * tg_forecast_step_width(c)};
  tg_tensor *w_emb = m2_param(g, "", "embed.weight", 2, s_emb, init_fan_in()); /* [d, n_past] */
  tg_tensor *b_emb = m2_param(g, "", "embed.bias", 1, s_d, init_const(TG_INIT_ZEROS));
  tg_tensor *u = tg_linear(g, in->past, w_emb, b_emb); /* [B, L, d] */
  for (int i = 0; i < c->mamba.n_layers; i++) {
    char pre[64], block[80];
    snprintf(pre, sizeof pre, "layers.%d.", i);
    snprintf(block, sizeof block, "mamba2.layers.%d", i);
    tg_graph_block_begin(g, block); /* a recomputation block: the layer keeps only its input u [B, L, d] */
    tg_tensor *w_norm = m2_param(g, pre, "norm.weight", 1, s_d, init_const(TG_INIT_ONES)); /* [d] */
    tg_tensor *mix = m2_mixer(g, c, &k, i, tg_rmsnorm(g, u, w_norm, 1e-5f));
    if (c->dropout > 0.0f) mix = tg_dropout(g, mix, c->dropout); /* identity outside training plans */
    u = tg_add(g, u, mix);
    tg_graph_block_end(g);
    if (!u) return NULL;
  }
  /* The final norm is per position, so normalising only the last position gives the same forecast. */
  int64_t s_last[2] = {k.B, k.d}, s_pred[3] = {k.B, c->horizons, tg_forecast_step_width(c)};
  tg_tensor *last = tg_reshape(g, tg_slice(g, u, 1, k.L - 1, 1), 2, s_last); /* [B, d] */
  tg_tensor *w_nf = m2_param(g, "", "norm_f.weight", 1, s_d, init_const(TG_INIT_ONES));
  last = tg_rmsnorm(g, last, w_nf, 1e-5f);
  tg_tensor *w_head = m2_param(g, "", "head.weight", 2, s_head, init_fan_in()); /* [horizons*W, d], W = nq or n_classes */
  tg_tensor *b_head = m2_param(g, "", "head.bias", 1, s_hb, init_const(TG_INIT_ZEROS));
  return tg_reshape(g, tg_linear(g, last, w_head, b_head), 3, s_pred); /* [B, horizons, W] */
}
