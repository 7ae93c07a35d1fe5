/* The bar builder: trades and quotes in time order, one open bar, finished bars pushed with their extra columns. */
#include <math.h>
#include "base/alloc.h"
#include "base/intmath.h"
#include "data/readers/ticks/builder_internal.h"
#include "data/readers/timeconv.h"

static const char *const k_cols[] = {"trade_count", "vwap", "buy_volume", "sell_volume",
                                     "bid",         "ask",  "spread_mean", "mid"};
#define N_TRADE_COLS 4
#define N_QUOTE_COLS 4

static int is_adaptive(tg_bar_kind k) { return k >= TG_BARS_TICK_IMBALANCE; }

static tg_status add_columns(tg_bars *out, int quotes, int *col0) {
  *col0 = out->n_cols;
  int n = N_TRADE_COLS + (quotes ? N_QUOTE_COLS : 0);
  for (int i = 0; i < n; i++) {
    tg_status st = tg_bars_add_column(out, k_cols[i], TG_COLUMN_NUMERIC);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

/* A recipe made by hand (not parsed) gets the parser's range checks. */
static tg_status check_recipe(const tg_bar_recipe *r) {
  const char *k = tg_bar_kind_name(r->kind);
  if ((int)r->kind < 0 || r->kind > TG_BARS_DOLLAR_RUN) return tg_error(TG_ERR_INVALID, "bar recipe: unknown kind");
  if (r->kind == TG_BARS_TIME ? r->interval_ns <= 0 : !(r->size > 0 && r->size < INFINITY))
    return tg_error(TG_ERR_INVALID, "%s bars: the size must be positive", k);
  if (!is_adaptive(r->kind)) return TG_OK;
  if (!(r->alpha > 0 && r->alpha <= 1) || !(r->floor > 0 && r->floor <= 1) || !(r->cap >= 1 && r->cap < INFINITY) ||
      r->warmup < 1)
    return tg_error(TG_ERR_INVALID, "%s bars: want 0 < alpha <= 1, 0 < floor <= 1 <= cap and warmup >= 1; got alpha %g, "
                    "floor %g, cap %g, warmup %lld", k, r->alpha, r->floor, r->cap, (long long)r->warmup);
  return TG_OK;
}

tg_status tg_bar_builder_new(const tg_bar_recipe *r, const tg_bar_opts *opts, tg_bars *out, tg_bar_builder **b) {
  *b = NULL;
  tg_status st = check_recipe(r);
  if (st != TG_OK) return st;
  tg_bar_builder *x = tg_calloc(1, sizeof *x);
  if (!x) return tg_error(TG_ERR_NOMEM, "bar builder: out of memory");
  x->r = *r;
  if (opts) x->o = *opts;
  x->out = out;
  x->last_ts = INT64_MIN;
  x->last_price = x->bid = x->ask = NAN;
  tg_adaptive_init(&x->ad, r);
  st = add_columns(out, x->o.quotes, &x->col0);
  if (st != TG_OK) {
    tg_free(x);
    return st;
  }
  *b = x;
  return TG_OK;
}

static tg_status check_order(tg_bar_builder *b, int64_t ts, const char *what, int64_t line) {
  if (ts >= b->last_ts) {
    b->last_ts = ts;
    return TG_OK;
  }
  char t0[TG_TIME_TEXT], t1[TG_TIME_TEXT];
  return tg_error(TG_ERR_INVALID, "bar builder: %s (line %lld) at %s comes before the previous record's time %s",
                  what, (long long)line, tg_format_time(ts, t0, sizeof t0), tg_format_time(b->last_ts, t1, sizeof t1));
}

/* Pushes the open bar with its columns and starts the next. */
static tg_status close_bar(tg_bar_builder *b) {
  tg_open_bar *p = &b->bar;
  if (!p->open) return TG_OK;
  int64_t ts = b->r.kind == TG_BARS_TIME ? p->bucket : p->ts;
  tg_status st = tg_bars_push(b->out, ts, p->o, p->h, p->l, p->c, p->volume, 0);
  if (st != TG_OK) return st;
  double v[N_TRADE_COLS + N_QUOTE_COLS] = {(double)p->count, p->notional / p->volume, p->buy_volume, p->sell_volume,
                                           b->bid, b->ask,
                                           b->spread_n ? b->spread_sum / (double)b->spread_n : b->ask - b->bid,
                                           (b->bid + b->ask) / 2};
  int n = N_TRADE_COLS + (b->o.quotes ? N_QUOTE_COLS : 0);
  for (int i = 0; i < n; i++) b->out->cols[b->col0 + i].values[b->out->n - 1] = v[i];
  b->spread_sum = 0;
  b->spread_n = 0;
  b->st.bars++;
  if (is_adaptive(b->r.kind)) tg_adaptive_bar_done(&b->ad, &b->r);
  *p = (tg_open_bar){0};
  return TG_OK;
}

/* b_t: the trade's side, else the tick rule (the sign of the price change, the previous sign when unchanged; 0 before
 * the first change), or 0 with the rule off. The rule's state follows every trade's price. */
static int trade_sign(tg_bar_builder *b, const tg_trade *t) {
  if (t->price > b->last_price) b->last_sign = 1;
  else if (t->price < b->last_price) b->last_sign = -1;
  b->last_price = t->price;
  if (t->side != TG_SIDE_UNKNOWN) return t->side > 0 ? 1 : -1;
  return b->o.no_tick_rule ? 0 : b->last_sign;
}

static void add_to_bar(tg_open_bar *p, const tg_trade *t, int sign, int64_t bucket) {
  if (!p->open) *p = (tg_open_bar){.open = 1, .ts = t->ts, .bucket = bucket, .o = t->price, .h = t->price,
                                   .l = t->price};
  /* fmax and fmin without their libm calls: a NaN gives way to a number */
  p->h = t->price > p->h || isnan(p->h) ? t->price : p->h;
  p->l = t->price < p->l || isnan(p->l) ? t->price : p->l;
  p->c = t->price;
  p->volume += t->size;
  p->notional += t->price * t->size;
  if (sign > 0) p->buy_volume += t->size;
  if (sign < 0) p->sell_volume += t->size;
  p->count++;
}

/* The weight v_t of an imbalance or run bar. */
static double weight(tg_bar_kind k, const tg_trade *t) {
  if (k == TG_BARS_TICK_IMBALANCE || k == TG_BARS_TICK_RUN) return 1;
  if (k == TG_BARS_VOLUME_IMBALANCE || k == TG_BARS_VOLUME_RUN) return t->size;
  return t->price * t->size;
}

static tg_status should_close(tg_bar_builder *b, const tg_trade *t, int sign, int *close) {
  const tg_open_bar *p = &b->bar;
  switch (b->r.kind) {
    case TG_BARS_TIME: *close = 0; return TG_OK;
    case TG_BARS_TICK: *close = (double)p->count >= b->r.size; return TG_OK;
    case TG_BARS_VOLUME: *close = p->volume >= b->r.size; return TG_OK;
    case TG_BARS_DOLLAR: *close = p->notional >= b->r.size; return TG_OK;
    default: return tg_adaptive_add(b, sign, weight(b->r.kind, t), close);
  }
}

/* The start of ts's time-bar interval: the open bar's when ts falls in it (no division per record), else computed. */
static int64_t bucket_of(const tg_bar_builder *b, int64_t ts) {
  const tg_open_bar *p = &b->bar;
  if (p->open && ts >= p->bucket && (uint64_t)ts - (uint64_t)p->bucket < (uint64_t)b->r.interval_ns) return p->bucket;
  return tg_floor_div(ts, b->r.interval_ns) * b->r.interval_ns;
}

tg_status tg_bar_builder_trade(tg_bar_builder *b, const tg_trade *t) {
  tg_status st = check_order(b, t->ts, "trade", t->line);
  if (st != TG_OK) return st;
  if (t->flags && !b->o.keep_flagged) {
    b->st.excluded++;
    return TG_OK;
  }
  b->st.trades++;
  int sign = trade_sign(b, t);
  int64_t bucket = 0;
  if (b->r.kind == TG_BARS_TIME) {
    bucket = bucket_of(b, t->ts);
    if (b->bar.open && bucket != b->bar.bucket && (st = close_bar(b)) != TG_OK) return st;
  }
  add_to_bar(&b->bar, t, sign, bucket);
  int close = 0;
  st = should_close(b, t, sign, &close);
  return st == TG_OK && close ? close_bar(b) : st;
}

tg_status tg_bar_builder_quote(tg_bar_builder *b, const tg_quote *q) {
  tg_status st = check_order(b, q->ts, "quote", q->line);
  if (st != TG_OK) return st;
  b->st.quotes++;
  if (b->r.kind == TG_BARS_TIME && b->bar.open && bucket_of(b, q->ts) != b->bar.bucket && (st = close_bar(b)) != TG_OK)
    return st;
  b->bid = q->bid;
  b->ask = q->ask;
  b->spread_sum += q->ask - q->bid;
  b->spread_n++;
  return TG_OK;
}

tg_status tg_bar_builder_finish(tg_bar_builder *b) {
  tg_adaptive *a = &b->ad;
  if (is_adaptive(b->r.kind) && a->warm_left > 0 && a->warm_n > 0 && a->warm_signed == 0 && b->o.no_tick_rule)
    return tg_error(TG_ERR_INVALID, "%s bars: none of the %lld trades has a side and the tick rule is off",
                    tg_bar_kind_name(b->r.kind), (long long)a->warm_n);
  return close_bar(b);
}

const tg_bar_stats *tg_bar_builder_stats(const tg_bar_builder *b) { return &b->st; }

void tg_bar_builder_free(tg_bar_builder *b) { tg_free(b); }
