/* Shared between the feature spec parser (features.c) and the per-column math (features_calc.c). */
#ifndef TG_DATA_FEATURES_INTERNAL_H
#define TG_DATA_FEATURES_INTERNAL_H

#include <stdint.h>
#include "tickgrad/dataset.h"

typedef enum tg_fkind {
  TG_F_LOGRET = 0, TG_F_RANGE, TG_F_BODY, TG_F_WICKS, TG_F_LOGVOL_Z, TG_F_VOL, TG_F_RSI, TG_F_MACD,
  TG_F_DIST_MEAN, TG_F_TOD, TG_F_DOW, TG_F_INST, TG_F_KIND_COUNT
} tg_fkind;

/* One parsed spec token: its kind, parameters, first column and column count. */
typedef struct tg_fitem {
  tg_fkind kind;
  int p[3];
  int col, ncols, warmup;
} tg_fitem;

/* One instrument's bars in time order (m of them), and where each lands in the [n, f] output. */
typedef struct tg_fseries {
  int64_t m;
  const int64_t *ts;
  const double *open, *high, *low, *close, *volume; /* [m] */
  const int64_t *rows;                              /* [m] output row of each bar */
  int inst;                                         /* dense instrument index */
  double *tmp;                                      /* [m] scratch */
} tg_fseries;

/* Writes item's columns of every bar of s into x [n, f] (warm-up entries are left alone). */
tg_status tg_feature_calc(const tg_fitem *it, const tg_fseries *s, const char *tz, float *x, int f);

#endif
