/* Backtests: a target position per bar -> fills at the next open with costs, equity, round-trip trades, statistics; rule strategies. */
#ifndef TICKGRAD_BACKTEST_H
#define TICKGRAD_BACKTEST_H

#include <stdint.h>
#include <stdio.h>
#include "tickgrad/data.h"
#include "tickgrad/predictor.h"
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engine, over the bars of ONE instrument (an instrument column with two ids is an error):
 *
 *   decision: target[t] in [-1, 1] is the position wanted as a fraction of equity (1: fully long,
 *             -1: fully short, 0: flat), decided at bar t's close from bars 0..t only. Whoever fills
 *             target (a rule strategy, a forecaster, a policy) must not read a later bar; the engine
 *             never shows it one (target is an array given before the run, and the test suite checks
 *             that truncating the bars after t leaves every decision up to t unchanged);
 *   order:    when target[t] differs from the last target acted on, an order fills at bar t+1's open
 *             o: with E = cash + units * o the equity at that open, the new holding is
 *             units' = target[t] * E / o (sized on the equity before costs, so a full long position
 *             leaves cash at minus its entry cost). The decision at the last bar never fills;
 *   costs:    (multiplier and tick_size: bar t's, from its columns, when opts take them from the bars)
 *             the fill price is o * (1 + slippage) + h for a buy and o * (1 - slippage) - h for a sale, h half
 *             the spread of the quote prevailing at that open (the bid and ask columns of bar t, the quote at
 *             its close; 0 without such columns), rounded to a multiple of tick_size against the order when
 *             tick_size > 0; the fee is (commission + cost_bps * 1e-4) times the traded value
 *             |units' - units| * multiplier * fill price, plus commission_per_contract * |units' - units|;
 *   rolls:    with a column named contract, a position held from bar t-1's close into bar t of another
 *             contract pays a round trip of its units at bar t's open (a sale and a buy at the fill prices
 *             above, with their fees) before that open's order; the trade goes on;
 *   equity:   cash + units * multiplier * close, marked at every bar's close (bar 0: the starting cash);
 *   ruin:     if the equity at an open is <= 0 the order closes the position instead.
 *
 * Trades are round trips: a trade opens when the holding leaves 0 (or changes sign) and closes when it
 * returns to 0 (or changes sign); adding to or reducing a position of the same side is part of the
 * same trade. pnl = side * (exit value - entry value) - fees, return = pnl / entry value; prices are
 * the value-weighted fill prices. A position still open after the last bar is valued at the last close
 * without exit costs and flagged open; it counts in the trade statistics. */
typedef struct tg_bt_opts {
  double cash;        /* starting cash (default 100000) */
  double commission;  /* fee as a fraction of traded value (default 0) */
  double cost_bps;    /* further fee in basis points of traded value (default 0) */
  double slippage;    /* fill price moved against the order by this fraction of the open (default 0) */
  double multiplier;  /* cash value of one unit per point of price: a futures contract's multiplier (default 1) */
  double tick_size;   /* fill prices rounded to multiples of it against the order (default 0: not rounded) */
  double commission_per_contract; /* fee per unit (contract, share) traded (default 0) */
  int ignore_quotes;  /* 1: bid and ask columns do not enter the fill price (default 0: they do when present) */
  /* 1 (tg_bt_defaults; the flags --multiplier and --tick-size clear theirs): a numeric bar column multiplier (or
   * tick_size), as DBN definition records give the bars of DBN ticks, stands in for the field bar by bar, so a series
   * of several contracts uses each bar's contract's; a bar whose value is missing takes the field. 0: the field. */
  int multiplier_from_bars, tick_size_from_bars;
} tg_bt_opts;

tg_bt_opts tg_bt_defaults(void);

/* Statistics of one equity curve. Per-bar returns r_k = E_k / E_{k-1} - 1, k = 1..n-1; annualised with
 * bars_per_year = (n - 1) / (span in years of 365.25 days), the trading environment's convention
 * (tg_trading_stats_compute): Sharpe = mean(r) / sample std(r) * sqrt(bars_per_year) (0 when the std
 * is 0), Sortino = mean(r) / sqrt(mean(min(r, 0)^2)) * sqrt(bars_per_year) (0 with no losing bar). */
typedef struct tg_bt_stats {
  int64_t bars;
  double bars_per_year, years;
  double start_equity, final_equity;
  double total_return;     /* E_end / E_0 - 1 */
  double annual_return;    /* (1 + total_return)^(1 / years) - 1 (-1 after ruin) */
  double annual_vol;       /* sample std of r * sqrt(bars_per_year) */
  double sharpe, sortino;
  double max_drawdown;     /* min over t of E_t / max_{s <= t} E_s - 1: <= 0 */
  int64_t dd_peak, dd_trough, dd_end; /* bars of the deepest drawdown: its peak, trough, recovery (or last bar) */
  int64_t dd_bars;         /* its duration: dd_end - dd_peak */
  int64_t dd_ns;           /* the same in time: ts[dd_end] - ts[dd_peak] */
  int dd_recovered;        /* 1 when the equity got back to the peak */
  double calmar;           /* annual_return / |max_drawdown| (0 without a drawdown) */
  int64_t trades;          /* round trips */
  double win_rate;         /* trades with pnl > 0 / trades (0 without trades) */
  double avg_trade_pnl, avg_trade_return; /* mean pnl (cash) and return of a trade */
  double exposure;         /* mean |fraction of equity held| over the closes of bars 1..n-1 */
  double turnover;         /* sum over fills of |units traded| * open / equity at that open (1 to enter a full position) */
  double fees;             /* every fee paid (commissions, cost_bps, per contract), rolls' included */
  double spread_cost;      /* sum over fills of |units traded| * multiplier * h (half spreads crossed), rolls' included */
  int64_t rolls;           /* changes of contract crossed with a position */
  double roll_cost;        /* what those rolls cost: their fees and the price given up */
} tg_bt_stats;

typedef struct tg_bt_trade {
  int64_t entry_bar, exit_bar; /* bars of the first and the last fill (exit: the last bar when open) */
  int64_t entry_ts, exit_ts;
  int side;                    /* 1 long, -1 short */
  int open;                    /* 1: still open at the end, valued at the last close */
  double size;                 /* the largest holding of the trade, in units */
  double entry_price, exit_price; /* value-weighted fill prices */
  double entry_value, exit_value, fees;
  double pnl, ret;
} tg_bt_trade;

typedef struct tg_backtest {
  int64_t n;
  int64_t *ts;              /* [n] bar times, UTC ns (a copy) */
  double *close;            /* [n] */
  double *target;           /* [n] the decisions as given */
  double *units;            /* [n] holding at each close */
  double *position;         /* [n] holding as a fraction of equity at each close */
  double *equity;           /* [n] */
  double *drawdown;         /* [n] E_t / max_{s <= t} E_s - 1 */
  double *bh_equity;        /* [n] buy and hold (target 1 at every bar) with the same costs */
  tg_bt_trade *trades;      /* [n_trades] */
  int64_t n_trades;
  tg_bt_opts opts;
  tg_bt_stats stats, bh;    /* the strategy's and buy and hold's */
  int quoted;               /* the bars' bid and ask columns entered the fill prices */
  int64_t unquoted_fills;   /* of the strategy's fills, those before any bar had a quote (h = 0) */
  int contracts;            /* the bars have a contract column (rolls are charged) */
  int multiplier_from_bars, tick_size_from_bars; /* the bars' columns gave them (opts' fields for bars without a value) */
} tg_backtest;

/* Runs target [bars->n] over bars; out is initialised by this call (tg_backtest_free it, also after a
 * failure). Errors (TG_ERR_INVALID) name the problem: fewer than 2 bars, several instruments, times
 * not increasing, a price that is not a positive number, a target outside [-1, 1], bad options, a bid
 * column without an ask one (or the other way), a quote that is not numeric, not positive or crossed. */
tg_status tg_backtest_run(const tg_bars *bars, const double *target, const tg_bt_opts *opts, tg_backtest *out);
void tg_backtest_free(tg_backtest *bt);

/* Checks that bars can be backtested (what tg_backtest_run checks); where names the caller. */
tg_status tg_backtest_check_bars(const tg_bars *bars, const char *where);

/* The statistics of an equity curve: the return, volatility, Sharpe, Sortino, drawdown and Calmar
 * fields of out (the trade, exposure and turnover fields are left 0). n >= 2, ts increasing. */
tg_status tg_bt_equity_stats(const int64_t *ts, const double *equity, int64_t n, tg_bt_stats *out);
/* Fills out's trades, win_rate and the averages from n trades. */
void tg_bt_trade_stats(const tg_bt_trade *trades, int64_t n, tg_bt_stats *out);

/* A view of the chronological split of bars by count, as the trainer's: train the first floor(train_frac n)
 * bars, val up to floor((train_frac + val_frac) n), test the rest (0, 0: the trainer's defaults 0.7, 0.15);
 * "all" is every bar. view points into bars (nothing to free); cols [bars->n_cols] is room for the view's extra
 * columns (the quotes and contracts the engine reads), or NULL for the bar fields only. An unknown name, bad
 * fractions or an empty split is TG_ERR_INVALID naming it. */
tg_status tg_backtest_split(const tg_bars *bars, const char *split, double train_frac, double val_frac,
                            tg_bar_column *cols, tg_bars *view);

/* Rule strategies: "buy-and-hold" (target 1 at every bar) and "sma-cross:FAST,SLOW" (1 when the mean
 * of the last FAST closes is above the mean of the last SLOW closes, else 0; 0 before SLOW bars exist;
 * 1 <= FAST < SLOW). */
typedef enum tg_strategy_kind { TG_STRATEGY_BUY_HOLD = 0, TG_STRATEGY_SMA_CROSS } tg_strategy_kind;

typedef struct tg_strategy {
  tg_strategy_kind kind;
  int fast, slow;
  char name[64];            /* canonical text: "buy-and-hold", "sma-cross:20,50" */
} tg_strategy;

/* TG_ERR_INVALID naming the text and what was expected. */
tg_status tg_strategy_parse(const char *text, tg_strategy *out);
/* target [bars->n]: the decision at each bar, each from bars 0..t only. */
tg_status tg_strategy_targets(const tg_strategy *s, const tg_bars *bars, double *target);

/* ---- decisions from a forecaster's quantiles ----
 * At each bar t the predictor (fed bars 0..t, and nothing later) gives the quantiles of the log return h bars
 * ahead; with lo and hi the lowest and highest configured quantiles and mid the one nearest the median:
 *   band (the default): long when lo > cost (even the pessimistic forecast clears the round trip), short when
 *                       hi < -cost, else flat;
 *   median:             long when mid > cost, short when mid < -cost, else flat;
 * cost is the round trip as a return, 2 * (commission + cost_bps * 1e-4 + slippage). Without allow_short a short
 * signal is flat. sized scales a position by the forecast's signal to spread, min(1, |mid| / |hi - lo|) (1 when
 * hi == lo), instead of taking it whole. A bar without a forecast yet (warm-up) is flat. */
typedef enum tg_fc_rule_kind { TG_FC_BAND = 0, TG_FC_MEDIAN } tg_fc_rule_kind;

typedef struct tg_fc_rule {
  tg_fc_rule_kind kind;
  int horizon;      /* 1..H, the forecast used (0: H, the longest) */
  double cost;      /* round-trip cost as a return */
  int allow_short;  /* default 1 */
  int sized;        /* default 0: whole positions */
  const char *class_map; /* a classifier: "name=pos,name=pos" (NULL: the default map below) */
  double threshold; /* a classifier: the least probability of the most probable class that is acted on (default 0) */
} tg_fc_rule;

/* A classifier's rule: the most probable class k of each bar's probabilities is acted on when p_k >= threshold:
 * the position is class_map's number for k (unnamed classes 0), else flat. The default map gives +1 to the classes
 * named up, buy or long, -1 to down, sell or short, and 0 to the rest (triple-barrier's down, time, up: -1, 0, 1).
 * Without allow_short a negative position is flat; sized scales the position by p_k. The cost does not enter.
 * positions [n_classes] receives the map; TG_ERR_INVALID naming an unknown class (and listing the classes), a bad
 * number or a threshold outside [0, 1]. */
tg_status tg_fc_class_positions(const tg_fc_rule *r, const tg_predictor_info *in, double *positions);

tg_fc_rule tg_fc_rule_defaults(void);
/* "band" or "median" (TG_ERR_INVALID otherwise). */
tg_status tg_fc_rule_parse(const char *text, tg_fc_rule_kind *out);
/* The round trip of opts as a return: 2 * (commission + cost_bps * 1e-4 + slippage). */
double tg_bt_round_trip(const tg_bt_opts *opts);
/* Resets p and pushes every bar of bars (one instrument, in time order); target [bars->n - from] receives the
 * decisions at bars from .. n-1 (the bars before from only warm the predictor up). *forecasts (may be NULL) counts
 * the decision bars that had a forecast. Errors name the bar. */
tg_status tg_fc_targets(tg_predictor *p, const tg_bars *bars, int64_t from, const tg_fc_rule *rule, double *target,
                        int64_t *forecasts);

/* Writes dir/trades.csv, dir/equity.csv and dir/backtest.json (the options and both statistics), each
 * through a temporary file and a rename; dir is created. name labels the strategy in backtest.json. */
tg_status tg_backtest_write(const tg_backtest *bt, const char *name, const char *dir);
/* The metrics table, the strategy (labelled name) beside buy and hold. */
void tg_backtest_print(FILE *f, const tg_backtest *bt, const char *name);

/* ---- a trained run backtested (what `tickgrad backtest --run`, walkforward and sweep do) ---- */

/* A forecaster's rule and costs. */
typedef struct tg_fc_bt_opts {
  const char *rule;   /* band, median (NULL: band) */
  int horizon;        /* 0: the longest */
  int long_only, sized;
  const char *class_map; /* a classifier's map of classes to positions (NULL: the default, see tg_fc_rule) */
  double threshold;   /* a classifier's least probability to act on (default 0) */
  const char *weights; /* best (NULL) or last epoch's weights */
  tg_bt_opts o;       /* cash and costs (tg_bt_defaults) */
  FILE *log;          /* the statistics table and warnings (NULL: silent) */
} tg_fc_bt_opts;

/* Defaults: band, the longest horizon, long and short, whole positions, best weights, tg_bt_defaults, no log. */
tg_fc_bt_opts tg_fc_bt_defaults(void);
/* The decision rule of o (its round-trip cost from o->o). */
tg_fc_rule tg_fc_bt_rule(const tg_fc_bt_opts *o);
/* "mlp median h2 long-only": a forecaster rule's name in tables and files, for model kind in->kind. */
void tg_fc_rule_name(const tg_fc_rule *r, const tg_predictor_info *in, char *buf, size_t cap);
/* Backtests the forecaster of run on the bars of upto from bar `from` on (the bars before it warm the predictor up;
 * none after upto's last is seen): run/trades.csv, run/equity.csv, run/backtest.json, and run/report.html rewritten
 * (failing that is a warning on o->log); the statistics of the strategy and of buy and hold out (either may be NULL).
 * who names the caller in errors. */
tg_status tg_fc_backtest_run(const char *run, const tg_bars *upto, int64_t from, const tg_fc_bt_opts *o,
                             const char *who, tg_bt_stats *st, tg_bt_stats *bh);

/* A DQN or PPO run on the trading env (its RUN/env.json) acting greedily over one split in order. */
typedef struct tg_policy_bt_opts {
  const char *split;            /* val or test (NULL: test) */
  int n_data;
  const char *const *data;      /* bar files replacing the run's own (n_data 0: those of its env.json) */
  tg_bt_opts o;                 /* cash and costs */
  int costs_given;              /* 0: the env's cost_bps and slippage replace o's (said on log) */
  FILE *log;                    /* what is read and decided (NULL: silent) */
} tg_policy_bt_opts;

typedef struct tg_policy_bt {
  tg_backtest bt;               /* the engine's result over the decisions and the bar after the last */
  char model[16];               /* dqn, ppo */
  char name[32];                /* "dqn policy" */
  char source[256];             /* the bars' source */
  int64_t decisions;            /* decision bars of the split (after the window and feature warm-up) */
} tg_policy_bt;

/* The policy's position at each decision bar of the split (action 0 short, 1 flat, 2 long), filled at the next open
 * with costs. TG_ERR_INVALID when the run is not on the trading env or the split is not val or test; free with
 * tg_policy_bt_free. */
tg_status tg_policy_backtest(const char *run, const tg_policy_bt_opts *o, tg_policy_bt *out);
void tg_policy_bt_free(tg_policy_bt *r);

#ifdef __cplusplus
}
#endif
#endif
