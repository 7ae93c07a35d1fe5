/* Tick files to bars in one call (open, one pass, close), and the messages that tell ticks and bars apart. */
#include <stdio.h>
#include <string.h>
#include "data/readers/ticks/tick_files.h"

/* A tick file given where bars were wanted: st (its message) when path does not read as ticks. */
static tg_status hint_bars(const char *path, const tg_bars *bars, tg_status st) {
  return tg_error(st, "%s holds bars (%lld read as %s), not trade ticks: --by RECIPE makes bars from ticks; leave it "
                  "out to read bar files as they are", path, (long long)bars->n, bars->format);
}

/* On a failed open of path as trades: when it reads as bar data, say so in place of the tick reader's message. */
static tg_status bars_not_ticks(const char *path, tg_status st) {
  char why[1024];
  snprintf(why, sizeof why, "%s", tg_last_error());
  tg_bars bars;
  tg_read_opts plain;
  memset(&plain, 0, sizeof plain);
  plain.no_checks = 1;
  if (tg_bars_read(path, &plain, &bars) == TG_OK && bars.n > 0) st = hint_bars(path, &bars, st);
  else st = tg_error(st, "%s", why);
  tg_bars_free(&bars);
  return st;
}

tg_status tg_ticks_read_bars(const char *trades, const char *quotes, const tg_bar_recipe *r,
                             const tg_tick_opts *tick, const tg_bar_opts *bar, tg_bars *out,
                             tg_tick_bars_report *report) {
  tg_bars_init(out);
  tg_tick_source *t = NULL, *q = NULL;
  tg_bar_stats s;
  if (!quotes && !(tick && tick->contract)) { /* several futures contracts: bars per contract, for tg_bars_roll */
    tg_tick_contracts list = {0};
    tg_status lst = tg_tick_contracts_list(trades, TG_TICK_TRADES, &list);
    int several = lst == TG_OK && list.n > 1;
    if (several) {
      tg_tick_counts c;
      tg_status st = tg_ticks_to_contract_bars(trades, tick, r, bar, out, &s, &c);
      if (st == TG_OK && report) {
        memset(report, 0, sizeof *report);
        report->stats = s;
        report->trades = c;
        report->contracts = list.n;
        report->contract_bars = out->n;
      }
      tg_tick_contracts_free(&list);
      return st;
    }
    tg_tick_contracts_free(&list);
  }
  tg_status st = tg_tick_open(trades, TG_TICK_TRADES, tick, &t);
  if (st != TG_OK) return bars_not_ticks(trades, st);
  if (quotes) st = tg_tick_open(quotes, TG_TICK_QUOTES, tick, &q);
  if (st == TG_OK) st = tg_ticks_to_bars(t, q, r, bar, out, &s);
  if (st == TG_OK && report) {
    memset(report, 0, sizeof *report);
    report->stats = s;
    report->trades = *tg_tick_source_counts(t);
    if (q) report->quotes = *tg_tick_source_counts(q);
  }
  tg_tick_close(t);
  tg_tick_close(q);
  return st;
}

tg_status tg_ticks_read_rolled(const char *trades, const tg_bar_recipe *r, const tg_tick_opts *tick,
                               const tg_bar_opts *bar, const tg_roll_spec *spec, tg_bars *out,
                               tg_tick_bars_report *report, tg_roll_list *rolls) {
  tg_status st = tg_ticks_read_bars(trades, NULL, r, tick, bar, out, report);
  if (st == TG_OK && tg_bars_column(out, "contract"))
    st = tg_bars_roll(out, spec, trades, tick ? tick->warn : NULL, rolls);
  if (st != TG_OK) tg_bars_free(out);
  return st;
}

/* 1 when path opens as ticks of kind and gives a first record. */
static int holds_ticks(const char *path, tg_tick_kind kind) {
  tg_tick_source *s = NULL;
  tg_tick_opts o;
  memset(&o, 0, sizeof o);
  if (tg_tick_open(path, kind, &o, &s) != TG_OK) return 0;
  tg_quote rec[1]; /* the larger record */
  int64_t n = 0;
  int ok = tg_tick_next(s, rec, 1, &n) == TG_OK && n == 1;
  tg_tick_close(s);
  return ok;
}

tg_status tg_tick_hint_ticks(const char *path, tg_status st) {
  char why[1024];
  snprintf(why, sizeof why, "%s", tg_last_error());
  int trades = holds_ticks(path, TG_TICK_TRADES), quotes = !trades && holds_ticks(path, TG_TICK_QUOTES);
  if (trades)
    return tg_error(st, "%s holds trade ticks, not bars: give --by RECIPE to make bars from them as they are read "
                    "(time:1m, volume:1e4, dollar:5e6, tick_imbalance:100; docs/TICKS.md)", path);
  if (quotes)
    return tg_error(st, "%s holds quote ticks, not bars: give trade ticks as the data with --by RECIPE, and this file "
                    "as --quotes (docs/TICKS.md)", path);
  return tg_error(st, "%s", why);
}

/* The read options that have no meaning for tick files: an error naming the first one set. */
static tg_status check_opts(const char *path, const tg_read_opts *o) {
  const char *flag = o->columns && *o->columns ? "--columns (tick CSV columns are found by name)"
                     : o->price_scale != 0 && o->price_scale != 1 ? "--price-scale"
                     : o->nulls != TG_NULLS_ERROR ? "--nulls (a tick with no price is an error)"
                                                  : NULL;
  if (flag) return tg_error(TG_ERR_INVALID, "%s: %s does not apply to ticks read with --by %s", path, flag, o->by);
  return TG_OK;
}

tg_status tg_tick_bars_read(const char *path, const tg_read_opts *opts, tg_bars *out) {
  tg_bars_init(out);
  tg_bar_recipe r;
  tg_status st = tg_bar_recipe_parse(opts->by, &r);
  if (st == TG_OK) st = check_opts(path, opts);
  if (st != TG_OK) return st;
  tg_tick_opts tick;
  memset(&tick, 0, sizeof tick);
  tick.tz = opts->tz;
  tick.warn = opts->warn;
  tg_bar_opts bar;
  memset(&bar, 0, sizeof bar);
  const char *quotes = opts->quotes && *opts->quotes ? opts->quotes : NULL;
  return tg_ticks_read_bars(path, quotes, &r, &tick, &bar, out, NULL);
}
