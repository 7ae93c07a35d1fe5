/* The checks every tick source makes: positive prices and sizes, known sides and flags, time order, crossed quotes. */
#include <math.h>
#include "data/readers/ticks/source_internal.h"
#include "data/readers/timeconv.h"

static tg_status bad(const tg_tick_source *s, int64_t line, const char *field, double v, const char *want) {
  return tg_error(TG_ERR_FORMAT, "%s: %s %lld: %s %.17g %s", s->name, s->unit, (long long)line, field, v, want);
}

static tg_status check_trade(const tg_tick_source *s, const tg_trade *t) {
  if (!(t->price > 0) || !isfinite(t->price)) return bad(s, t->line, "price", t->price, "is not a positive number");
  if (!(t->size > 0) || !isfinite(t->size)) return bad(s, t->line, "size", t->size, "is not a positive number");
  if (t->side < -1 || t->side > 1) return bad(s, t->line, "side", t->side, "is not -1, 0 or 1");
  if (t->flags & ~(TG_TRADE_SUSPICIOUS | TG_TRADE_CANCELLED)) return bad(s, t->line, "flags", t->flags, "unknown");
  return TG_OK;
}

static tg_status check_quote(const tg_tick_source *s, const tg_quote *q) {
  if (!(q->bid > 0) || !isfinite(q->bid)) return bad(s, q->line, "bid", q->bid, "is not a positive number");
  if (!(q->ask > 0) || !isfinite(q->ask)) return bad(s, q->line, "ask", q->ask, "is not a positive number");
  if (!(q->bid_size >= 0) || !isfinite(q->bid_size)) return bad(s, q->line, "bid_size", q->bid_size, "is negative");
  if (!(q->ask_size >= 0) || !isfinite(q->ask_size)) return bad(s, q->line, "ask_size", q->ask_size, "is negative");
  return TG_OK;
}

/* 1 to keep a record of time ts on line; 0 when dropped as out of order; -1 after the error. */
static int in_order(tg_tick_source *s, int64_t ts, int64_t line) {
  if (ts >= s->last_ts) {
    s->last_ts = ts;
    return 1;
  }
  char t0[TG_TIME_TEXT], t1[TG_TIME_TEXT];
  tg_format_time(ts, t0, sizeof t0);
  tg_format_time(s->last_ts, t1, sizeof t1);
  if (s->opts.order == TG_TICKS_ORDER_ERROR) {
    tg_error(TG_ERR_FORMAT, "%s: %s %lld: time %s is before the previous record's %s (records must be in time order)",
             s->name, s->unit, (long long)line, t0, t1);
    return -1;
  }
  if (s->counts.out_of_order++ == 0 && s->opts.warn)
    fprintf(s->opts.warn, "warning: %s: %s %lld: time %s is before the previous record's %s; dropped (and every "
            "later one out of order, counted)\n", s->name, s->unit, (long long)line, t0, t1);
  return 0;
}

static int crossed(tg_tick_source *s, const tg_quote *q) {
  if (q->bid <= q->ask) return 0;
  if (s->counts.crossed++ == 0 && s->opts.warn)
    fprintf(s->opts.warn, "warning: %s: %s %lld: crossed quote (bid %.17g above ask %.17g); dropped (and every later "
            "crossed one, counted)\n", s->name, s->unit, (long long)q->line, q->bid, q->ask);
  return 1;
}

/* Lenient reading: 1 when the record's price or size is bad (counted, to be dropped), else 0. */
static int bad_value(tg_tick_source *s, const void *rec) {
  int price_ok, size_ok;
  if (s->kind == TG_TICK_TRADES) {
    const tg_trade *t = rec;
    price_ok = t->price > 0 && isfinite(t->price);
    size_ok = t->size > 0 && isfinite(t->size);
  } else {
    const tg_quote *q = rec;
    price_ok = q->bid > 0 && isfinite(q->bid) && q->ask > 0 && isfinite(q->ask);
    size_ok = q->bid_size >= 0 && isfinite(q->bid_size) && q->ask_size >= 0 && isfinite(q->ask_size);
  }
  if (!price_ok) s->counts.bad_prices++;
  else if (!size_ok) s->counts.bad_sizes++;
  return !price_ok || !size_ok;
}

tg_status tg_tick_check(tg_tick_source *s, void *buf, int64_t *n) {
  int64_t kept = 0;
  size_t each = s->kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  for (int64_t i = 0; i < *n; i++) {
    int keep;
    if (s->opts.lenient && bad_value(s, (char *)buf + (size_t)i * each)) continue;
    if (s->kind == TG_TICK_TRADES) {
      tg_trade *t = (tg_trade *)buf + i;
      if (check_trade(s, t) != TG_OK) return TG_ERR_FORMAT;
      if ((keep = in_order(s, t->ts, t->line)) < 0) return TG_ERR_FORMAT;
      if (keep) ((tg_trade *)buf)[kept++] = *t;
    } else {
      tg_quote *q = (tg_quote *)buf + i;
      if (check_quote(s, q) != TG_OK) return TG_ERR_FORMAT;
      if ((keep = in_order(s, q->ts, q->line)) < 0) return TG_ERR_FORMAT;
      if (keep && !crossed(s, q)) ((tg_quote *)buf)[kept++] = *q;
    }
  }
  s->counts.records += kept;
  *n = kept;
  return TG_OK;
}
