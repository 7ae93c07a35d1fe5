/* The model table: every kind's name, default batch, capabilities, settings and builders, read instead of the kind. */
#include <stdio.h>
#include "models/model_table.h"
#include "models/models_internal.h"
#include "models/tft_internal.h"

static int tft_window(const tg_forecast_cfg *c) { return c->tft.enc_len; }
static int tft_width(const tg_forecast_cfg *c) { return c->tft.hidden; }
static int mamba2_window(const tg_forecast_cfg *c) { return c->mamba.seq_len; }
static int mamba2_width(const tg_forecast_cfg *c) { return c->mamba.d_model; }
static int mlp_window(const tg_forecast_cfg *c) { return c->mlp.window; }
static int mlp_width(const tg_forecast_cfg *c) { return c->mlp.hidden; }
static int transformer_window(const tg_forecast_cfg *c) { return c->transformer.seq_len; }
static int transformer_width(const tg_forecast_cfg *c) { return c->transformer.d_model; }
static int patchtst_window(const tg_forecast_cfg *c) { return c->patchtst.seq_len; }
static int patchtst_width(const tg_forecast_cfg *c) { return c->patchtst.d_model; }

const char *const tg_model_names[] = {"tft", "mamba2", "mlp", "transformer", "patchtst", NULL}; /* tg_model_kind's order */

#define COUNT ((int)(sizeof k_models / sizeof k_models[0]))
#define ROWS(a) a, (int)(sizeof a / sizeof a[0])
static const tg_model_def k_models[] = {
    [TG_MODEL_TFT] = {TG_CAP_FUTURE | TG_CAP_STATIC | TG_CAP_CLASS_STEPS | TG_CAP_SPLIT | TG_CAP_EXPORT_WINDOWS, 32,
                      ROWS(tg_tft_settings), tg_tft_defaults, tg_tft_check, tg_tft_build, tft_window, tft_width,
                      .build_past = tg_tft_build_past, .build_after_past = tg_tft_build_after_past,
                      .columns = tg_tft_vol_col, .window_col = tg_tft_vol_window_col},
    [TG_MODEL_MAMBA2] = {TG_CAP_STEPPER, 8, ROWS(tg_mamba2_settings), tg_mamba2_defaults, tg_mamba2_check,
                         tg_mamba2_build, mamba2_window, mamba2_width, .stepper_new = tg_mamba2_stepper_new},
    [TG_MODEL_MLP] = {0, 64, ROWS(tg_mlp_settings), tg_mlp_defaults, tg_mlp_check, tg_mlp_build, mlp_window, mlp_width},
    [TG_MODEL_TRANSFORMER] = {0, 32, ROWS(tg_transformer_settings), tg_transformer_defaults, tg_transformer_check,
                              tg_transformer_build, transformer_window, transformer_width},
    [TG_MODEL_PATCHTST] = {0, 32, ROWS(tg_patchtst_settings), tg_patchtst_defaults, tg_patchtst_check, tg_patchtst_build,
                           patchtst_window, patchtst_width},
};
_Static_assert(sizeof tg_model_names / sizeof tg_model_names[0] == sizeof k_models / sizeof k_models[0] + 1,
               "one name per model table entry");
_Static_assert(TG_TFT_SETTINGS + TG_MAMBA2_SETTINGS + TG_MLP_SETTINGS + TG_TRANSFORMER_SETTINGS + TG_PATCHTST_SETTINGS <=
                   TG_KINDS_SETTINGS_MAX,
               "the trainer's table has room for every kind's settings rows");

const tg_model_def *tg_model_get(tg_model_kind kind) { return (int)kind >= 0 && (int)kind < COUNT ? &k_models[kind] : NULL; }

int tg_model_count(void) { return COUNT; }

const char *tg_model_name(tg_model_kind kind) { return tg_model_get(kind) ? tg_model_names[kind] : NULL; }

unsigned tg_model_caps(tg_model_kind kind) { return tg_model_get(kind) ? k_models[kind].caps : 0; }

tg_model_kind tg_model_default_kind(void) { return TG_MODEL_MLP; }

int tg_model_list(char *buf, size_t n, const char *sep, const char *last) {
  size_t len = 0;
  for (int k = 0; k < COUNT; k++) {
    size_t room = len < n ? n - len : 0;
    int w = snprintf(room ? buf + len : NULL, room, "%s%s", k == 0 ? "" : k == COUNT - 1 ? last : sep, tg_model_names[k]);
    if (w < 0) return w;
    len += (size_t)w;
  }
  return (int)len;
}

tg_status tg_model_columns(tg_forecast_cfg *c, const char (*names)[TG_NAME_MAX], int n) {
  const tg_model_def *d = tg_model_get(c->kind);
  return d && d->columns ? d->columns(c, names, n) : TG_OK;
}

int tg_model_window_col(const tg_forecast_cfg *c) {
  const tg_model_def *d = tg_model_get(c->kind);
  return d && d->window_col ? d->window_col(c) : -1;
}

int tg_forecast_window(const tg_forecast_cfg *c) { return tg_model_get(c->kind) ? k_models[c->kind].window(c) : 0; }

int tg_forecast_width(const tg_forecast_cfg *c) { return tg_model_get(c->kind) ? k_models[c->kind].width(c) : 0; }
