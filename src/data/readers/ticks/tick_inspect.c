/* `tickgrad inspect` on tick files: which kind a path opens as, and one lenient streaming pass counting what it holds. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "tickgrad/ticks.h"

#define CHUNK 4096

int tg_tick_sniff(const char *path, const tg_tick_opts *opts, tg_tick_kind *kind) {
  static const tg_tick_kind kinds[2] = {TG_TICK_TRADES, TG_TICK_QUOTES};
  tg_tick_opts o = opts ? *opts : (tg_tick_opts){0};
  o.lenient = 1;
  o.warn = NULL;
  int opened = 0; /* a kind that opened but whose first chunk held no record (an mbp-1 file without trades) */
  for (int k = 0; k < 2; k++) {
    tg_tick_source *s = NULL;
    union {
      tg_trade t[64];
      tg_quote q[64];
    } buf;
    int64_t n = 0;
    int ok = tg_tick_open(path, kinds[k], &o, &s) == TG_OK && tg_tick_next(s, &buf, 64, &n) == TG_OK;
    tg_tick_close(s);
    if (ok && n > 0) {
      *kind = kinds[k];
      return 1;
    }
    if (ok && !opened) opened = 1, *kind = kinds[k];
  }
  return opened;
}

static void see_trades(tg_tick_report *r, const tg_trade *t, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    r->last_ts = t[i].ts;
    r->suspicious += (t[i].flags & TG_TRADE_SUSPICIOUS) != 0;
    r->cancelled += (t[i].flags & TG_TRADE_CANCELLED) != 0;
    r->buys += t[i].side == TG_SIDE_BUY;
    r->sells += t[i].side == TG_SIDE_SELL;
    r->unknown_side += t[i].side == TG_SIDE_UNKNOWN;
    if (!(t[i].price >= r->min_price)) r->min_price = t[i].price; /* NaN at the start */
    if (!(t[i].price <= r->max_price)) r->max_price = t[i].price;
    r->volume += t[i].size;
  }
}

static void see_quotes(tg_tick_report *r, const tg_quote *q, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    r->last_ts = q[i].ts;
    r->locked += q[i].bid == q[i].ask;
    if (!(q[i].bid >= r->min_price)) r->min_price = q[i].bid;
    if (!(q[i].ask <= r->max_price)) r->max_price = q[i].ask;
  }
}

tg_status tg_tick_inspect(const char *path, tg_tick_kind kind, const tg_tick_opts *opts, tg_tick_report *r) {
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->min_price = r->max_price = NAN;
  tg_tick_opts o = opts ? *opts : (tg_tick_opts){0};
  o.lenient = 1;
  tg_tick_source *s = NULL;
  tg_status st = tg_tick_open(path, kind, &o, &s);
  /* the pass's one buffer: constant memory whatever the file's length */
  void *buf = st == TG_OK ? tg_malloc(CHUNK * (kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote))) : NULL;
  if (st == TG_OK && !buf) st = tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  for (int64_t n = 1, seen = 0; st == TG_OK && n > 0; seen += n) {
    st = tg_tick_next(s, buf, CHUNK, &n);
    if (st != TG_OK || n == 0) break;
    if (!seen) r->first_ts = kind == TG_TICK_TRADES ? ((tg_trade *)buf)->ts : ((tg_quote *)buf)->ts;
    if (kind == TG_TICK_TRADES) see_trades(r, buf, n);
    else see_quotes(r, buf, n);
  }
  tg_free(buf);
  if (s) {
    r->counts = *tg_tick_source_counts(s);
    snprintf(r->format, sizeof r->format, "%s", tg_tick_source_format(s));
    snprintf(r->contracts, sizeof r->contracts, "%s", tg_tick_source_contracts(s));
  }
  tg_tick_close(s);
  return st;
}
