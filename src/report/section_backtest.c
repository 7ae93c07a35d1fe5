/* The report's backtest section: equity against buy and hold, drawdown, every statistic of backtest.json, the trades. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "report/report_internal.h"

/* ---- equity.csv ---- */

/* Drawdown in percent of the running peak, [n] into dd. */
static void drawdown_pct(const double *eq, int64_t n, double *dd) {
  double peak = NAN;
  for (int64_t i = 0; i < n; i++) {
    if (isfinite(eq[i]) && !(eq[i] <= peak)) peak = eq[i];
    dd[i] = isfinite(eq[i]) && peak > 0 ? 100.0 * (eq[i] / peak - 1.0) : NAN;
  }
}

static void equity_charts(rp_page *p, const rp_table *t) {
  int64_t n = t->nrow;
  int ts = rp_table_col(t, "ts");
  double *eq = rp_table_numbers(t, "equity"), *bh = rp_table_numbers(t, "bh_equity");
  double *dd = rp_table_numbers(t, "drawdown"), *bh_dd = tg_malloc((size_t)(n > 0 ? n : 1) * sizeof *bh_dd);
  const char **xtext = ts >= 0 ? tg_malloc((size_t)(n > 0 ? n : 1) * sizeof *xtext) : NULL;
  for (int64_t i = 0; xtext && i < n; i++) xtext[i] = rp_table_cell(t, i, ts);
  if (bh && bh_dd) drawdown_pct(bh, n, bh_dd);
  for (int64_t i = 0; dd && i < n; i++) dd[i] *= 100.0;
  rp_chart c;
  memset(&c, 0, sizeof c);
  c.id = "equity", c.title = "Equity: the strategy against buy and hold", c.ylabel = "equity", c.w = 1080, c.h = 320;
  c.xtext = xtext, c.xlabel = "bar (UTC)";
  rp_chart_add(&c, "strategy", NULL, eq, n, 0, 0);
  rp_chart_add(&c, "buy and hold", NULL, bh, n, 7, 1);
  rp_svg_lines_or(p, &c, "equity.csv has no equity values");
  c.id = "drawdown", c.title = "Drawdown below the running peak", c.ylabel = "percent", c.h = 220, c.n_series = 0;
  c.y_zero = 1;
  if (rp_chart_add(&c, "strategy", NULL, dd, n, 4, 0)) c.s[0].area = 1;
  rp_chart_add(&c, "buy and hold", NULL, bh && bh_dd ? bh_dd : NULL, n, 7, 1);
  rp_svg_lines_or(p, &c, "equity.csv has no drawdown values");
  tg_free(eq), tg_free(bh), tg_free(dd), tg_free(bh_dd), tg_free((void *)xtext);
}

/* ---- backtest.json ---- */

typedef enum stat_kind { K_PCT, K_NUM, K_INT, K_MONEY, K_F1, K_DUR, K_BOOL, K_OTHER } stat_kind;

typedef struct stat_row {
  const char *key, *label;
  stat_kind kind;
} stat_row;

/* backtest.json's statistics (tg_backtest_write), labelled and formatted as tg_backtest_print prints them */
static const stat_row STATS[] = {
    {"total_return", "total return", K_PCT},       {"annual_return", "annual return", K_PCT},
    {"annual_vol", "annual volatility", K_PCT},    {"sharpe", "Sharpe", K_NUM},
    {"sortino", "Sortino", K_NUM},                 {"max_drawdown", "max drawdown", K_PCT},
    {"max_drawdown_bars", "max drawdown duration (bars)", K_INT},
    {"max_drawdown_seconds", "max drawdown duration", K_DUR},
    {"max_drawdown_recovered", "recovered from it", K_BOOL},
    {"calmar", "Calmar", K_NUM},                   {"trades", "trades", K_INT},
    {"win_rate", "win rate", K_PCT},               {"avg_trade_return", "average trade", K_PCT},
    {"avg_trade_pnl", "average trade pnl", K_MONEY}, {"exposure", "exposure", K_PCT},
    {"turnover", "turnover", K_NUM},               {"start_equity", "start equity", K_MONEY},
    {"final_equity", "final equity", K_MONEY},     {"bars", "bars", K_INT},
    {"bars_per_year", "bars per year", K_F1},      {"years", "years", K_NUM},
};

static const stat_row *stat_of(const char *key) {
  for (size_t i = 0; i < sizeof STATS / sizeof STATS[0]; i++)
    if (strcmp(STATS[i].key, key) == 0) return &STATS[i];
  return NULL;
}

static void stat_cell(const tg_json *v, stat_kind k, char *buf, size_t n) {
  char d[32];
  if (!v || (v->type != TG_JSON_INT && v->type != TG_JSON_REAL)) {
    snprintf(buf, n, "\xe2\x80\x93");
    return;
  }
  double x = v->num;
  switch (k) {
  case K_PCT: snprintf(buf, n, "%.2f%%", 100.0 * x); break;
  case K_NUM: snprintf(buf, n, "%.3f", x); break;
  case K_INT: snprintf(buf, n, "%.0f", x); break;
  case K_MONEY: snprintf(buf, n, "%.2f", x); break;
  case K_F1: snprintf(buf, n, "%.1f", x); break;
  case K_DUR: snprintf(buf, n, "%s", tg_format_duration((int64_t)llround(x * 1e9), d, sizeof d)); break;
  case K_BOOL: snprintf(buf, n, "%s", x != 0 ? "yes" : "no"); break;
  default: rp_num(x, buf, n); break;
  }
}

static void json_line(rp_page *p, const tg_json *root) {
  const char *keys[7] = {"strategy", "first_bar", "last_bar", "cash", "commission", "cost_bps", "slippage"};
  const char *labels[7] = {"strategy", "first bar (UTC)", "last bar (UTC)", "cash", "commission", "cost (bps)",
                           "slippage"};
  rp_raw(p, "<dl class=\"kv\">");
  for (int i = 0; i < 7; i++) {
    const tg_json *v = tg_json_get(root, keys[i]);
    char b[256];
    if (!v) continue;
    if (v->type == TG_JSON_STRING) snprintf(b, sizeof b, "%s", v->str);
    else if (v->type == TG_JSON_INT || v->type == TG_JSON_REAL) rp_num(v->num, b, sizeof b);
    else continue;
    rp_raw(p, "<div><dt>");
    rp_text(p, labels[i]);
    rp_raw(p, "</dt><dd>");
    rp_text(p, b);
    rp_raw(p, "</dd></div>");
  }
  rp_raw(p, "</dl>\n");
}

/* One row: the statistic key of the strategy (a) and of buy and hold (b), formatted by s (NULL: a number). */
static void stat_tr(rp_page *p, const tg_json *a, const tg_json *b, const char *key, const stat_row *s) {
  const tg_json *other = b && b->type == TG_JSON_OBJECT ? tg_json_get(b, key) : NULL;
  char x[64], y[64];
  stat_cell(tg_json_get(a, key), s ? s->kind : K_OTHER, x, sizeof x);
  stat_cell(other, s ? s->kind : K_OTHER, y, sizeof y);
  rp_raw(p, "<tr data-stat=\"");
  rp_text(p, key);
  rp_raw(p, "\"><td>");
  rp_text(p, s ? s->label : key);
  rp_raw(p, "</td><td>");
  rp_text(p, x);
  rp_raw(p, "</td><td>");
  rp_text(p, y);
  rp_raw(p, "</td></tr>\n");
}

static void stats_table(rp_page *p, const tg_json *root) {
  const tg_json *a = tg_json_get(root, "strategy_stats"), *b = tg_json_get(root, "buy_and_hold_stats");
  const tg_json *name = tg_json_get(root, "strategy");
  if (!a || a->type != TG_JSON_OBJECT) {
    rp_unavailable(p, "backtest.json has no strategy_stats");
    return;
  }
  json_line(p, root);
  rp_raw(p, "<table class=\"stats\"><thead><tr><th>statistic</th><th>");
  rp_text(p, name && name->type == TG_JSON_STRING ? name->str : "strategy");
  rp_raw(p, "</th><th>buy and hold</th></tr></thead><tbody>\n");
  for (size_t i = 0; i < sizeof STATS / sizeof STATS[0]; i++) /* the known ones in a reading order */
    if (tg_json_get(a, STATS[i].key)) stat_tr(p, a, b, STATS[i].key, &STATS[i]);
  for (const tg_json *m = a->first; m; m = m->next) /* then any other */
    if (!stat_of(m->key)) stat_tr(p, a, b, m->key, NULL);
  rp_raw(p, "</tbody></table>\n");
}

/* ---- trades.csv ---- */

static void trade_row(rp_page *p, const rp_table *t, int64_t r) {
  rp_raw(p, "<tr>");
  for (int k = 0; k < t->ncol; k++) {
    const char *cell = rp_table_cell(t, r, k);
    char b[64];
    char *end = NULL;
    double v = cell[0] ? strtod(cell, &end) : NAN;
    int num = cell[0] && *end == '\0';
    rp_raw(p, "<td>");
    if (num && strcmp(t->names[k], "return") == 0) snprintf(b, sizeof b, "%.2f%%", 100.0 * v), rp_text(p, b);
    else if (num && strcmp(t->names[k], "open") != 0) rp_text(p, rp_num(v, b, sizeof b));
    else rp_text(p, cell);
    rp_raw(p, "</td>");
  }
  rp_raw(p, "</tr>\n");
}

static void trades_table(rp_page *p, const rp_table *t) {
  const int64_t show = 5;
  if (t->nrow == 0) {
    rp_note(p, "No trades: the strategy never held a position.");
    return;
  }
  if (t->nrow > 2 * show) rp_note(p, "%lld round trips; the first and the last %lld:", (long long)t->nrow, (long long)show);
  else rp_note(p, "%lld round trip%s:", (long long)t->nrow, t->nrow == 1 ? "" : "s");
  rp_raw(p, "<div class=\"scroll\"><table class=\"trades\"><thead><tr>");
  for (int k = 0; k < t->ncol; k++) {
    rp_raw(p, "<th>");
    rp_text(p, t->names[k]);
    rp_raw(p, "</th>");
  }
  rp_raw(p, "</tr></thead><tbody>\n");
  for (int64_t r = 0; r < t->nrow; r++) {
    if (t->nrow > 2 * show && r == show) {
      rp_rawf(p, "<tr class=\"gap\"><td colspan=\"%d\">\xe2\x80\xa6 %lld more \xe2\x80\xa6</td></tr>\n", t->ncol,
              (long long)(t->nrow - 2 * show));
      r = t->nrow - show;
    }
    trade_row(p, t, r);
  }
  rp_raw(p, "</tbody></table></div>\n");
}

/* ---- the section ---- */

static const char *const EQUITY_TEXT[] = {"ts", NULL};
static const char *const TRADES_TEXT[] = {"entry_time", "exit_time", "side", NULL};

/* Reads run/file as a table and calls fn, or says why not. */
static void with_table(rp_page *p, const char *file, const char *const *text_cols,
                       void (*fn)(rp_page *, const rp_table *)) {
  char path[RP_PATH_MAX];
  rp_table t;
  rp_path(path, sizeof path, p->run, file);
  if (!rp_is_file(path)) {
    rp_unavailable(p, "no %s in %s", file, p->run);
    return;
  }
  if (rp_table_read(path, text_cols, &t) != TG_OK) {
    rp_unavailable(p, "%s", tg_last_error());
    return;
  }
  rp_table_skipped_note(p, &t, file);
  if (t.ncol == 0) rp_unavailable(p, "%s is empty", file);
  else fn(p, &t);
  rp_table_free(&t);
}

void rp_section_backtest(rp_page *p) {
  const char *files[3] = {"equity.csv", "backtest.json", "trades.csv"};
  char path[RP_PATH_MAX];
  int any = 0;
  for (int i = 0; i < 3; i++) any |= rp_path(path, sizeof path, p->run, files[i]) && rp_is_file(path);
  rp_raw(p, "<section id=\"backtest\"><h2>Backtest</h2>\n");
  if (!any) {
    rp_unavailable(p, "no backtest in %s (`tickgrad backtest --run %s` writes equity.csv, backtest.json and "
                   "trades.csv there)", p->run, p->run);
    rp_raw(p, "</section>\n");
    return;
  }
  with_table(p, "equity.csv", EQUITY_TEXT, equity_charts);
  rp_raw(p, "<h3>Statistics</h3>\n");
  tg_json_doc *doc = NULL;
  if (rp_read_json(p->run, "backtest.json", &doc) == TG_OK) stats_table(p, tg_json_root(doc));
  else rp_unavailable(p, "%s", tg_last_error());
  tg_json_free(doc);
  rp_raw(p, "<h3>Trades</h3>\n");
  with_table(p, "trades.csv", TRADES_TEXT, trades_table);
  rp_raw(p, "</section>\n");
}
