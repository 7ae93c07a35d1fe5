/* Temporal Fusion Transformer internals: the layer builders (tft_layers.c), the tapped build, the volatility scale. */
#ifndef TG_TFT_INTERNAL_H
#define TG_TFT_INTERNAL_H

#include "tickgrad/dataset.h"
#include "tickgrad/models.h"

/* What every layer builder needs: the graph and the dropout probability (0: no dropout nodes). */
typedef struct tft_b {
  tg_graph *g;
  float p;
  int whole; /* tg_forecast_cfg.whole: the variable selection in one group whatever the batch */
} tft_b;

/* Parameter "<prefix>.<leaf>" (fails the build when the name does not fit TG_NAME_MAX). */
tg_tensor *tft_param(tft_b *b, const char *prefix, const char *leaf, int ndim, const int64_t *shape,
                     tg_init init);
/* Dropout with b->p; x itself when p == 0. */
tg_tensor *tft_drop(tft_b *b, tg_tensor *x);
/* Linear "<prefix>.weight" [n_out, in] (xavier) and, with bias, "<prefix>.bias" [n_out] (zeros):
 * x [..., in] -> [..., n_out]. */
tg_tensor *tft_dense(tft_b *b, const char *prefix, tg_tensor *x, int64_t n_out, int bias);
/* x [B, T, h] + c [B, h] broadcast over T (or x [B, h] + c [B, h]). */
tg_tensor *tft_add_ctx(tft_b *b, tg_tensor *x, tg_tensor *c);
/* LayerNorm(skip + GLU(Dropout(x))) with "<prefix>.glu" Linear(h -> 2 out) and "<prefix>.norm"
 * (weight, bias [out]); x [..., h], skip [..., out]; drop = 0 leaves the dropout out. */
tg_tensor *tft_gate_add_norm(tft_b *b, const char *prefix, tg_tensor *x, tg_tensor *skip, int drop);
/* Gated residual network, hidden width = out width d_hidden:
 * LayerNorm(skip(a) + GLU(Dropout(fc2(ELU(fc1(a) + ctx(c)))))); a [B, in] or [B, T, in],
 * c [B, d_ctx] or NULL; skip = a when in == n_out, else Linear "<prefix>.skip". -> [.., n_out] */
tg_tensor *tft_grn(tft_b *b, const char *prefix, tg_tensor *a, tg_tensor *c, int64_t d_hidden,
                   int64_t n_out);
/* m separate GRNs d -> d with no context, weights stacked [m, ...]: "<prefix>.fc1", ".fc2" (weight [m, d, d], bias
 * [m, d]), ".glu" ([m, 2d, d], [m, 2d]) and ".norm" (weight, bias [m, d]). */
typedef struct tft_var_params {
  tg_tensor *w1, *b1, *w2, *b2, *wg, *bg, *gamma, *beta;
} tft_var_params;
/* Declares the m GRNs' parameters (0: the build failed). */
int tft_var_grn_params(tft_b *b, const char *prefix, int64_t m, int64_t d, tft_var_params *p);
/* GRNs lo .. lo+n-1 of them on x [N, n, d] -> [N, n, d]. inner_block: their layers up to the dropout form the
 * recomputation block "<prefix>" (0 when the caller has a block open around them). */
tg_tensor *tft_var_grns(tft_b *b, const char *prefix, const tft_var_params *p, tg_tensor *x, int64_t lo,
                        int inner_block);

/* Interpretability outputs of one build (views into the graph; readable after a run only when
 * they stay live: plan with no_reuse to read them). */
typedef struct tg_tft_taps {
  tg_tensor *past_vsn_weights;   /* [B, enc, n_past], rows sum to 1 */
  tg_tensor *future_vsn_weights; /* [B, dec, n_future] */
  tg_tensor *attention;          /* [B, heads, dec, enc + dec], zero where j > enc + i */
} tg_tft_taps;

/* tg_tft_build that also reports the taps (taps may be NULL). */
tg_tensor *tg_tft_build_taps(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in,
                             tg_tft_taps *taps);

/* The TFT in two parts, for inference that keeps each bar's past-VSN output (it depends only on that bar's
 * features and the instrument, so a live predictor computes it once per bar instead of once per window):
 *   tg_tft_build_past:        past [B, T, n_past] (any T), inst [B] -> x_past [B, T, d], the LSTM encoder's input;
 *   tg_tft_build_after_past:  x_past [B, enc_len, d], future [B, dec_len, n_future], inst [B], and with
 *                             c->tft.vol_scale vol_x [B, enc_len], the windows' column vol_col (else NULL)
 *                             -> [B, dec_len, nq].
 * Chained over the same store they compute what tg_tft_build does (the static contexts are computed in both). */
tg_tensor *tg_tft_build_past(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *past, tg_tensor *inst);
tg_tensor *tg_tft_build_after_past(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *x_past, tg_tensor *future,
                                   tg_tensor *inst, tg_tensor *vol_x);

/* tft_vol.c, the volatility scale (tg_tft_cfg.vol_scale) read from the feature TG_TFT_VOL_FEATURE:
 *   tg_tft_vol_col:    sets c->tft.vol_col from the past columns' names (-1 without vol_scale; a classifier's
 *                      vol_scale becomes 0); TG_ERR_INVALID naming the feature and the way out when vol_scale is on
 *                      and no column has that name;
 *   tg_tft_vol_window_col: vol_col with vol_scale, else -1 (the model table's window_col);
 *   tg_tft_vol_window: past [B, T, n_past] -> its column vol_col [B, T];
 *   tg_tft_vol:        x [B, T] -> v [B] (after_past takes a predictor's window column here, so its v is the
 *                      trainer's);
 *   tg_tft_vol_apply:  pred [B, dec, nq] times v [B] per window. */
#define TG_TFT_VOL_FEATURE "logret"
tg_status tg_tft_vol_col(tg_forecast_cfg *c, const char (*names)[TG_NAME_MAX], int n);
int tg_tft_vol_window_col(const tg_forecast_cfg *c);
tg_tensor *tg_tft_vol_window(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *past);
tg_tensor *tg_tft_vol(tg_graph *g, tg_tensor *x);
tg_tensor *tg_tft_vol_apply(tg_graph *g, tg_tensor *pred, tg_tensor *vol);

#endif
