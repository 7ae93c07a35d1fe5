/* Fill prices and fees of the backtest: slippage, half the prevailing spread, the tick grid, commissions, rolls. */
#include <math.h>
#include <string.h>
#include "backtest/costs.h"
#include "base/alloc.h"
#include "data/readers/timeconv.h"

/* The quote columns: both or neither, numeric. */
static tg_status quote_columns(const tg_bars *b, const tg_bar_column **bid, const tg_bar_column **ask) {
  const char *src = b->source[0] ? b->source : "the bars";
  *bid = tg_bars_column(b, "bid");
  *ask = tg_bars_column(b, "ask");
  if (!*bid != !*ask)
    return tg_error(TG_ERR_INVALID, "backtest: %s has a%s column but no %s one; spread costs need both", src,
                    *bid ? " bid" : "n ask", *bid ? "ask" : "bid");
  if (*bid && ((*bid)->kind != TG_COLUMN_NUMERIC || (*ask)->kind != TG_COLUMN_NUMERIC))
    return tg_error(TG_ERR_INVALID, "backtest: %s: the %s column holds text, not prices", src,
                    (*bid)->kind != TG_COLUMN_NUMERIC ? "bid" : "ask");
  return TG_OK;
}

/* half[t]: half the spread of the last quote at or before bar t-1's close, NaN before any. */
static tg_status prevailing_spreads(const tg_bars *b, const double *bid, const double *ask, double *half) {
  const char *src = b->source[0] ? b->source : "the bars";
  double last = NAN;
  for (int64_t t = 0; t < b->n; t++) {
    half[t] = last;
    int has_b = !isnan(bid[t]), has_a = !isnan(ask[t]);
    if (!has_b && !has_a) continue;
    if (has_b != has_a)
      return tg_error(TG_ERR_INVALID, "backtest: %s: bar %lld has a%s but no %s", src, (long long)t,
                      has_b ? " bid" : "n ask", has_b ? "ask" : "bid");
    if (!(bid[t] > 0 && isfinite(bid[t]) && ask[t] > 0 && isfinite(ask[t])))
      return tg_error(TG_ERR_INVALID, "backtest: %s: bar %lld: bid %g, ask %g: a quote must be positive numbers", src,
                      (long long)t, bid[t], ask[t]);
    if (bid[t] > ask[t])
      return tg_error(TG_ERR_INVALID, "backtest: %s: bar %lld: bid %.10g is above ask %.10g (a crossed quote)", src,
                      (long long)t, bid[t], ask[t]);
    last = 0.5 * (ask[t] - bid[t]);
  }
  return TG_OK;
}

/* roll[t]: 1 where bar t's contract (a category's code or a number) differs from the last one named before it. */
static void contract_changes(const tg_bar_column *k, int64_t n, unsigned char *roll) {
  int known = 0;
  uint32_t last_code = 0;
  double last_value = 0;
  for (int64_t t = 0; t < n; t++) {
    roll[t] = 0;
    if (k->kind == TG_COLUMN_CATEGORY) {
      if (k->codes[t] == TG_CATEGORY_MISSING) continue;
      roll[t] = known && k->codes[t] != last_code;
      last_code = k->codes[t];
    } else {
      if (isnan(k->values[t])) continue;
      roll[t] = known && k->values[t] != last_value;
      last_value = k->values[t];
    }
    known = 1;
  }
}

/* A numeric column name's value at every bar into *out (a missing one: fallback), or *out NULL without such a column;
 * a value not positive (zero allowed when zero_ok) is TG_ERR_INVALID naming the bar. */
static tg_status per_bar(const tg_bars *b, const char *name, double fallback, int zero_ok, double **out) {
  const tg_bar_column *col = tg_bars_column(b, name);
  *out = NULL;
  if (!col || col->kind != TG_COLUMN_NUMERIC) return TG_OK;
  double *v = tg_malloc((size_t)b->n * sizeof *v);
  if (!v) return tg_error(TG_ERR_NOMEM, "backtest: out of memory for %lld bars' %s", (long long)b->n, name);
  for (int64_t t = 0; t < b->n; t++) {
    double x = col->values[t];
    if (isnan(x)) x = fallback;
    if (!isfinite(x) || x < 0 || (x == 0 && !zero_ok)) {
      char when[48];
      tg_free(v);
      return tg_error(TG_ERR_INVALID, "backtest: bar %lld (%s): column %s is %g; want a %s number (or give --%s)",
                      (long long)t + 1, tg_format_time(b->ts[t], when, sizeof when), name, x,
                      zero_ok ? "non-negative" : "positive", !strcmp(name, "tick_size") ? "tick-size" : name);
    }
    v[t] = x;
  }
  *out = v;
  return TG_OK;
}

tg_status bt_costs_init(bt_costs *c, const tg_bars *b, const tg_bt_opts *o) {
  memset(c, 0, sizeof *c);
  c->o = o;
  const tg_bar_column *bid, *ask, *contract = tg_bars_column(b, "contract");
  tg_status st = o->ignore_quotes ? TG_OK : quote_columns(b, &bid, &ask);
  if (st == TG_OK && !o->ignore_quotes && bid) {
    c->half_spread = tg_calloc((size_t)b->n, sizeof(double));
    st = c->half_spread ? prevailing_spreads(b, bid->values, ask->values, c->half_spread)
                        : tg_error(TG_ERR_NOMEM, "backtest: out of memory for %lld quotes", (long long)b->n);
  }
  if (st == TG_OK && contract) {
    c->roll = tg_calloc((size_t)b->n, 1);
    if (c->roll) contract_changes(contract, b->n, c->roll);
    else st = tg_error(TG_ERR_NOMEM, "backtest: out of memory for %lld contracts", (long long)b->n);
  }
  if (st == TG_OK && o->multiplier_from_bars)
    st = per_bar(b, "multiplier", o->multiplier, 0, &c->multiplier);
  if (st == TG_OK && o->tick_size_from_bars) st = per_bar(b, "tick_size", o->tick_size, 1, &c->tick_size);
  if (st != TG_OK) bt_costs_free(c);
  return st;
}

void bt_costs_free(bt_costs *c) {
  tg_free(c->half_spread);
  tg_free(c->roll);
  tg_free(c->multiplier);
  tg_free(c->tick_size);
  c->half_spread = NULL;
  c->roll = NULL;
  c->multiplier = c->tick_size = NULL;
}

double bt_fill_price(const bt_costs *c, const tg_bars *b, int64_t t, int buy, double *h, int *unquoted) {
  const tg_bt_opts *o = c->o;
  double f = b->open[t] * (1.0 + (buy ? o->slippage : -o->slippage));
  *h = 0;
  *unquoted = 0;
  if (c->half_spread) {
    if (isnan(c->half_spread[t])) *unquoted = 1;
    else *h = c->half_spread[t];
    f += buy ? *h : -*h;
  }
  double tick = bt_tick_size(c, t);
  if (tick > 0) { /* the grid point at or beyond f, against the order (a hair of rounding forgiven) */
    double k = f / tick;
    f = (buy ? ceil(k - 1e-9) : floor(k + 1e-9)) * tick;
  }
  return f;
}

int bt_market_costs(const tg_backtest *bt) {
  const tg_bt_opts *o = &bt->opts;
  return bt->quoted || bt->contracts || o->multiplier != 1.0 || o->tick_size > 0 || o->commission_per_contract > 0 ||
         bt->multiplier_from_bars || bt->tick_size_from_bars;
}

double bt_fee(const tg_bt_opts *o, double m, double units, double price) {
  return units * m * price * (o->commission + o->cost_bps * 1e-4) + units * o->commission_per_contract;
}
