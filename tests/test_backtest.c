/* The backtest engine and rule strategies: hand-computed fills and costs, buy and hold, sma-cross, no look-ahead, statistics, errors, files (undefined statistics as null and "-"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/json.h"
#include "support/check.h"
#include "tickgrad/backtest.h"
#include "tickgrad/rl.h"
#include "tickgrad/synth.h"

#define HOUR_NS 3600000000000LL
#define YEAR_NS_I 31557600000000000LL /* 365.25 days */

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * (1.0 + fabs(b)); }

/* Bars from opens and closes, one an hour (high, low from them). */
static void make_bars(tg_bars *b, const double *open, const double *close, int n) {
  tg_bars_init(b);
  for (int i = 0; i < n; i++) {
    double hi = open[i] > close[i] ? open[i] : close[i], lo = open[i] < close[i] ? open[i] : close[i];
    tg_bars_push(b, (int64_t)i * HOUR_NS, open[i], hi, lo, close[i], 1000, 0);
  }
}

static const double O4[4] = {100, 110, 130, 120}, C4[4] = {100, 120, 125, 140};

/* Long 1 decided at close 0 fills at open 1 (110), not at close 0 (100); the exit decided at close 2
 * fills at open 3 (120). cash 1100, commission 1%: 10 units, fee 11 in, 12 out. */
static void test_fill_next_open(void) {
  tg_bars b;
  make_bars(&b, O4, C4, 4);
  double target[4] = {1, 1, 0, 0};
  tg_bt_opts o = tg_bt_defaults();
  o.cash = 1100;
  o.commission = 0.01;
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK(bt.equity[0] == 1100 && bt.units[0] == 0 && bt.position[0] == 0); /* nothing fills at bar 0 */
  CHECK_MSG(near(bt.units[1], 10, 1e-12), "units %g, want 10 (filled at open 110)", bt.units[1]);
  CHECK_MSG(near(bt.equity[1], -11 + 10 * 120, 1e-12), "equity[1] %.10g, want 1189", bt.equity[1]);
  CHECK(near(bt.equity[2], -11 + 10 * 125, 1e-12));
  CHECK_MSG(near(bt.equity[3], -11 + 1200 - 12, 1e-12), "equity[3] %.10g, want 1177", bt.equity[3]);
  CHECK(bt.units[3] == 0 && bt.position[3] == 0);
  CHECK(near(bt.position[1], 1200.0 / 1189.0, 1e-12));
  CHECK(bt.n_trades == 1);
  if (bt.n_trades == 1) {
    const tg_bt_trade *t = &bt.trades[0];
    CHECK(t->side == 1 && !t->open && t->entry_bar == 1 && t->exit_bar == 3 && t->entry_ts == HOUR_NS);
    CHECK(near(t->entry_price, 110, 1e-12) && near(t->exit_price, 120, 1e-12) && near(t->size, 10, 1e-12));
    CHECK_MSG(near(t->pnl, 1200 - 1100 - 23, 1e-12), "pnl %g, want 77", t->pnl);
    CHECK(near(t->ret, 77.0 / 1100.0, 1e-12) && near(t->fees, 23, 1e-12));
  }
  CHECK(bt.stats.trades == 1 && bt.stats.win_rate == 1.0);
  CHECK(near(bt.stats.turnover, 1.0 + 1200.0 / 1189.0, 1e-12)); /* 1100/1100 in, 10*120 / (-11 + 10*120) out */
  CHECK(near(bt.stats.exposure, (1200.0 / 1189 + 1250.0 / 1239 + 0) / 3, 1e-12));
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

/* Slippage and bps: the fill price moves against the order; the fee is on the moved price. */
static void test_slippage_and_bps(void) {
  tg_bars b;
  make_bars(&b, O4, C4, 4);
  double target[4] = {1, 1, 0, 0};
  tg_bt_opts o = tg_bt_defaults();
  o.cash = 1100;
  o.cost_bps = 50;      /* 0.5% */
  o.slippage = 0.01;
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  double buy = 111.1, fee_in = 10 * 111.1 * 0.005, sell = 118.8, fee_out = 10 * 118.8 * 0.005;
  double cash1 = 1100 - 10 * buy - fee_in;
  CHECK_MSG(near(bt.equity[1], cash1 + 10 * 120, 1e-12), "equity[1] %.12g, want %.12g", bt.equity[1], cash1 + 1200);
  CHECK(near(bt.equity[3], cash1 + 10 * sell - fee_out, 1e-12));
  if (bt.n_trades == 1) {
    CHECK(near(bt.trades[0].entry_price, buy, 1e-12) && near(bt.trades[0].exit_price, sell, 1e-12));
    CHECK(near(bt.trades[0].pnl, 10 * (sell - buy) - fee_in - fee_out, 1e-10));
  }
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

/* Short 1: -10 units at 110, cash 2200; covered at open 3 (120): pnl -100. */
static void test_short(void) {
  tg_bars b;
  make_bars(&b, O4, C4, 4);
  double target[4] = {-1, -1, 0, 0};
  tg_bt_opts o = tg_bt_defaults();
  o.cash = 1100;
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  CHECK(near(bt.units[1], -10, 1e-12) && near(bt.equity[1], 2200 - 1200, 1e-12));
  CHECK(near(bt.position[1], -1.2, 1e-12));
  CHECK(near(bt.equity[3], 1000, 1e-12));
  CHECK(bt.n_trades == 1 && bt.trades[0].side == -1 && near(bt.trades[0].pnl, -100, 1e-12));
  CHECK(bt.stats.win_rate == 0.0);
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

/* A flip from long to short closes one trade and opens another at the same fill; a trade still open
 * at the end is valued at the last close. */
static void test_flip_and_open_trade(void) {
  tg_bars b;
  make_bars(&b, O4, C4, 4);
  double target[4] = {1, -1, -1, -1};
  tg_bt_opts o = tg_bt_defaults();
  o.cash = 1100;
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  /* open 2 (130): equity 1300, long 10 -> short 10 */
  CHECK(near(bt.units[2], -10, 1e-12) && near(bt.equity[3], 1300 + 10 * (130 - 140), 1e-12));
  CHECK(bt.n_trades == 2);
  if (bt.n_trades == 2) {
    CHECK(bt.trades[0].side == 1 && near(bt.trades[0].pnl, 200, 1e-12) && !bt.trades[0].open);
    CHECK(bt.trades[1].side == -1 && bt.trades[1].open && near(bt.trades[1].exit_price, 140, 1e-12));
    CHECK(near(bt.trades[1].pnl, -100, 1e-12) && bt.trades[1].exit_bar == 3);
  }
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

static tg_status synth(int64_t n, uint64_t seed, tg_bars *b) {
  tg_synth_config c = tg_synth_defaults();
  c.bars = n;
  c.seed = seed;
  c.interval_ns = HOUR_NS;
  c.session_start_min = c.session_end_min = 0;
  c.regime_drift = 0.05;
  return tg_synth_generate(&c, b);
}

/* Buy and hold: units = cash / open[1]; equity = the price path minus the entry cost. */
static void test_buy_and_hold(void) {
  tg_bars b;
  CHECK_OK(synth(500, 3, &b));
  tg_strategy s;
  CHECK_OK(tg_strategy_parse("buy-and-hold", &s));
  double *target = malloc(500 * sizeof(double));
  CHECK_OK(tg_strategy_targets(&s, &b, target));
  tg_bt_opts o = tg_bt_defaults();
  o.commission = 0.001;
  o.slippage = 0.0005;
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  double units = o.cash / b.open[1], cost = units * b.open[1] * (1 + o.slippage) * (1 + o.commission) - o.cash;
  int ok = bt.equity[0] == o.cash, same = 1;
  for (int64_t t = 1; t < b.n; t++) {
    ok &= near(bt.equity[t], units * b.close[t] - cost, 1e-12);
    same &= bt.equity[t] == bt.bh_equity[t];
  }
  CHECK_MSG(ok, "buy and hold is not the price path minus the entry cost");
  CHECK_MSG(same, "the buy-and-hold strategy differs from the buy-and-hold benchmark");
  CHECK(bt.n_trades == 1 && bt.trades[0].open && bt.stats.trades == 1 && bt.bh.trades == 1);
  CHECK(near(bt.stats.total_return, (units * b.close[b.n - 1] - cost) / o.cash - 1, 1e-12));
  CHECK(near(bt.stats.exposure, bt.bh.exposure, 0) && bt.stats.exposure > 0.99);
  CHECK(near(bt.stats.turnover, 1.0, 1e-12));
  free(target);
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

/* sma-cross:2,3 on closes 5 4 3 4 5 6 5 4, by hand: fast > slow at t = 4, 5, 6 only. */
static void test_sma_cross(void) {
  const double c[8] = {5, 4, 3, 4, 5, 6, 5, 4}, want[8] = {0, 0, 0, 0, 1, 1, 1, 0};
  tg_bars b;
  make_bars(&b, c, c, 8);
  tg_strategy s;
  CHECK_OK(tg_strategy_parse("sma-cross:2,3", &s));
  CHECK(s.kind == TG_STRATEGY_SMA_CROSS && s.fast == 2 && s.slow == 3 && !strcmp(s.name, "sma-cross:2,3"));
  double got[8];
  CHECK_OK(tg_strategy_targets(&s, &b, got));
  int ok = 1;
  for (int t = 0; t < 8; t++) ok &= got[t] == want[t];
  CHECK_MSG(ok, "sma-cross:2,3 targets %g %g %g %g %g %g %g %g", got[0], got[1], got[2], got[3], got[4], got[5], got[6], got[7]);
  /* a rising series: long from the first bar with SLOW closes, never before */
  const double up[6] = {1, 2, 3, 4, 5, 6};
  tg_bars u;
  make_bars(&u, up, up, 6);
  CHECK_OK(tg_strategy_parse("sma-cross:1,4", &s));
  CHECK_OK(tg_strategy_targets(&s, &u, got));
  CHECK(got[0] == 0 && got[1] == 0 && got[2] == 0 && got[3] == 1 && got[5] == 1);
  tg_bars_free(&u);
  tg_bars_free(&b);
}

/* A view of the first m bars. */
static tg_bars head(const tg_bars *b, int64_t m) {
  tg_bars v = *b;
  v.n = v.cap = m;
  return v;
}

/* A rule: fills target [bars->n] from bars. */
typedef tg_status (*rule_fn)(const tg_bars *b, double *target);

static const tg_strategy *g_rule;
static tg_status rule_strategy(const tg_bars *b, double *target) { return tg_strategy_targets(g_rule, b, target); }

/* A cheat: long when the NEXT close is higher (flat at the last bar, which has no next close). */
static tg_status rule_peek(const tg_bars *b, double *target) {
  for (int64_t i = 0; i < b->n; i++) target[i] = i + 1 < b->n && b->close[i + 1] > b->close[i] ? 1.0 : 0.0;
  return TG_OK;
}

/* Decisions and equity up to t from bars 0..t equal those of the whole series. */
static int prefix_same(const tg_bars *b, rule_fn rule, const double *full_t, const tg_backtest *full, int64_t t) {
  tg_bars v = head(b, t + 1);
  double *tt = malloc((size_t)(t + 1) * sizeof(double));
  tg_backtest bt;
  int ok = rule(&v, tt) == TG_OK && tg_backtest_run(&v, tt, &full->opts, &bt) == TG_OK;
  for (int64_t i = 0; ok && i <= t; i++)
    ok = tt[i] == full_t[i] && bt.equity[i] == full->equity[i] && bt.units[i] == full->units[i] &&
         bt.position[i] == full->position[i] && bt.bh_equity[i] == full->bh_equity[i];
  free(tt);
  tg_backtest_free(&bt);
  return ok;
}

static void test_no_lookahead(void) {
  tg_bars b;
  CHECK_OK(synth(2000, 11, &b));
  tg_strategy s;
  CHECK_OK(tg_strategy_parse("sma-cross:5,20", &s));
  g_rule = &s;
  double *target = malloc(2000 * sizeof(double));
  CHECK_OK(rule_strategy(&b, target));
  tg_bt_opts o = tg_bt_defaults();
  o.cost_bps = 2;
  o.slippage = 1e-4;
  tg_backtest full;
  CHECK_OK(tg_backtest_run(&b, target, &o, &full));
  CHECK(full.n_trades > 20); /* the rule trades, so the comparison means something */
  const int64_t ts[] = {1, 19, 20, 57, 500, 1234, 1998, 1999};
  for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
    CHECK_MSG(prefix_same(&b, rule_strategy, target, &full, ts[k]), "bars truncated after %lld change a decision or the "
              "equity", (long long)ts[k]);
  tg_backtest_free(&full);
  /* the check has teeth: a rule that peeks at the next close fails it wherever the next close rose */
  CHECK_OK(rule_peek(&b, target));
  CHECK_OK(tg_backtest_run(&b, target, &o, &full));
  int caught = 0;
  for (int64_t t = 100; t < 110; t++) caught += !prefix_same(&b, rule_peek, target, &full, t);
  CHECK_MSG(caught >= 2, "the truncation check caught a peeking rule at %d of 10 bars", caught);
  free(target);
  tg_backtest_free(&full);
  tg_bars_free(&b);
}

/* Equity 100 110 99 121 110 132 over exactly one year (5 bar intervals): bars per year 5. */
static void test_stats(void) {
  const double e[6] = {100, 110, 99, 121, 110, 132};
  int64_t ts[6];
  for (int i = 0; i < 6; i++) ts[i] = (int64_t)i * (YEAR_NS_I / 5);
  tg_bt_stats s;
  CHECK_OK(tg_bt_equity_stats(ts, e, 6, &s));
  double r[5] = {0.1, -0.1, 121.0 / 99 - 1, 110.0 / 121 - 1, 0.2}, m = 0, ss = 0, dn = 0;
  for (int k = 0; k < 5; k++) m += r[k] / 5;
  for (int k = 0; k < 5; k++) ss += (r[k] - m) * (r[k] - m), dn += r[k] < 0 ? r[k] * r[k] : 0;
  double sd = sqrt(ss / 4);
  CHECK(near(s.bars_per_year, 5, 1e-12) && near(s.years, 1, 1e-12));
  CHECK(near(s.total_return, 0.32, 1e-12) && near(s.annual_return, 0.32, 1e-12));
  CHECK(near(s.annual_vol, sd * sqrt(5), 1e-12));
  CHECK_MSG(near(s.sharpe, m / sd * sqrt(5), 1e-12), "sharpe %g", s.sharpe);
  CHECK_MSG(near(s.sortino, m / sqrt(dn / 5) * sqrt(5), 1e-12), "sortino %g", s.sortino);
  CHECK_MSG(near(s.max_drawdown, -0.1, 1e-12), "max drawdown %g, want -0.1", s.max_drawdown);
  CHECK(s.dd_peak == 1 && s.dd_trough == 2 && s.dd_end == 3 && s.dd_recovered && s.dd_bars == 2);
  CHECK(s.dd_ns == 2 * (YEAR_NS_I / 5));
  CHECK(near(s.calmar, 3.2, 1e-12));
  /* the same Sharpe as the trading environment's */
  double pos[5] = {1, 1, 1, 1, 1};
  tg_trading_stats q;
  CHECK_OK(tg_trading_stats_compute(r, pos, r, 5, 5.0, &q));
  CHECK(near(s.sharpe, q.sharpe, 1e-12));
  /* a drawdown that never recovers lasts to the last bar */
  const double f[4] = {100, 120, 90, 100};
  CHECK_OK(tg_bt_equity_stats(ts, f, 4, &s));
  CHECK(near(s.max_drawdown, -0.25, 1e-12) && s.dd_peak == 1 && s.dd_trough == 2 && s.dd_end == 3 && !s.dd_recovered);
  CHECK(s.dd_bars == 2);
  /* flat equity: no drawdown, Sharpe, Sortino or Calmar */
  const double g[3] = {100, 100, 100};
  CHECK_OK(tg_bt_equity_stats(ts, g, 3, &s));
  CHECK(s.max_drawdown == 0 && s.sharpe == 0 && s.sortino == 0 && s.calmar == 0 && s.dd_bars == 0);
  /* trades: win rate and averages */
  tg_bt_trade tr[4];
  memset(tr, 0, sizeof tr);
  const double pnl[4] = {10, -5, 0, 3}, ret[4] = {0.1, -0.05, 0, 0.03};
  for (int i = 0; i < 4; i++) tr[i].pnl = pnl[i], tr[i].ret = ret[i];
  tg_bt_trade_stats(tr, 4, &s);
  CHECK(s.trades == 4 && s.win_rate == 0.5 && near(s.avg_trade_pnl, 2, 1e-12) && near(s.avg_trade_return, 0.02, 1e-12));
  CHECK_STATUS(tg_bt_equity_stats(ts, e, 1, &s), TG_ERR_INVALID);
}

static int err_has(const char *what) { return strstr(tg_last_error(), what) != NULL; }

static void test_errors(void) {
  tg_bars b;
  tg_backtest bt;
  double target[4] = {0, 0, 0, 0};
  tg_bt_opts o = tg_bt_defaults();
  tg_bars_init(&b);
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("no bars"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  make_bars(&b, O4, C4, 1);
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("1 bar") && err_has("at least 2"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  tg_bars_free(&b);
  /* two instruments */
  tg_bars_init(&b);
  CHECK_OK(tg_bars_reserve(&b, 4, 1));
  for (int i = 0; i < 4; i++) tg_bars_push(&b, i * HOUR_NS, 100, 101, 99, 100, 1, (uint32_t)(i % 2));
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("more than one instrument") && err_has("bar 1"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  tg_bars_free(&b);
  /* a target out of range, a bad price, bad options */
  make_bars(&b, O4, C4, 4);
  double big[4] = {0, 0, 1.5, 0};
  CHECK_STATUS(tg_backtest_run(&b, big, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("bar 2") && err_has("1.5"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  big[2] = NAN;
  CHECK_STATUS(tg_backtest_run(&b, big, &o, &bt), TG_ERR_INVALID);
  tg_backtest_free(&bt);
  o.cash = 0;
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK(err_has("cash"));
  tg_backtest_free(&bt);
  o = tg_bt_defaults();
  b.open[2] = -1; /* the readers' checks, with their messages */
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_FORMAT);
  CHECK_MSG(err_has("row 3") && err_has("open is -1"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  b.open[2] = 130;
  int64_t t2 = b.ts[2];
  b.ts[2] = b.ts[1];
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_FORMAT);
  CHECK_MSG(err_has("row 2") && err_has("share one timestamp"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  b.ts[2] = b.ts[1] - 1;
  CHECK_STATUS(tg_backtest_run(&b, target, &o, &bt), TG_ERR_INVALID);
  CHECK_MSG(err_has("increase"), "%s", tg_last_error());
  tg_backtest_free(&bt);
  b.ts[2] = t2;
  tg_bars_free(&b);
  /* strategies */
  tg_strategy s;
  const char *bad[] = {"sma-cross:50,20", "sma-cross:20,20", "sma-cross:a,b", "sma", "sma-cross:20", "sma-cross:20,50x",
                       "sma-cross:0,5", "sma-cross:-1,5", "buy-and-hold ", "sma-cross: 2,5", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_STATUS(tg_strategy_parse(bad[i], &s), TG_ERR_INVALID);
    char want[64];
    snprintf(want, sizeof want, "'%s'", bad[i]);
    CHECK_MSG(err_has(want) && (err_has("want") || err_has("must")), "%s: %s", bad[i], tg_last_error());
  }
  /* splits: 70/15/15 by bars */
  tg_bars v;
  CHECK_OK(synth(100, 1, &b));
  CHECK_OK(tg_backtest_split(&b, "train", 0, 0, NULL, &v));
  CHECK(v.n == 70 && v.ts == b.ts);
  CHECK_OK(tg_backtest_split(&b, "val", 0, 0, NULL, &v));
  CHECK(v.n == 15 && v.ts == b.ts + 70 && v.close == b.close + 70);
  CHECK_OK(tg_backtest_split(&b, "test", 0, 0, NULL, &v));
  CHECK(v.n == 15 && v.open == b.open + 85);
  CHECK_OK(tg_backtest_split(&b, "all", 0, 0, NULL, &v));
  CHECK(v.n == 100);
  CHECK_STATUS(tg_backtest_split(&b, "holdout", 0, 0, NULL, &v), TG_ERR_INVALID);
  CHECK(err_has("'holdout'"));
  CHECK_OK(tg_backtest_split(&b, "test", 0.6, 0.2, NULL, &v)); /* a run's own fractions */
  CHECK(v.n == 20 && v.open == b.open + 80);
  CHECK_STATUS(tg_backtest_split(&b, "val", 0.9, 0.2, NULL, &v), TG_ERR_INVALID);
  tg_bars_free(&b);
}

/* Counts the lines of a file and checks its header. */
static int64_t lines_of(const char *path, const char *header) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[512];
  int64_t n = 0;
  int ok = fgets(line, sizeof line, f) && !strncmp(line, header, strlen(header));
  while (fgets(line, sizeof line, f)) n++;
  fclose(f);
  return ok ? n : -2;
}

static void test_files(void) {
  tg_bars b;
  CHECK_OK(synth(300, 5, &b));
  tg_strategy s;
  CHECK_OK(tg_strategy_parse("sma-cross:3,10", &s));
  double target[300];
  CHECK_OK(tg_strategy_targets(&s, &b, target));
  tg_bt_opts o = tg_bt_defaults();
  tg_backtest bt;
  CHECK_OK(tg_backtest_run(&b, target, &o, &bt));
  char dir[] = "/tmp/tg_backtest_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char sub[128], path[192];
  snprintf(sub, sizeof sub, "%s/out", dir);
  CHECK_OK(tg_backtest_write(&bt, s.name, sub));
  snprintf(path, sizeof path, "%s/equity.csv", sub);
  CHECK(lines_of(path, "ts,close,position,equity,drawdown,bh_equity") == 300);
  unlink(path);
  snprintf(path, sizeof path, "%s/trades.csv", sub);
  CHECK(lines_of(path, "entry_time,exit_time,side,size,entry_price,exit_price,pnl,return") == bt.n_trades);
  unlink(path);
  snprintf(path, sizeof path, "%s/backtest.json", sub);
  CHECK(lines_of(path, "{") > 3);
  unlink(path);
  rmdir(sub);
  rmdir(dir);
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

/* Undefined statistics (a deviation that is NaN or infinite, as on returns that overflow) are null in backtest.json
 * (which the project's JSON reader parses) and "-" in the printed table, never nan or inf. Bars extreme enough to
 * make them are refused by the bar check before a backtest runs, so the statistics are made undefined here. */
static void test_undefined_stats(void) {
  static const double o[5] = {100, 100, 1e-300, 1e300, 100}, c[5] = {100, 1e-300, 1e300, 100, 100};
  tg_bars b;
  make_bars(&b, o, c, 5);
  double target[5] = {0}; /* no trades: the strategy's own statistics stay defined */
  tg_bt_opts opts = tg_bt_defaults();
  tg_backtest bt;
  CHECK_STATUS(tg_backtest_run(&b, target, &opts, &bt), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "row 2") && strstr(tg_last_error(), "1e-300"), "%s", tg_last_error());
  tg_bars_free(&b);
  make_bars(&b, O4, C4, 4);
  CHECK_OK(tg_backtest_run(&b, target, &opts, &bt));
  bt.bh.sharpe = NAN, bt.bh.sortino = INFINITY;
  char dir[] = "/tmp/tg_backtest_XXXXXX", path[192];
  CHECK(mkdtemp(dir) != NULL);
  CHECK_OK(tg_backtest_write(&bt, "flat", dir));
  snprintf(path, sizeof path, "%s/backtest.json", dir);
  tg_json_doc *doc = NULL;
  CHECK_OK(tg_json_parse_file(path, &doc));
  const tg_json *bh = doc ? tg_json_get(tg_json_root(doc), "buy_and_hold_stats") : NULL;
  const tg_json *sharpe = tg_json_get(bh, "sharpe"), *trades = tg_json_get(bh, "trades");
  CHECK_MSG(sharpe && sharpe->type == TG_JSON_NULL, "backtest.json: buy_and_hold_stats.sharpe should be null");
  CHECK(trades && trades->type == TG_JSON_INT);
  const tg_json *own = tg_json_get(tg_json_get(tg_json_root(doc), "strategy_stats"), "sharpe");
  CHECK(own && (own->type == TG_JSON_INT || own->type == TG_JSON_REAL) && own->num == 0);
  tg_json_free(doc);
  char text[4096] = {0};
  FILE *f = fmemopen(text, sizeof text - 1, "w");
  CHECK(f != NULL);
  if (f) {
    tg_backtest_print(f, &bt, "flat");
    fclose(f);
  }
  CHECK_MSG(!strstr(text, "nan") && !strstr(text, "inf") && strstr(text, " -\n"), "the printed table: %s", text);
  unlink(path);
  snprintf(path, sizeof path, "%s/equity.csv", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/trades.csv", dir);
  unlink(path);
  rmdir(dir);
  tg_backtest_free(&bt);
  tg_bars_free(&b);
}

int main(void) {
  test_fill_next_open();
  test_slippage_and_bps();
  test_short();
  test_flip_and_open_trade();
  test_buy_and_hold();
  test_sma_cross();
  test_no_lookahead();
  test_stats();
  test_errors();
  test_files();
  test_undefined_stats();
  return tg_test_finish();
}
