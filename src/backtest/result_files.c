/* A backtest's files: trades.csv, equity.csv and backtest.json, each written through a temporary file and a rename. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "backtest/costs.h"
#include "base/alloc.h"
#include "base/json.h"
#include "data/readers/timeconv.h"
#include "tickgrad/backtest.h"
#include "base/files.h"

/* A text buffer of a fixed capacity, sized before writing. */
typedef struct text {
  char *p;
  size_t len, cap;
  int full;
} text;

static void put(text *t, const char *fmt, ...) {
  if (t->full) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= t->cap - t->len) t->full = 1;
  else t->len += (size_t)k;
}

static tg_status text_new(text *t, size_t cap) {
  memset(t, 0, sizeof *t);
  t->p = tg_malloc(cap);
  t->cap = cap;
  return t->p ? TG_OK : tg_error(TG_ERR_NOMEM, "backtest: out of memory for a %zu byte file", cap);
}

static tg_status text_save(text *t, const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  tg_status st = t->full ? tg_error(TG_ERR_INVALID, "backtest: %s outgrew its buffer of %zu bytes", path, t->cap)
                         : tg_write_atomic(path, t->p, t->len);
  tg_free(t->p);
  t->p = NULL;
  return st;
}

static const char *utc(int64_t ns, char *buf, size_t n) { return tg_format_utc(ns, 0, buf, n); }

static tg_status write_equity(const tg_backtest *bt, const char *dir) {
  text t;
  tg_status st = text_new(&t, 256 + (size_t)bt->n * 160);
  if (st != TG_OK) return st;
  put(&t, "ts,close,position,equity,drawdown,bh_equity\n");
  char b[40];
  for (int64_t i = 0; i < bt->n; i++)
    put(&t, "%s,%.12g,%.8g,%.12g,%.8g,%.12g\n", utc(bt->ts[i], b, sizeof b), bt->close[i], bt->position[i],
        bt->equity[i], bt->drawdown[i], bt->bh_equity[i]);
  return text_save(&t, dir, "equity.csv");
}

static tg_status write_trades(const tg_backtest *bt, const char *dir) {
  text t;
  tg_status st = text_new(&t, 256 + (size_t)bt->n_trades * 320);
  if (st != TG_OK) return st;
  put(&t, "entry_time,exit_time,side,size,entry_price,exit_price,pnl,return,fees,open\n");
  char b0[40], b1[40];
  for (int64_t i = 0; i < bt->n_trades; i++) {
    const tg_bt_trade *r = &bt->trades[i];
    put(&t, "%s,%s,%s,%.12g,%.12g,%.12g,%.12g,%.8g,%.12g,%d\n", utc(r->entry_ts, b0, sizeof b0),
        utc(r->exit_ts, b1, sizeof b1), r->side > 0 ? "long" : "short", r->size, r->entry_price, r->exit_price, r->pnl,
        r->ret, r->fees, r->open);
  }
  return text_save(&t, dir, "trades.csv");
}

/* One number member ", \"key\": v" (null when v is not finite: a statistic these bars leave undefined). */
static void member(tg_text *t, const char *key, double v) {
  tg_text_printf(t, ", \"%s\": ", key);
  tg_json_append_real(t, v, 12);
}

static void json_stats(tg_text *t, const char *key, const tg_bt_stats *s, int market, const char *tail) {
  tg_text_printf(t, "  \"%s\": {\"bars\": %lld", key, (long long)s->bars);
  member(t, "bars_per_year", s->bars_per_year);
  member(t, "years", s->years);
  member(t, "start_equity", s->start_equity);
  member(t, "final_equity", s->final_equity);
  member(t, "total_return", s->total_return);
  member(t, "annual_return", s->annual_return);
  member(t, "annual_vol", s->annual_vol);
  member(t, "sharpe", s->sharpe);
  member(t, "sortino", s->sortino);
  member(t, "max_drawdown", s->max_drawdown);
  tg_text_printf(t, ", \"max_drawdown_bars\": %lld", (long long)s->dd_bars);
  member(t, "max_drawdown_seconds", (double)s->dd_ns * 1e-9);
  tg_text_printf(t, ", \"max_drawdown_recovered\": %d", s->dd_recovered);
  member(t, "calmar", s->calmar);
  tg_text_printf(t, ", \"trades\": %lld", (long long)s->trades);
  member(t, "win_rate", s->win_rate);
  member(t, "avg_trade_pnl", s->avg_trade_pnl);
  member(t, "avg_trade_return", s->avg_trade_return);
  member(t, "exposure", s->exposure);
  member(t, "turnover", s->turnover);
  if (market) {
    member(t, "fees", s->fees);
    member(t, "spread_cost", s->spread_cost);
    tg_text_printf(t, ", \"rolls\": %lld", (long long)s->rolls);
    member(t, "roll_cost", s->roll_cost);
  }
  tg_text_printf(t, "}%s\n", tail);
}


static tg_status write_json(const tg_backtest *bt, const char *name, const char *dir) {
  tg_text t = {0};
  char b0[40], b1[40], path[4096];
  tg_text_printf(&t, "{\n  \"strategy\": \"%s\",\n  \"first_bar\": \"%s\",\n  \"last_bar\": \"%s\"", name,
                 utc(bt->ts[0], b0, sizeof b0), utc(bt->ts[bt->n - 1], b1, sizeof b1));
  const char *keys[4] = {"cash", "commission", "cost_bps", "slippage"};
  const double vals[4] = {bt->opts.cash, bt->opts.commission, bt->opts.cost_bps, bt->opts.slippage};
  for (int k = 0; k < 4; k++) {
    tg_text_printf(&t, ",\n  \"%s\": ", keys[k]);
    tg_json_append_real(&t, vals[k], 12);
  }
  int market = bt_market_costs(bt);
  if (market) {
    const char *mk[3] = {"multiplier", "tick_size", "commission_per_contract"};
    const double mv[3] = {bt->opts.multiplier, bt->opts.tick_size, bt->opts.commission_per_contract};
    for (int k = 0; k < 3; k++) {
      tg_text_printf(&t, ",\n  \"%s\": ", mk[k]);
      tg_json_append_real(&t, mv[k], 12);
    }
    if (bt->multiplier_from_bars || bt->tick_size_from_bars)
      tg_text_printf(&t, ",\n  \"multiplier_from_bars\": %s,\n  \"tick_size_from_bars\": %s",
                     bt->multiplier_from_bars ? "true" : "false", bt->tick_size_from_bars ? "true" : "false");
    tg_text_printf(&t, ",\n  \"spread_from_quotes\": %s,\n  \"unquoted_fills\": %lld,\n  \"contract_rolls\": %s",
                   bt->quoted ? "true" : "false", (long long)bt->unquoted_fills, bt->contracts ? "true" : "false");
  }
  tg_text_puts(&t, ",\n");
  json_stats(&t, "strategy_stats", &bt->stats, market, ",");
  json_stats(&t, "buy_and_hold_stats", &bt->bh, market, "");
  tg_text_puts(&t, "}\n");
  snprintf(path, sizeof path, "%s/backtest.json", dir);
  tg_status st = t.oom ? tg_error(TG_ERR_NOMEM, "backtest: out of memory for %s", path) : tg_write_atomic(path, t.data, t.len);
  tg_text_free(&t);
  return st;
}

tg_status tg_backtest_write(const tg_backtest *bt, const char *name, const char *dir) {
  if (!bt || bt->n < 2 || !name || !dir) return tg_error(TG_ERR_INVALID, "backtest write: no backtest, name or folder");
  if (strlen(name) > 200 || strpbrk(name, "\"\\"))
    return tg_error(TG_ERR_INVALID, "backtest write: strategy label '%s' is too long or holds a quote or backslash", name);
  tg_status st = tg_make_dirs(dir);
  if (st == TG_OK) st = write_equity(bt, dir);
  if (st == TG_OK) st = write_trades(bt, dir);
  if (st == TG_OK) st = write_json(bt, name, dir);
  return st;
}
