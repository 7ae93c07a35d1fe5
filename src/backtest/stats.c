/* Backtest statistics: returns, volatility, Sharpe, Sortino, the deepest drawdown and its duration, Calmar, trade statistics. */
#include <math.h>
#include <string.h>
#include "tickgrad/backtest.h"

#define YEAR_NS (365.25 * 86400.0 * 1e9)

/* r_k = E_k / E_{k-1} - 1 (0 after ruin, when E_{k-1} <= 0). */
static double bar_return(const double *e, int64_t k) { return e[k - 1] > 0 ? e[k] / e[k - 1] - 1.0 : 0.0; }

/* Mean, sample std and downside deviation sqrt(mean(min(r, 0)^2)) of the n-1 bar returns. */
static void moments(const double *e, int64_t n, double *mean, double *sd, double *down) {
  int64_t T = n - 1;
  double s = 0, neg = 0;
  for (int64_t k = 1; k < n; k++) {
    double r = bar_return(e, k);
    s += r;
    if (r < 0) neg += r * r;
  }
  double m = s / (double)T, ss = 0;
  for (int64_t k = 1; k < n; k++) {
    double d = bar_return(e, k) - m;
    ss += d * d;
  }
  *mean = m;
  *sd = T > 1 ? sqrt(ss / (double)(T - 1)) : 0.0;
  *down = sqrt(neg / (double)T);
}

/* The deepest drawdown: its depth, peak, trough and the bar it recovered at (or the last bar). */
static void drawdown(const int64_t *ts, const double *e, int64_t n, tg_bt_stats *o) {
  int64_t peak = 0;
  o->max_drawdown = 0;
  o->dd_peak = o->dd_trough = o->dd_end = 0;
  for (int64_t t = 1; t < n; t++) {
    if (e[t] >= e[peak]) {
      peak = t;
      continue;
    }
    double dd = e[peak] > 0 ? e[t] / e[peak] - 1.0 : 0.0;
    if (dd < o->max_drawdown) o->max_drawdown = dd, o->dd_peak = peak, o->dd_trough = t;
  }
  o->dd_end = n - 1;
  o->dd_recovered = 0;
  if (o->max_drawdown < 0) {
    for (int64_t t = o->dd_trough + 1; t < n; t++)
      if (e[t] >= e[o->dd_peak]) {
        o->dd_end = t;
        o->dd_recovered = 1;
        break;
      }
  } else {
    o->dd_end = 0;
  }
  o->dd_bars = o->dd_end - o->dd_peak;
  o->dd_ns = ts[o->dd_end] - ts[o->dd_peak];
}

tg_status tg_bt_equity_stats(const int64_t *ts, const double *equity, int64_t n, tg_bt_stats *out) {
  if (!ts || !equity || !out || n < 2 || ts[n - 1] <= ts[0])
    return tg_error(TG_ERR_INVALID, "backtest stats: need an equity curve of at least 2 bars over a positive time span "
                    "(%lld bars)", (long long)n);
  memset(out, 0, sizeof *out);
  out->bars = n;
  out->years = (double)(ts[n - 1] - ts[0]) / YEAR_NS;
  out->bars_per_year = (double)(n - 1) / out->years;
  out->start_equity = equity[0];
  out->final_equity = equity[n - 1];
  out->total_return = equity[0] > 0 ? equity[n - 1] / equity[0] - 1.0 : 0.0;
  out->annual_return = out->total_return > -1.0 ? pow(1.0 + out->total_return, 1.0 / out->years) - 1.0 : -1.0;
  double mean, sd, down, ann = sqrt(out->bars_per_year);
  moments(equity, n, &mean, &sd, &down);
  out->annual_vol = sd * ann;
  /* the trading environment's Sharpe (tg_trading_stats_compute): mean / sample std * sqrt(bars per year) */
  out->sharpe = sd > 0 ? mean / sd * ann : sd == 0 ? 0.0 : NAN; /* NaN (undefined): returns that overflowed */
  out->sortino = down > 0 ? mean / down * ann : down == 0 ? 0.0 : NAN;
  drawdown(ts, equity, n, out);
  out->calmar = out->max_drawdown < 0 ? out->annual_return / -out->max_drawdown : 0.0;
  return TG_OK;
}

void tg_bt_trade_stats(const tg_bt_trade *trades, int64_t n, tg_bt_stats *out) {
  int64_t wins = 0;
  double pnl = 0, ret = 0;
  for (int64_t i = 0; i < n; i++) {
    wins += trades[i].pnl > 0;
    pnl += trades[i].pnl;
    ret += trades[i].ret;
  }
  out->trades = n;
  out->win_rate = n ? (double)wins / (double)n : 0.0;
  out->avg_trade_pnl = n ? pnl / (double)n : 0.0;
  out->avg_trade_return = n ? ret / (double)n : 0.0;
}
