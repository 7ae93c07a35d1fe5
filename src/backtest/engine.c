/* The backtest engine: targets decided at closes fill at the next open with costs; equity at closes; round-trip trades. */
#include <math.h>
#include <string.h>
#include "backtest/costs.h"
#include "base/alloc.h"
#include "tickgrad/backtest.h"

/* One simulated account and its open trade. */
typedef struct sim {
  const tg_bars *b;
  const tg_bt_opts *o;
  const bt_costs *costs;
  double m;                     /* the multiplier: cash per unit per point of price */
  double cash, q;               /* cash and units held */
  double turnover, fees, spread_cost, roll_cost;
  int64_t rolls, unquoted_fills;
  double *units, *position, *equity; /* [n] at each close */
  tg_bt_trade *trades;          /* [n]: a fill opens at most one trade */
  int64_t n_trades;
  int active;                   /* a trade is open */
  tg_bt_trade cur;
  double in_units, out_units;   /* units entered and exited in cur */
} sim;

static void open_trade(sim *s, int64_t t, double q1, double f, double fee) {
  memset(&s->cur, 0, sizeof s->cur);
  s->active = 1;
  s->cur.entry_bar = t;
  s->cur.entry_ts = s->b->ts[t];
  s->cur.side = q1 > 0 ? 1 : -1;
  s->cur.size = fabs(q1);
  s->cur.entry_value = fabs(q1) * s->m * f;
  s->cur.fees = fee;
  s->in_units = fabs(q1);
  s->out_units = 0;
}

static void exit_units(sim *s, int64_t t, double units, double f, double fee) {
  s->cur.exit_value += units * s->m * f;
  s->cur.fees += fee;
  s->cur.exit_bar = t;
  s->cur.exit_ts = s->b->ts[t];
  s->out_units += units;
}

static void close_trade(sim *s) {
  tg_bt_trade *c = &s->cur;
  c->entry_price = c->entry_value / (s->in_units * s->m);
  c->exit_price = s->out_units > 0 ? c->exit_value / (s->out_units * s->m) : 0.0;
  c->pnl = (double)c->side * (c->exit_value - c->entry_value) - c->fees;
  c->ret = c->entry_value > 0 ? c->pnl / c->entry_value : 0.0;
  s->trades[s->n_trades++] = *c;
  s->active = 0;
}

/* The round-trip bookkeeping of a fill from q0 to q1 units at price f with fee. */
static void book(sim *s, int64_t t, double q0, double q1, double f, double fee) {
  double dq = q1 - q0;
  if (q0 != 0 && (q1 == 0 || (q1 > 0) != (q0 > 0))) { /* exits, perhaps into the other side */
    double part = fabs(q0) / fabs(dq);
    exit_units(s, t, fabs(q0), f, fee * part);
    close_trade(s);
    if (q1 != 0) open_trade(s, t, q1, f, fee * (1.0 - part));
  } else if (q0 == 0) {
    open_trade(s, t, q1, f, fee);
  } else if (fabs(q1) > fabs(q0)) { /* adds to the same side */
    s->cur.entry_value += fabs(dq) * s->m * f;
    s->cur.fees += fee;
    s->in_units += fabs(dq);
    if (fabs(q1) > s->cur.size) s->cur.size = fabs(q1);
  } else { /* reduces it */
    exit_units(s, t, fabs(dq), f, fee);
  }
}

/* The order of target p at bar t's open. */
static void fill(sim *s, int64_t t, double p) {
  double op = s->b->open[t];
  double E = s->cash + s->q * s->m * op;
  double q1 = E > 0 ? p * E / (op * s->m) : 0.0;
  double dq = q1 - s->q, h;
  if (dq == 0) return;
  int unquoted;
  double f = bt_fill_price(s->costs, s->b, t, dq > 0, &h, &unquoted);
  double fee = bt_fee(s->o, s->m, fabs(dq), f);
  s->cash -= dq * s->m * f + fee;
  s->fees += fee;
  s->spread_cost += fabs(dq) * s->m * h;
  s->unquoted_fills += unquoted;
  if (E > 0) s->turnover += fabs(dq) * s->m * op / E;
  book(s, t, s->q, q1, f, fee);
  s->q = q1;
}

/* The position held into bar t, of another contract than bar t-1's, sold and bought back at t's open: a round trip
 * of its units whose price difference and fees are charged to the open trade. */
static void roll(sim *s, int64_t t) {
  double u = fabs(s->q), h_sell, h_buy;
  int unquoted;
  double sell = bt_fill_price(s->costs, s->b, t, 0, &h_sell, &unquoted);
  double buy = bt_fill_price(s->costs, s->b, t, 1, &h_buy, &unquoted);
  double fees = bt_fee(s->o, s->m, u, sell) + bt_fee(s->o, s->m, u, buy);
  double cost = u * s->m * (buy - sell) + fees;
  s->cash -= cost;
  s->fees += fees;
  s->spread_cost += u * s->m * (h_sell + h_buy);
  s->roll_cost += cost;
  s->rolls++;
  s->cur.fees += cost;
}

/* The whole run of target over the bars; a position open at the end is valued at the last close. */
static void simulate(sim *s, const double *target) {
  int64_t n = s->b->n;
  double last = 0;
  for (int64_t t = 0; t < n; t++) {
    s->m = bt_multiplier(s->costs, t); /* bar t's contract's */
    if (s->costs->roll && s->costs->roll[t] && s->q != 0) roll(s, t);
    if (t > 0 && target[t - 1] != last) {
      fill(s, t, target[t - 1]);
      last = target[t - 1];
    }
    double c = s->b->close[t], e = s->cash + s->q * s->m * c;
    s->units[t] = s->q;
    s->equity[t] = e;
    s->position[t] = e > 0 ? s->q * s->m * c / e : 0.0;
  }
  if (s->active) {
    exit_units(s, n - 1, fabs(s->q), s->b->close[n - 1], 0.0);
    s->cur.open = 1;
    close_trade(s);
  }
}

static tg_status check_inputs(const tg_bars *bars, const double *target, const tg_bt_opts *o) {
  tg_status st = tg_backtest_check_bars(bars, "backtest");
  if (st != TG_OK) return st;
  if (!target || !o) return tg_error(TG_ERR_INVALID, "backtest: targets or options missing");
  if (!(o->cash > 0) || !isfinite(o->cash)) return tg_error(TG_ERR_INVALID, "backtest: cash %g: want a positive amount", o->cash);
  if (!(o->commission >= 0 && o->commission < 1))
    return tg_error(TG_ERR_INVALID, "backtest: commission %g: want a fraction of traded value in [0, 1)", o->commission);
  if (!(o->cost_bps >= 0 && o->cost_bps < 10000))
    return tg_error(TG_ERR_INVALID, "backtest: cost %g bps: want basis points in [0, 10000)", o->cost_bps);
  if (!(o->slippage >= 0 && o->slippage < 1))
    return tg_error(TG_ERR_INVALID, "backtest: slippage %g: want a fraction of the price in [0, 1)", o->slippage);
  if (!(o->multiplier > 0) || !isfinite(o->multiplier))
    return tg_error(TG_ERR_INVALID, "backtest: multiplier %g: want a positive number (1 for shares)", o->multiplier);
  if (!(o->tick_size >= 0) || !isfinite(o->tick_size))
    return tg_error(TG_ERR_INVALID, "backtest: tick size %g: want a price step >= 0 (0: no grid)", o->tick_size);
  if (!(o->commission_per_contract >= 0) || !isfinite(o->commission_per_contract))
    return tg_error(TG_ERR_INVALID, "backtest: commission per contract %g: want an amount >= 0",
                    o->commission_per_contract);
  for (int64_t t = 0; t < bars->n; t++)
    if (!(target[t] >= -1.0 && target[t] <= 1.0))
      return tg_error(TG_ERR_INVALID, "backtest: the target position at bar %lld is %g; want a fraction of equity in "
                      "[-1, 1]", (long long)t, target[t]);
  return TG_OK;
}

/* Runs one account and its statistics. */
static tg_status run_account(sim *s, const double *target, tg_bt_stats *stats) {
  simulate(s, target);
  int64_t n = s->b->n;
  tg_status st = tg_bt_equity_stats(s->b->ts, s->equity, n, stats);
  if (st != TG_OK) return st;
  tg_bt_trade_stats(s->trades, s->n_trades, stats);
  double expo = 0;
  for (int64_t t = 1; t < n; t++) expo += fabs(s->position[t]);
  stats->exposure = expo / (double)(n - 1);
  stats->turnover = s->turnover;
  stats->fees = s->fees;
  stats->spread_cost = s->spread_cost;
  stats->rolls = s->rolls;
  stats->roll_cost = s->roll_cost;
  return TG_OK;
}

static void sim_init(sim *s, const tg_bars *b, const tg_bt_opts *o, const bt_costs *costs, double *units, double *pos,
                     double *eq, tg_bt_trade *trades) {
  memset(s, 0, sizeof *s);
  s->b = b;
  s->o = o;
  s->costs = costs;
  s->m = o->multiplier;
  s->cash = o->cash;
  s->units = units;
  s->position = pos;
  s->equity = eq;
  s->trades = trades;
}

static tg_status alloc_out(tg_backtest *bt, int64_t n) {
  size_t d = (size_t)n;
  bt->ts = tg_calloc(d, sizeof(int64_t));
  bt->close = tg_calloc(d, sizeof(double));
  bt->target = tg_calloc(d, sizeof(double));
  bt->units = tg_calloc(d, sizeof(double));
  bt->position = tg_calloc(d, sizeof(double));
  bt->equity = tg_calloc(d, sizeof(double));
  bt->drawdown = tg_calloc(d, sizeof(double));
  bt->bh_equity = tg_calloc(d, sizeof(double));
  bt->trades = tg_calloc(d, sizeof(tg_bt_trade));
  if (!bt->ts || !bt->close || !bt->target || !bt->units || !bt->position || !bt->equity || !bt->drawdown ||
      !bt->bh_equity || !bt->trades)
    return tg_error(TG_ERR_NOMEM, "backtest: out of memory for %lld bars", (long long)n);
  return TG_OK;
}

/* Buy and hold over the same bars and costs: its equity into bt->bh_equity, its statistics into bt->bh. */
static tg_status run_buy_hold(tg_backtest *bt, const tg_bars *bars, const bt_costs *costs) {
  size_t d = (size_t)bars->n;
  double *ones = tg_calloc(d, sizeof(double)), *units = tg_calloc(d, sizeof(double)), *pos = tg_calloc(d, sizeof(double));
  tg_bt_trade *trades = tg_calloc(d, sizeof(tg_bt_trade));
  tg_status st = TG_OK;
  if (!ones || !units || !pos || !trades) st = tg_error(TG_ERR_NOMEM, "backtest: out of memory for buy and hold");
  if (st == TG_OK) {
    for (int64_t t = 0; t < bars->n; t++) ones[t] = 1.0;
    sim s;
    sim_init(&s, bars, &bt->opts, costs, units, pos, bt->bh_equity, trades);
    st = run_account(&s, ones, &bt->bh);
  }
  tg_free(ones);
  tg_free(units);
  tg_free(pos);
  tg_free(trades);
  return st;
}

tg_status tg_backtest_run(const tg_bars *bars, const double *target, const tg_bt_opts *opts, tg_backtest *out) {
  if (!out) return tg_error(TG_ERR_INVALID, "backtest: out is NULL");
  memset(out, 0, sizeof *out);
  tg_status st = check_inputs(bars, target, opts);
  if (st != TG_OK) return st;
  int64_t n = bars->n;
  out->n = n;
  out->opts = *opts;
  st = alloc_out(out, n);
  if (st != TG_OK) return st;
  memcpy(out->ts, bars->ts, (size_t)n * sizeof(int64_t));
  memcpy(out->close, bars->close, (size_t)n * sizeof(double));
  memcpy(out->target, target, (size_t)n * sizeof(double));
  bt_costs costs;
  st = bt_costs_init(&costs, bars, opts);
  if (st != TG_OK) return st;
  out->quoted = costs.half_spread != NULL;
  out->contracts = costs.roll != NULL;
  out->multiplier_from_bars = costs.multiplier != NULL;
  out->tick_size_from_bars = costs.tick_size != NULL;
  sim s;
  sim_init(&s, bars, opts, &costs, out->units, out->position, out->equity, out->trades);
  st = run_account(&s, target, &out->stats);
  out->n_trades = s.n_trades;
  out->unquoted_fills = s.unquoted_fills;
  if (st == TG_OK) st = run_buy_hold(out, bars, &costs);
  bt_costs_free(&costs);
  double peak = out->equity[0];
  for (int64_t t = 0; t < n; t++) {
    if (out->equity[t] > peak) peak = out->equity[t];
    out->drawdown[t] = peak > 0 ? out->equity[t] / peak - 1.0 : 0.0;
  }
  return st;
}

void tg_backtest_free(tg_backtest *bt) {
  if (!bt) return;
  tg_free(bt->ts);
  tg_free(bt->close);
  tg_free(bt->target);
  tg_free(bt->units);
  tg_free(bt->position);
  tg_free(bt->equity);
  tg_free(bt->drawdown);
  tg_free(bt->bh_equity);
  tg_free(bt->trades);
  memset(bt, 0, sizeof *bt);
}
