/* The bar checks every command's read makes: duplicate times, OHLC consistency, volume, prices a log return can use. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "data/readers/bar_check.h"
#include "tickgrad/data.h"

/* What a check names: the source, and the line of a streamed row (0: count the file's rows from 1). */
typedef struct where {
  const char *src;
  int64_t line;
} where;

/* "SRC row R (ts T)" (or "SRC line L (ts T)") of bar i into buf. */
static const char *where_of(const tg_bars *b, int64_t i, const where *wh, char *buf, size_t n) {
  char t[48];
  int64_t row = wh->line ? wh->line + i : b->newest_first ? b->n - i : i + 1;
  snprintf(buf, n, "%s: %s %lld (%s", wh->src, wh->line ? "line" : "row", (long long)row,
           tg_format_time(b->ts[i], t, sizeof t));
  size_t k = strlen(buf);
  if (b->instrument) snprintf(buf + k, n - k, ", instrument %u)", b->instrument[i]);
  else snprintf(buf + k, n - k, ")");
  return buf;
}

static tg_status check_price(const tg_bars *b, int64_t i, const char *name, double p, const tg_read_opts *o,
                             const where *src) {
  char w[600];
  if (isnan(p)) {
    if (o->nulls == TG_NULLS_NAN) return TG_OK;
    return tg_error(TG_ERR_FORMAT, "%s: %s is NaN (give --nulls nan to read missing prices as NaN)",
                    where_of(b, i, src, w, sizeof w), name);
  }
  if (p >= FLT_MIN && p <= FLT_MAX) return TG_OK;
  return tg_error(TG_ERR_FORMAT, "%s: %s is %.17g; a price must be a positive number in [%g, %g] so that its log return "
                  "is finite", where_of(b, i, src, w, sizeof w), name, p, (double)FLT_MIN, (double)FLT_MAX);
}

static tg_status check_row(const tg_bars *b, int64_t i, const tg_read_opts *o, const where *src) {
  static const char *const names[4] = {"open", "high", "low", "close"};
  double px[4] = {b->open[i], b->high[i], b->low[i], b->close[i]};
  char w[600];
  for (int k = 0; k < 4; k++) {
    tg_status st = check_price(b, i, names[k], px[k], o, src);
    if (st != TG_OK) return st;
  }
  if (b->volume[i] < 0)
    return tg_error(TG_ERR_FORMAT, "%s: volume is %g; a volume must not be negative", where_of(b, i, src, w, sizeof w),
                    b->volume[i]);
  double o_ = px[0], h = px[1], l = px[2], c = px[3];
  if (!o->allow_ohlc && (h < o_ || h < c || l > o_ || l > c || h < l))
    return tg_error(TG_ERR_FORMAT, "%s: open %g, high %g, low %g, close %g: the high must be >= open, close and low, and "
                    "the low <= open and close (give --allow-ohlc 1 to let such bars through)",
                    where_of(b, i, src, w, sizeof w), o_, h, l, c);
  return TG_OK;
}

/* Sort keys: (instrument, ts, row). */
typedef struct dup_key {
  uint32_t instrument;
  int64_t ts, row;
} dup_key;

static int dup_cmp(const void *pa, const void *pb) {
  const dup_key *a = pa, *b = pb;
  if (a->instrument != b->instrument) return a->instrument < b->instrument ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

static tg_status check_duplicates(const tg_bars *b, const where *src) {
  if (b->n < 2) return TG_OK;
  dup_key *k = tg_malloc((size_t)b->n * sizeof *k);
  if (!k) return tg_error(TG_ERR_NOMEM, "%s: out of memory checking %lld bars", src->src, (long long)b->n);
  for (int64_t i = 0; i < b->n; i++) k[i] = (dup_key){b->instrument ? b->instrument[i] : 0, b->ts[i], i};
  qsort(k, (size_t)b->n, sizeof *k, dup_cmp);
  tg_status st = TG_OK;
  for (int64_t j = 1; j < b->n && st == TG_OK; j++) {
    if (k[j].instrument != k[j - 1].instrument || k[j].ts != k[j - 1].ts) continue;
    char w[600];
    int64_t first = k[j - 1].row, other = src->line ? src->line + k[j].row : b->newest_first ? b->n - k[j].row : k[j].row + 1;
    st = tg_error(TG_ERR_FORMAT, "%s and %s %lld share one timestamp; duplicate times are an error (give --duplicates "
                  "first or last to keep one of them)", where_of(b, first, src, w, sizeof w), src->line ? "line" : "row",
                  (long long)other);
  }
  tg_free(k);
  return st;
}

static tg_status check_all(const tg_bars *b, const tg_read_opts *opts, const where *wh) {
  for (int64_t i = 0; i < b->n; i++) {
    tg_status st = check_row(b, i, opts, wh);
    if (st != TG_OK) return st;
  }
  return opts->duplicates == TG_DUPS_ERROR ? check_duplicates(b, wh) : TG_OK;
}

tg_status tg_bars_check_line(const tg_bars *b, const tg_read_opts *opts, const char *source, int64_t line) {
  tg_read_opts defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!opts) opts = &defaults;
  if (opts->no_checks || !b) return TG_OK;
  where wh = {source && *source ? source : b->source[0] ? b->source : "bars", line};
  return check_all(b, opts, &wh);
}

tg_status tg_bars_check(const tg_bars *b, const tg_read_opts *opts, const char *source) {
  return tg_bars_check_line(b, opts, source, 0);
}
