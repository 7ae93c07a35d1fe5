/* What a fill costs beyond its price: the quote prevailing at each open, changes of contract, the tick grid and fees. */
#ifndef TG_BACKTEST_COSTS_H
#define TG_BACKTEST_COSTS_H

#include "tickgrad/backtest.h"

typedef struct bt_costs {
  const tg_bt_opts *o;
  double *half_spread;  /* [n] h of a fill at bar t's open: half the spread of the last quote at or before bar t-1's
                           close (NaN before any); NULL when the bars have no bid and ask columns (or they are ignored) */
  unsigned char *roll;  /* [n] 1 where bar t names a contract other than the last one named before it; NULL without a
                           contract column */
  double *multiplier;   /* [n] bar t's multiplier (its column's value, else o->multiplier); NULL: o->multiplier */
  double *tick_size;    /* [n] bar t's tick size likewise; NULL: o->tick_size */
} bt_costs;

/* Bar t's multiplier and tick size. */
static inline double bt_multiplier(const bt_costs *c, int64_t t) { return c->multiplier ? c->multiplier[t] : c->o->multiplier; }
static inline double bt_tick_size(const bt_costs *c, int64_t t) { return c->tick_size ? c->tick_size[t] : c->o->tick_size; }

/* Reads bars' bid, ask and contract columns (checked: both quote columns or none, numbers, positive, not crossed) and,
 * when o takes them from the bars, the multiplier and tick_size columns (positive; >= 0) under o's options;
 * TG_ERR_INVALID naming the bar and value, TG_ERR_NOMEM. c is empty after a failure. */
tg_status bt_costs_init(bt_costs *c, const tg_bars *bars, const tg_bt_opts *o);
void bt_costs_free(bt_costs *c);

/* The price of a buy (buy 1) or a sale at bar t's open: slippage, then half the spread (*h receives it: 0 when the
 * bars have no quote yet, *unquoted then 1), then the tick grid, each against the order. */
double bt_fill_price(const bt_costs *c, const tg_bars *bars, int64_t t, int buy, double *h, int *unquoted);

/* The fee of trading units (> 0) at price under multiplier m: (commission + cost_bps * 1e-4) * units * m * price +
 * commission_per_contract * units. */
double bt_fee(const tg_bt_opts *o, double m, double units, double price);

/* 1 when costs beyond the flat ones are in play (quotes, contracts, a multiplier other than 1, a tick size, a commission
 * per contract): the table and backtest.json then show them; 0 keeps both as the flat costs write them. */
int bt_market_costs(const tg_backtest *bt);

#endif
