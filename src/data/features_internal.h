/* Shared by the feature spec parser (features.c), the per-bar feature math (features_calc.c) and feature_stream.c. */
#ifndef TG_DATA_FEATURES_INTERNAL_H
#define TG_DATA_FEATURES_INTERNAL_H

#include <stdint.h>
#include "data/tz_zone.h"
#include "tickgrad/dataset.h"

#define TG_F_MAX_ITEMS 64

typedef enum tg_fkind {
  TG_F_LOGRET = 0, TG_F_RANGE, TG_F_BODY, TG_F_WICKS, TG_F_LOGVOL_Z, TG_F_VOL, TG_F_RSI, TG_F_MACD,
  TG_F_DIST_MEAN, TG_F_TOD, TG_F_DOW, TG_F_INST, TG_F_KIND_COUNT
} tg_fkind;

/* One parsed spec token: its kind, parameters, first column and column count. */
typedef struct tg_fitem {
  tg_fkind kind;
  int p[3];
  int col, ncols, warmup;
  int ring;        /* slots of its ring of past values (W + 1 for the rolling kinds), else 0 */
  double alpha[3]; /* macd: the EMA weights 2 / (p + 1) */
} tg_fitem;

/* A parsed spec for k instruments, with its zone resolved. */
typedef struct tg_fplan {
  int ni, f, k, warmup_max;
  tg_fitem items[TG_F_MAX_ITEMS];
  int calendar;            /* 1 when tod or dow is in the spec */
  int returns;             /* 1 when logret or vol is (they read the bar's log return) */
  const char *tz;          /* the zone's name (borrowed; NULL: UTC) */
  const tg_tz_zone *zone;  /* NULL: UTC */
} tg_fplan;

/* Parses spec (NULL: TG_FEATURES_DEFAULT) for k >= 1 instruments and loads zone tz (NULL: UTC).
 * TG_ERR_INVALID naming the zone, or the token and listing the valid names. */
tg_status tg_fplan_make(const char *spec, const char *tz, int k, tg_fplan *out);
/* Column col's name (ids [k] give the inst columns'), warm-up and whether it is normalised. */
void tg_fplan_column(const tg_fplan *p, const uint32_t *ids, int col, char name[TG_NAME_MAX], int32_t *warmup,
                     uint8_t *scale);

/* One bar of one instrument. */
typedef struct tg_fbar {
  int64_t ts;
  double open, high, low, close, volume;
} tg_fbar;

/* 0 when the bar is usable; else which check fails: 1..4 open, high, low, close not finite and > 0,
 * 5 volume not finite and >= 0, 6 high below low. */
int tg_fbar_bad(const tg_fbar *b);
/* TG_ERR_NUMERIC for check `bad` of tg_fbar_bad, the message starting with `where`. */
tg_status tg_fbar_error(const tg_fbar *b, int bad, const char *where);

/* A feature item's running state within one instrument. */
typedef struct tg_fitem_state {
  double a, b, c; /* rolling: shift, sum, sum of squares; rsi: gain, loss; macd: fast, slow, signal EMA */
  int slot;       /* rolling: ring slot of the next value */
  int phase;      /* rolling: values seen mod W; the sums are recomputed exactly when it wraps to 0 */
  double *ring;   /* [W + 1] the last W + 1 values (rolling kinds), else NULL */
} tg_fitem_state;

/* One instrument's state: everything its next row needs from its earlier bars. */
typedef struct tg_finst {
  int64_t i;                /* bars so far */
  int64_t last_ts;          /* the previous bar's */
  double prev_close;        /* the previous bar's */
  int64_t tz_from, tz_until; /* UTC seconds [from, until) are at tz_off (empty when from >= until) */
  int tz_off;
  tg_fitem_state *st;       /* [plan ni] */
  double *pool;             /* the rings */
} tg_finst;

/* Allocates s for plan p, with no bars yet (TG_ERR_NOMEM naming the bytes). */
tg_status tg_finst_init(tg_finst *s, const tg_fplan *p);
/* Back to no bars. */
void tg_finst_reset(tg_finst *s, const tg_fplan *p);
void tg_finst_free(tg_finst *s);

/* The row [f] of bar b, the next bar of instrument inst (dense index) whose state is s: every column,
 * NaN where it is still in warm-up. b must pass tg_fbar_bad. Only a failing zone lookup (the C library
 * fallback) returns an error, and then s and row are unchanged. Allocates nothing (except inside that
 * fallback, which sets TZ for the C library: zones whose file the parser cannot read). */
tg_status tg_feature_bar(const tg_fplan *p, tg_finst *s, int inst, const tg_fbar *b, float *row);

/* The calendar columns of instant ts (UTC ns) in zone tz (NULL: UTC) as tod and dow compute them:
 * out = {tod_sin, tod_cos, dow_sin, dow_cos}. For the TFT's known-future inputs of bars not seen yet. */
tg_status tg_feature_calendar(int64_t ts, const char *tz, float out[4]);

#endif
