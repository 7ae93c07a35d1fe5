/* Datasets over bar series: causal features, targets, chronological splits, normalisation, windows as row-index batches, staging. */
#ifndef TICKGRAD_DATASET_H
#define TICKGRAD_DATASET_H

#include <stdint.h>
#include <stdio.h>
#include "tickgrad/data.h"
#include "tickgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- instrument layout ----
 * Rows are the bars in their file order (sorted by time). Positions put each instrument's rows
 * together, in time order: instrument 0's bars, then instrument 1's, ... A window is L consecutive
 * positions of one instrument, so it never mixes instruments. Without an instrument column there is
 * one instrument and positions are rows. */
typedef struct tg_layout {
  int64_t n;     /* rows */
  int k;         /* instruments (1 when the bars have no instrument column) */
  uint32_t *ids; /* [k] instrument ids, ascending ({0} without an instrument column) */
  int32_t *inst; /* [n] dense instrument index 0..k-1 of each row (the embedding index) */
  int64_t *rows; /* [n] position -> row */
  int64_t *seg;  /* [k+1] instrument j owns positions seg[j] .. seg[j+1]-1 */
} tg_layout;

/* TG_ERR_INVALID when the bars are not in time order (ts non-decreasing; see tg_bars_sort). */
tg_status tg_layout_build(const tg_bars *bars, tg_layout *out);
void tg_layout_free(tg_layout *l);

/* ---- features ----
 * A spec is a comma-separated list of names with optional ':'-separated integer parameters:
 *   logret            log(close[t] / close[t-1])                                   warm-up 1
 *   range             (high - low) / close                                          0
 *   body              (close - open) / (high - low), 0 when high == low             0
 *   wicks             wick_up = (high - max(open, close)) / (high - low),
 *                     wick_lo = (min(open, close) - low) / (high - low)             0
 *   logvol_z[:W=20]   z-score of log(1 + volume) over the last W bars               W-1
 *   vol[:W=20]        sample std of the last W log returns                          W
 *   rsi[:N=14]        Wilder's RSI / 100, in [0, 1]                                 N
 *   macd[:F:S:G=12:26:9]  macd = (EMA_F - EMA_S)(close) / close, macd_signal = EMA_G(macd);
 *                     EMAs start at the first bar                                   S-1+G-1
 *   dist_mean[:W=20]  close / mean(last W closes) - 1                              W-1
 *   tod               tod_sin, tod_cos: 2*pi * (seconds since local midnight) / 86400
 *   dow               dow_sin, dow_cos: 2*pi * (local weekday, Monday = 0) / 7
 *   inst              one-hot of the instrument: one column "inst=<id>" per instrument
 * Covariates: an extra column of the bars (tg_bars.cols) by its exact name, one column "NAME" each:
 *   col:NAME          observed number: the value at t, a missing one (NaN) carried forward from the
 *                     instrument's last value; warm-up until its first value             per instrument
 *   known:NAME        known ahead: as col:, and with tg_feature_opts.leads = H > 0 also columns
 *                     "NAME@+1".."NAME@+H" = NAME at the instrument's bar t+h (NaN past its last bar)
 *   static:NAME       per-instrument constant number: as col:, and an error naming the column, the
 *                     instrument and two values when its values (missing ones aside) differ within one
 *   cat:NAME          category: the float id of the bar's name in a vocabulary (sorted names, id i+1
 *                     for the i-th; 0 for a missing or unseen name); never normalised       0
 * cat: columns come last (after every numeric column, in spec order); the others and the leads stand
 * where the spec names them (leads right after their column). col:/known:/static: need a numeric column
 * and cat: a category column (an error says which to use); an unknown NAME is an error listing the
 * bars' extra columns; each extra column appears once, and "NAME@+H" must fit TG_NAME_MAX. Leads read the future ON PURPOSE (values known in advance: calendars, schedules):
 * they never decide a row's validity, and normalisation fits them on their finite values only. A
 * vocabulary comes from tg_feature_opts.vocab when given, else from every row's names (the dataset then
 * refits it on the training rows: tg_vocab_fit, tg_features_recode). tg_features.role tells the columns
 * apart. Every column of row t reads only bars <= t of t's own instrument, except the leads (inst reads
 * only the instrument id; its width is the number of instruments in the whole series, which is static
 * metadata; a vocabulary fitted on all rows holds names of later rows, which is metadata too). For an
 * embedding instead of a one-hot, use tg_layout.inst (per row) or tg_batch.inst (per window).
 * Parameters are integers in 2..100000 (warm-up in bars of the row's own instrument). */
#define TG_FEATURES_DEFAULT "logret,range,body,wicks,logvol_z:20,vol:10,vol:30,rsi:14,macd,dist_mean:20,tod,dow"
#define TG_FEATURES_MAX_LEADS 1000

/* What a feature column is (tg_features.role): built-in columns and col: are observed. */
typedef enum tg_feature_role {
  TG_FEATURE_OBSERVED = 0, TG_FEATURE_KNOWN, TG_FEATURE_KNOWN_LEAD, TG_FEATURE_STATIC, TG_FEATURE_CATEGORY
} tg_feature_role;

/* The vocabulary of a cat: column: names sorted bytewise (strcmp); names[i] has id i + 1, 0 is unseen or
 * missing. A category name must be shorter than TG_NAME_MAX bytes. */
typedef struct tg_vocab {
  char column[TG_NAME_MAX];   /* the extra column */
  int n;
  char (*names)[TG_NAME_MAX]; /* [n], owned */
} tg_vocab;

/* The id of name in v (binary search): 1..n, or 0 when v does not hold it (or name is NULL). */
int tg_vocab_id(const tg_vocab *v, const char *name);
void tg_vocab_free(tg_vocab *v);           /* its names; v is re-initialised */
void tg_vocabs_free(tg_vocab *v, int n);   /* n vocabularies and the array (from tg_vocab_fit) */

typedef struct tg_feature_opts {
  const char *spec; /* NULL: TG_FEATURES_DEFAULT */
  const char *tz;   /* zone for tod and dow (NULL: UTC), e.g. "America/New_York" */
  int leads;        /* H, 0..TG_FEATURES_MAX_LEADS: lead columns of each known: column (default 0) */
  const tg_vocab *vocab; /* [n_vocab] the cat: columns' vocabularies, by column name (each cat: column needs
                            one); NULL: built from every row's names (the stream needs them) */
  int n_vocab;
} tg_feature_opts;

typedef struct tg_features {
  int64_t n;                  /* rows */
  int f;                      /* columns */
  float *x;                   /* [n, f] row-major; warm-up entries are NaN */
  char (*names)[TG_NAME_MAX]; /* [f] "logret", "vol_10", "tod_sin", "inst=7", ... */
  int32_t *warmup;            /* [f] bars of its own instrument a column needs before it is valid */
  uint8_t *scale;             /* [f] 1: normalise; 0: already bounded (sin/cos, one-hot, cat: ids) */
  uint8_t *role;              /* [f] tg_feature_role */
  int32_t *card;              /* [f] cat: columns: vocabulary size + 1 (with the reserved 0); else 0 */
  int n_cat;                  /* cat: columns (the last n_cat) */
  int warmup_max;             /* bars a row needs: valid when position - seg[its instrument] >= warmup_max
                                 and (covariates) its col:, known: and static: columns have had a value */
  int k;                      /* instruments */
  int64_t *first_valid;       /* [k] first row of each instrument with every column valid (n: none); the
                                 lead columns do not count */
  int64_t first_valid_row;    /* every row >= this is valid (max of first_valid) */
} tg_features;

/* Computes features of bars (in time order) per instrument. Unknown names or bad parameters:
 * TG_ERR_INVALID naming the token and listing the valid names (or the bars' extra columns). Prices
 * must be finite and > 0, volumes finite and >= 0 and covariate numbers finite within float32's range or NaN
 * (TG_ERR_NUMERIC naming the row and its time otherwise). out is initialised here. */
tg_status tg_features_compute(const tg_bars *bars, const tg_layout *lay, const tg_feature_opts *opts,
                              tg_features *out);
void tg_features_free(tg_features *fx);
/* Rewrites every cat: column's ids (and card) from the bars' names with the vocabularies v [n_vocab] (matched by
 * column name; a name v lacks gets 0). TG_ERR_INVALID when a cat: column has no vocabulary in v or the bars lack
 * it. */
tg_status tg_features_recode(tg_features *fx, const tg_bars *bars, const tg_vocab *v, int n_vocab);

/* Features one bar at a time: after the bars b_0..b_t of an instrument have been pushed (in time order, other
 * instruments' bars interleaved freely), the row for b_t equals bitwise row t of tg_features_compute over those
 * bars (same spec, tz and instrument ids): both run the same per-bar update. No allocation after creation; O(1)
 * amortised per bar (a rolling window's sums are recomputed exactly every W values). */
typedef struct tg_feature_stream tg_feature_stream;
/* ids [k]: the instrument ids the features were defined with (tg_layout.ids, ascending); the "inst" one-hot has k
 * columns in that order. Errors as tg_features_compute's for the spec and zone; TG_ERR_INVALID for k < 1 or ids
 * not strictly ascending. */
tg_status tg_feature_stream_new(const tg_feature_opts *opts, const uint32_t *ids, int k, tg_feature_stream **out);
int tg_feature_stream_width(const tg_feature_stream *s);                 /* f */
const char *tg_feature_stream_name(const tg_feature_stream *s, int col); /* as tg_features.names; NULL out of range */
int tg_feature_stream_warmup(const tg_feature_stream *s);                /* tg_features.warmup_max */
/* inst: dense index 0..k-1. row [f] receives the bar's features (NaN where a column is still in warm-up); *valid
 * (may be NULL) is 1 when every column is valid (the bar is its instrument's warmup_max-th or later, counted from
 * 0), as in tg_features.first_valid. TG_ERR_NUMERIC naming the field for a price that is not finite and > 0, a
 * volume that is not finite and >= 0, or high below low; TG_ERR_INVALID for inst out of range or a ts earlier than
 * that instrument's previous bar (an equal ts is allowed). On an error the state, row and *valid are unchanged.
 * Not thread-safe: one thread pushes to a stream at a time. */
tg_status tg_feature_stream_push(tg_feature_stream *s, int inst, int64_t ts, double open, double high, double low,
                                 double close, double volume, float *row, int *valid);
/* Covariates: a spec with col:, known:, static: or cat: tokens takes them with every bar, and then
 * tg_feature_stream_push refuses (TG_ERR_INVALID) and push_ex is the call. Inputs: the numeric ones first, in spec
 * order (each known:NAME followed by NAME@+1..NAME@+H: the caller supplies the lead values itself, NaN when not
 * known; static:NAME too, its value with each bar), then the cat: names. Names as the feature columns'. */
int tg_feature_stream_n_inputs(const tg_feature_stream *s);
int tg_feature_stream_n_num_inputs(const tg_feature_stream *s);
const char *tg_feature_stream_input_name(const tg_feature_stream *s, int i); /* NULL out of range */
/* As tg_feature_stream_push, with num_inputs [n_num_inputs] (NaN: missing, carried forward as in tg_features_compute;
 * +-inf is TG_ERR_NUMERIC) and cat_inputs [n_inputs - n_num_inputs] (NULL or a name the vocabulary of opts lacks:
 * id 0). *valid also needs every col:, known: and static: input to have had a value. TG_ERR_INVALID (nothing
 * changed) for a static: value other than that instrument's earlier one, or NULL inputs the spec needs. */
tg_status tg_feature_stream_push_ex(tg_feature_stream *s, int inst, int64_t ts, double open, double high, double low,
                                    double close, double volume, const double *num_inputs,
                                    const char *const *cat_inputs, float *row, int *valid);
void tg_feature_stream_reset(tg_feature_stream *s); /* every instrument back to no bars */
void tg_feature_stream_free(tg_feature_stream *s);

/* ---- targets ----
 * Kinds (tg_target_parse reads them as the command line writes them):
 *   logret                    log(close[t+h] / close[t]) at each horizon h (the default; zero-initialised options);
 *                             cls is the dead-zone direction class of the class horizon (n_classes stays 0: a
 *                             regression target)
 *   col:NAME[:diff|:logdiff]  an extra numeric column at t+h: its level, col[t+h] - col[t], or log(col[t+h] / col[t])
 *                             (values must be > 0); a missing value gives a NaN target; a level or difference beyond
 *                             float32's range is TG_ERR_NUMERIC naming the bar and its time
 *   labels:FILE               classes from a CSV of ts[,instrument],label[,end] (header names those columns, in any
 *                             order): each label applies to its instrument's bar at or just before ts (ts_bar <= ts <
 *                             the next bar's); past the last bar only within one median bar interval of it; earlier
 *                             than the first bar or further past the last: dropped, counted in one warning. Two labels
 *                             on one bar with the same name count once, with different names are an error naming both
 *                             rows. Wall-clock times are read in opts->tz. The classes are the names sorted bytewise,
 *                             and "none" for the bars no label applies to (when there are such bars). end, optional,
 *                             is when the label's information ends (a trade's exit): its bar bounds the label's reach
 *   triple-barrier:UP,DOWN,BARS  for bar t, sigma_t = sample std of the last tb_vol_window (default 20) log returns up
 *                             to t; the first of bars t+1..t+BARS whose close is >= close_t exp(UP sigma_t) is "up",
 *                             <= close_t exp(-DOWN sigma_t) "down" (a bar that reaches both cannot: closes are one
 *                             price); none within BARS is "time". Classes {"down", "time", "up"}; rows without a full
 *                             volatility window or without BARS bars ahead have no class (-1).
 * reach[r] is how many of its instrument's bars after r the target of row r reads: the largest horizon (logret,
 * col), the bar a barrier was hit or BARS (triple-barrier), the bar of the label's end (labels; 0 without end);
 * -1 for a row without a target of a class kind. Splits given reach keep every target's span inside its split. */
#define TG_MAX_HORIZONS 8

typedef enum tg_target_kind { TG_TARGET_LOGRET = 0, TG_TARGET_COLUMN, TG_TARGET_LABELS, TG_TARGET_TRIPLE_BARRIER } tg_target_kind;
enum { TG_COL_LEVEL = 0, TG_COL_DIFF, TG_COL_LOGDIFF };

typedef struct tg_target_opts {
  int nh;                         /* horizons used; 0: one horizon of 1 bar */
  int horizons[TG_MAX_HORIZONS];  /* bars ahead, each >= 1 */
  int class_horizon;              /* index into horizons of the direction class (default 0) */
  double dead_zone;               /* |forward log return| <= dead_zone is flat */
  tg_target_kind kind;            /* default logret */
  char column[TG_NAME_MAX];       /* col: the extra column */
  int transform;                  /* col: TG_COL_LEVEL, TG_COL_DIFF or TG_COL_LOGDIFF */
  char labels_path[TG_PATH_MAX];  /* labels: the CSV */
  const char *tz;                 /* labels: zone of wall-clock times in the file (NULL: UTC) */
  double tb_up, tb_down;          /* triple-barrier: barriers in units of sigma_t, > 0 */
  int tb_bars;                    /* triple-barrier: the time limit in bars, >= 1 */
  int tb_vol_window;              /* triple-barrier: returns in sigma_t (0: 20) */
  FILE *warn;                     /* labels dropped (may be NULL) */
} tg_target_opts;

/* Fills *out (zeroed first) from "logret", "col:NAME[:diff|:logdiff]", "labels:FILE" or
 * "triple-barrier:UP,DOWN,BARS"; TG_ERR_INVALID naming the text and listing the forms. */
tg_status tg_target_parse(const char *text, tg_target_opts *out);
/* 1 for the kinds that make classes (labels, triple-barrier). */
static inline int tg_target_is_class(const tg_target_opts *o) {
  return o && (o->kind == TG_TARGET_LABELS || o->kind == TG_TARGET_TRIPLE_BARRIER);
}

enum { TG_CLASS_DOWN = 0, TG_CLASS_FLAT = 1, TG_CLASS_UP = 2 };

typedef struct tg_targets {
  int64_t n;
  int nh, hmax;
  int horizons[TG_MAX_HORIZONS];
  float *ret;          /* [n, nh] the regression targets (log returns, or the column); NaN if none (class kinds: NaN) */
  int32_t *cls;        /* [n] logret: TG_CLASS_* of the class horizon's return; class kinds: the class; -1: none */
  int n_classes;       /* class kinds: classes (cls indexes class_names); 0 for logret and col */
  char (*class_names)[TG_NAME_MAX]; /* [n_classes] */
  int32_t *reach;      /* [n] bars after the row its target reads; -1: no target (class kinds) */
  double *next_open;   /* [n] open of the instrument's next bar (NaN for its last bar) */
  double *next_close;  /* [n] close of the instrument's next bar (NaN for its last bar) */
  int k;
  int64_t *last_valid; /* [k] last row of each instrument with every target (-1: none) */
  int64_t last_valid_row; /* every row <= this has every target (min of last_valid) */
} tg_targets;

tg_status tg_targets_compute(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *opts,
                             tg_targets *out);
void tg_targets_free(tg_targets *y);

/* ---- chronological splits ----
 * Split s covers the bars with ts in [ts_begin, ts_end) (the same instants for every instrument).
 * A window starting at position p uses positions p .. p+L-1 and its targets reach p+L-1+horizon; it
 * belongs to split s when all of those lie inside s, its first row is past the feature warm-up, and
 * (val, test) it starts at least `embargo` bars into s. Hence consecutive splits' starts are at least
 * L + horizon (+ embargo) apart: no training window or target shares a row with a validation window.
 * With per-row reach (tg_split_opts.reach) each start is judged on its own: a missing target or a label whose
 * span leaves the split removes exactly the windows whose target row it is, and the valid starts form runs with
 * holes between them (tg_split.run_begin / run_end); tg_split.dropped counts the windows each cause removed. */
enum { TG_TRAIN = 0, TG_VAL = 1, TG_TEST = 2, TG_SPLIT_COUNT = 3 };

/* Why a window inside a split's usual range was left out (tg_split.dropped). Rows before an instrument's first
 * target (a target's own warm-up, e.g. a barrier's volatility window) and the purge at a split's end count as
 * neither. Covariates never leave holes: a missing (NaN) value is carried forward and an infinite one is an
 * error of tg_features_compute. */
enum {
  TG_DROP_TARGET = 0, /* the target row has no target (reach < 0: a missing or non-finite value) */
  TG_DROP_SPAN = 1,   /* the target row's span (a label's end) leaves the split */
  TG_DROP_COUNT = 2
};

typedef struct tg_split_opts {
  int window;        /* L (bars per window), >= 1 */
  int horizon;       /* bars the targets look ahead (tg_targets.hmax), >= 0 */
  int warmup;        /* feature warm-up (tg_features.warmup_max), >= 0 */
  int embargo;       /* extra bars skipped at the start of val and test (default 0) */
  int by_date;       /* 0: by fraction of rows; 1: by the two dates */
  double frac_train, frac_val; /* by fraction: test is the rest; 0, 0 means 0.7, 0.15 */
  int64_t val_start_ns, test_start_ns; /* by date: train ts < val_start <= val < test_start <= test;
                                          INT64_MAX test_start: no test split */
  int64_t min_windows; /* each split that holds bars needs at least this many windows (0: 1) */
  const int32_t *reach; /* [n] per row (tg_targets.reach; NULL: every target reaches `horizon` bars past the window):
                           a start p then belongs to a split when p .. p+L-1 and its target row's span (row
                           p + target_offset to reach[row] bars after it) lie inside the split and the target
                           exists (reach >= 0); every start is judged on its own, so a bad row costs only the
                           windows whose target row it is */
  int target_offset;   /* with reach: the target row's offset in the window (0: L - 1) */
  const int64_t *warmup_inst; /* [k] or NULL: a window of instrument j starts at least max(warmup, warmup_inst[j])
                                 bars into the instrument (covariate warm-ups; tg_dataset_build fills it from
                                 tg_features.first_valid) */
  const tg_target_opts *target; /* or NULL: names the target in messages about dropped windows */
} tg_split_opts;

typedef struct tg_split {
  int64_t count;            /* valid window starts in all */
  int64_t ts_begin, ts_end; /* its time region [begin, end) */
  int64_t *begin, *end;     /* [k] instrument j's first valid start and one past its last (begin == end: none);
                               the starts between them are all valid unless the runs below leave holes */
  int64_t n_runs;           /* the valid starts as runs of consecutive positions, in position order, each inside */
  int64_t *run_begin, *run_end; /* one instrument: run r is [run_begin[r], run_end[r]); NULL (a split built by
                               hand): one run per instrument, [begin[j], end[j]) (tg_split_n_runs, tg_split_run) */
  int64_t dropped[TG_DROP_COUNT]; /* windows each cause removed (one per bad target row) */
} tg_split;

typedef struct tg_splits {
  int k, window, horizon;
  tg_split s[TG_SPLIT_COUNT]; /* TG_TRAIN, TG_VAL, TG_TEST */
} tg_splits;

/* Runs of valid starts of a split of k instruments, and run r's positions [*b, *e) (possibly empty for a split
 * built by hand). Every consumer of a split's windows walks these, so holes are skipped. */
static inline int64_t tg_split_n_runs(const tg_split *s, int k) { return s->run_begin ? s->n_runs : k; }
static inline void tg_split_run(const tg_split *s, int64_t r, int64_t *b, int64_t *e) {
  *b = s->run_begin ? s->run_begin[r] : s->begin[r];
  *e = s->run_begin ? s->run_end[r] : s->end[r];
}
/* "" when the split dropped nothing, else e.g. "2 dropped: target 'x' missing or not finite at 2 bars" (target may
 * be NULL: generic wording). Returns buf. */
const char *tg_split_drops_str(const tg_split *s, const tg_target_opts *target, char *buf, size_t n);

/* TG_ERR_INVALID for bad options, and for a split that holds bars but fewer than min_windows windows
 * (the message names the split, its bars and what a window needs). */
tg_status tg_splits_make(const tg_bars *bars, const tg_layout *lay, const tg_split_opts *opts, tg_splits *out);
void tg_splits_free(tg_splits *sp);

/* ---- normalisation: per-column mean and std fitted on the training windows' rows ---- */
typedef struct tg_norm {
  int f;
  int64_t rows;        /* rows the statistics came from */
  double *mean, *std;  /* [f]; unscaled columns get 0 and 1; constant columns std 1 */
  int n_vocab;         /* the cat: columns' vocabularies (tg_dataset_build sets them, normalised or not) */
  tg_vocab *vocab;     /* [n_vocab], owned */
} tg_norm;

/* Fits on the rows the training windows cover (each run's positions run_begin .. run_end+L-2, a row once); lead columns
 * (TG_FEATURE_KNOWN_LEAD) on their finite values among those rows only (none: mean 0, std 1). */
tg_status tg_norm_fit(const tg_features *fx, const tg_layout *lay, const tg_splits *sp, tg_norm *out);
/* The same, ts [n] the bars' times (may be NULL): a column whose mean or std is not finite is TG_ERR_NUMERIC naming its
 * first non-finite value's bar and time on the training rows and why (the feature warm-up, float32's range). */
tg_status tg_norm_fit_times(const tg_features *fx, const tg_layout *lay, const tg_splits *sp, const int64_t *ts,
                            tg_norm *out);
/* x = (x - mean) / std on every row, in place (NaN warm-up entries stay NaN). */
tg_status tg_norm_apply(const tg_norm *nm, tg_features *fx);
void tg_norm_free(tg_norm *nm); /* and its vocabularies */
/* One vocabulary per cat: column of fx (in column order, *n_out = fx->n_cat; *out NULL when none) from the names
 * on the rows the training windows cover, as tg_norm_fit's. TG_ERR_INVALID when the training split has no
 * windows, the bars lack a column, or a name is TG_NAME_MAX bytes or longer. Free with tg_vocabs_free. */
tg_status tg_vocab_fit(const tg_bars *bars, const tg_features *fx, const tg_layout *lay, const tg_splits *sp,
                       tg_vocab **out, int *n_out);

/* ---- the dataset: everything above, built in one call ---- */
typedef struct tg_dataset_opts {
  tg_feature_opts features;
  tg_target_opts targets;
  tg_split_opts splits; /* window 0: 64; horizon and warmup are taken from the targets and features */
  int no_normalize;     /* 1: keep raw features */
} tg_dataset_opts;

typedef struct tg_dataset {
  tg_layout layout;
  tg_features fx;
  tg_targets y;
  tg_splits splits;
  tg_norm norm;      /* f == 0 when not normalised; its vocab: the cat: columns' (opts' or fitted on training) */
  int window;        /* L */
  tg_tensor x;       /* [n, f] f32 view of fx.x on cpu:0 (the host) */
  tg_tensor y_ret;   /* [n, nh] f32 view of y.ret */
  tg_tensor y_cls;   /* [n] i32 view of y.cls */
} tg_dataset;

/* cat: columns: the vocabularies of opts->features.vocab when given, else fitted on the training rows (tg_vocab_fit)
 * and the features recoded, so a name only later rows hold gets 0; either way kept in out->norm.vocab. Windows start
 * past each instrument's own covariate warm-up (tg_split_opts.warmup_inst). */
tg_status tg_dataset_build(const tg_bars *bars, const tg_dataset_opts *opts, tg_dataset *out);
void tg_dataset_free(tg_dataset *ds);

/* ---- windows and batches ----
 * A window is its start position; a batch is B starts. Fills idx [B, L] (host, i32 or i64) with the
 * rows of each window, for tg_gather_rows(features [n, f], idx) -> [B, L, f], and last [B] (i32 or
 * i64, may be NULL) with each window's last row, where its targets are. TG_ERR_INVALID for a start
 * whose window leaves the series or its instrument. */
tg_status tg_window_index(const tg_layout *lay, int window, const int64_t *starts, int64_t b, tg_tensor *idx,
                          tg_tensor *last);

/* Batches of starts from one split, in order or shuffled per epoch. The shuffle is a keyed permutation
 * evaluated per element (a Feistel network on Philox draws, key seed, stream 2^62 + epoch, over the
 * smallest power of two >= count, cycle-walked into 0..count-1), so an epoch costs no O(count) work
 * and a device computes the same order without a host array (see tg_stage_next). The position is
 * (epoch, cursor): save both, and a sampler made with the same split and seed resumes after
 * tg_sampler_seek with the same starts. Element e maps to the e-th valid start in position order (holes in the
 * split's runs are never drawn). */
typedef struct tg_sampler {
  uint64_t seed, epoch, cursor; /* the next start is element `cursor` of epoch `epoch`'s order */
  int64_t count;                /* starts in the split */
  int shuffle;
  int runs;                     /* runs of valid starts in the split (tg_split_n_runs) */
  int64_t *prefix;              /* [runs+1] valid starts before run r */
  int64_t *begin;               /* [runs] run r's first start: element e lies in the last run with prefix <= e */
} tg_sampler;

tg_status tg_sampler_init(tg_sampler *s, const tg_splits *sp, int split, uint64_t seed, int shuffle);
/* Moves to (epoch, cursor), cursor <= count. */
tg_status tg_sampler_seek(tg_sampler *s, uint64_t epoch, uint64_t cursor);
/* Writes up to b starts; *got receives how many (fewer than b only when the epoch runs out). A call
 * made at the end of an epoch (cursor == count) first moves to (epoch + 1, 0). */
tg_status tg_sampler_next(tg_sampler *s, int64_t *starts, int64_t b, int64_t *got);
void tg_sampler_free(tg_sampler *s);

/* ---- staging on a device ----
 * The graph gathers windows on the device: bind tg_stage_features as the [V, f] table input, each
 * batch's idx [B, L] (i64) as the index input, and gather tg_stage_targets by rows [B].
 *   resident:  features [n, f] and targets [n, nh] are copied to the device once; a batch moves
 *              only its indices, rows, labels and instruments, and with tg_stage_next on CUDA not
 *              even those: the device computes the batch itself.
 *   streaming: the device holds tables of two halves, 2 * max_batch*L feature rows and
 *              2 * max_batch target rows; batch k copies the distinct feature rows its windows use
 *              into half k % 2, and idx / rows point into that half. On CUDA the copy runs on a copy
 *              stream from pinned memory and overlaps the compute of batch k - 1 (which reads the
 *              other half); elsewhere it is synchronous.
 * On cpu:0 (the host) nothing is copied in either mode: the tables are views of the dataset's
 * arrays and the counters stay 0. Any other device (cuda:N, or cpu:N with N > 0, a separate logical
 * device) copies through its backend and counts the bytes.
 * A batch's buffers are the stage's and stay at the same device addresses from batch to batch (a
 * captured step may bind them); a batch is valid until the next one, so queue all work on batch k
 * before asking for batch k + 1. */
typedef enum tg_stage_mode { TG_STAGE_RESIDENT = 0, TG_STAGE_STREAMING } tg_stage_mode;

typedef struct tg_stage tg_stage;

typedef struct tg_stage_stats {
  uint64_t h2d_bytes, d2h_bytes; /* bytes moved host -> device and device -> host */
  uint64_t h2d_copies, d2h_copies;
  uint64_t batches;
} tg_stage_stats;

/* A batch on the stage's device (buffers owned by the stage, valid until its next batch). */
typedef struct tg_batch {
  int64_t b;
  tg_tensor idx;    /* [b, L] i64 rows of tg_stage_features */
  tg_tensor rows;   /* [b] i64 rows of tg_stage_targets (each window's last bar) */
  tg_tensor labels; /* [b] i32 direction classes */
  tg_tensor inst;   /* [b] i64 instrument index (for an embedding) */
} tg_batch;

/* TG_ERR_DEVICE when the device's backend is not compiled into this build. */
tg_status tg_stage_new(tg_device dev, tg_stage_mode mode, int64_t max_batch, tg_stage **out);
void tg_stage_free(tg_stage *st);
/* Puts the dataset on the device (the stage borrows ds until freed or given another). */
tg_status tg_stage_dataset(tg_stage *st, const tg_dataset *ds);
/* [n, f] (resident, or any mode on cpu:0) or [2 * max_batch*L, f] (streaming: two halves) */
const tg_tensor *tg_stage_features(const tg_stage *st);
/* [n, nh] (resident, or any mode on cpu:0) or [2 * max_batch, nh] (streaming: two halves) */
const tg_tensor *tg_stage_targets(const tg_stage *st);
/* Produces the batch of windows starting at starts[0..b), b <= max_batch. */
tg_status tg_stage_batch(tg_stage *st, const int64_t *starts, int64_t b, tg_batch *out);
/* Takes up to b <= max_batch windows from s (epoch and cursor advance as in tg_sampler_next; *got
 * receives how many) and produces their batch on the stage's device, equal to tg_stage_batch of the
 * starts tg_sampler_next would give. A resident stage on CUDA copies the index tables (layout rows
 * and instruments, classes, the sampler's split offsets) once, at the first call for a dataset or
 * a sampler over another split, and then computes each batch in one kernel on the compute stream:
 * no bytes from the host, no synchronisation. On cpu:0 the host computes it in place. cpu:N (N > 0)
 * and streaming stages take the starts on the host and go through tg_stage_batch. TG_ERR_INVALID
 * (the sampler unmoved) when s was not made from the staged dataset's splits. */
tg_status tg_stage_next(tg_stage *st, tg_sampler *s, int64_t b, tg_batch *out, int64_t *got);
/* Copies a staged tensor (a table or a batch member) to host memory (counted unless on the host). */
tg_status tg_stage_to_host(tg_stage *st, const tg_tensor *t, void *dst);
tg_stage_stats tg_stage_stats_get(const tg_stage *st);

#ifdef __cplusplus
}
#endif
#endif
