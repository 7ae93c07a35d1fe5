/* The Temporal Fusion Transformer as a graph: quantile forecasts [B, dec, nq] from past, future and static inputs. */
/*
 * Conventions (reference/tft.py builds exactly this in PyTorch, with the same parameter names):
 * - d = cfg.tft.hidden everywhere; every GRN has hidden width d (also the VSN weight GRN GRN_v,
 *   m*d -> d -> m). GRN(a, c) = LayerNorm(skip(a) + GLU(Dropout(fc2(ELU(fc1(a) + ctx(c)))))):
 *   "fc1" is the paper's W2 (with b2), "ctx" its W3 (no bias), "fc2" its W1; skip is identity when
 *   the sizes agree, else a Linear "skip". GLU is one Linear "glu" h -> 2 out, first half *
 *   sigmoid(second half). LayerNorm eps 1e-5 (PyTorch's), with weight and bias. The GLU, the
 *   residual add and the LayerNorm run as one tg_gate_add_norm op on the GLU Linear's [.., 2 out].
 * - Inputs: past [B, enc, n_past] (every observed feature, the calendar columns included),
 *   future [B, dec, n_future], inst [B] (i64 or i32) into an embedding [n_static, d].
 * - Real variable j: its own Linear(1 -> d): xi_j = x_j * embed.weight[j] + embed.bias[j]
 *   (weight and bias [m, d] U(-1, 1), PyTorch's Linear(1, d) init), computed as one stacked_linear over j.
 * - Static VSN: one variable, weight 1 (no softmax), its GRN "static_vsn"; four GRNs give c_s
 *   (VSN context), c_e (enrichment), c_h and c_c (encoder LSTM's h0, c0).
 * - Past / future VSN with context c_s: weights = softmax(GRN_v(flattened [m*d], c_s)) over m;
 *   per-variable GRNs d -> d with separate weights stacked [m, ...] ("var_grn"), run as
 *   stacked_linear ops on the position-major [B*T, m, d] layout; output = sum_j weight_j * GRN_j(xi_j).
 *   On large inputs the variables go in groups (see vsn_group), each summed into the output in turn.
 * - Context over time: binary ops broadcast a suffix only, so [B, T, h] + [B, h] goes through
 *   [T, B, h] and back (two transposes of the hidden-width tensor).
 * - LSTMs (tg_lstm, gates i f g o, one bias [4d], weights U(+-1/sqrt(d)), bias N(0, 2/(3d))): encoder from
 *   (c_h, c_c), a separate decoder from the encoder's final (h, c).
 * - Post-LSTM gate: one shared GLU + add&norm over all enc+dec positions with the VSN outputs.
 * - Static enrichment GRN with context c_e at every position.
 * - Attention: queries = decoder positions, keys/values = all enc+dec positions; per-head Q and K
 *   projections (one Linear d -> heads*d_attn each, head-major), one V (d -> d_attn) shared by
 *   the heads; NO biases on Q/K/V (google's choice); scores / sqrt(d_attn); tg_causal_softmax with
 *   offset enc: decoder step i sees key j <= enc + i (paper/google mask, diagonal included);
 *   per-head A_h V, dropout, mean over heads, W_H "attn.out" (d_attn -> d, no bias), dropout.
 * - Post-attention GLU + add&norm (skip: enrichment output at decoder positions), position-wise
 *   GRN "pos_ff", final GLU + add&norm "pre_out" with the post-LSTM output (no dropout), Linear
 *   "out" d -> nq, one set of weights shared by every decoder step (a classifier: n_classes logits).
 * - With cfg.tft.vol_scale, the quantiles of each window are multiplied by its recent volatility, computed from
 *   the encoder's past column vol_col (tft_vol.c): the network forecasts in units of the market's current motion.
 * - Dropout p = cfg.dropout on every GLU input inside a GRN, the post-LSTM and post-attention GLU
 *   inputs, each head's output and the attention output (only in training plans; no nodes at 0).
 * - Inits: Linear weights xavier uniform, biases 0 (the real-variable embeddings aside, above), LayerNorm weight 1,
 *   embedding N(0, 1).
 */
#include <math.h>
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/models_internal.h"
#include "models/tft_internal.h"

#define SHAPE_BUF 96

/* Fails unless t is [d0, d1, d2] (a dim < 0 matches anything) f32. */
static int need_input(tg_graph *g, const char *what, const tg_tensor *t, int64_t d0, int64_t d1,
                      int64_t d2) {
  char s[SHAPE_BUF];
  int ok = t->dtype == TG_F32 && t->ndim == 3 && (d0 < 0 || t->shape[0] == d0) && t->shape[1] == d1 &&
           t->shape[2] == d2;
  if (!ok)
    tg_graph_fail(g, TG_ERR_SHAPE, "tft: input %s '%s' is %s %s; expected f32 [%s, %lld, %lld]", what,
                  t->name, tg_dtype_name(t->dtype), tg_shape_str(t, s, sizeof s),
                  d0 < 0 ? "B" : "B of past", (long long)d1, (long long)d2);
  return ok;
}

/* past [B, T, w] f32, inst [B] i64 or i32 and (future_rows > 0) future [B, future_rows, n_future] f32. */
static int check_parts(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *past, int64_t T, int64_t w, tg_tensor *future,
                       int64_t future_rows, tg_tensor *inst) {
  tg_tensor *ins[3] = {past, inst, future};
  int n = future_rows > 0 ? 3 : 2;
  if (!past || !inst || (n == 3 && !future)) {
    tg_graph_fail(g, TG_ERR_INVALID, "tft: inputs past %s, inst %s and future %s are required", past ? "set" : "NULL",
                  inst ? "set" : "NULL", future || n == 2 ? "set" : "NULL");
    return 0;
  }
  if (!tg_graph_check_inputs(g, "tft", n, ins)) return 0;
  if (!need_input(g, "past", past, -1, T, w)) return 0;
  int64_t B = past->shape[0];
  if (n == 3 && !need_input(g, "future", future, B, future_rows, c->n_future)) return 0;
  if ((inst->dtype != TG_I64 && inst->dtype != TG_I32) || inst->ndim != 1 || inst->shape[0] != B) {
    char sh[SHAPE_BUF];
    tg_graph_fail(g, TG_ERR_SHAPE, "tft: input inst '%s' is %s %s; expected i64 or i32 [%lld] (B of past)",
                  inst->name, tg_dtype_name(inst->dtype), tg_shape_str(inst, sh, sizeof sh), (long long)B);
    return 0;
  }
  return 1;
}

/* The config checks every build makes. */
static int check_config(tg_graph *g, const tg_forecast_cfg *c) {
  if (!g) return 0;
  if (!c) return tg_graph_fail(g, TG_ERR_INVALID, "tft: NULL config"), 0;
  if (c->kind != TG_MODEL_TFT) return tg_graph_fail(g, TG_ERR_INVALID, "tft: config kind %d is not TFT", (int)c->kind), 0;
  if (tg_forecast_check(c) != TG_OK) return tg_graph_fail(g, TG_ERR_INVALID, "%s", tg_last_error()), 0;
  return tg_graph_status(g) == TG_OK;
}

/* The per-variable embedding "<prefix>": weight and bias [m, d], one linear 1 -> d per real variable. */
typedef struct real_embed {
  tg_tensor *w, *bias;
} real_embed;

static int embed_params(tft_b *b, const char *prefix, int64_t m, int64_t d, real_embed *e) {
  int64_t ws[2] = {m, d};
  e->w = tft_param(b, prefix, "weight", 2, ws, (tg_init){TG_INIT_UNIFORM, -1.0f, 1.0f});
  e->bias = tft_param(b, prefix, "bias", 2, ws, (tg_init){TG_INIT_UNIFORM, -1.0f, 1.0f});
  return e->w && e->bias;
}

/* Variables lo .. lo+n-1 of x [B, T, m] embedded: xi [B*T, n, d], xi[r, j] = x[r, lo+j] * weight[lo+j] +
 * bias[lo+j] (stacked_linear with in = 1; sliced when n < m). */
static tg_tensor *embed_vars(tft_b *b, tg_tensor *x, const real_embed *e, int64_t lo, int64_t n) {
  tg_graph *g = b->g;
  int64_t m = x->shape[2], d = e->w->shape[1], col[3] = {x->shape[0] * x->shape[1], m, 1}, w3[3] = {m, d, 1};
  tg_tensor *xc = tg_reshape(g, x, 3, col), *w = tg_reshape(g, e->w, 3, w3), *bias = e->bias;
  if (n < m) {
    xc = tg_slice(g, xc, 1, lo, n);
    w = tg_slice(g, w, 0, lo, n);
    bias = tg_slice(g, bias, 0, lo, n);
  }
  return tg_stacked_linear(g, xc, w, bias); /* [N, n, d] */
}

/* A VSN's per-variable GRNs run on groups of at most this many elements per [N, group, d] tensor (at least one
 * variable a group), each group a recomputation block that embeds its variables again from x. So the backward of a
 * large batch holds one group's [N, group, 2d] values and gradients, not all m variables' at once. Small inputs (a
 * batch-1 prediction) stay one group: the embedding computed once and no slices. */
#define TFT_VSN_GROUP_ELEMS (128 * 1024)

static int64_t vsn_group(int64_t N, int64_t m, int64_t d) {
  int64_t mg = TFT_VSN_GROUP_ELEMS / (N * d > 0 ? N * d : 1);
  return mg < 1 ? 1 : mg > m ? m : mg;
}

/* The VSN "<prefix>" with embedding "<embed>" over x [B, T, m], context c_s [B, d] -> [B, T, d]; the weights
 * [B, T, m] go to *w_out. */
static tg_tensor *vsn(tft_b *b, const char *prefix, const char *embed, tg_tensor *x, tg_tensor *c_s, int64_t d,
                      tg_tensor **w_out) {
  tg_graph *g = b->g;
  int64_t B = x->shape[0], T = x->shape[1], m = x->shape[2], N = B * T, mg = b->whole ? m : vsn_group(N, m, d);
  int64_t flat[3] = {B, T, m * d}, wrow[3] = {N, 1, m}, out[3] = {B, T, d};
  char name[TG_NAME_MAX];
  real_embed e;
  if (!embed_params(b, embed, m, d, &e)) return NULL;
  tg_tensor *xi = mg == m ? embed_vars(b, x, &e, 0, m) : NULL; /* one group: embedded once, kept for both parts */
  snprintf(name, sizeof name, "%s.grn_v", prefix);
  tg_graph_block_begin(g, name); /* keeps xi (or, grouped, x) and c_s; its insides are [B, T, d] */
  tg_tensor *xflat = tg_reshape(g, xi ? xi : embed_vars(b, x, &e, 0, m), 3, flat);
  tg_tensor *w = tg_softmax(g, tft_grn(b, name, xflat, c_s, d, m)); /* [B, T, m] */
  tg_graph_block_end(g);
  snprintf(name, sizeof name, "%s.var_grn", prefix);
  tft_var_params vp;
  if (!tft_var_grn_params(b, name, m, d, &vp)) return NULL;
  *w_out = w;
  if (mg == m) {
    tg_tensor *var = tft_var_grns(b, name, &vp, xi, 0, 1); /* [N, m, d] */
    return tg_reshape(g, tg_matmul(g, tg_reshape(g, w, 3, wrow), var, 0, 0), 3, out);
  }
  tg_tensor *wr = tg_reshape(g, w, 3, wrow), *sel = NULL; /* [N, 1, m]; sel [N, 1, d] */
  for (int64_t lo = 0; lo < m; lo += mg) {
    int64_t n = m - lo < mg ? m - lo : mg;
    char blk[TG_NAME_MAX + 24]; /* block_begin refuses a name past TG_NAME_MAX */
    snprintf(blk, sizeof blk, "%s.%lld", name, (long long)lo);
    tg_graph_block_begin(g, blk); /* keeps x, w and the sum so far */
    tg_tensor *var = tft_var_grns(b, name, &vp, embed_vars(b, x, &e, lo, n), lo, 0); /* [N, n, d] */
    tg_tensor *part = tg_matmul(g, tg_slice(g, wr, 2, lo, n), var, 0, 0);          /* [N, 1, d] */
    sel = sel ? tg_add(g, sel, part) : part;
    tg_graph_block_end(g);
  }
  return tg_reshape(g, sel, 3, out);
}

/* One LSTM layer "<prefix>": x [B, T, d], h0 and c0 [B, d] -> [B, T, 6d] (h | c | gates). */
static tg_tensor *lstm(tft_b *b, const char *prefix, tg_tensor *x, tg_tensor *h0, tg_tensor *c0, int64_t d) {
  int64_t ws[2] = {4 * d, d};
  tg_init u = {TG_INIT_UNIFORM, -1.0f / sqrtf((float)d), 1.0f / sqrtf((float)d)};
  tg_tensor *w_ih = tft_param(b, prefix, "w_ih", 2, ws, u);
  tg_tensor *w_hh = tft_param(b, prefix, "w_hh", 2, ws, u);
  /* not zeros: PyTorch's LSTM starts each of its two bias vectors U(-1/sqrt(d), 1/sqrt(d)); one vector of their sum's
   * variance (2 / (3 d)) forecast ES better out of sample on 5 seeds of 6 and SPY as well (docs/FORECASTING.md) */
  tg_init bi = {TG_INIT_NORMAL, 0.0f, sqrtf(2.0f / 3.0f) / sqrtf((float)d)};
  tg_tensor *bias = tft_param(b, prefix, "bias", 1, ws, bi);
  if (!x || !h0 || !c0 || !w_ih || !w_hh || !bias) return NULL;
  return tg_lstm(b->g, x, h0, c0, w_ih, w_hh, bias);
}

/* The LSTM state [B, d] at the last step of out [B, T, 6d]: which = 0 for h, 1 for c. */
static tg_tensor *lstm_final(tg_graph *g, tg_tensor *out, int64_t d, int which) {
  if (!out) return NULL;
  int64_t T = out->shape[1], bd[2] = {out->shape[0], d};
  tg_tensor *last = tg_slice(g, out, 1, T - 1, 1); /* [B, 1, 6d] */
  return tg_reshape(g, tg_slice(g, last, 2, which * d, d), 2, bd);
}

/* Interpretable multi-head attention: theta [B, T, d], decoder queries from position enc on.
 * -> [B, dec, d]; the attention [B, heads, dec, T] goes to *att_out. */
static tg_tensor *attention(tft_b *b, tg_tensor *theta, int64_t enc, int64_t heads, tg_tensor **att_out) {
  if (!theta) return NULL;
  tg_graph *g = b->g;
  int64_t B = theta->shape[0], T = theta->shape[1], d = theta->shape[2], dec = T - enc, da = d / heads;
  int64_t qs[4] = {B, dec, heads, da}, ks[4] = {B, T, heads, da}, as[3] = {B, heads * dec, T};
  int64_t hs[4] = {B, heads, dec, da};
  tg_tensor *q = tg_reshape(g, tft_dense(b, "tft.attn.q", tg_slice(g, theta, 1, enc, dec), d, 0), 4, qs);
  tg_tensor *k = tg_reshape(g, tft_dense(b, "tft.attn.k", theta, d, 0), 4, ks);
  tg_tensor *v = tft_dense(b, "tft.attn.v", theta, da, 0); /* [B, T, da] */
  q = tg_transpose(g, q, 1, 2);                              /* [B, H, dec, da] */
  k = tg_transpose(g, k, 1, 2);                              /* [B, H, T, da] */
  tg_tensor *s = tg_scale(g, tg_matmul(g, q, k, 0, 1), 1.0f / sqrtf((float)da)); /* [B, H, dec, T] */
  tg_tensor *a = tg_causal_softmax(g, s, enc);
  *att_out = a;
  tg_tensor *hv = tg_reshape(g, tg_matmul(g, tg_reshape(g, a, 3, as), v, 0, 0), 4, hs); /* [B, H, dec, da] */
  hv = tft_drop(b, hv);
  /* mean over heads: bring H last ([B, dec, da, H]) */
  tg_tensor *mean = tg_mean_last(g, tg_transpose(g, tg_transpose(g, hv, 1, 2), 2, 3)); /* [B, dec, da] */
  return tft_drop(b, tft_dense(b, "tft.attn.out", mean, d, 0));
}

/* The four static contexts from the instrument: ctx[0..3] = c_s, c_e, c_h, c_c, each [B, d]. */
static int static_contexts(tft_b *b, const tg_forecast_cfg *c, tg_tensor *inst, tg_tensor **ctx) {
  int64_t d = c->tft.hidden, es[2] = {c->n_static, d};
  tg_tensor *table = tft_param(b, "tft.static_embed", "weight", 2, es, (tg_init){TG_INIT_NORMAL, 0.0f, 1.0f});
  if (!table) return 0;
  tg_tensor *zeta = tft_grn(b, "tft.static_vsn", tg_gather_rows(b->g, table, inst), NULL, d, d);
  static const char *names[4] = {"tft.static_ctx_s", "tft.static_ctx_e", "tft.static_ctx_h", "tft.static_ctx_c"};
  for (int i = 0; i < 4; i++) ctx[i] = tft_grn(b, names[i], zeta, NULL, d, d);
  return ctx[0] && ctx[1] && ctx[2] && ctx[3];
}

/* The past VSN over past [B, T, n_past] with context c_s: [B, T, d]. */
static tg_tensor *past_vsn(tft_b *b, const tg_forecast_cfg *c, tg_tensor *past, tg_tensor *c_s, tg_tensor **w_out) {
  return vsn(b, "tft.past_vsn", "tft.past_embed", past, c_s, c->tft.hidden, w_out);
}

/* Everything after the past VSN: x_past [B, enc, d], future [B, dec, n_future], ctx the static contexts. */
static tg_tensor *after_past_vsn(tft_b *b, const tg_forecast_cfg *c, tg_tensor *x_past, tg_tensor *future,
                                 tg_tensor **ctx, tg_tft_taps *tp) {
  tg_graph *g = b->g;
  int64_t d = c->tft.hidden, enc = c->tft.enc_len, dec = c->tft.dec_len;
  tg_tensor *x_fut = vsn(b, "tft.future_vsn", "tft.future_embed", future, ctx[0], d, &tp->future_vsn_weights);
  /* recomputation blocks: each keeps what enters it; the node order is the same as without them */
  tg_graph_block_begin(g, "tft.lstm"); /* both LSTMs ([B, T, 6d] each) down to h over time */
  tg_tensor *enc_out = lstm(b, "tft.lstm_enc", x_past, ctx[2], ctx[3], d); /* [B, enc, 6d] */
  tg_tensor *dec_out = lstm(b, "tft.lstm_dec", x_fut, lstm_final(g, enc_out, d, 0), lstm_final(g, enc_out, d, 1), d);
  if (!enc_out || !dec_out) return NULL;
  tg_tensor *hs[2] = {tg_slice(g, enc_out, 2, 0, d), tg_slice(g, dec_out, 2, 0, d)}; /* h over time */
  tg_graph_block_end(g);
  tg_tensor *xs[2] = {x_past, x_fut};
  tg_graph_block_begin(g, "tft.post_lstm");
  tg_tensor *phi = tft_gate_add_norm(b, "tft.post_lstm", tg_concat(g, 2, hs, 1), tg_concat(g, 2, xs, 1), 1);
  tg_graph_block_end(g);
  tg_graph_block_begin(g, "tft.enrich");
  tg_tensor *theta = tft_grn(b, "tft.enrich", phi, ctx[1], d, d); /* [B, T, d] */
  tg_graph_block_end(g);
  tg_graph_block_begin(g, "tft.attn");
  tg_tensor *att = attention(b, theta, enc, c->tft.heads, &tp->attention);
  tg_graph_block_end(g);
  tg_graph_block_begin(g, "tft.post_attn");
  tg_tensor *delta = tft_gate_add_norm(b, "tft.post_attn", att, tg_slice(g, theta, 1, enc, dec), 1);
  tg_graph_block_end(g);
  tg_graph_block_begin(g, "tft.pos_ff");
  tg_tensor *psi = tft_grn(b, "tft.pos_ff", delta, NULL, d, d);
  tg_graph_block_end(g);
  tg_graph_block_begin(g, "tft.pre_out");
  tg_tensor *pre = tft_gate_add_norm(b, "tft.pre_out", psi, tg_slice(g, phi, 1, enc, dec), 0);
  tg_graph_block_end(g);
  return tft_dense(b, "tft.out", pre, tg_forecast_step_width(c), 1); /* [B, dec, nq or n_classes] */
}

tg_tensor *tg_tft_build_taps(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in,
                             tg_tft_taps *taps) {
  if (!check_config(g, c)) return NULL;
  if (!in) return tg_graph_fail(g, TG_ERR_INVALID, "tft: NULL inputs");
  if (!check_parts(g, c, in->past, c->tft.enc_len, c->n_past, in->future, c->tft.dec_len, in->inst)) return NULL;
  tft_b bb = {g, c->dropout, c->whole}, *b = &bb;
  tg_tft_taps tp = {0};
  tg_tensor *ctx[4] = {0};
  if (!static_contexts(b, c, in->inst, ctx)) return NULL;
  tg_tensor *x_past = past_vsn(b, c, in->past, ctx[0], &tp.past_vsn_weights);
  tg_tensor *pred = after_past_vsn(b, c, x_past, in->future, ctx, &tp);
  if (pred && c->tft.vol_scale) pred = tg_tft_vol_apply(g, pred, tg_tft_vol(g, tg_tft_vol_window(g, c, in->past)));
  if (taps && pred) *taps = tp;
  return pred;
}

tg_tensor *tg_tft_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  return tg_tft_build_taps(g, c, in, NULL);
}

tg_tensor *tg_tft_build_past(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *past, tg_tensor *inst) {
  if (!check_config(g, c)) return NULL;
  tg_forecast_cfg inner;
  past = tg_forecast_embed(g, c, past, &inner); /* category ids to embeddings, as tg_forecast_build does */
  c = &inner;
  if (past && !check_parts(g, c, past, past->shape[1], c->n_past, NULL, 0, inst)) return NULL;
  if (!past) return tg_graph_fail(g, TG_ERR_INVALID, "tft: input past is required");
  tft_b bb = {g, c->dropout, c->whole}, *b = &bb;
  tg_tensor *ctx[4] = {0}, *w = NULL;
  if (!static_contexts(b, c, inst, ctx)) return NULL;
  return past_vsn(b, c, past, ctx[0], &w);
}

tg_tensor *tg_tft_build_after_past(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *x_past, tg_tensor *future,
                                   tg_tensor *inst, tg_tensor *vol_x) {
  if (!check_config(g, c)) return NULL;
  if (!check_parts(g, c, x_past, c->tft.enc_len, c->tft.hidden, future, c->tft.dec_len, inst)) return NULL;
  tft_b bb = {g, c->dropout, c->whole}, *b = &bb;
  tg_tft_taps tp = {0};
  tg_tensor *ctx[4] = {0};
  if (!static_contexts(b, c, inst, ctx)) return NULL;
  if (c->tft.vol_scale && (!vol_x || vol_x->ndim != 2 || vol_x->shape[0] != x_past->shape[0] ||
                           vol_x->shape[1] != c->tft.enc_len))
    return tg_graph_fail(g, TG_ERR_SHAPE, "tft: the volatility scale needs vol_x [B, %d] beside x_past", c->tft.enc_len);
  tg_tensor *pred = after_past_vsn(b, c, x_past, future, ctx, &tp);
  return pred && c->tft.vol_scale ? tg_tft_vol_apply(g, pred, tg_tft_vol(g, vol_x)) : pred;
}
