/* Lean tick zips: what a member's name says, and one CSV row into a trade or a quote (the book kept side by side). */
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include "data/readers/csv/csv_digits.h"
#include "data/readers/csv/csv_internal.h"
#include "data/readers/ticks/lean_internal.h"

#define MAX_FIELDS 8
#define MS_PER_DAY 86400000LL
#define ONES 0x0101010101010101ULL
/* The bytes of x that are 0 have their high bit set; exact up to the first (a borrow may mark bytes after it). */
#define ZERO_BYTES(x) (((x) - ONES) & ~(x) & (ONES << 7))

static const double POW10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
static const uint64_t POW10_INT[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

static int ends_with(const char *s, size_t n, const char *tail) {
  size_t t = strlen(tail);
  return n >= t && strncasecmp(s + n - t, tail, t) == 0;
}

static int digits(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isdigit((unsigned char)p[i])) return 0;
  return 1;
}

tg_status tg_lean_member_parse(const char *path, const char *name, const char *yyyymmdd, tg_lean_member *m) {
  *m = (tg_lean_member){0};
  size_t n = strlen(name);
  int ok = n > 13 && strncmp(name, yyyymmdd, 8) == 0 && name[8] == '_' && ends_with(name, n, ".csv");
  n -= 4;
  if (ok && ends_with(name, n, "_trade_tick")) m->what = TG_LEAN_TRADES;
  else if (ok && ends_with(name, n, "_quote_tick")) m->what = TG_LEAN_QUOTES;
  else if (ok && n > 7 && name[n - 7] == '_' && digits(name + n - 6, 6)) {
    m->futures = 1;
    memcpy(m->contract, name + n - 6, 6);
    n -= 7;
    if (ends_with(name, n, "_tick_trade")) m->what = TG_LEAN_TRADES;
    else if (ends_with(name, n, "_tick_quote")) m->what = TG_LEAN_QUOTES;
    else if (ends_with(name, n, "_tick_openinterest")) m->what = TG_LEAN_OPEN_INTEREST;
    else ok = 0;
  } else ok = 0;
  if (ok) return TG_OK;
  return tg_error(TG_ERR_FORMAT, "%s: member '%s' is not a Lean tick CSV of %.8s (want %.8s_SYMBOL_Trade_Tick.csv, "
                  "_Quote_Tick.csv, or futures' %.8s_SYMBOL_tick_trade_YYYYMM.csv)", path, name, yyyymmdd, yyyymmdd,
                  yyyymmdd);
}

static tg_status bad(const tg_tick_source *s, int64_t line, const char *what, const tg_csv_field *f,
                     const char *want) {
  char q[64];
  return tg_error(TG_ERR_FORMAT, "%s: line %lld: %s '%s' %s", s->name, (long long)line, what,
                  tg_csv_quote(f->p, f->e, q, sizeof q), want);
}

/* The row's time: ms since the zip's local midnight, in ns UTC. */
static tg_status row_time(tg_tick_source *s, tg_lean_impl *L, const tg_csv_field *f, int64_t *ns) {
  size_t n = (size_t)(f->e - f->p);
  int64_t ms = 0;
  if (n == 0 || n > 8 || !digits(f->p, n)) ms = -1;
  for (size_t i = 0; ms >= 0 && i < n; i++) ms = ms * 10 + (f->p[i] - '0');
  if (ms < 0 || ms >= MS_PER_DAY)
    return bad(s, L->lr.no, "time", f, "is not milliseconds since midnight (0 to 86399999)");
  int64_t utc;
  tg_status st = tg_tz_local_to_utc_memo(TG_LEAN_TZ, &L->memo, L->day_s + ms / 1000, &utc);
  *ns = utc * TG_NS_PER_S + (ms % 1000) * 1000000;
  return st;
}

static tg_status number(const tg_tick_source *s, int64_t line, const char *what, const tg_csv_field *f, double *v) {
  if (tg_csv_number_parse(f->p, f->e, 0, v) != TG_CSV_NUM_OK) return bad(s, line, what, f, "is not a number");
  return TG_OK;
}

static tg_status suspicious(const tg_tick_source *s, int64_t line, const tg_csv_field *f, int *flag) {
  if (f->e - f->p == 1 && (*f->p == '0' || *f->p == '1')) return *flag = *f->p == '1', TG_OK;
  return bad(s, line, "suspicious", f, "is not 0 or 1");
}

/* ms,price,size,exchange,condition,suspicious */
static tg_status trade_row(tg_tick_source *s, tg_lean_impl *L, const tg_csv_field *f, tg_trade *t, int *made) {
  int64_t no = L->lr.no;
  int susp = 0;
  *t = (tg_trade){.line = no};
  tg_status st = row_time(s, L, &f[0], &t->ts);
  if (st == TG_OK) st = number(s, no, "price", &f[1], &t->price);
  if (st == TG_OK) st = number(s, no, "size", &f[2], &t->size);
  if (st == TG_OK) st = suspicious(s, no, &f[5], &susp);
  if (st != TG_OK) return st;
  t->price /= L->scale;
  t->flags = susp ? TG_TRADE_SUSPICIOUS : 0;
  *made = t->size != 0; /* Lean's futures files hold prints of size 0: no trade */
  return TG_OK;
}

/* ms,bid,bid_size,ask,ask_size,exchange,condition,suspicious: a row moves one side (the other 0), or both. */
static tg_status quote_row(tg_tick_source *s, tg_lean_impl *L, const tg_csv_field *f, tg_quote *q, int *made) {
  int64_t no = L->lr.no;
  double bid, bsz, ask, asz;
  int susp = 0;
  *q = (tg_quote){.line = no};
  tg_status st = row_time(s, L, &f[0], &q->ts);
  if (st == TG_OK) st = number(s, no, "bid", &f[1], &bid);
  if (st == TG_OK) st = number(s, no, "bid_size", &f[2], &bsz);
  if (st == TG_OK) st = number(s, no, "ask", &f[3], &ask);
  if (st == TG_OK) st = number(s, no, "ask_size", &f[4], &asz);
  if (st == TG_OK) st = suspicious(s, no, &f[7], &susp);
  if (st != TG_OK) return st;
  if (bid < 0) return bad(s, no, "bid", &f[1], "is negative");
  if (ask < 0) return bad(s, no, "ask", &f[3], "is negative");
  if (bid == 0 && ask == 0) return bad(s, no, "bid", &f[1], "and the ask are both 0: the row moves no side");
  if (susp) return *made = 0, TG_OK;
  if (bid > 0) L->bid = bid / L->scale, L->bid_size = bsz;
  if (ask > 0) L->ask = ask / L->scale, L->ask_size = asz;
  *made = L->bid > 0 && L->ask > 0;
  q->bid = L->bid, q->bid_size = L->bid_size, q->ask = L->ask, q->ask_size = L->ask_size;
  return TG_OK;
}

/* The digits at *p, 1 to max of them, as an integer, eight at a time while the line holds eight bytes more; *p moves
 * past them. -1 when there are none or more than max. */
static inline int64_t plain_digits(const char **p, const char *e, int max) {
  const char *s = *p, *q = s;
  uint64_t v = 0, run;
  int n = 8;
  while (n == 8 && e - q >= 8 && q - s <= max) {
    n = tg_csv_digit_run(q, &run);
    v = v * POW10_INT[n] + run;
    q += n;
  }
  while (q < e && q - s <= max && (unsigned)(*q - '0') < 10) v = v * 10 + (uint64_t)(*q++ - '0');
  *p = q;
  return q == s || q - s > max ? -1 : (int64_t)v;
}

/* A plain decimal at *p ending at a comma: digits, optionally '.' and more digits, 15 digits at most in all, so the
 * digits as an integer and the power of ten are both exact doubles and their quotient is the correctly rounded value
 * tg_csv_number_parse gives. *p moves past the comma. 0 for anything else. */
static inline int plain_decimal(const char **p, const char *e, double *v) {
  const char *q = *p;
  int64_t whole = plain_digits(&q, e, 15);
  if (whole < 0 || q == e) return 0;
  int frac = 0;
  if (*q == '.') {
    const char *f = ++q;
    int64_t part = plain_digits(&q, e, 15);
    frac = (int)(q - f);
    if (part < 0 || q == e || (q - *p) - 1 > 15) return 0;
    whole = whole * (int64_t)POW10[frac] + part; /* exact: 15 digits at most */
  }
  if (*q != ',') return 0;
  *v = frac ? (double)whole / POW10[frac] : (double)whole;
  *p = q + 1;
  return 1;
}

/* Moves *p past the field there and its comma; 0 when there is no comma or the field holds a quote or a blank. Eight
 * bytes at a time while the line holds them. */
static inline int skip_field(const char **p, const char *e) {
  const char *q = *p;
  for (; e - q >= 8; q += 8) {
    uint64_t x, special = 0;
    memcpy(&x, q, 8);
    for (const char *c = ",\" \t"; *c; c++) special |= ZERO_BYTES(x ^ (ONES * (unsigned char)*c));
    if (!special) continue;
    q += __builtin_ctzll(special) >> 3; /* the first special byte (later bits of a mask may be wrong) */
    if (*q != ',') return 0;
    *p = q + 1;
    return 1;
  }
  while (q < e && *q != ',') {
    if (*q == '"' || *q == ' ' || *q == '\t') return 0;
    q++;
  }
  if (q == e) return 0;
  *p = q + 1;
  return 1;
}

/* The usual trade row in one pass, without splitting it into fields: ms,price,size,exchange,condition,suspicious with
 * plain digits for the time and size, a plain decimal price, 0 or 1 for suspicious and no quotes or blanks, at a time
 * whose New York offset the zone memo holds (all but those within a day of a daylight-saving change). 0 for any other
 * row, which the general path reads (with every check and message); both give the same trade. */
static int trade_row_plain(tg_lean_impl *L, const char *p, const char *e, tg_trade *t, int *made) {
  int64_t ms = plain_digits(&p, e, 8);
  if (ms < 0 || ms >= MS_PER_DAY || p == e || *p++ != ',') return 0;
  int64_t local_s = L->day_s + ms / 1000;
  if (local_s < L->memo.lo || local_s >= L->memo.hi) return 0;
  double price;
  if (!plain_decimal(&p, e, &price)) return 0;
  int64_t size = plain_digits(&p, e, 15);
  if (size < 0 || p == e || *p++ != ',' || !skip_field(&p, e) || !skip_field(&p, e)) return 0;
  if (e - p != 1 || (*p != '0' && *p != '1')) return 0;
  *t = (tg_trade){.ts = (local_s - L->memo.off) * TG_NS_PER_S + (ms % 1000) * 1000000,
                  .price = price / L->scale,
                  .size = (double)size,
                  .flags = *p == '1' ? TG_TRADE_SUSPICIOUS : 0,
                  .line = L->lr.no};
  *made = size != 0;
  return 1;
}

tg_status tg_lean_row(tg_tick_source *s, tg_lean_impl *L, const char *p, const char *e, void *rec, int *made) {
  if (s->kind == TG_TICK_TRADES && trade_row_plain(L, p, e, rec, made)) {
    if (!*made) s->counts.skipped++;
    return TG_OK;
  }
  tg_csv_field f[MAX_FIELDS];
  int want = s->kind == TG_TICK_TRADES ? 6 : 8, n = 0, more = 1;
  while (more) {
    tg_csv_field x;
    p = tg_csv_field_next(p, e, ',', &x, &more);
    if (n < MAX_FIELDS) f[n] = x;
    n++;
  }
  if (n != want)
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: %d fields where a Lean %s row has %d (%s)", s->name,
                    (long long)L->lr.no, n, s->kind == TG_TICK_TRADES ? "trade" : "quote", want,
                    s->kind == TG_TICK_TRADES ? "ms,price,size,exchange,condition,suspicious"
                                              : "ms,bid,bid_size,ask,ask_size,exchange,condition,suspicious");
  *made = 0;
  tg_status st = s->kind == TG_TICK_TRADES ? trade_row(s, L, f, rec, made) : quote_row(s, L, f, rec, made);
  if (st == TG_OK && !*made) s->counts.skipped++;
  return st;
}

tg_status tg_lean_oi_row(tg_tick_source *s, tg_lean_impl *L, const char *p, const char *e, int64_t *ts, double *oi) {
  tg_csv_field f[2];
  int n = 0, more = 1;
  while (more) {
    tg_csv_field x;
    p = tg_csv_field_next(p, e, ',', &x, &more);
    if (n < 2) f[n] = x;
    n++;
  }
  if (n != 2)
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: %d fields where a Lean open interest row has 2 (ms,open_interest)",
                    s->name, (long long)L->lr.no, n);
  tg_status st = row_time(s, L, &f[0], ts);
  if (st == TG_OK) st = number(s, L->lr.no, "open interest", &f[1], oi);
  if (st == TG_OK && !(*oi >= 0)) return bad(s, L->lr.no, "open interest", &f[1], "is negative");
  return st;
}
