/* CSV tick files: a header naming the columns, then trades (ts, price, size[, side][, flags]) or quotes (ts, bid, ask,
 * bid_size, ask_size), times in any format the bar reader knows, streamed line by line. */
#include <string.h>
#include <strings.h>
#include "base/alloc.h"
#include "base/intmath.h"
#include "data/readers/csv/csv_internal.h"
#include "data/readers/ticks/csv_lines.h"
#include "data/readers/ticks/source_internal.h"
#include "data/readers/timeconv.h"

#define N_FIELDS 5

/* Column names by role, per kind; the first name of each role is what messages call it. */
static const char *const k_trade_names[N_FIELDS][6] = {
    {"ts", "time", "timestamp", "datetime", "ts_event", "date"},
    {"price", "px", "trade_price"},
    {"size", "qty", "quantity", "volume", "amount"},
    {"side", "aggressor", "aggressor_side"},
    {"flags", "condition"}};
static const char *const k_quote_names[N_FIELDS][6] = {
    {"ts", "time", "timestamp", "datetime", "ts_event", "date"},
    {"bid", "bid_price", "bid_px", "bid_px_00"},
    {"ask", "ask_price", "ask_px", "ask_px_00"},
    {"bid_size", "bid_sz", "bidsize", "bid_qty", "bid_sz_00"},
    {"ask_size", "ask_sz", "asksize", "ask_qty", "ask_sz_00"}};

typedef struct csv_impl {
  tg_line_reader lr;
  int64_t col[N_FIELDS]; /* file column of each role, -1 when absent */
  int64_t ncols;
  tg_csv_timefmt fmt;
  int have_fmt;
  tg_csv_day_cache day;
  tg_tz_memo memo;
} csv_impl;

static int name_is(const tg_csv_field *f, const char *name) {
  size_t n = strlen(name);
  return (size_t)(f->e - f->p) == n && strncasecmp(f->p, name, n) == 0;
}

static int role_of(const tg_csv_field *f, tg_tick_kind kind) {
  const char *const(*names)[6] = kind == TG_TICK_TRADES ? k_trade_names : k_quote_names;
  for (int r = 0; r < N_FIELDS; r++)
    for (int i = 0; i < 6 && names[r][i]; i++)
      if (name_is(f, names[r][i])) return r;
  return -1;
}

/* Maps the header's columns to roles; the optional ones (a trade's side and flags) may be missing. */
static tg_status map_header(tg_tick_source *s, csv_impl *c, const char *p, const char *e) {
  for (int r = 0; r < N_FIELDS; r++) c->col[r] = -1;
  int more = 1;
  for (c->ncols = 0; more; c->ncols++) {
    tg_csv_field f;
    p = tg_csv_field_next(p, e, ',', &f, &more);
    int r = role_of(&f, s->kind);
    if (r >= 0 && c->col[r] < 0) c->col[r] = c->ncols;
  }
  const char *const(*names)[6] = s->kind == TG_TICK_TRADES ? k_trade_names : k_quote_names;
  int need = s->kind == TG_TICK_TRADES ? 3 : N_FIELDS;
  for (int r = 0; r < need; r++)
    if (c->col[r] < 0)
      return tg_error(TG_ERR_FORMAT, "%s: line %lld: the header has no %s column (a %s file needs columns named %s)",
                      s->name, (long long)c->lr.no, names[r][0], s->kind == TG_TICK_TRADES ? "trades" : "quotes",
                      s->kind == TG_TICK_TRADES ? "ts, price, size [, side, flags]" : "ts, bid, ask, bid_size, "
                                                                                        "ask_size");
  return TG_OK;
}

static tg_status bad_field(const tg_tick_source *s, int64_t line, const char *what, const tg_csv_field *f,
                           const char *want) {
  char q[64];
  return tg_error(TG_ERR_FORMAT, "%s: line %lld: %s '%s' %s", s->name, (long long)line, what,
                  tg_csv_quote(f->p, f->e, q, sizeof q), want);
}

/* The time of field f in ns UTC: the format settled by the first row, naive times read in the source's zone. */
static tg_status parse_time(tg_tick_source *s, csv_impl *c, const tg_csv_field *f, int64_t *ns) {
  if (!c->have_fmt && !tg_csv_time_detect(f, 1, INT64_MIN, &c->fmt))
    return bad_field(s, c->lr.no, "time", f, "is not a time in a format the CSV reader knows");
  c->have_fmt = 1;
  int absolute = 0;
  if (!tg_csv_time_parse_cached(&c->fmt, &c->day, f->p, f->e, ns, &absolute))
    return bad_field(s, c->lr.no, "time", f, "is not a time like the first row's");
  if (absolute || tg_tz_is_utc(s->tz)) return TG_OK;
  int64_t sec = tg_floor_div(*ns, TG_NS_PER_S), frac = *ns - sec * TG_NS_PER_S, utc;
  tg_status st = tg_tz_local_to_utc_memo(s->tz, &c->memo, sec, &utc);
  if (st != TG_OK) return st;
  *ns = utc * TG_NS_PER_S + frac;
  return TG_OK;
}

static tg_status parse_number(const tg_tick_source *s, int64_t line, const char *what, const tg_csv_field *f,
                              double *v) {
  if (tg_csv_number_parse(f->p, f->e, 0, v) != TG_CSV_NUM_OK) return bad_field(s, line, what, f, "is not a number");
  return TG_OK;
}

/* A side: buy, b, bid, 1 / sell, s, a, ask, -1 (Databento's A and B name the aggressor's side of the book) / empty,
 * n, none, unknown, 0. */
static tg_status parse_side(const tg_tick_source *s, int64_t line, const tg_csv_field *f, int8_t *side) {
  static const char *const buy[] = {"buy", "b", "bid", "1", "+1"}, *const sell[] = {"sell", "s", "a", "ask", "-1"},
                           *const none[] = {"", "n", "none", "unknown", "0"};
  for (int i = 0; i < 5; i++) {
    if (name_is(f, buy[i])) return *side = TG_SIDE_BUY, TG_OK;
    if (name_is(f, sell[i])) return *side = TG_SIDE_SELL, TG_OK;
    if (name_is(f, none[i])) return *side = TG_SIDE_UNKNOWN, TG_OK;
  }
  return bad_field(s, line, "side", f, "is not a side (buy, sell, B, A, N or empty)");
}

/* Flags: empty or 0, suspicious, cancelled (canceled), or both joined by '|'; or the number 0-3. */
static tg_status parse_flags(const tg_tick_source *s, int64_t line, const tg_csv_field *f, uint8_t *flags) {
  *flags = 0;
  const char *p = f->p;
  while (p < f->e) {
    const char *q = memchr(p, '|', (size_t)(f->e - p));
    tg_csv_field w = {p, q ? q : f->e, 0};
    if (name_is(&w, "suspicious")) *flags |= TG_TRADE_SUSPICIOUS;
    else if (name_is(&w, "cancelled") || name_is(&w, "canceled")) *flags |= TG_TRADE_CANCELLED;
    else if (w.e - w.p == 1 && *w.p >= '0' && *w.p <= '3') *flags |= (uint8_t)(*w.p - '0');
    else return bad_field(s, line, "flags", f, "is not suspicious, cancelled, both joined by '|', or 0-3");
    p = q ? q + 1 : f->e;
  }
  return TG_OK;
}

/* Splits a data line into fields by role (fields [N_FIELDS], absent roles empty). */
static tg_status split(const tg_tick_source *s, const csv_impl *c, const char *p, const char *e, tg_csv_field *fields) {
  int more = 1;
  int64_t i = 0;
  for (int r = 0; r < N_FIELDS; r++) fields[r] = (tg_csv_field){e, e, 0};
  for (; more; i++) {
    tg_csv_field f;
    p = tg_csv_field_next(p, e, ',', &f, &more);
    for (int r = 0; r < N_FIELDS; r++)
      if (c->col[r] == i) fields[r] = f;
    if (f.bad) return bad_field(s, c->lr.no, "field", &f, "has a quote not closed");
  }
  if (i != c->ncols)
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: %lld fields where the header has %lld", s->name,
                    (long long)c->lr.no, (long long)i, (long long)c->ncols);
  return TG_OK;
}

static tg_status parse_trade(tg_tick_source *s, csv_impl *c, const tg_csv_field *f, tg_trade *t) {
  int64_t no = c->lr.no;
  *t = (tg_trade){.line = no};
  tg_status st = parse_time(s, c, &f[0], &t->ts);
  if (st == TG_OK) st = parse_number(s, no, "price", &f[1], &t->price);
  if (st == TG_OK) st = parse_number(s, no, "size", &f[2], &t->size);
  if (st == TG_OK && c->col[3] >= 0) st = parse_side(s, no, &f[3], &t->side);
  if (st == TG_OK && c->col[4] >= 0) st = parse_flags(s, no, &f[4], &t->flags);
  return st;
}

static tg_status parse_quote(tg_tick_source *s, csv_impl *c, const tg_csv_field *f, tg_quote *q) {
  int64_t no = c->lr.no;
  *q = (tg_quote){.line = no};
  tg_status st = parse_time(s, c, &f[0], &q->ts);
  if (st == TG_OK) st = parse_number(s, no, "bid", &f[1], &q->bid);
  if (st == TG_OK) st = parse_number(s, no, "ask", &f[2], &q->ask);
  if (st == TG_OK) st = parse_number(s, no, "bid_size", &f[3], &q->bid_size);
  if (st == TG_OK) st = parse_number(s, no, "ask_size", &f[4], &q->ask_size);
  return st;
}

static tg_status csv_fill(tg_tick_source *s, void *buf, int64_t cap, int64_t *n) {
  csv_impl *c = s->impl;
  *n = 0;
  while (*n < cap) {
    const char *p, *e;
    int got;
    tg_status st = tg_line_next(&c->lr, &p, &e, &got);
    if (st != TG_OK) return st;
    if (!got) return TG_OK;
    if (tg_csv_blank(p, e)) continue;
    tg_csv_field f[N_FIELDS];
    if ((st = split(s, c, p, e, f)) != TG_OK) return st;
    if (s->kind == TG_TICK_TRADES) st = parse_trade(s, c, f, (tg_trade *)buf + *n);
    else st = parse_quote(s, c, f, (tg_quote *)buf + *n);
    if (st != TG_OK) return st;
    (*n)++;
  }
  return TG_OK;
}

static void csv_close(tg_tick_source *s) {
  csv_impl *c = s->impl;
  tg_line_reader_free(&c->lr);
  tg_free(c);
}

/* Reads up to the header (blank lines and a byte-order mark before it are skipped) and maps it. */
static tg_status read_header(tg_tick_source *s, csv_impl *c) {
  const char *p, *e;
  int got;
  do {
    tg_status st = tg_line_next(&c->lr, &p, &e, &got);
    if (st != TG_OK) return st;
    if (!got) return tg_error(TG_ERR_FORMAT, "%s: empty: a tick file needs a header line", s->name);
    if (c->lr.no == 1 && e - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
  } while (tg_csv_blank(p, e));
  return map_header(s, c, p, e);
}

tg_status tg_tick_csv_open(tg_tick_source *s, FILE *f) {
  if (!tg_tz_is_utc(s->tz) && tg_tz_check(s->tz) != TG_OK) return TG_ERR_INVALID;
  csv_impl *c = tg_calloc(1, sizeof *c);
  if (!c) return tg_error(TG_ERR_NOMEM, "%s: out of memory", s->name);
  tg_status st = tg_line_reader_init(&c->lr, f, s->name);
  if (st == TG_OK) st = read_header(s, c);
  if (st != TG_OK) {
    c->lr.f = NULL; /* the caller closes it */
    tg_line_reader_free(&c->lr);
    tg_free(c);
    return st;
  }
  s->unit = "line";
  snprintf(s->format, sizeof s->format, "csv");
  s->impl = c;
  s->fill = csv_fill;
  s->close = csv_close;
  return TG_OK;
}
