/* The CSV reader's internal interface: lines, fields, numbers, times, instruments, sniffing and columns. */
#ifndef TG_DATA_CSV_INTERNAL_H
#define TG_DATA_CSV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/data.h"

#define TG_CSV_MAX_LINE ((size_t)1 << 20) /* longest line accepted, in bytes */
#define TG_CSV_SAMPLE_LINES 64            /* lines the sniffer looks at */

/* ---- lines (csv_scan.c) ---------------------------------------------------------------------- */

/* One physical line: content [p, e) without the line break (a "\r\n" loses both), the start of
 * the next line, and its 1-based number. */
typedef struct tg_csv_line {
  const char *p, *e, *next;
  int64_t no;
} tg_csv_line;

/* Reads the line at pos (numbered no) into ln. Returns TG_OK, or TG_ERR_FORMAT naming path and
 * line for a NUL byte, bytes that are not UTF-8, or a line longer than TG_CSV_MAX_LINE. pos must
 * be < end. */
tg_status tg_csv_line_read(const char *path, const char *pos, const char *end, int64_t no, tg_csv_line *ln);
/* 1 when [p, e) holds only spaces and tabs. */
int tg_csv_blank(const char *p, const char *e);
/* 1 when [p, e) is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF);
 * otherwise 0 and *bad receives the offset of the first byte that is not. */
int tg_csv_utf8_valid(const unsigned char *p, const unsigned char *e, size_t *bad);
/* Writes a short printable rendering of [p, e) into buf (at most 40 characters, non-printable
 * bytes as \xNN, long values cut with "..."); returns buf. */
const char *tg_csv_quote(const char *p, const char *e, char *buf, size_t n);

/* One field of a line: content [p, e) with surrounding blanks and quotes removed (a doubled quote
 * inside a quoted field stays doubled); bad when a quote is not closed or text follows it. */
typedef struct tg_csv_field {
  const char *p, *e;
  int bad;
} tg_csv_field;

static inline int tg_csv_is_blank(char c, char delim) { return (c == ' ' || c == '\t') && c != delim; }

/* Splits off the field starting at p in a line ending at le. Returns where the next field starts
 * and sets *more to 1 when a delimiter followed (so another field exists). */
static inline const char *tg_csv_field_next(const char *p, const char *le, char delim, tg_csv_field *f, int *more) {
  while (p < le && tg_csv_is_blank(*p, delim)) p++;
  f->bad = 0;
  if (p < le && *p == '"') {
    const char *q = p + 1;
    for (;;) {
      while (q < le && *q != '"') q++;
      if (q + 1 < le && q[1] == '"') {
        q += 2;
        continue;
      }
      break;
    }
    f->p = p + 1;
    f->e = q;
    if (q >= le) {
      f->bad = 1;
      *more = 0;
      return le;
    }
    q++;
    while (q < le && tg_csv_is_blank(*q, delim)) q++;
    if (q < le && *q != delim) {
      f->bad = 1;
      while (q < le && *q != delim) q++;
    }
    *more = q < le;
    return q < le ? q + 1 : le;
  }
  const char *s = p;
  while (p < le && *p != delim) p++;
  const char *t = p;
  while (t > s && tg_csv_is_blank(t[-1], delim)) t--;
  f->p = s;
  f->e = t;
  *more = p < le;
  return p < le ? p + 1 : le;
}

/* Number of fields of the line [p, le) split at delim. */
int64_t tg_csv_field_count(const char *p, const char *le, char delim);

/* ---- numbers (csv_number.c) ------------------------------------------------------------------ */

typedef enum tg_csv_num {
  TG_CSV_NUM_OK = 0,
  TG_CSV_NUM_NULL, /* empty, NaN, NA, N/A, null, None */
  TG_CSV_NUM_INF,  /* inf, Infinity, or a value too large for a double */
  TG_CSV_NUM_BAD   /* anything else */
} tg_csv_num;

/* Parses a decimal number ("-12.5", "1e-3", ".5") filling the whole of [p, e). altdec is a second
 * decimal-point character (',' in semicolon files) or 0. Correctly rounded. */
tg_csv_num tg_csv_number_parse(const char *p, const char *e, char altdec, double *out);

/* ---- times (csv_time.c) ---------------------------------------------------------------------- */

typedef enum tg_csv_time_kind {
  TG_CSV_TIME_NONE = 0,
  TG_CSV_TIME_YMD,     /* 2020-01-31, 2020/01/31, 2020.01.31, then an optional time of day */
  TG_CSV_TIME_DMY,     /* 31.01.2020, 31/01/2020 [time] */
  TG_CSV_TIME_MDY,     /* 01/31/2020 [time] */
  TG_CSV_TIME_COMPACT, /* 20200131 [time], 20200131093000 */
  TG_CSV_TIME_EPOCH,   /* seconds, milliseconds, microseconds or nanoseconds since 1970 (UTC) */
  TG_CSV_TIME_DAYMS    /* Lean: milliseconds since midnight, the date from the file name */
} tg_csv_time_kind;

typedef struct tg_csv_timefmt {
  tg_csv_time_kind kind;
  int64_t unit_ns; /* EPOCH: nanoseconds per unit */
  int64_t day_ns;  /* DAYMS: the file's date at midnight (wall clock), ns */
} tg_csv_timefmt;

/* Picks the format of a time column from its first values (n >= 1; more values settle whether a
 * slashed date is day or month first). path_day is the date of the file name in days since 1970,
 * or INT64_MIN when it has none. Returns 1 when the first value is a time in a known format. */
int tg_csv_time_detect(const tg_csv_field *vals, int n, int64_t path_day, tg_csv_timefmt *fmt);
/* Parses one value in format fmt into ns since 1970. *absolute is 1 when the value is a UTC
 * instant (an epoch number, a trailing Z or +hh:mm) and 0 for a wall-clock time to be read in the
 * file's zone. Returns 1 on success. */
int tg_csv_time_parse(const tg_csv_timefmt *fmt, const char *p, const char *e, int64_t *ns, int *absolute);
/* The date text of the previous row and its day: rows of the same day parse only their time. */
typedef struct tg_csv_day_cache {
  char text[16];
  int len; /* 0: empty */
  int64_t day;
} tg_csv_day_cache;
/* tg_csv_time_parse with a day cache (zero-initialised before the first row). */
int tg_csv_time_parse_cached(const tg_csv_timefmt *fmt, tg_csv_day_cache *cache, const char *p, const char *e,
                             int64_t *ns, int *absolute);
/* 1 when [p, e) is a date with no time of day in a format the reader knows. */
int tg_csv_date_only(const char *p, const char *e);
/* A time of day (HH:MM[:SS[.fff]] with an optional AM/PM) into ns after midnight; 1 on success. */
int tg_csv_tod_parse(const char *p, const char *e, int64_t *ns);
/* The date that a path's file name, or failing that the nearest folder name, starts with as
 * YYYYMMDD followed by '_', '.', '-' or the end of the name (Lean: 20131007_es_minute_trade.csv).
 * Returns days since 1970, or INT64_MIN. */
int64_t tg_csv_path_day(const char *path);
/* A human name of a format for messages ("YYYY-MM-DD[ HH:MM:SS]", "epoch milliseconds", ...). */
const char *tg_csv_time_name(const tg_csv_timefmt *fmt);

/* ---- instruments (csv_instrument.c) ---------------------------------------------------------- */


typedef struct tg_csv_id_slot {
  uint32_t id;
  unsigned char used, numeric;
  size_t at, len; /* the text first seen with this id, in the table's text */
  int64_t line;   /* and its line */
} tg_csv_id_slot;

/* The ids one parse has seen, to catch two symbols that hash alike. Zero-initialised; one parse. */
typedef struct tg_csv_ids {
  tg_csv_id_slot *slot; /* [cap], open addressing by id */
  size_t cap, count;
  char *text;
  size_t text_len, text_cap;
  int have_last; /* the previous text symbol, which most rows repeat */
  size_t last_at, last_len;
  uint32_t last_id;
} tg_csv_ids;

/* The id of the instrument field [p, e) on line: a whole number in [0, 2^32) written with digits
 * only is the id; any other text (the field's bytes, blanks and surrounding quotes removed, case
 * kept) gets tg_fnv1a32 of its bytes. TG_ERR_FORMAT naming both when a different symbol (or a
 * number) already had the same id in this parse. */
tg_status tg_csv_instrument_id(tg_csv_ids *t, const char *path, int64_t line, const char *p, const char *e,
                               uint32_t *id);
void tg_csv_ids_free(tg_csv_ids *t);

/* ---- the parse (csv_parse.c) ----------------------------------------------------------------- */

/* tg_csv_parse with the line after the header numbered row_no in messages (0: the header's number + 1), for a
 * streamed row parsed under its header (the row's true line in the stream). */
tg_status tg_csv_parse_numbered(const char *path, const void *bytes, size_t len, const tg_read_opts *opts,
                                int64_t row_no, tg_bars *out);

/* ---- layout (csv_sniff.c) -------------------------------------------------------------------- */

typedef struct tg_csv_layout {
  char delim;            /* one of , ; \t | */
  char altdec;           /* ',' when the delimiter is ';' (decimal commas), else 0 */
  const char *first;     /* the header, or the first data row when there is none */
  int64_t first_no;      /* its line number */
  int has_header;
  int64_t ncols;         /* fields per row */
  double bytes_per_line; /* average over the sample, for the capacity estimate */
} tg_csv_layout;

/* Finds the delimiter, skips a byte-order mark, blank lines and a preamble, and decides whether
 * the first row is a header. Errors name the file and line. */
tg_status tg_csv_sniff(const char *path, const char *buf, const char *end, tg_csv_layout *lay);
/* The delimiter as messages name it: ',' ';' tab '|'. */
static inline const char *tg_csv_delim_desc(char d) {
  return d == ',' ? "','" : d == ';' ? "';'" : d == '\t' ? "tab" : "'|'";
}

/* ---- columns (csv_columns.c) ----------------------------------------------------------------- */

typedef enum tg_csv_role {
  TG_CSV_TS = 0, /* date and time, or the date when a separate time column exists */
  TG_CSV_TOD,    /* a separate time-of-day column */
  TG_CSV_OPEN,
  TG_CSV_HIGH,
  TG_CSV_LOW,
  TG_CSV_CLOSE,
  TG_CSV_VOLUME,
  TG_CSV_INSTRUMENT, /* an instrument id or symbol */
  TG_CSV_ROLES
} tg_csv_role;

extern const char *const tg_csv_role_names[TG_CSV_ROLES];

typedef struct tg_csv_map {
  int64_t col[TG_CSV_ROLES]; /* column index per role, -1 when absent */
  int64_t tie[TG_CSV_ROLES]; /* a second column whose name is col's but for case and punctuation ("close" and
                                "Close"), -1 when none: an error unless the user's map names the role */
  int tod_auto;              /* TOD was found by name (dropped when the date column has times) */
} tg_csv_map;

/* Maps roles to columns. line is the header's line (or the first row's), header its fields (NULL
 * when the file has none), ncols the number of fields per row, columns the user's map
 * (opts->columns, may be NULL). */
tg_status tg_csv_columns_map(const char *path, int64_t line, const tg_csv_field *header, int64_t ncols,
                             const char *columns, tg_csv_map *map);

/* ---- extra columns (csv_extra.c) ------------------------------------------------------------- */

/* The columns of a file with a header that no role took, kept beside the bars by name. */
typedef struct tg_csv_extras {
  int n;               /* extra columns */
  int64_t *col;        /* [n] each one's column in the file */
  int *out;            /* [n] its index in out->cols */
  unsigned char *text; /* [n] 1 once a value is not a number: a category, read by tg_csv_extras_categories */
  int32_t *of;         /* [ncols] the extra index of each file column, -1 for none; NULL when n is 0 */
  int cols0;           /* out->n_cols before this parse */
} tg_csv_extras;

/* Picks the extra columns: every header column with a name (an empty one, such as pandas' index, is skipped)
 * that no role took, the time-of-day column included, and adds the new ones to out as numeric columns. A name
 * given twice in the header, one of them an extra column, is TG_ERR_FORMAT naming it and the header's line. A
 * file without a header has none. On failure the caller undoes and frees x as after any other. */
tg_status tg_csv_extras_setup(const char *path, int64_t line, const tg_csv_field *header, int64_t ncols,
                              const tg_csv_map *map, tg_bars *out, tg_csv_extras *x);
/* After the row loop filled the numeric extras of bars [n0, out->n): turns the columns found to hold text into
 * categories and reads them in a second pass over the rows from data (line number no), and gives out's columns
 * the file lacks missing values. A column out held before with the other kind is TG_ERR_FORMAT naming it. */
tg_status tg_csv_extras_finish(const char *path, const tg_csv_layout *lay, const char *data, const char *end,
                               int64_t no, int64_t n0, tg_bars *out, tg_csv_extras *x);
/* Removes the columns this parse added to out (after a failure). */
void tg_csv_extras_undo(tg_bars *out, const tg_csv_extras *x);
void tg_csv_extras_free(tg_csv_extras *x); /* keeps cols0, for a later undo */

#endif
