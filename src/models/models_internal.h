/* The model builders behind tg_forecast_build: one per kind. */
#ifndef TG_MODELS_INTERNAL_H
#define TG_MODELS_INTERNAL_H

#include "base/settings.h"
#include "tickgrad/models.h"

/* TG_ERR_INVALID with the message when cond fails (the settings checks). */
#define TG_NEED(cond, ...)                                        \
  do {                                                            \
    if (!(cond)) return tg_error(TG_ERR_INVALID, __VA_ARGS__);    \
  } while (0)

/* model_cfg.c: each kind's settings rows (offsets in tg_forecast_cfg, keys "<name>.*", help "<name>: ..."; the model
 * table's entries hold them, the trainer's table takes them in) */
#define TG_TFT_SETTINGS 4
#define TG_MAMBA2_SETTINGS 9
#define TG_MLP_SETTINGS 2
#define TG_TRANSFORMER_SETTINGS 4
#define TG_PATCHTST_SETTINGS 6
extern const tg_setting tg_tft_settings[TG_TFT_SETTINGS], tg_mamba2_settings[TG_MAMBA2_SETTINGS],
    tg_mlp_settings[TG_MLP_SETTINGS], tg_transformer_settings[TG_TRANSFORMER_SETTINGS],
    tg_patchtst_settings[TG_PATCHTST_SETTINGS];
/* model_cfg.c: each kind's own defaults (its part of the config) and checks (its part of tg_forecast_check). */
void tg_tft_defaults(tg_forecast_cfg *c);
void tg_mamba2_defaults(tg_forecast_cfg *c);
void tg_mlp_defaults(tg_forecast_cfg *c);
void tg_transformer_defaults(tg_forecast_cfg *c);
void tg_patchtst_defaults(tg_forecast_cfg *c);
tg_status tg_tft_check(const tg_forecast_cfg *c);
tg_status tg_mamba2_check(const tg_forecast_cfg *c);
tg_status tg_mlp_check(const tg_forecast_cfg *c);
tg_status tg_transformer_check(const tg_forecast_cfg *c);
tg_status tg_patchtst_check(const tg_forecast_cfg *c);
/* forecast.c: past [B, L, n_past] with c's n_cat category ids last -> [B, L, n_num + n_cat * cat_dim], the ids
 * replaced by their embeddings; *inner receives c for the model proper (n_past that width, n_cat 0). past itself
 * when c has no category inputs. */
tg_tensor *tg_forecast_embed(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *past, tg_forecast_cfg *inner);
/* 1 when past is f32 [B, tg_forecast_window(c), n_past]; else fails g naming model, the shape and the expected one. */
int tg_forecast_check_past(tg_graph *g, const tg_forecast_cfg *c, const char *model, const tg_tensor *past);
/* tft.c: pred [B, dec_len, nq] */
tg_tensor *tg_tft_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in);
/* mamba2.c: pred [B, horizons, nq] */
tg_tensor *tg_mamba2_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in);
/* mlp.c: pred [B, horizons, nq] */
tg_tensor *tg_mlp_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in);
/* transformer.c: pred [B, horizons, nq] from the last step */
tg_tensor *tg_transformer_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in);
/* transformer.c: the same model's forecast from every step, pred [B, seq_len, horizons, nq], step t reading steps <= t
 * only (the causality test's view; the head and final norm applied at every step, the last layer over every step). */
tg_tensor *tg_transformer_build_steps(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in);
/* patchtst.c: pred [B, horizons, nq]; its patches per window, floor((seq_len - patch_len) / stride) + 1 */
#define TG_PATCHTST_MAX_PATCHES 256
tg_tensor *tg_patchtst_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in);
int tg_patchtst_patches(const tg_patchtst_cfg *p);

#endif
