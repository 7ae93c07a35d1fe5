/* The backtest metrics table: the strategy beside buy and hold. */
#include <stdio.h>
#include "backtest/costs.h"
#include "base/text.h"
#include "data/readers/timeconv.h"
#include "tickgrad/backtest.h"

typedef enum kind { PCT, NUM, INT, DD_TIME, MONEY } kind;

static void cell(char *buf, size_t n, kind k, const tg_bt_stats *s, double v) {
  char d[32];
  switch (k) {
  case PCT: tg_format_cell(buf, n, v, "%.2f%%", 100.0 * v); break; /* "-": undefined for these bars */
  case NUM: tg_format_cell(buf, n, v, "%.3f", v); break;
  case INT: tg_format_cell(buf, n, v, "%.0f", v); break;
  case MONEY: tg_format_cell(buf, n, v, "%.2f", v); break;
  case DD_TIME:
    snprintf(buf, n, "%lld bars, %s%s", (long long)s->dd_bars, tg_format_duration(s->dd_ns, d, sizeof d),
             s->dd_recovered || s->dd_bars == 0 ? "" : " (open)");
    break;
  }
}

static void row(FILE *f, const char *label, kind k, const tg_bt_stats *a, double va, const tg_bt_stats *b, double vb) {
  char x[64], y[64];
  cell(x, sizeof x, k, a, va);
  cell(y, sizeof y, k, b, vb);
  fprintf(f, "  %-22s %26s %26s\n", label, x, y);
}

void tg_backtest_print(FILE *f, const tg_backtest *bt, const char *name) {
  const tg_bt_stats *a = &bt->stats, *b = &bt->bh;
  char t0[40], t1[40], bpy[40];
  fprintf(f, "backtest: %lld bars, %s .. %s UTC, %s bars a year; cash %.2f, commission %g, cost %g bps, slippage %g\n",
          (long long)bt->n, tg_format_utc(bt->ts[0], 0, t0, sizeof t0), tg_format_utc(bt->ts[bt->n - 1], 0, t1, sizeof t1),
          tg_format_cell(bpy, sizeof bpy, a->bars_per_year, "%.1f", a->bars_per_year), bt->opts.cash, bt->opts.commission, bt->opts.cost_bps, bt->opts.slippage);
  const tg_bt_opts *o = &bt->opts;
  char mult[64], tick[64];
  snprintf(mult, sizeof mult, bt->multiplier_from_bars ? "each bar's (its column; else %g)" : "%g", o->multiplier);
  snprintf(tick, sizeof tick, bt->tick_size_from_bars ? "each bar's (its column; else %g)" : "%g", o->tick_size);
  if (bt_market_costs(bt))
    fprintf(f, "costs: multiplier %s, tick size %s, commission per contract %g; %s; %s\n", mult, tick,
            o->commission_per_contract,
            bt->quoted ? "fills cross half the spread of the bid and ask columns" : "no quotes (no spread cost)",
            bt->contracts ? "a position held into a new contract pays a round trip" : "no contract column (no rolls)");
  if (bt->quoted && bt->unquoted_fills)
    fprintf(f, "warning: %lld fills came before the first quote and crossed no spread\n", (long long)bt->unquoted_fills);
  fprintf(f, "  %-22s %26s %26s\n", "", name, "buy-and-hold");
  row(f, "total return", PCT, a, a->total_return, b, b->total_return);
  row(f, "annual return", PCT, a, a->annual_return, b, b->annual_return);
  row(f, "annual volatility", PCT, a, a->annual_vol, b, b->annual_vol);
  row(f, "Sharpe", NUM, a, a->sharpe, b, b->sharpe);
  row(f, "Sortino", NUM, a, a->sortino, b, b->sortino);
  row(f, "max drawdown", PCT, a, a->max_drawdown, b, b->max_drawdown);
  row(f, "max drawdown duration", DD_TIME, a, 0, b, 0);
  row(f, "Calmar", NUM, a, a->calmar, b, b->calmar);
  row(f, "trades", INT, a, (double)a->trades, b, (double)b->trades);
  row(f, "win rate", PCT, a, a->win_rate, b, b->win_rate);
  row(f, "average trade", PCT, a, a->avg_trade_return, b, b->avg_trade_return);
  row(f, "average trade pnl", MONEY, a, a->avg_trade_pnl, b, b->avg_trade_pnl);
  row(f, "exposure", PCT, a, a->exposure, b, b->exposure);
  row(f, "turnover", NUM, a, a->turnover, b, b->turnover);
  if (bt_market_costs(bt)) {
    row(f, "fees", MONEY, a, a->fees, b, b->fees);
    row(f, "spread cost", MONEY, a, a->spread_cost, b, b->spread_cost);
    row(f, "rolls", INT, a, (double)a->rolls, b, (double)b->rolls);
    row(f, "roll cost", MONEY, a, a->roll_cost, b, b->roll_cost);
  }
  row(f, "final equity", MONEY, a, a->final_equity, b, b->final_equity);
}
