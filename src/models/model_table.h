/* The model table: one entry per tg_model_kind with its defaults, check, builders and capabilities. */
#ifndef TG_MODEL_TABLE_H
#define TG_MODEL_TABLE_H

#include "base/settings.h"
#include "tickgrad/dataset.h"
#include "tickgrad/models.h"

typedef struct tg_model_def {
  unsigned caps;                                  /* TG_CAP_* */
  int batch;                                      /* the trainer's default batch */
  const tg_setting *settings;                     /* its settings rows: offsets in tg_forecast_cfg, keys "<name>.*", */
  int n_settings;                                 /* help "<name>: ..." (the trainer's table takes them in) */
  void (*defaults)(tg_forecast_cfg *c);           /* sets its own part of c (c->tft, c->mamba, ...) */
  tg_status (*check)(const tg_forecast_cfg *c);   /* its own part of tg_forecast_check */
  tg_tensor *(*build)(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in);
  int (*window)(const tg_forecast_cfg *c);        /* past steps one forecast reads */
  int (*width)(const tg_forecast_cfg *c);         /* the width of its GEMMs */
  /* with TG_CAP_SPLIT: the two parts of build (tft_internal.h says what each takes) */
  tg_tensor *(*build_past)(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *past, tg_tensor *inst);
  tg_tensor *(*build_after_past)(tg_graph *g, const tg_forecast_cfg *c, tg_tensor *x_past, tg_tensor *future,
                                 tg_tensor *inst, tg_tensor *window_col);
  /* or NULL: settles what the model reads from the past columns by name (the tft's volatility column) */
  tg_status (*columns)(tg_forecast_cfg *c, const char (*names)[TG_NAME_MAX], int n);
  /* or NULL: the past column whose raw values over the window build_after_past also takes, or -1 */
  int (*window_col)(const tg_forecast_cfg *c);
  /* with TG_CAP_STEPPER: its per-bar recurrent stepper */
  tg_status (*stepper_new)(tg_store *store, const tg_forecast_cfg *c, int64_t batch, tg_mamba2_stepper **out);
} tg_model_def;

/* Every kind's settings rows together number at most this (the trainer's table has room for them). */
#define TG_KINDS_SETTINGS_MAX 64

/* The kinds' names in tg_model_kind's order, NULL-ended (the settings engine's list for "model"). */
extern const char *const tg_model_names[];

/* kind's entry; NULL for a kind outside the table. */
const tg_model_def *tg_model_get(tg_model_kind kind);

/* c's columns hook over the data's past column names (TG_OK for a kind without one); the trainer and the predictor call
 * it once the columns are known, before the model is built. */
tg_status tg_model_columns(tg_forecast_cfg *c, const char (*names)[TG_NAME_MAX], int n);
/* A split model's window column (build_after_past's window_col [B, window], the column's values oldest first), or -1. */
int tg_model_window_col(const tg_forecast_cfg *c);

#endif
