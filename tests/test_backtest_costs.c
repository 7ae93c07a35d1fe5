/* Backtest costs from the data: half the spread of the bars' quotes, a futures multiplier, tick size and per-contract commission, a round trip at each roll of contract; hand-computed equity. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/backtest.h"

#define HOUR_NS 3600000000000LL

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * (1.0 + fabs(b)); }
static int err_has(const char *what) { return strstr(tg_last_error(), what) != NULL; }

/* Bars from opens and closes, one an hour; bid and ask columns when bid is not NULL (NaN: no quote yet). */
static void make_bars(tg_bars *b, const double *open, const double *close, int n, const double *bid, const double *ask) {
  tg_bars_init(b);
  for (int i = 0; i < n; i++) {
    double hi = open[i] > close[i] ? open[i] : close[i], lo = open[i] < close[i] ? open[i] : close[i];
    tg_bars_push(b, (int64_t)i * HOUR_NS, open[i], hi, lo, close[i], 1000, 0);
  }
  if (!bid) return;
  CHECK_OK(tg_bars_add_column(b, "bid", TG_COLUMN_NUMERIC));
  CHECK_OK(tg_bars_add_column(b, "ask", TG_COLUMN_NUMERIC));
  for (int i = 0; i < n; i++) b->cols[0].values[i] = bid[i], b->cols[1].values[i] = ask[i];
}

/* A category column named contract holding names[i] at bar i. */
static void add_contracts(tg_bars *b, const char *const *names) {
  CHECK_OK(tg_bars_add_column(b, "contract", TG_COLUMN_CATEGORY));
  tg_bar_column *k = &b->cols[b->n_cols - 1];
  for (int64_t i = 0; i < b->n; i++) CHECK_OK(tg_categories_intern(&k->cats, names[i], strlen(names[i]), &k->codes[i]));
}

static const double O4[4] = {100, 110, 130, 120}, C4[4] = {100, 120, 125, 140};
static const double BID4[4] = {99.5, 119, 124, 139.8}, ASK4[4] = {100.5, 121, 126, 140.2};

/* The buy at bar 1's open pays bar 0's ask - mid (0.5): 110.5 for 10 units of 1100 cash; the sale at bar 3's open
 * gets 120 - bar 2's half spread (1): 119. Without the quotes (--no-spread) the flat engine's 1200. */
static void test_half_spread(void) {
  tg_bars b;
  make_bars(&b, O4, C4, 4, BID4, ASK4);
  double target[4] = {1, 1, 0, 0};
  tg_bt_opts o = tg_bt_defaults();
  o.cash = 1100;
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK(bt.quoted == 1 && bt.contracts == 0 && bt.unquoted_fills == 0);
  CHECK_MSG(near(bt.units[1], 10, 1e-12), "units %g, want 10 (sized at the open 110, not the ask)", bt.units[1]);
  CHECK_MSG(near(bt.equity[1], 1100 - 10 * 110.5 + 10 * 120, 1e-12), "equity[1] %.10g, want 1195", bt.equity[1]);
  CHECK_MSG(near(bt.equity[3], 1100 - 1105 + 1190, 1e-12), "equity[3] %.10g, want 1185", bt.equity[3]);
  CHECK(near(bt.stats.spread_cost, 10 * 0.5 + 10 * 1.0, 1e-12) && bt.stats.fees == 0);
  CHECK(bt.n_trades == 1 && near(bt.trades[0].entry_price, 110.5, 1e-12) && near(bt.trades[0].exit_price, 119, 1e-12));
  CHECK(bt.n_trades == 1 && near(bt.trades[0].pnl, 85, 1e-12));
  CHECK_MSG(near(bt.bh_equity[3], -5 + 10 * 140, 1e-12), "buy and hold %.10g, want 1395", bt.bh_equity[3]);
  CHECK(near(bt.bh.spread_cost, 5, 1e-12));
  tg_backtest_free(&bt);
  o.ignore_quotes = 1;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK(bt.quoted == 0 && bt.equity[3] == 1200 && bt.stats.spread_cost == 0);
  tg_backtest_free(&bt);
  /* no quote before the fill: h = 0, counted */
  b.cols[0].values[0] = b.cols[1].values[0] = NAN;
  o.ignore_quotes = 0;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK(bt.quoted == 1 && bt.unquoted_fills == 1);
  CHECK_MSG(near(bt.equity[3], 1100 - 1100 + 1190, 1e-12), "equity[3] %.10g, want 1190", bt.equity[3]);
  tg_backtest_free(&bt);
  /* a short sells at the bid side and buys back at the ask side */
  b.cols[0].values[0] = 99.5, b.cols[1].values[0] = 100.5;
  double shrt[4] = {-1, -1, 0, 0};
  CHECK_OK(tg_backtest_run(&b, shrt, &o, &bt));
  /* sells 10 at 109.5: cash 1100 + 1095; buys back 10 at 121 */
  CHECK_MSG(near(bt.equity[3], 1100 + 1095 - 1210, 1e-12), "short equity[3] %.10g, want 985", bt.equity[3]);
  CHECK(near(bt.stats.spread_cost, 15, 1e-12));
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

/* A futures contract of multiplier 50, tick 0.25, 2.5 a contract, slippage 0.1%: 110000 cash buys 20 contracts at
 * 110 * 1.001 = 110.11 -> 110.25 (the tick above), sells at 120 * 0.999 = 119.88 -> 119.75 (the tick below). */
static void test_futures(void) {
  tg_bars b;
  make_bars(&b, O4, C4, 4, NULL, NULL);
  double target[4] = {1, 1, 0, 0};
  tg_bt_opts o = tg_bt_defaults();
  o.cash = 110000, o.multiplier = 50, o.tick_size = 0.25, o.commission_per_contract = 2.5, o.slippage = 0.001;
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK_MSG(near(bt.units[1], 20, 1e-12), "contracts %g, want 20", bt.units[1]);
  double cash1 = 110000 - 20 * 50 * 110.25 - 50;
  CHECK_MSG(near(bt.equity[1], cash1 + 20 * 50 * 120, 1e-12), "equity[1] %.10g, want 119700", bt.equity[1]);
  CHECK(near(bt.position[1], 20 * 50 * 120 / (cash1 + 20 * 50 * 120), 1e-12));
  CHECK_MSG(near(bt.equity[3], cash1 + 20 * 50 * 119.75 - 50, 1e-12), "equity[3] %.10g, want 119400", bt.equity[3]);
  CHECK(bt.n_trades == 1 && near(bt.trades[0].entry_price, 110.25, 1e-12) && near(bt.trades[0].exit_price, 119.75, 1e-12));
  CHECK(bt.n_trades == 1 && near(bt.trades[0].fees, 100, 1e-12) && near(bt.trades[0].pnl, 9400, 1e-12));
  CHECK(near(bt.stats.fees, 100, 1e-12) && near(bt.stats.turnover, 1 + 20 * 50 * 120 / 119700.0, 1e-12));
  tg_backtest_free(&bt);
  /* a commission as a fraction of value counts the multiplier: 1e-4 of 20 * 50 * 110.25 */
  o.commission = 1e-4, o.commission_per_contract = 0, o.tick_size = 0, o.slippage = 0;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK_MSG(near(bt.equity[1], 110000 - 1e-4 * 110000 + 20 * 50 * 10, 1e-12), "equity[1] %.10g", bt.equity[1]);
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

/* Contracts A, A, B, B, B with half spreads 0.5, multiplier 10, 1 a contract: long 10 contracts from bar 1's open at
 * 100.5 (cash -60), then bar 2's open sells them at 102 - 0.5 and buys them back at 102 + 0.5: 100 of price and 20 of
 * fees. A flat position crosses the change for nothing. */
static void test_roll(void) {
  static const double O[5] = {100, 100, 102, 104, 104}, C[5] = {100, 101, 103, 104, 105};
  double bid[5], ask[5];
  for (int i = 0; i < 5; i++) bid[i] = C[i] - 0.5, ask[i] = C[i] + 0.5;
  static const char *const names[5] = {"GCM4", "GCM4", "GCQ4", "GCQ4", "GCQ4"};
  tg_bars b;
  make_bars(&b, O, C, 5, bid, ask);
  add_contracts(&b, names);
  tg_bt_opts o = tg_bt_defaults();
  o.cash = 10000, o.multiplier = 10, o.commission_per_contract = 1;
  double target[5] = {1, 1, 1, 1, 1};
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK(bt.contracts == 1 && bt.quoted == 1);
  CHECK_MSG(near(bt.equity[1], -60 + 100 * 101, 1e-12), "equity[1] %.10g, want 10040", bt.equity[1]);
  CHECK_MSG(near(bt.equity[2], -180 + 100 * 103, 1e-12), "equity[2] %.10g, want 10120 after the roll", bt.equity[2]);
  CHECK(near(bt.equity[4], -180 + 100 * 105, 1e-12));
  CHECK(bt.stats.rolls == 1 && near(bt.stats.roll_cost, 120, 1e-12) && near(bt.stats.fees, 30, 1e-12));
  CHECK_MSG(near(bt.stats.spread_cost, 50 + 100, 1e-12), "spread cost %g, want 150", bt.stats.spread_cost);
  CHECK(bt.n_trades == 1 && bt.trades[0].open && near(bt.trades[0].fees, 130, 1e-12));
  CHECK(bt.n_trades == 1 && near(bt.trades[0].pnl, bt.equity[4] - 10000, 1e-9));
  CHECK(bt.bh.rolls == 1 && near(bt.bh_equity[4], bt.equity[4], 1e-12));
  tg_backtest_free(&bt);
  double late[5] = {0, 0, 0, 1, 1}; /* flat over the change, long from bar 4 */
  CHECK_OK(tg_backtest_run(&b, late, &o, &bt));
  CHECK(bt.stats.rolls == 0 && bt.stats.roll_cost == 0 && bt.bh.rolls == 1);
  tg_backtest_free(&bt);
  /* the split's view carries the columns when given room for them */
  tg_bar_column cols[3];
  tg_bars v;
  CHECK_OK(tg_backtest_split(&b, "all", 0, 0, cols, &v));
  CHECK(v.n_cols == 3 && tg_bars_column(&v, "contract") != NULL);
  CHECK_OK(tg_backtest_split(&b, "test", 0.4, 0.2, cols, &v));
  CHECK(v.n == 2 && v.n_cols == 3 && tg_bars_column(&v, "ask")->values == b.cols[1].values + 3);
  CHECK_OK(tg_backtest_split(&b, "all", 0, 0, NULL, &v));
  CHECK(v.n_cols == 0);
  tg_bars_free(&b);
}

static void test_errors(void) {
  tg_bars b;
  tg_backtest bt;
  double target[4] = {1, 1, 0, 0};
  tg_bt_opts o = tg_bt_defaults();
  make_bars(&b, O4, C4, 4, BID4, ASK4);
  b.cols[0].values[2] = 127; /* above the ask 126 */
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("bar 2") && err_has("crossed"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  b.cols[0].values[2] = NAN; /* an ask without a bid */
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("bar 2") && err_has("no bid"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  b.cols[0].values[2] = -1;
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("positive"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  tg_bars_drop_column(&b, 0); /* an ask column alone */
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("ask column but no bid"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  tg_bars_free(&b);
  make_bars(&b, O4, C4, 4, NULL, NULL);
  o.multiplier = 0;
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("multiplier 0"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  o = tg_bt_defaults();
  o.tick_size = NAN;
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("tick size"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  o = tg_bt_defaults();
  o.commission_per_contract = -1;
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("per contract"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

/* The same contract with its multiplier and tick size in the bars' columns (as DBN definitions give them): the run of
 * test_futures without the two options; the options given (flags) win over the columns; a bar without a value takes
 * the option; a multiplier of 0 is an error naming the bar. */
static void test_specs_from_bars(void) {
  tg_bars b;
  make_bars(&b, O4, C4, 4, NULL, NULL);
  CHECK_OK(tg_bars_add_column(&b, "multiplier", TG_COLUMN_NUMERIC));
  CHECK_OK(tg_bars_add_column(&b, "tick_size", TG_COLUMN_NUMERIC));
  for (int i = 0; i < 4; i++) b.cols[0].values[i] = 50, b.cols[1].values[i] = 0.25;
  double target[4] = {1, 1, 0, 0};
  tg_bt_opts o = tg_bt_defaults();
  o.cash = 110000, o.commission_per_contract = 2.5, o.slippage = 0.001;
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  double cash1 = 110000 - 20 * 50 * 110.25 - 50;
  CHECK(bt.multiplier_from_bars == 1 && bt.tick_size_from_bars == 1 && near(bt.units[1], 20, 1e-12));
  CHECK_MSG(near(bt.equity[3], cash1 + 20 * 50 * 119.75 - 50, 1e-12), "equity[3] %.10g, want 119400", bt.equity[3]);
  CHECK(bt.n_trades == 1 && near(bt.trades[0].pnl, 9400, 1e-12));
  tg_backtest_free(&bt);
  /* --multiplier 1 and --tick-size 0 given: 1000 units (110000 / 110) filled at 110.11 */
  o.multiplier_from_bars = o.tick_size_from_bars = 0;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK(bt.multiplier_from_bars == 0 && near(bt.units[1], 1000, 1e-12));
  CHECK_MSG(near(bt.equity[1], 110000 - 1000 * 110.11 - 2500 + 1000 * 120, 1e-12), "equity[1] %.10g", bt.equity[1]);
  tg_backtest_free(&bt);
  /* no tick size at bar 1 (NaN): the option's, 0, so the buy fills at 110.11 */
  o.multiplier_from_bars = o.tick_size_from_bars = 1;
  b.cols[1].values[1] = NAN;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK_MSG(near(bt.trades[0].entry_price, 110.11, 1e-12), "entry %.10g", bt.trades[0].entry_price);
  tg_backtest_free(&bt);
  b.cols[0].values[2] = 0;
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("bar 3") && err_has("column multiplier is 0; want a positive number (or give --multiplier)"), "%s",
            tg_last_error());
  tg_backtest_free(&bt); /* the contract: freed after a failure too */
  tg_bars_free(&b);
}

int main(void) {
  test_half_spread();
  test_futures();
  test_specs_from_bars();
  test_roll();
  test_errors();
  return tg_test_finish();
}
