/* Shared by the feature spec parser (features.c), the per-bar feature math (features_calc.c), the covariates
 * (covariates.c, vocab.c) and feature_stream.c. */
#ifndef TG_DATA_FEATURES_INTERNAL_H
#define TG_DATA_FEATURES_INTERNAL_H

#include <stdint.h>
#include "data/readers/tz_zone.h"
#include "tickgrad/dataset.h"

#define TG_F_MAX_ITEMS 64

typedef enum tg_fkind {
  TG_F_LOGRET = 0, TG_F_RANGE, TG_F_BODY, TG_F_WICKS, TG_F_LOGVOL_Z, TG_F_VOL, TG_F_RSI, TG_F_MACD,
  TG_F_DIST_MEAN, TG_F_TOD, TG_F_DOW, TG_F_INST,
  TG_F_COL, TG_F_KNOWN, TG_F_STATIC, TG_F_CAT, /* covariates: an extra column of the bars by name */
  TG_F_KIND_COUNT
} tg_fkind;
#define TG_F_BUILTIN_COUNT TG_F_COL

/* One parsed spec token: its kind, parameters, first column and column count. */
typedef struct tg_fitem {
  tg_fkind kind;
  int p[3];
  int col, ncols, warmup;
  int ring;        /* slots of its ring of past values (W + 1 for the rolling kinds), else 0 */
  double alpha[3]; /* macd: the EMA weights 2 / (p + 1) */
  int in;          /* covariates: its first input (numeric: index into tg_fbar.num; cat: into tg_fbar.cat) */
  char cname[TG_NAME_MAX]; /* covariates: the extra column's name */
} tg_fitem;

/* A parsed spec for k instruments, with its zone resolved. */
typedef struct tg_fplan {
  int ni, f, k, warmup_max;
  tg_fitem items[TG_F_MAX_ITEMS];
  int calendar;            /* 1 when tod or dow is in the spec */
  int returns;             /* 1 when logret or vol is (they read the bar's log return) */
  int leads;               /* lead columns of each known: item */
  int n_num, n_cat;        /* covariate inputs per bar: numbers (with the leads), then category ids */
  const char *tz;          /* the zone's name (borrowed; NULL: UTC) */
  const tg_tz_zone *zone;  /* NULL: UTC */
} tg_fplan;

/* Parses spec (NULL: TG_FEATURES_DEFAULT) for k >= 1 instruments with `leads` lead columns per known: item and
 * loads zone tz (NULL: UTC). TG_ERR_INVALID naming the zone, or the token and listing the valid names. */
tg_status tg_fplan_make(const char *spec, const char *tz, int leads, int k, tg_fplan *out);
/* Column col's name (ids [k] give the inst columns'), warm-up, whether it is normalised and its tg_feature_role. */
void tg_fplan_column(const tg_fplan *p, const uint32_t *ids, int col, char name[TG_NAME_MAX], int32_t *warmup,
                     uint8_t *scale, uint8_t *role);
/* The item holding column col. */
const tg_fitem *tg_fplan_item(const tg_fplan *p, int col);

/* One bar of one instrument, with its covariate inputs (NULL when the plan has none). */
typedef struct tg_fbar {
  int64_t ts;
  double open, high, low, close, volume;
  const double *num;  /* [n_num] col:, known: (then its leads) and static: values in spec order; NaN: missing */
  const int32_t *cat; /* [n_cat] vocabulary ids of the cat: items */
} tg_fbar;

/* 0 when the bar is usable; else which check fails: 1..4 open, high, low, close not finite and > 0,
 * 5 volume not finite and >= 0, 6 high below low. */
int tg_fbar_bad(const tg_fbar *b);
/* TG_ERR_NUMERIC for check `bad` of tg_fbar_bad, the message starting with `where`. */
tg_status tg_fbar_error(const tg_fbar *b, int bad, const char *where);

/* A feature item's running state within one instrument. */
typedef struct tg_fitem_state {
  double a, b, c; /* rolling: shift, sum, sum of squares; rsi: gain, loss; macd: fast, slow, signal EMA;
                     col:, known:, static: a is the carried value (NaN before the first) */
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

/* 1 when every col:, known: and static: item of s has had a value. */
int tg_finst_covariates_seen(const tg_fplan *p, const tg_finst *s);

/* ---- covariates.c: the spec tokens, and their inputs from the bars for tg_features_compute ---- */
/* The covariate kind named [name, name + len) (TG_F_COL ..), or -1. */
int tg_fcov_kind(const char *name, size_t len);
/* Parses tok ("col:NAME") of kind into it (ncols: 1, 1 + leads for known:). TG_ERR_INVALID for an empty or too
 * long name. */
tg_status tg_fcov_parse(const char *tok, tg_fkind kind, int leads, tg_fitem *it);

/* A plan's covariate inputs bound to the bars' columns. */
typedef struct tg_fcov {
  int n_num, n_cat;
  const double **num_src; /* [n_num] the column's values for each input; NULL for a lead (NaN) */
  const uint32_t **codes; /* [n_cat] the category column's codes */
  int32_t **map;          /* [n_cat] code -> vocabulary id */
  int32_t *card;          /* [n_cat] vocabulary size + 1 */
  double *num;            /* [n_num] a row's inputs */
  int32_t *cat;           /* [n_cat] */
} tg_fcov;

/* Finds every covariate's column (TG_ERR_INVALID for an unknown name, listing the bars' columns, or the wrong
 * kind), checks the numbers (finite or NaN) and static: columns (one value per instrument), and maps the category
 * codes through the vocabularies v [n_v] (by column name) or, when v is NULL, ones built from every row. */
tg_status tg_fcov_bind(const tg_fplan *p, const tg_bars *bars, const tg_layout *lay, const tg_vocab *v, int n_v,
                       tg_fcov *out);
/* Points b->num and b->cat at row r's inputs. */
void tg_fcov_row(tg_fcov *c, int64_t r, tg_fbar *b);
void tg_fcov_free(tg_fcov *c);
/* After every row is computed: the lead columns, each instrument's first valid row (with the covariate warm-ups)
 * and the cat: columns' card. */
void tg_fcov_finish(const tg_fplan *p, const tg_fcov *c, const tg_layout *lay, tg_features *fx);

/* ---- vocab.c ---- */
/* The vocabulary of the names of category column c whose codes are marked in used [c->cats.n]. TG_ERR_INVALID
 * naming a name of TG_NAME_MAX bytes or more. */
tg_status tg_vocab_from_codes(const tg_bar_column *c, const uint8_t *used, tg_vocab *out);
/* map [c->cats.n + 1] (allocated): the id in v of each code's name. */
tg_status tg_vocab_code_map(const tg_bar_column *c, const tg_vocab *v, int32_t **map);
/* The vocabulary of column name in v [n], or NULL. */
const tg_vocab *tg_vocab_find(const tg_vocab *v, int n, const char *name);
/* Deep copies of v [n] into *out (NULL when n is 0). */
tg_status tg_vocabs_copy(const tg_vocab *v, int n, tg_vocab **out);

/* The calendar columns of instant ts (UTC ns) in zone tz (NULL: UTC) as tod and dow compute them:
 * out = {tod_sin, tod_cos, dow_sin, dow_cos}. For the TFT's known-future inputs of bars not seen yet. */
tg_status tg_feature_calendar(int64_t ts, const char *tz, float out[4]);

#endif
