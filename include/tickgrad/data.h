/* Market data: the columnar bar series every reader produces, the reader entry point, resampling. */
#ifndef TICKGRAD_DATA_H
#define TICKGRAD_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Extra columns: besides the bar fields, the CSV and Parquet readers keep every further column of a file by name,
 * one value per bar. A numeric column holds doubles, NaN where the value is missing; a category column holds codes
 * into its table of names, TG_CATEGORY_MISSING where the value is missing. */
typedef enum tg_column_kind { TG_COLUMN_NUMERIC = 0, TG_COLUMN_CATEGORY = 1 } tg_column_kind;
#define TG_CATEGORY_MISSING UINT32_MAX

/* The names of a category column: code k is the k-th distinct name added. Names are NUL-terminated in one text
 * buffer (a name holding a NUL byte reads shorter through tg_categories_name; its code stays its own) and a hash
 * index finds a name's code. Zero-initialised is empty. */
typedef struct tg_categories {
  uint32_t n, cap;          /* names, and room for them in off */
  uint64_t *off;            /* [cap + 1]: name k is text + off[k], off[k + 1] - off[k] - 1 bytes */
  char *text;               /* [text_cap], text_len used */
  size_t text_len, text_cap;
  uint32_t *slot;           /* [slot_cap] hash index: code + 1, 0 for an empty slot */
  uint32_t slot_cap;
} tg_categories;

/* The code of the name [p, p + len), added when new. TG_ERR_NOMEM, or TG_ERR_INVALID past UINT32_MAX - 1 names. */
tg_status tg_categories_intern(tg_categories *c, const char *p, size_t len, uint32_t *code);
/* The code of name [p, p + len), or TG_CATEGORY_MISSING when the table does not hold it. */
uint32_t tg_categories_find(const tg_categories *c, const char *p, size_t len);
/* The name of code (below c->n). */
const char *tg_categories_name(const tg_categories *c, uint32_t code);
void tg_categories_free(tg_categories *c); /* and re-initialises c */

typedef struct tg_bar_column {
  char *name;          /* the CSV header text (trimmed) or the Parquet column path, exact */
  tg_column_kind kind;
  double *values;      /* NUMERIC: [n] of the bars (room for cap), NaN = missing; NULL for a category */
  uint32_t *codes;     /* CATEGORY: [n] (room for cap), TG_CATEGORY_MISSING = missing; NULL for a number */
  tg_categories cats;  /* CATEGORY: the names the codes index */
} tg_bar_column;

/* One bar series, columnar, on the host. Times are int64 nanoseconds since the Unix epoch, UTC.
 * Every reader follows the same conventions:
 * - a source without a volume column gives NaN volumes (unknown, not 0, which is a real volume);
 * - instrument ids: DBN's instrument_id; a CSV instrument column (named instrument, instrument_id,
 *   symbol or ticker, any case, or instrument=NAME|INDEX in the column map) gives a whole number in
 *   [0, 2^32) written with digits as that id, and any other text the 32-bit FNV-1a hash of its bytes
 *   (the same symbol gets the same id in every file). Two symbols that hash alike would merge; the
 *   CSV reader detects that within one file and fails naming both. Parquet: a flat integer column
 *   named instrument or instrument_id (any case) gives the ids (each in [0, 2^32), none null); text
 *   instrument columns stay category columns;
 * - a failed tg_*_parse leaves out as it was: the same bars, no instrument or extra column added
 *   (only the capacity, and the names of a category column it held, may have grown);
 * - a CSV file whose times run newest first is reversed by time (rows of one time keep their file
 *   order) before tg_bars_read sorts, so its reorder count covers only rows truly out of order;
 * - extra columns: CSV keeps every header column no bar field took (an empty header name, such as
 *   the index column pandas writes, is skipped; a file without a header has none), numeric when
 *   every value is a number or missing (empty, NaN, NA, N/A, null, None, nil), else a category of
 *   the texts (quotes removed, doubled quotes made one); a name repeated in the header is an error
 *   naming it. Parquet keeps every further flat column it can read as numbers (BOOLEAN, INT32,
 *   INT64, FLOAT, DOUBLE, DECIMAL, FLOAT16) or as a category (BYTE_ARRAY strings: STRING, ENUM or
 *   unannotated), nulls missing, and skips the rest (lists, other binary types, time columns, and a
 *   column it cannot decode) with a warning line to opts->warn naming each. price_scale leaves them
 *   as they are. Parsing into a series that holds bars: a column the series lacks gets missing
 *   values for its bars, one the file lacks gets missing values for the file's, and one the series
 *   holds with the other kind is an error naming it (except that a CSV column of numbers joins a
 *   category column as names). DBN keeps its fixed schema: no extra columns. */
typedef struct tg_bars {
  int64_t n, cap;
  int64_t *ts;             /* [n] */
  double *open, *high, *low, *close, *volume; /* [n] each; volume NaN where the source has none */
  uint32_t *instrument;    /* [n], or NULL when the source names no instrument */
  char source[256];        /* the file (or "first.csv and 3 more") */
  char format[16];         /* "csv", "dbn", "parquet", "synthetic" */
  int64_t reordered;       /* bars tg_bars_read found out of time order (and sorted); a reorder of bars that share a
                              timestamp (by instrument) is not counted */
  int newest_first;        /* CSV: the file ran newest first and was reversed (its rows count from the end) */
  int n_cols;              /* extra columns, in the order of the file (DBN and synthetic bars have none) */
  tg_bar_column *cols;     /* [n_cols], owned (a view's point into its source's: tg_bars_view) */
} tg_bars;

/* The id of an instrument named by the bytes [p, p + n) as the CSV reader gives it (see tg_bars): the number when
 * they are digits of a whole number below 2^32, else their 32-bit FNV-1a hash. */
uint32_t tg_instrument_id(const char *p, size_t n);

void tg_bars_init(tg_bars *b);
void tg_bars_free(tg_bars *b); /* frees the columns and re-initialises b */
/* Ensures room for cap bars; with_instrument allocates the instrument column too. */
tg_status tg_bars_reserve(tg_bars *b, int64_t cap, int with_instrument);
/* Appends one bar (grows the columns as needed). instrument is ignored without that column. Every extra column
 * gets a missing value; the caller may set it (b->cols[k].values[b->n - 1]) after the push. */
tg_status tg_bars_push(tg_bars *b, int64_t ts, double open, double high, double low, double close,
                       double volume, uint32_t instrument);
/* Appends all of src to dst (adds an instrument column to dst if src has one; missing ids are 0). Extra columns:
 * one in both is concatenated (category names merged by name, src's codes remapped to dst's); one in only one of
 * them gets missing values for the other's bars; the same name with another kind is TG_ERR_INVALID naming it.
 * On failure dst keeps its bars and columns (category tables may have grown). */
tg_status tg_bars_append(tg_bars *dst, const tg_bars *src);
/* Stable sort by (ts, instrument), the extra columns moved with their bars. *moved (may be NULL) receives how many
 * bars were not already in order: 0 for sorted input. */
tg_status tg_bars_sort(tg_bars *b, int64_t *moved);

/* Bars of one instrument sharing a timestamp: an error (default), or keep the first or the last of them (in file
 * order; across files, in the order the files are read). */
typedef enum tg_dup_policy { TG_DUPS_ERROR = 0, TG_DUPS_FIRST, TG_DUPS_LAST } tg_dup_policy;
/* Over bars sorted by tg_bars_sort: bars of one instrument that share a timestamp are TG_ERR_FORMAT naming the time
 * (what starts the message) under TG_DUPS_ERROR, or all but the first (TG_DUPS_FIRST) or the last (TG_DUPS_LAST) of
 * them in their order are removed. */
tg_status tg_bars_dedupe(tg_bars *b, tg_dup_policy policy, const char *what);

/* The extra column named name (exact, case-sensitive), or NULL. */
const tg_bar_column *tg_bars_column(const tg_bars *b, const char *name);
/* Its index in b->cols, or -1. */
int tg_bars_column_index(const tg_bars *b, const char *name);
/* Adds a column after the others with every bar's value missing. TG_ERR_INVALID when name is empty or taken. */
tg_status tg_bars_add_column(tg_bars *b, const char *name, tg_column_kind kind);
/* Makes column k a column of kind with every value missing (a category's names are dropped). */
tg_status tg_bars_reset_column(tg_bars *b, int k, tg_column_kind kind);
/* "a, b, c": the extra columns' names into buf (cut with ", ..." when they do not fit), or "none"; returns buf. */
const char *tg_bars_column_names(const tg_bars *b, char *buf, size_t n);
/* A 64-bit FNV-1a fingerprint of the bars' contents: times, prices, volumes, instruments and every extra column (its
 * name, kind, values or category names); the same bars give the same value on every machine. */
uint64_t tg_bars_hash(const tg_bars *b);
/* Rows [a, b) of bars as a view: every pointer, the extra columns' too, points into bars (nothing copied);
 * cols [bars->n_cols] is the caller's room for the view's column headers, or NULL for a view of the bar fields
 * only (no extra columns). The view is never tg_bars_free'd and must not outlive bars or cols. */
void tg_bars_view(const tg_bars *bars, int64_t a, int64_t b, tg_bar_column *cols, tg_bars *view);
/* Removes column k; the later ones move down one. */
void tg_bars_drop_column(tg_bars *b, int k);

typedef enum tg_null_policy { TG_NULLS_ERROR = 0, TG_NULLS_NAN } tg_null_policy;

/* ---- continuous futures (docs/TICKS.md "Continuous futures") ---------------------------------------------------
 * A series whose category column `contract` names several futures contracts whose bars overlap in time is stitched
 * into one: each day (UTC) the bars of one contract, the front, are kept. The rule picks the front: the contract with
 * the most volume (or the highest last open_interest value) of the day takes over at the start of the next day once it
 * beats the front; calendar:N holds the earliest contract until N days before its expiry. A contract is never rolled
 * back to. Back-adjustment makes every bar before a roll continuous with the new contract: it adds the difference of
 * the two contracts' last closes of the day the roll was decided (difference), or multiplies by their ratio (ratio).
 * Contract names holding '-' (spreads, "ESZ3-ESH4") or ' ' (options, "ESZ3 C4500") are dropped and counted. */
typedef enum tg_roll_rule { TG_ROLL_NONE = 0, TG_ROLL_VOLUME, TG_ROLL_OPEN_INTEREST, TG_ROLL_CALENDAR } tg_roll_rule;
typedef enum tg_adjust { TG_ADJUST_DIFFERENCE = 0, TG_ADJUST_RATIO, TG_ADJUST_NONE } tg_adjust;
typedef struct tg_roll_spec {
  tg_roll_rule rule;
  int days;          /* calendar: roll this many days before the front's expiry */
  tg_adjust adjust;
} tg_roll_spec;
/* "volume", "open_interest", "calendar" or "calendar:N" (N days, 0-366; default 5) into r->rule and r->days;
 * TG_ERR_INVALID naming the text and what is allowed. */
tg_status tg_roll_parse(const char *text, tg_roll_spec *r);

/* One roll: the first bar of `to` follows the last bar of `from`. */
typedef struct tg_roll {
  int64_t ts;                  /* the first bar of the new contract */
  int64_t basis_day;           /* UTC midnight (ns) of the day whose closes gave the basis; INT64_MIN: none */
  char from[32], to[32];       /* the contracts' names */
  double from_close, to_close; /* the basis: each contract's last close on basis_day (NaN without one) */
  double adjustment;           /* what every earlier bar got: added (difference) or a factor (ratio); NaN: not
                                  adjusted (--adjust none, no day both contracts traded, or a series read stitched) */
} tg_roll;
typedef struct tg_roll_list {
  tg_roll *v;
  int n, cap;
  int64_t spreads, options; /* contracts dropped as spreads and as options */
  int64_t dropped_bars;     /* bars of those and of contracts not in front */
  int stitched;             /* 1: the series held one contract at a time already; the rolls are its contract changes */
} tg_roll_list;
void tg_roll_list_free(tg_roll_list *l); /* and re-initialises it (zero is empty) */

/* Stitches b (sorted by time) in place when its `contract` column names several contracts whose bars interleave in
 * time; a series with no such column, one contract, or contracts that follow one another (an already stitched
 * series) is left as it is (the contract changes are listed). rule TG_ROLL_NONE on interleaved contracts is
 * TG_ERR_INVALID naming what, the contracts and the flags. open_interest needs a numeric column of that name, calendar
 * an expiry for every contract (a name YYYYMM, the month's first day, or YYYYMMDD); without them it is TG_ERR_INVALID
 * naming what is missing. Adjusted prices: open, high, low, close and the extra columns vwap, bid, ask, mid (ratio:
 * spread_mean too). Where the bars have instrument ids (DBN: one per contract), the stitched series is one
 * instrument, the latest contract's id. A warning line to warn (may be NULL) counts spreads and options dropped. rolls (may be NULL) is
 * filled (emptied first). */
tg_status tg_bars_roll(tg_bars *b, const tg_roll_spec *spec, const char *what, FILE *warn, tg_roll_list *rolls);

/* Options for every reader; zero-initialised means defaults. */
typedef struct tg_read_opts {
  /* CSV column map: "ts=Date,open=Open,close=Adj Close" by header name, or by position
   * "ts=0,open=1,high=2,low=3,close=4,volume=5,instrument=6"; "volume=none" or "instrument=none"
   * leaves one out. NULL: recognise common header names, or the positional layout
   * ts,open,high,low,close[,volume] for files without a header. */
  const char *columns;
  /* Zone of naive local timestamps ("America/New_York"); NULL or "UTC": they are UTC. */
  const char *tz;
  double price_scale;         /* prices are multiplied by this (0 means 1) */
  tg_null_policy nulls;       /* null, missing or undefined prices: an error (default) or NaN */
  FILE *warn;                 /* where warnings go (reordered rows, skipped files); NULL: nowhere */
  /* The bar checks every read makes (tg_bars_check): */
  tg_dup_policy duplicates;   /* duplicate timestamps of one instrument: an error (default), or keep first / last */
  int allow_ohlc;             /* 1: high below open/close/low or low above open/close is let through */
  int no_checks;              /* 1: no bar checks at all (`tickgrad inspect` reports what they would say) */
  int skip_bad_files;         /* a folder or glob: a file that cannot be read is skipped with a warning line naming
                                 it and why, instead of failing the read (at least one file must remain) */
  /* Several futures contracts in one source (a `contract` column; Lean futures files give one from their names):
   * stitched by tg_bars_roll after the files are read. */
  const char *roll;           /* "volume", "open_interest", "calendar[:N]"; NULL: several interleaved contracts are an
                                 error naming them */
  tg_adjust adjust;           /* back-adjustment at each roll */
  tg_roll_list *rolls;        /* where the rolls go (NULL: nowhere) */
  /* Ticks: a bar recipe ("volume:1e4", tickgrad/ticks.h) reads every path as trade ticks (CSV, DBN, Lean zips) and
   * makes bars of them in one pass (tg_ticks_read_bars; tz is the zone of naive tick times), checked as a file's bars
   * are; quotes (NULL: none) is a quote file merged into them (one data path only). NULL: bar files, and a tick file
   * read without a recipe is an error that says to give one. */
  const char *by, *quotes;
} tg_read_opts;

/* How a command reads its bars, kept in a run's config.json (keys data_columns, data_tz, price_scale, nulls,
 * duplicates, allow_ohlc, skip_bad_files, roll, adjust, bar_recipe, quotes) so that a resumed run, a predictor or a
 * backtest of the run reads the same way (and makes the same bars from ticks). Every command that reads bars takes the
 * same flags for them: --columns, --data-tz, --price-scale, --nulls, --duplicates, --allow-ohlc, --skip-bad-files,
 * --roll, --adjust, --by, --quotes. Zero-initialised means defaults. */
typedef struct tg_read_settings {
  char columns[512];  /* the CSV column map ("": found from the header) */
  char tz[64];        /* zone of naive timestamps ("": UTC) */
  double price_scale; /* 0: 1 */
  int nulls;          /* tg_null_policy */
  int duplicates;     /* tg_dup_policy */
  int allow_ohlc, skip_bad_files;
  char roll[32];      /* futures roll rule ("": none, several contracts are an error) */
  int adjust;         /* tg_adjust */
  char by[128];       /* bar_recipe, --by: bars made from tick files by this recipe ("": the files are bars) */
  char quotes[1024];  /* quotes, --quotes: a quote tick file merged into bars made --by a recipe ("": none) */
} tg_read_settings;

/* The read options of s (pointing into s) with warnings to warn. */
tg_read_opts tg_read_settings_opts(const tg_read_settings *s, FILE *warn);
/* Sets the setting of flag (one of the flags above) from value; TG_ERR_INVALID naming the flag, the value and what is
 * allowed. tg_read_flag_known: 1 when flag is one of them. tg_read_flags_help: one --help line per flag. */
tg_status tg_read_settings_set_flag(tg_read_settings *s, const char *flag, const char *value);
int tg_read_flag_known(const char *flag);
void tg_read_flags_help(FILE *f);

/* The checks of bars every reader's caller gets (tg_bars_read makes them on each file as read): per instrument no two
 * bars share a timestamp (unless opts->duplicates keeps one); high >= max(open, close), low <= min(open, close) and
 * high >= low (unless opts->allow_ohlc); volume not negative; every price a positive number a log return can be
 * taken of and stored (finite and in [FLT_MIN, FLT_MAX], so log(close_t / close_t-1) is finite); NaN prices only
 * under TG_NULLS_NAN. A failure is TG_ERR_FORMAT naming source, the row (1-based, the file's
 * order; reversed for a newest-first CSV), the time and the value. opts NULL: the defaults. */
tg_status tg_bars_check(const tg_bars *b, const tg_read_opts *opts, const char *source);

/* Reads one file, a directory (every file in it), or a glob pattern such as "bars/es_*.csv"; the format is picked by
 * content (magic bytes), not by extension. Several files concatenate and sort by time; rows out of
 * time order are sorted with a warning that counts them. Several files keep only the extra columns
 * every file has with the same kind, with one warning line naming each column dropped and a file
 * that lacked it (or the two kinds). out is initialised by this call. */
tg_status tg_bars_read(const char *path, const tg_read_opts *opts, tg_bars *out);
/* Reads every path as tg_bars_read does into one series, sorted by time (and stitched, as tg_bars_read stitches
 * futures contracts) when there are several; its
 * source names the first path ("first and 3 more"), format the first file's, reordered sums the files' (rows each file
 * had out of order; the order between files is not counted). Extra columns as tg_bars_read keeps them over
 * several files (the warning names paths). An error names the path and frees what was read. */
tg_status tg_bars_read_paths(int n, const char *const *paths, const tg_read_opts *opts, tg_bars *out);

/* The readers, over a file already in memory. path names the source in errors (and, for Lean
 * files, carries the date). They append to out, which the caller has initialised; on failure out
 * keeps what it held (see tg_bars). */
tg_status tg_csv_parse(const char *path, const void *bytes, size_t len, const tg_read_opts *opts, tg_bars *out);
tg_status tg_dbn_parse(const char *path, const void *bytes, size_t len, const tg_read_opts *opts, tg_bars *out);
tg_status tg_parquet_parse(const char *path, const void *bytes, size_t len, const tg_read_opts *opts, tg_bars *out);
/* DBN reference data (docs/TICKS.md "DBN definitions and statistics"): the instrument definitions and statistics
 * records of a DBN file, versions 1-3. Prices and quantities that are 1e-9 fixed point in DBN are doubles here. */
typedef struct tg_instrument_def {
  uint32_t id;           /* instrument_id */
  char symbol[72];       /* raw_symbol */
  char instrument_class; /* DBN's letter (tg_instrument_class_name); 0 when the record leaves it unset */
  int64_t expiration;    /* ns since the epoch, UTC; INT64_MIN when undefined */
  double multiplier;     /* the contract size: unit_of_measure_qty, else contract_multiplier; NaN when neither is set */
  double tick_size;      /* min_price_increment; NaN when undefined */
  int64_t ts;            /* ts_event */
  int64_t record;        /* the record's number in the file, from 0 */
} tg_instrument_def;

#define TG_DBN_STAT_OPEN_INTEREST 9 /* DBN's StatType::OpenInterest: quantity is the open interest, ts_ref its day */

typedef struct tg_dbn_stat {
  int64_t ts;             /* ts_event */
  int64_t ts_ref;         /* INT64_MIN when undefined */
  uint32_t id;            /* instrument_id */
  uint16_t type;          /* DBN's stat_type */
  uint8_t update_action;  /* 1 new, 2 delete */
  double price;           /* NaN when undefined */
  double quantity;        /* NaN when undefined */
  int64_t record;
} tg_dbn_stat;

typedef struct tg_dbn_refdata {
  char schema[16];        /* the metadata's schema: "definition", "statistics", "none" (mixed) */
  int version;            /* the file's DBN version */
  tg_instrument_def *defs; /* [n_defs] every definition record, in file order */
  int64_t n_defs;
  tg_dbn_stat *stats;     /* [n_stats] every statistics record, in file order */
  int64_t n_stats;
  int64_t *by_id;         /* [n_ids] the index in defs of each instrument's last definition, ordered by id */
  int64_t n_ids;          /* the distinct instrument ids of defs */
} tg_dbn_refdata;

/* Decodes the definition and statistics records of a DBN file (plain or zstd) into out (initialised by the call,
 * freed on failure). Another schema, a record of another kind, a record shorter than its version's layout, a version
 * above 3 and truncated data are errors naming the file and the record. */
tg_status tg_dbn_refdata_parse(const char *path, const void *bytes, size_t len, tg_dbn_refdata *out);
tg_status tg_dbn_refdata_read(const char *path, tg_dbn_refdata *out);
void tg_dbn_refdata_free(tg_dbn_refdata *r);
/* The definition records of r as CSV (record,ts_ns,instrument_id,raw_symbol,instrument_class,expiration,multiplier,
 * tick_size), or its statistics records when it has no definitions (record,ts_ns,instrument_id,stat_type,update_action,
 * ts_ref,price,quantity): numbers to 17 digits, undefined times INT64_MIN, undefined values nan; written atomically. */
tg_status tg_dbn_refdata_dump(const tg_dbn_refdata *r, const char *out_path);
/* 1 when path is a plain DBN file whose metadata names the definition or statistics schema, else 0. */
int tg_dbn_refdata_sniff(const char *path);
/* (Re)builds r->by_id from r->defs: parse does; a caller that changes defs calls it again. */
tg_status tg_dbn_refdata_index(tg_dbn_refdata *r);
/* The latest definition record of instrument id (the last in defs), or NULL: a binary search of by_id. */
const tg_instrument_def *tg_dbn_refdata_find(const tg_dbn_refdata *r, uint32_t id);
/* DBN's instrument class letter in words ("future", "future spread", "call", ...); "unknown" for another letter. */
const char *tg_instrument_class_name(char instrument_class);
/* 1 for the classes a continuous future keeps: an outright future ('F'); spreads and options are dropped. */
int tg_instrument_class_is_outright(char instrument_class);

/* One CSV row (a streamed bar, no end of line) read under its header line as the file of the two would be, the
 * header deciding the layout: a row whose field count is not the header's is the file reader's error naming the
 * line (row_no); then tg_csv_parse of the two lines and tg_bars_check of the bar (duplicate times are the caller's
 * to check across rows). path names the source in errors, and every error about the row names it line row_no. */
tg_status tg_csv_parse_row(const char *path, const char *header, const char *row, int64_t row_no,
                           const tg_read_opts *opts, tg_bars *out);

/* Streamed bars, one at a time (predict --stream): each instrument's last time, so the duplicates rule applies as a
 * file read applies it. Zero-initialised is empty. */
typedef struct tg_stream_times {
  uint32_t *ids;
  int64_t *last;
  int n, cap;
} tg_stream_times;
/* The bar of instrument at ts, on line of src: a time its instrument had on the line before is TG_ERR_FORMAT naming
 * the line (TG_DUPS_ERROR), skipped (*skip = 1, TG_DUPS_FIRST), or TG_ERR_INVALID (TG_DUPS_LAST: the first one's
 * forecast is out); else *skip = 0 and the time is kept. */
tg_status tg_stream_times_check(tg_stream_times *t, uint32_t instrument, int64_t ts, const tg_read_opts *opts,
                                const char *src, int64_t line, int *skip);
void tg_stream_times_free(tg_stream_times *t);

/* What `tickgrad inspect` reports about a series. */
#define TG_INSPECT_MAX_GAPS 5
typedef struct tg_bars_report {
  int64_t rows, instruments;
  int64_t first_ts, last_ts;
  int64_t median_interval_ns;   /* of consecutive bars of the same instrument; 0 if under 2 bars */
  int64_t gaps;                 /* intervals longer than 3 median intervals */
  int64_t gap_at[TG_INSPECT_MAX_GAPS], gap_ns[TG_INSPECT_MAX_GAPS]; /* the longest: start ts, length */
  int64_t duplicates;           /* bars with the same (ts, instrument) as the previous one */
  int64_t reordered;            /* from the reader */
  int64_t ohlc_violations;      /* low > min(open, close) or high < max(open, close) or low > high */
  int64_t nan_prices, zero_prices, negative_prices;
  int64_t nan_volume, negative_volume;
  int has_volume;               /* some volume is not NaN */
} tg_bars_report;

/* bars must be sorted (tg_bars_read sorts). */
tg_status tg_bars_inspect(const tg_bars *bars, tg_bars_report *r);

/* 1 after a warning line to warn (may be NULL) naming b's source, its median bar interval and want_ns when they
 * differ (what names the run); 0 when they agree or either is unknown (want_ns 0, under 2 bars of an instrument). */
int tg_bars_interval_warn(const tg_bars *b, int64_t want_ns, const char *what, FILE *warn);

/* What `tickgrad inspect` reports about one extra column. */
typedef struct tg_column_report {
  const char *name;    /* the column's own name (valid while the bars are) */
  tg_column_kind kind;
  int64_t missing;     /* bars whose value is missing */
  int64_t distinct;    /* a category: names some bar holds; a numeric column: 0 */
} tg_column_report;

/* One report per extra column of bars into out[bars->n_cols]. */
tg_status tg_bars_inspect_columns(const tg_bars *bars, tg_column_report *out);

/* Resampling to a coarser interval. Buckets are aligned to the wall clock of zone tz (NULL: UTC):
 * interval_ns of 5 minutes starts buckets at :00, :05, ...; one day starts at local midnight. When
 * session_start_min < session_end_min, only bars whose local start time-of-day (minutes after
 * midnight) is in [start, end) are used. open = first, high = max, low = min, close = last,
 * volume = sum; each instrument separately; a bucket's ts is its start. in must be sorted; out is
 * initialised by this call (and freed on failure). Extra columns are not resampled: out has none. */
typedef struct tg_resample_opts {
  int64_t interval_ns;
  const char *tz;
  int session_start_min, session_end_min;
} tg_resample_opts;

tg_status tg_bars_resample(const tg_bars *in, const tg_resample_opts *opts, tg_bars *out);
/* Parses "5m", "1h", "1d", "30s" into nanoseconds. */
tg_status tg_interval_parse(const char *s, int64_t *ns);

#ifdef __cplusplus
}
#endif
#endif
