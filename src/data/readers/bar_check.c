/* The bar checks every command's read makes: duplicate times, OHLC consistency, volume, prices a log return can use;
 * a vectorised pass over blocks of rows, the rows of a failing block checked one by one for the message. */
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

/* 1 when no two bars share a key without sorting: the times rise strictly, or (several instruments) the (instrument,
 * time) or (time, instrument) pairs do, as files sorted either way have them. */
static int keys_rise(const tg_bars *b) {
  const int64_t *ts = b->ts;
  const uint32_t *in = b->instrument;
  int64_t n = b->n, falls = 0;
  for (int64_t i = 1; i < n; i++) falls += ts[i] <= ts[i - 1];
  if (!falls) return 1;
  if (!in) return 0;
  int64_t by_inst = 0, by_time = 0;
  for (int64_t i = 1; i < n; i++) {
    by_inst += in[i] < in[i - 1] || (in[i] == in[i - 1] && ts[i] <= ts[i - 1]);
    by_time += ts[i] < ts[i - 1] || (ts[i] == ts[i - 1] && in[i] <= in[i - 1]);
  }
  return !by_inst || !by_time;
}

static tg_status check_duplicates(const tg_bars *b, const where *src) {
  if (b->n < 2 || keys_rise(b)) return TG_OK;
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

/* Nonzero when row i fails check_row (its prices, volume and OHLC order), without branches. NaN fails every
 * comparison: it is outside no range and breaks no order, so it is tested apart, bad unless NaN prices are allowed. */
static inline int64_t row_bad(const tg_bars *b, int64_t i, int64_t nan_bad, int64_t ohlc_bad) {
  const double lo = FLT_MIN, hi = FLT_MAX, op = b->open[i], hp = b->high[i], lp = b->low[i], cp = b->close[i];
  int64_t outside = (op < lo) | (op > hi) | (hp < lo) | (hp > hi) | (lp < lo) | (lp > hi) | (cp < lo) | (cp > hi) |
                    (b->volume[i] < 0);
  int64_t nan = (op != op) | (hp != hp) | (lp != lp) | (cp != cp);
  int64_t disorder = (hp < op) | (hp < cp) | (lp > op) | (lp > cp) | (hp < lp);
  return outside | (nan & nan_bad) | (disorder & ohlc_bad);
}

#if defined(__GNUC__)
/* Two rows at a time in GNU C vectors of the baseline's width (the auto-vectoriser leaves comparisons that make
 * integers alone). */
typedef double rows_d2 __attribute__((vector_size(16)));
typedef int64_t rows_i2 __attribute__((vector_size(16)));
typedef struct rows2 {
  rows_d2 op, hp, lp, cp, vol; /* open, high, low, close, volume of rows i and i + 1 */
} rows2;

static inline rows2 load_rows2(const tg_bars *b, int64_t i) {
  rows2 r;
  memcpy(&r.op, b->open + i, sizeof r.op);
  memcpy(&r.hp, b->high + i, sizeof r.hp);
  memcpy(&r.lp, b->low + i, sizeof r.lp);
  memcpy(&r.cp, b->close + i, sizeof r.cp);
  memcpy(&r.vol, b->volume + i, sizeof r.vol);
  return r;
}
#endif

/* 1 when every row of [from, to) passes check_row: one pass that tests, and does not name. With the OHLC order checked
 * it is low <= open, close <= high and the low and the high in range (the rest follows; a NaN fails it, and the
 * rows of its block are then checked one by one); without, the row_bad tests two rows at a time. */
static int rows_pass(const tg_bars *b, int64_t from, int64_t to, int nan_ok, int ohlc_ok) {
  const int64_t nan_bad = nan_ok ? 0 : -1, ohlc_bad = ohlc_ok ? 0 : -1;
  int64_t i = from, bad = 0;
#if defined(__GNUC__)
  const rows_d2 lo = {FLT_MIN, FLT_MIN}, hi = {FLT_MAX, FLT_MAX}, zero = {0};
  const rows_i2 nan_mask = {nan_bad, nan_bad}, ohlc_mask = {ohlc_bad, ohlc_bad};
  rows_i2 any = {0};
  if (ohlc_bad) {
    for (; i + 2 <= to; i += 2) {
      rows2 r = load_rows2(b, i);
      rows_d2 op = r.op, hp = r.hp, lp = r.lp, cp = r.cp, vol = r.vol;
      rows_i2 ok = (hp >= op) & (hp >= cp) & (lp <= op) & (lp <= cp) & (lp >= lo) & (hp <= hi);
      any |= ~ok | (vol < zero);
    }
  }
  for (; i + 2 <= to; i += 2) {
    rows2 r = load_rows2(b, i);
    rows_d2 op = r.op, hp = r.hp, lp = r.lp, cp = r.cp, vol = r.vol;
    rows_i2 outside = (op < lo) | (op > hi) | (hp < lo) | (hp > hi) | (lp < lo) | (lp > hi) | (cp < lo) | (cp > hi) |
                      (vol < zero);
    rows_i2 nan = (op != op) | (hp != hp) | (lp != lp) | (cp != cp);
    rows_i2 disorder = (hp < op) | (hp < cp) | (lp > op) | (lp > cp) | (hp < lp);
    any |= outside | (nan & nan_mask) | (disorder & ohlc_mask);
  }
  bad = any[0] | any[1];
#endif
  for (; i < to; i++) bad |= row_bad(b, i, nan_bad, ohlc_bad);
  return bad == 0;
}

static tg_status check_all(const tg_bars *b, const tg_read_opts *opts, const where *wh) {
  enum { BLOCK = 4096 }; /* rows passed at once; a block with a bad row is checked row by row for the message */
  const int nan_ok = opts->nulls == TG_NULLS_NAN, ohlc_ok = opts->allow_ohlc != 0;
  for (int64_t from = 0; from < b->n; from += BLOCK) {
    int64_t to = b->n - from < BLOCK ? b->n : from + BLOCK;
    if (rows_pass(b, from, to, nan_ok, ohlc_ok)) continue;
    for (int64_t i = from; i < to; i++) {
      tg_status st = check_row(b, i, opts, wh);
      if (st != TG_OK) return st;
    }
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
