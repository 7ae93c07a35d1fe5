/* A backtest's files: trades.csv, equity.csv and backtest.json, each written through a temporary file and a rename. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/timeconv.h"
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

static void json_stats(text *t, const char *key, const tg_bt_stats *s, const char *tail) {
  put(t, "  \"%s\": {\"bars\": %lld, \"bars_per_year\": %.12g, \"years\": %.12g, \"start_equity\": %.12g, "
      "\"final_equity\": %.12g, \"total_return\": %.12g, \"annual_return\": %.12g, \"annual_vol\": %.12g, "
      "\"sharpe\": %.12g, \"sortino\": %.12g, \"max_drawdown\": %.12g, \"max_drawdown_bars\": %lld, "
      "\"max_drawdown_seconds\": %.12g, \"max_drawdown_recovered\": %d, \"calmar\": %.12g, \"trades\": %lld, "
      "\"win_rate\": %.12g, \"avg_trade_pnl\": %.12g, \"avg_trade_return\": %.12g, \"exposure\": %.12g, "
      "\"turnover\": %.12g}%s\n", key, (long long)s->bars, s->bars_per_year, s->years, s->start_equity,
      s->final_equity, s->total_return, s->annual_return, s->annual_vol, s->sharpe, s->sortino, s->max_drawdown,
      (long long)s->dd_bars, (double)s->dd_ns * 1e-9, s->dd_recovered, s->calmar, (long long)s->trades, s->win_rate,
      s->avg_trade_pnl, s->avg_trade_return, s->exposure, s->turnover, tail);
}

static tg_status write_json(const tg_backtest *bt, const char *name, const char *dir) {
  text t;
  tg_status st = text_new(&t, 8192);
  if (st != TG_OK) return st;
  char b0[40], b1[40];
  put(&t, "{\n  \"strategy\": \"%s\",\n  \"first_bar\": \"%s\",\n  \"last_bar\": \"%s\",\n", name,
      utc(bt->ts[0], b0, sizeof b0), utc(bt->ts[bt->n - 1], b1, sizeof b1));
  put(&t, "  \"cash\": %.12g,\n  \"commission\": %.12g,\n  \"cost_bps\": %.12g,\n  \"slippage\": %.12g,\n", bt->opts.cash,
      bt->opts.commission, bt->opts.cost_bps, bt->opts.slippage);
  json_stats(&t, "strategy_stats", &bt->stats, ",");
  json_stats(&t, "buy_and_hold_stats", &bt->bh, "");
  put(&t, "}\n");
  return text_save(&t, dir, "backtest.json");
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
