/* What a backtest accepts: the bar checks, the default options and the chronological split views. */
#include <math.h>
#include <string.h>
#include "data/readers/timeconv.h"
#include "tickgrad/backtest.h"

tg_bt_opts tg_bt_defaults(void) {
  tg_bt_opts o;
  memset(&o, 0, sizeof o);
  o.cash = 100000.0;
  o.multiplier = 1.0;
  o.multiplier_from_bars = 1;
  o.tick_size_from_bars = 1;
  return o;
}

tg_status tg_backtest_check_bars(const tg_bars *bars, const char *where) {
  if (!bars || bars->n < 1) return tg_error(TG_ERR_INVALID, "%s: no bars to backtest", where);
  const char *src = bars->source[0] ? bars->source : "the bars";
  if (bars->n < 2)
    return tg_error(TG_ERR_INVALID, "%s: %s holds 1 bar; a backtest needs at least 2 (a decision at a bar's close "
                    "fills at the next bar's open)", where, src);
  for (int64_t i = 1; bars->instrument && i < bars->n; i++)
    if (bars->instrument[i] != bars->instrument[0])
      return tg_error(TG_ERR_INVALID, "%s: %s holds more than one instrument (ids %u at bar 0 and %u at bar %lld); a "
                      "backtest takes one instrument: give the file of one", where, src, bars->instrument[0],
                      bars->instrument[i], (long long)i);
  tg_read_opts rules; /* the readers' checks (duplicate times, prices, volume); the engine reads no high or low */
  memset(&rules, 0, sizeof rules);
  rules.allow_ohlc = 1;
  char what[400];
  snprintf(what, sizeof what, "%s: %s", where, src);
  tg_status st = tg_bars_check(bars, &rules, what);
  for (int64_t i = 1; st == TG_OK && i < bars->n; i++)
    if (bars->ts[i] < bars->ts[i - 1]) {
      char t0[TG_TIME_TEXT], t1[TG_TIME_TEXT];
      return tg_error(TG_ERR_INVALID, "%s: %s: bar %lld's time (%s) is before bar %lld's (%s); times must increase",
                      where, src, (long long)i, tg_format_time(bars->ts[i], t1, sizeof t1), (long long)(i - 1),
                      tg_format_time(bars->ts[i - 1], t0, sizeof t0));
    }
  return st;
}

tg_status tg_backtest_split(const tg_bars *bars, const char *split, double train_frac, double val_frac,
                            tg_bar_column *cols, tg_bars *view) {
  if (!bars || !split || !view) return tg_error(TG_ERR_INVALID, "backtest split: missing bars, split name or view");
  if (train_frac == 0 && val_frac == 0) train_frac = 0.7, val_frac = 0.15;
  if (!(train_frac > 0 && val_frac >= 0 && train_frac + val_frac <= 1))
    return tg_error(TG_ERR_INVALID, "backtest split: fractions %g (train) and %g (val) must be > 0, >= 0 and add up to at "
                    "most 1", train_frac, val_frac);
  int64_t n = bars->n;
  int64_t i1 = (int64_t)floor(train_frac * (double)n), i2 = (int64_t)floor((train_frac + val_frac) * (double)n), a, b;
  if (!strcmp(split, "all")) a = 0, b = n;
  else if (!strcmp(split, "train")) a = 0, b = i1;
  else if (!strcmp(split, "val")) a = i1, b = i2;
  else if (!strcmp(split, "test")) a = i2, b = n;
  else return tg_error(TG_ERR_INVALID, "backtest split '%s': want all, train, val or test", split);
  if (b <= a)
    return tg_error(TG_ERR_INVALID, "backtest split '%s' of %lld bars holds none (train is the first %g%%, val the "
                    "next %g%%, test the rest)", split, (long long)n, 100 * train_frac, 100 * val_frac);
  tg_bars_view(bars, a, b, cols, view); /* the bar fields and, with cols, the quotes and contracts */
  if (strcmp(split, "all") != 0) /* messages about the view name the split, not the whole source */
    snprintf(view->source, sizeof view->source, "the %s split (bars %lld..%lld of %lld) of %.180s", split, (long long)a,
             (long long)(b - 1), (long long)n, bars->source[0] ? bars->source : "the bars");
  return TG_OK;
}
