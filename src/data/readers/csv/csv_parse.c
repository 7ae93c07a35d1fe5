/* CSV bars: tg_csv_parse, its setup (layout, columns, time format) and the one-pass row loop (extra columns too). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/intmath.h"
#include "base/alloc.h"
#include "data/readers/csv/csv_digits.h"
#include "data/readers/csv/csv_internal.h"
#include "data/readers/timeconv.h"

#define PRICE_BITS ((1u << TG_CSV_OPEN) | (1u << TG_CSV_HIGH) | (1u << TG_CSV_LOW) | (1u << TG_CSV_CLOSE))
#define VALUE_BITS (PRICE_BITS | (1u << TG_CSV_VOLUME))
#define SMALL_COLS 256

typedef struct csv_ctx {
  const char *path;
  const tg_read_opts *opts;
  tg_csv_layout lay;
  tg_csv_map map;
  tg_csv_field *header; /* [ncols] when the file has a header */
  unsigned char *mask;  /* [ncols] role bits per column */
  unsigned char small_mask[SMALL_COLS];
  tg_csv_timefmt fmt;
  int64_t fmt_line; /* the row the time format was read from */
  tg_csv_day_cache days;
  const char *tz; /* the zone of wall-clock times; NULL for UTC */
  tg_tz_memo tz_memo;
  tg_csv_ids ids; /* instrument ids seen */
  tg_csv_extras x; /* the extra columns */
  double scale;
  int64_t data_no; /* the number of the line after the header (0: the header's + 1) */
} csv_ctx;

/* "'Close'" with a header, "5 (close)" without (1-based). */
static const char *col_desc(const csv_ctx *c, int64_t col, int role, char *buf, size_t n) {
  if (c->header && col < c->lay.ncols) {
    buf[0] = '\'';
    tg_csv_quote(c->header[col].p, c->header[col].e, buf + 1, n - 2);
    size_t k = strlen(buf);
    buf[k] = '\'';
    buf[k + 1] = '\0';
  } else {
    snprintf(buf, n, "%lld (%s)", (long long)col + 1, tg_csv_role_names[role]);
  }
  return buf;
}


/* Finds the line after the header (or the first data row) and collects up to n time values. */
static tg_status sample_times(csv_ctx *c, const char *end, const char **data, int64_t *data_no, tg_csv_field *ts,
                              tg_csv_field *tod, int *count) {
  const char *pos = c->lay.first;
  int64_t no = c->lay.first_no;
  *count = 0;
  if (c->lay.has_header) {
    tg_csv_line ln;
    tg_status st = tg_csv_line_read(c->path, pos, end, no, &ln);
    if (st != TG_OK) return st;
    pos = ln.next;
    no = c->data_no ? c->data_no : no + 1;
  }
  *data = pos;
  *data_no = no;
  while (pos < end && *count < TG_CSV_SAMPLE_LINES) {
    tg_csv_line ln;
    tg_status st = tg_csv_line_read(c->path, pos, end, no++, &ln);
    if (st != TG_OK) return st;
    pos = ln.next;
    if (tg_csv_blank(ln.p, ln.e)) continue;
    if (*count == 0) c->fmt_line = ln.no;
    const char *p = ln.p;
    int64_t col = 0;
    int more = 1;
    tg_csv_field f;
    tg_csv_field empty = {ln.p, ln.p, 0};
    ts[*count] = tod[*count] = empty;
    while (more) {
      p = tg_csv_field_next(p, ln.e, c->lay.delim, &f, &more);
      if (col == c->map.col[TG_CSV_TS]) ts[*count] = f;
      if (col == c->map.col[TG_CSV_TOD]) tod[*count] = f;
      col++;
    }
    if (col != c->lay.ncols) {
      if (*count > 0) break; /* the row loop reports it */
      return tg_error(TG_ERR_FORMAT, "%s: line %lld: %lld fields, expected %lld like the %s (split at %s)",
                      c->path, (long long)ln.no, (long long)col, (long long)c->lay.ncols,
                      c->lay.has_header ? "header" : "other rows", tg_csv_delim_desc(c->lay.delim));
    }
    ++*count;
  }
  return TG_OK;
}

static tg_status setup_time(csv_ctx *c, const tg_csv_field *ts, const tg_csv_field *tod, int count) {
  char buf[64], q[64];
  if (c->map.tod_auto && !(tg_csv_date_only(ts[0].p, ts[0].e) && tg_csv_tod_parse(tod[0].p, tod[0].e, &(int64_t){0}))) {
    c->map.col[TG_CSV_TOD] = -1;
    c->map.tod_auto = 0;
  }
  if (!tg_csv_time_detect(ts, count, tg_csv_path_day(c->path), &c->fmt)) {
    const char *hint = "";
    double v;
    if (tg_csv_number_parse(ts[0].p, ts[0].e, 0, &v) == TG_CSV_NUM_OK && v >= 0 && v < 100000000)
      hint = "; it looks like Lean's milliseconds since midnight, which take the date from a file name starting "
             "with YYYYMMDD_";
    return tg_error(TG_ERR_FORMAT,
                    "%s: line %lld, column %s: '%s' is not a date or time in a known format (YYYY-MM-DD[ HH:MM:SS], "
                    "DD.MM.YYYY HH:MM:SS, MM/DD/YYYY, YYYYMMDD HH:MM, epoch seconds/ms/us/ns)%s",
                    c->path, (long long)c->fmt_line, col_desc(c, c->map.col[TG_CSV_TS], TG_CSV_TS, buf, sizeof buf),
                    tg_csv_quote(ts[0].p, ts[0].e, q, sizeof q), hint);
  }
  if (c->map.col[TG_CSV_TOD] >= 0 && c->fmt.kind != TG_CSV_TIME_YMD && c->fmt.kind != TG_CSV_TIME_DMY &&
      c->fmt.kind != TG_CSV_TIME_MDY && c->fmt.kind != TG_CSV_TIME_COMPACT)
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: the time-of-day column goes with a date column, but column %s "
                    "holds %s", c->path, (long long)c->fmt_line,
                    col_desc(c, c->map.col[TG_CSV_TS], TG_CSV_TS, buf, sizeof buf), tg_csv_time_name(&c->fmt));
  return TG_OK;
}

enum { BAD_NONE, BAD_QUOTE, BAD_TIME, BAD_TOD, BAD_NUMBER, BAD_NULL, BAD_INF };

static tg_status row_error(const csv_ctx *c, int64_t line, int64_t col, int kind, const tg_csv_field *f) {
  char cd[96], q[64];
  int role = TG_CSV_CLOSE;
  for (int r = TG_CSV_ROLES - 1; r >= 0; r--)
    if (c->map.col[r] == col) role = r;
  col_desc(c, col, role, cd, sizeof cd);
  tg_csv_quote(f->p, f->e, q, sizeof q);
  switch (kind) {
    case BAD_QUOTE:
      return tg_error(TG_ERR_FORMAT, "%s: line %lld, column %s: a quoted field is not closed on its line, or text "
                      "follows the closing quote", c->path, (long long)line, cd);
    case BAD_TIME:
      return tg_error(TG_ERR_FORMAT, "%s: line %lld, column %s: '%s' is not a time in this file's format (%s, as on "
                      "line %lld)", c->path, (long long)line, cd, q, tg_csv_time_name(&c->fmt), (long long)c->fmt_line);
    case BAD_TOD:
      return tg_error(TG_ERR_FORMAT, "%s: line %lld, column %s: '%s' is not a time of day (HH:MM[:SS])", c->path,
                      (long long)line, cd, q);
    case BAD_NULL:
      if (f->p == f->e)
        return tg_error(TG_ERR_FORMAT, "%s: line %lld, column %s: the price is empty (set nulls to NaN to keep such "
                        "rows)", c->path, (long long)line, cd);
      return tg_error(TG_ERR_FORMAT, "%s: line %lld, column %s: '%s' is not a price (set nulls to NaN to keep such "
                      "rows)", c->path, (long long)line, cd, q);
    case BAD_INF:
      return tg_error(TG_ERR_FORMAT, "%s: line %lld, column %s: '%s' is not a finite number", c->path,
                      (long long)line, cd, q);
    default:
      return tg_error(TG_ERR_FORMAT, "%s: line %lld, column %s: '%s' is not a number", c->path, (long long)line, cd,
                      q);
  }
}

/* Reverses rows [from, to), extra columns too. */
static void reverse_range(tg_bars *b, int64_t from, int64_t to) {
  for (int64_t i = from, j = to - 1; i < j; i++, j--) {
    for (int k = 0; k < b->n_cols; k++) {
      tg_bar_column *c = &b->cols[k];
      if (c->kind == TG_COLUMN_NUMERIC) {
        double v = c->values[i];
        c->values[i] = c->values[j];
        c->values[j] = v;
      } else {
        uint32_t u = c->codes[i];
        c->codes[i] = c->codes[j];
        c->codes[j] = u;
      }
    }
    int64_t t = b->ts[i];
    b->ts[i] = b->ts[j];
    b->ts[j] = t;
    double *cols[5] = {b->open, b->high, b->low, b->close, b->volume};
    for (int k = 0; k < 5; k++) {
      double v = cols[k][i];
      cols[k][i] = cols[k][j];
      cols[k][j] = v;
    }
    if (b->instrument) {
      uint32_t u = b->instrument[i];
      b->instrument[i] = b->instrument[j];
      b->instrument[j] = u;
    }
  }
}


/* Powers of ten that doubles hold exactly. */
static const double k_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The common number: [-]digits[.digits] with at most 7 digits each side, ending at the delimiter or
 * the line's end (le). Returns 1 with the digits as an integer *w and their count after the point
 * *frac (the value is w / 10^frac: Clinger's fast path, exact over exact, rounds correctly), and *pp
 * at the field end; 0 leaves the field to the general parser. Reads up to 24 bytes ahead, so only
 * where end - p >= 24. */
static inline int quick_number(const char **pp, const char *le, char delim, int64_t *mant, int *fracp) {
  static const uint64_t k_p10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
  const char *p = *pp;
  int neg = *p == '-';
  p += neg;
  uint64_t w, f;
  int n = tg_csv_digit_run(p, &w), frac = 0;
  if (n == 8) return 0;
  p += n;
  if (*p == '.') {
    frac = tg_csv_digit_run(++p, &f);
    if (frac == 8) return 0;
    w = w * k_p10[frac] + f;
    p += frac;
    n += frac;
  }
  if (n == 0 || (p < le && *p != delim) || (neg && w == 0)) return 0; /* "-0" is -0.0: the general parser */
  *mant = neg ? -(int64_t)w : (int64_t)w;
  *fracp = frac;
  *pp = p;
  return 1;
}

/* An extra column's field at p as a number into *v (NaN when missing; "inf" is infinite); returns where the field
 * ends, or NULL when it is text. */
static inline const char *extra_number(const char *p, const char *le, const char *end, char delim, char altdec,
                                       double *v) {
  int64_t mant;
  int frac;
  if (end - p >= 24 && quick_number(&p, le, delim, &mant, &frac)) {
    *v = (double)mant / k_pow10[frac];
    return p;
  }
  tg_csv_field f;
  int more;
  p = tg_csv_field_next(p, le, delim, &f, &more);
  if (more) p--;
  switch (tg_csv_number_parse(f.p, f.e, altdec, v)) {
    case TG_CSV_NUM_OK: return p;
    case TG_CSV_NUM_NULL: *v = NAN; return p;
    case TG_CSV_NUM_INF: *v = f.p < f.e && *f.p == '-' ? -INFINITY : INFINITY; return p;
    default: return NULL;
  }
}

typedef struct row_vals {
  double val[TG_CSV_ROLES];
  int64_t ts, tod;
  tg_csv_field inst; /* the instrument field */
  int absolute;
  int bad_kind;
  int64_t bad_col;
  tg_csv_field bad_f;
} row_vals;

/* One mapped field through the general parsers. */
static void take_field(csv_ctx *c, unsigned m, int64_t col, const tg_csv_field *f, row_vals *rv) {
  int kind = BAD_NONE;
  if (f->bad) {
    kind = BAD_QUOTE;
  } else {
    if ((m & (1u << TG_CSV_TS)) && !tg_csv_time_parse_cached(&c->fmt, &c->days, f->p, f->e, &rv->ts, &rv->absolute))
      kind = BAD_TIME;
    if ((m & (1u << TG_CSV_TOD)) && !tg_csv_tod_parse(f->p, f->e, &rv->tod)) kind = BAD_TOD;
    if (m & (1u << TG_CSV_INSTRUMENT)) rv->inst = *f;
    if (m & VALUE_BITS) {
      double v = 0;
      tg_csv_num r = tg_csv_number_parse(f->p, f->e, c->lay.altdec, &v);
      if (r == TG_CSV_NUM_OK) {
        double s = v * c->scale;
        if ((m & PRICE_BITS) && !isfinite(s)) r = TG_CSV_NUM_INF;
        for (int role = TG_CSV_OPEN; role <= TG_CSV_VOLUME; role++)
          if (m & (1u << role)) rv->val[role] = role == TG_CSV_VOLUME ? v : s;
      }
      if (r == TG_CSV_NUM_BAD) {
        kind = BAD_NUMBER;
      } else if (r != TG_CSV_NUM_OK) {
        if (c->opts->nulls == TG_NULLS_NAN || (!(m & PRICE_BITS) && r == TG_CSV_NUM_NULL)) {
          for (int role = TG_CSV_OPEN; role <= TG_CSV_VOLUME; role++)
            if (m & (1u << role)) rv->val[role] = NAN;
        } else {
          kind = r == TG_CSV_NUM_NULL ? BAD_NULL : BAD_INF;
        }
      }
    }
  }
  if (kind != BAD_NONE && rv->bad_kind == BAD_NONE) {
    rv->bad_kind = kind;
    rv->bad_col = col;
    rv->bad_f = *f;
  }
}

/* Delimiters in [p, le), or -1 when a quote makes counting them wrong; eight bytes at a time. */
static inline int64_t count_delims(const char *p, const char *le, char delim) {
  const uint64_t lo7 = 0x7F7F7F7F7F7F7F7FULL, dl = 0x0101010101010101ULL * (unsigned char)delim,
                 qt = 0x0101010101010101ULL * (unsigned char)'"';
  int64_t n = 0;
  uint64_t quotes = 0;
  while (le - p >= 8) {
    uint64_t x, y, z;
    memcpy(&x, p, 8);
    y = x ^ dl;
    z = x ^ qt;
    uint64_t zero = ~(((y & lo7) + lo7) | y | lo7); /* 0x80 in each byte of y that is zero, exactly */
    n += (int64_t)(((zero >> 7) * 0x0101010101010101ULL) >> 56);
    quotes |= ~(((z & lo7) + lo7) | z | lo7);
    p += 8;
  }
  for (; p < le; p++) {
    n += *p == delim;
    quotes |= *p == '"';
  }
  return quotes ? -1 : n;
}

/* The row loop: every line from data to end. Extra columns get their numbers, or are marked as text at the first
 * value that is not one (tg_csv_extras_finish reads them then). *newest_first: the times mostly run down. */
static tg_status parse_rows(csv_ctx *c, const char *data, const char *end, int64_t no, tg_bars *out, int *newest_first) {
  const char delim = c->lay.delim;
  const int64_t ncols = c->lay.ncols;
  const unsigned char *mask = c->mask;
  const double scale = c->scale;
  const int check_scaled = !(scale <= 1.0);
  const int has_volume = c->map.col[TG_CSV_VOLUME] >= 0, has_inst = c->map.col[TG_CSV_INSTRUMENT] >= 0;
  const int32_t *xof = c->x.of;
  int64_t last_col = 0; /* the last column read: after it, fields are only counted */
  for (int r = 0; r < TG_CSV_ROLES; r++)
    if (c->map.col[r] > last_col) last_col = c->map.col[r];
  for (int k = 0; k < c->x.n; k++)
    if (c->x.col[k] > last_col) last_col = c->x.col[k];
  const int64_t start_n = out->n;
  int64_t asc = 0, desc = 0;
  const char *pos = data;
  while (pos < end) {
    tg_csv_line ln;
    tg_status st = tg_csv_line_read(c->path, pos, end, no++, &ln);
    if (st != TG_OK) return st;
    pos = ln.next;
    if (ln.p == ln.e || ((*ln.p == ' ' || *ln.p == '\t') && tg_csv_blank(ln.p, ln.e))) continue;

    row_vals rv;
    rv.val[TG_CSV_VOLUME] = NAN;
    rv.ts = rv.tod = 0;
    rv.absolute = 0;
    rv.bad_kind = BAD_NONE;
    rv.bad_col = -1;
    rv.inst = (tg_csv_field){ln.p, ln.p, 0};
    if (out->n == out->cap) { /* the estimate fell short: the rest at the line length seen so far */
      double per_row = (double)(pos - data) / (double)(out->n - start_n + 1);
      int64_t more = (int64_t)((double)(end - pos) / (per_row > 1 ? per_row : 1) * 1.05) + 1024;
      if ((st = tg_bars_reserve(out, out->n + more, 0)) != TG_OK) return st;
    }
    const char *p = ln.p, *le = ln.e;
    int64_t col = 0;
    for (;;) {
      unsigned m = col < ncols ? mask[col] : 0;
      int64_t mant;
      int frac;
      int32_t xi;
      if (m == 0 && xof && col < ncols && (xi = xof[col]) >= 0 && !c->x.text[xi]) {
        double v;
        const char *q = extra_number(p, le, end, delim, c->lay.altdec, &v);
        if (q) {
          out->cols[c->x.out[xi]].values[out->n] = v;
          p = q;
        } else {
          c->x.text[xi] = 1; /* text: skipped from here on, read by tg_csv_extras_finish */
          tg_csv_field f;
          int more;
          p = tg_csv_field_next(p, le, delim, &f, &more);
          if (more) p--;
        }
      } else if (m == 0) {
        if (col > last_col) { /* the rest of the line only counts */
          int64_t k = count_delims(p, le, delim);
          if (k >= 0) {
            col += k + 1;
            break;
          }
        }
        if (p < le && *p != '"' && *p != ' ' && *p != '\t') {
          while (p < le && *p != delim) p++;
        } else {
          tg_csv_field f;
          int more;
          p = tg_csv_field_next(p, le, delim, &f, &more);
          if (more) p--; /* back onto the delimiter */
        }
      } else if ((m & ~VALUE_BITS) == 0 && end - p >= 24 && quick_number(&p, le, delim, &mant, &frac)) {
        double v = (double)mant / k_pow10[frac], s = v * scale;
        if (check_scaled && (m & PRICE_BITS) && !isfinite(s) && rv.bad_kind == BAD_NONE) {
          rv.bad_kind = BAD_INF;
          rv.bad_col = col;
          rv.bad_f = (tg_csv_field){p, p, 0};
        }
        for (unsigned b = m; b; b &= b - 1) {
          int role = __builtin_ctz(b);
          rv.val[role] = role == TG_CSV_VOLUME ? v : s;
        }
      } else {
        tg_csv_field f;
        int more;
        p = tg_csv_field_next(p, le, delim, &f, &more);
        take_field(c, m, col, &f, &rv);
        if (more) p--;
      }
      col++;
      if (p >= le) break;
      p++; /* over the delimiter */
    }
    if (col != ncols)
      return tg_error(TG_ERR_FORMAT, "%s: line %lld: %lld fields, expected %lld like the %s (split at %s)", c->path,
                      (long long)ln.no, (long long)col, (long long)ncols, c->lay.has_header ? "header" : "other rows",
                      tg_csv_delim_desc(delim));
    if (rv.bad_kind != BAD_NONE) {
      if (rv.bad_kind == BAD_INF && rv.bad_f.p == rv.bad_f.e) { /* from the quick path: find the text again */
        const char *q = ln.p;
        int more = 1;
        for (int64_t k = 0; k <= rv.bad_col && more; k++) q = tg_csv_field_next(q, le, delim, &rv.bad_f, &more);
      }
      return row_error(c, ln.no, rv.bad_col, rv.bad_kind, &rv.bad_f);
    }

    uint32_t inst = 0;
    if (has_inst && (st = tg_csv_instrument_id(&c->ids, c->path, ln.no, rv.inst.p, rv.inst.e, &inst)) != TG_OK)
      return st;
    int64_t ts = rv.ts + rv.tod;
    if (!rv.absolute && c->tz) {
      int64_t sec = tg_floor_div(ts, TG_NS_PER_S), u;
      if ((st = tg_tz_local_to_utc_memo(c->tz, &c->tz_memo, sec, &u)) != TG_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        return tg_error(st, "%s: line %lld: %s", c->path, (long long)ln.no, msg);
      }
      ts = u * TG_NS_PER_S + (ts - sec * TG_NS_PER_S);
    }
    int64_t i = out->n++;
    if (i > start_n) {
      asc += ts > out->ts[i - 1];
      desc += ts < out->ts[i - 1];
    }
    out->ts[i] = ts;
    out->open[i] = rv.val[TG_CSV_OPEN];
    out->high[i] = rv.val[TG_CSV_HIGH];
    out->low[i] = rv.val[TG_CSV_LOW];
    out->close[i] = rv.val[TG_CSV_CLOSE];
    out->volume[i] = has_volume ? rv.val[TG_CSV_VOLUME] : NAN;
    if (out->instrument) out->instrument[i] = inst;
  }
  if (out->n == start_n)
    return tg_error(TG_ERR_FORMAT, "%s: no data rows after line %lld (the %s)", c->path, (long long)c->lay.first_no,
                    c->lay.has_header ? "header" : "first row");
  *newest_first = desc > asc;
  return TG_OK;
}

/* Newest first: reverses the times of bars [from, b->n), keeping the file's order among rows of one time. */
static void reverse_newest_first(tg_bars *b, int64_t from) {
  reverse_range(b, from, b->n);
  for (int64_t i = from, j; i < b->n; i = j) {
    for (j = i + 1; j < b->n && b->ts[j] == b->ts[i];) j++;
    if (j - i > 1) reverse_range(b, i, j);
  }
}

/* Conventions: a missing volume column gives NaN volumes (not 0, which would be a real volume), as
 * do empty or NaN volume cells; empty, NaN or infinite prices are an error unless opts->nulls is
 * TG_NULLS_NAN (then NaN). An instrument column fills out->instrument (csv_instrument.c). A
 * newest-first file is reversed by time, so only rows that are really out of order reach the
 * reader's reorder warning. On error out is left as it was (no instrument column added). */
tg_status tg_csv_parse(const char *path, const void *bytes, size_t len, const tg_read_opts *opts, tg_bars *out) {
  return tg_csv_parse_numbered(path, bytes, len, opts, 0, out);
}

tg_status tg_csv_parse_numbered(const char *path, const void *bytes, size_t len, const tg_read_opts *opts,
                                int64_t row_no, tg_bars *out) {
  tg_read_opts defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!opts) opts = &defaults;
  if (!path) path = "(csv)";
  if (!out) return tg_error(TG_ERR_INVALID, "%s: csv: no output bars", path);
  if (!bytes && len) return tg_error(TG_ERR_INVALID, "%s: csv: no bytes", path);
  if (!(opts->price_scale >= 0) || isinf(opts->price_scale))
    return tg_error(TG_ERR_INVALID, "%s: price scale %g is not a finite number >= 0", path, opts->price_scale);
  const char *buf = bytes ? bytes : "", *end = buf + len;

  csv_ctx c;
  memset(&c, 0, sizeof c);
  c.path = path;
  c.opts = opts;
  c.scale = opts->price_scale == 0 ? 1.0 : opts->price_scale;
  c.data_no = row_no;
  const int64_t n0 = out->n;
  const int had_inst = out->instrument != NULL;
  c.x.cols0 = out->n_cols;
  c.tz = tg_tz_is_utc(opts->tz) ? NULL : opts->tz;
  tg_status st = tg_tz_check(c.tz);
  if (st != TG_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", tg_last_error());
    return tg_error(st, "%s: %s", path, msg);
  }
  if ((st = tg_csv_sniff(path, buf, end, &c.lay)) != TG_OK) return st;
  int64_t ncols = c.lay.ncols;
  c.mask = ncols <= SMALL_COLS ? c.small_mask : tg_calloc((size_t)ncols, 1);
  if (!c.mask) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld columns", path, (long long)ncols);
  if (ncols <= SMALL_COLS) memset(c.small_mask, 0, sizeof c.small_mask);

  tg_csv_field *ts_samples = NULL, *tod_samples = NULL;
  if (c.lay.has_header) {
    c.header = tg_malloc((size_t)ncols * sizeof *c.header);
    if (!c.header) {
      st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld header names", path, (long long)ncols);
      goto done;
    }
    tg_csv_line ln;
    if ((st = tg_csv_line_read(path, c.lay.first, end, c.lay.first_no, &ln)) != TG_OK) goto done;
    const char *p = ln.p;
    int more = 1;
    for (int64_t i = 0; i < ncols; i++) {
      if (more) p = tg_csv_field_next(p, ln.e, c.lay.delim, &c.header[i], &more);
      else c.header[i] = (tg_csv_field){ln.e, ln.e, 0};
    }
    if (more || tg_csv_field_count(ln.p, ln.e, c.lay.delim) != ncols) {
      st = tg_error(TG_ERR_FORMAT, "%s: line %lld: the header has %lld fields but the rows have %lld (split at %s)",
                    path, (long long)ln.no, (long long)tg_csv_field_count(ln.p, ln.e, c.lay.delim), (long long)ncols,
                    tg_csv_delim_desc(c.lay.delim));
      goto done;
    }
  }
  if ((st = tg_csv_columns_map(path, c.lay.first_no, c.header, ncols, opts->columns, &c.map)) != TG_OK) goto done;
  if ((st = tg_csv_extras_setup(path, c.lay.first_no, c.header, ncols, &c.map, out, &c.x)) != TG_OK) goto done;

  const char *data;
  int64_t data_no;
  int count;
  ts_samples = tg_malloc(2 * TG_CSV_SAMPLE_LINES * sizeof *ts_samples);
  if (!ts_samples) {
    st = tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
    goto done;
  }
  tod_samples = ts_samples + TG_CSV_SAMPLE_LINES;
  if ((st = sample_times(&c, end, &data, &data_no, ts_samples, tod_samples, &count)) != TG_OK) goto done;
  if (count == 0) {
    st = tg_error(TG_ERR_FORMAT, "%s: no data rows after the header on line %lld", path, (long long)c.lay.first_no);
    goto done;
  }
  if ((st = setup_time(&c, ts_samples, tod_samples, count)) != TG_OK) goto done;
  for (int r = 0; r < TG_CSV_ROLES; r++)
    if (c.map.col[r] >= 0) c.mask[c.map.col[r]] |= (unsigned char)(1u << r);

  /* room for the rows the sample's line length predicts, a little over */
  double est = (double)(end - data) / (c.lay.bytes_per_line > 1 ? c.lay.bytes_per_line : 1) * 1.02 + 16;
  double most = (double)(end - data) / 4 + 16;
  if (est > most) est = most;
  int with_inst = c.map.col[TG_CSV_INSTRUMENT] >= 0;
  if ((st = tg_bars_reserve(out, out->n + (int64_t)est, with_inst)) != TG_OK) goto done;

  int newest_first = 0;
  st = parse_rows(&c, data, end, data_no, out, &newest_first);
  if (st == TG_OK) st = tg_csv_extras_finish(path, &c.lay, data, end, data_no, n0, out, &c.x);
  if (st == TG_OK && newest_first) reverse_newest_first(out, n0);
  if (st == TG_OK && newest_first && n0 == 0) out->newest_first = 1;
done:
  if (st != TG_OK) { /* nothing half-read stays behind, nor an instrument or extra column this call added */
    tg_csv_extras_undo(out, &c.x);
    out->n = n0;
    if (!had_inst && out->instrument) {
      tg_free(out->instrument);
      out->instrument = NULL;
    }
  }
  tg_csv_ids_free(&c.ids);
  tg_csv_extras_free(&c.x);
  tg_free(ts_samples);
  tg_free(c.header);
  if (c.mask != c.small_mask) tg_free(c.mask);
  return st;
}
