/* Bars per futures contract from one tick source: a pass of the recipe over each contract's own members, the bars
 * tagged with a contract column, for tg_bars_roll to stitch. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "data/readers/ticks/source_internal.h"
#include "data/readers/timeconv.h"

static int is_dbn(const tg_tick_source *src) { return strncmp(tg_tick_source_format(src), "dbn", 3) == 0; }

/* Each bar's open interest: the last value at or before its time (NaN before the first); a column only when the
 * source has some (Lean's open interest zips, DBN statistics files beside the ticks). */
static tg_status add_open_interest(tg_tick_source *src, const char *name, tg_bars *one) {
  tg_oi_series oi = {0};
  tg_status st = is_dbn(src) ? tg_tick_dbn_open_interest(src, &oi) : tg_tick_lean_open_interest(src, name, &oi);
  if (st == TG_OK && oi.n) st = tg_bars_add_column(one, "open_interest", TG_COLUMN_NUMERIC);
  if (st == TG_OK && oi.n) {
    double *v = one->cols[one->n_cols - 1].values;
    int64_t j = 0;
    for (int64_t i = 0; i < one->n; i++) {
      while (j < oi.n && oi.ts[j] <= one->ts[i]) j++;
      v[i] = j ? oi.value[j - 1] : NAN;
    }
  }
  tg_oi_series_free(&oi);
  return st;
}

/* A numeric column name holding v in every bar of one. */
static tg_status add_constant(tg_bars *one, const char *name, double v) {
  tg_status st = tg_bars_add_column(one, name, TG_COLUMN_NUMERIC);
  for (int64_t i = 0; st == TG_OK && i < one->n; i++) one->cols[one->n_cols - 1].values[i] = v;
  return st;
}

/* A DBN contract's definition on each of its bars: expiry (the expiration's UTC date as YYYYMMDD, what the calendar
 * roll reads), multiplier and tick_size (what a backtest's costs read); a column only for a field the definition
 * sets. */
static tg_status add_definition(tg_tick_source *src, tg_bars *one) {
  const tg_instrument_def *def = is_dbn(src) ? tg_tick_dbn_definition(src) : NULL;
  if (!def) return TG_OK;
  tg_status st = TG_OK;
  if (def->expiration != INT64_MIN) {
    int64_t y;
    int m, d;
    tg_civil_from_days(def->expiration / TG_NS_PER_DAY, &y, &m, &d);
    st = add_constant(one, "expiry", (double)(y * 10000 + m * 100 + d));
  }
  if (st == TG_OK && isfinite(def->multiplier)) st = add_constant(one, "multiplier", def->multiplier);
  if (st == TG_OK && isfinite(def->tick_size)) st = add_constant(one, "tick_size", def->tick_size);
  return st;
}

/* The bars of one contract (a pass of its own, its open interest beside them) appended to out, with its name in the
 * column contract. */
static tg_status one_contract(const char *path, const tg_tick_opts *opts, const char *name, const tg_bar_recipe *r,
                              const tg_bar_opts *bo, tg_bars *out, tg_bar_stats *stats, tg_tick_counts *counts) {
  tg_tick_opts o = opts ? *opts : (tg_tick_opts){0};
  o.contract = name;
  tg_tick_source *src = NULL;
  tg_bars one;
  tg_bars_init(&one);
  tg_bar_stats s = {0};
  tg_status st = tg_tick_open(path, TG_TICK_TRADES, &o, &src);
  if (st == TG_OK) st = tg_ticks_to_bars(src, NULL, r, bo, &one, &s);
  if (st == TG_OK) st = add_open_interest(src, name, &one);
  if (st == TG_OK) st = add_definition(src, &one);
  if (st == TG_OK) st = tg_bars_add_column(&one, "contract", TG_COLUMN_CATEGORY);
  uint32_t code = 0;
  tg_bar_column *col = one.n_cols ? &one.cols[one.n_cols - 1] : NULL;
  if (st == TG_OK) st = tg_categories_intern(&col->cats, name, strlen(name), &code);
  for (int64_t i = 0; st == TG_OK && i < one.n; i++) col->codes[i] = code;
  if (st == TG_OK) st = tg_bars_append(out, &one);
  if (st == TG_OK) {
    stats->trades += s.trades, stats->quotes += s.quotes, stats->excluded += s.excluded, stats->bars += s.bars;
    stats->floor_hits += s.floor_hits, stats->cap_hits += s.cap_hits;
    const tg_tick_counts *c = tg_tick_source_counts(src);
    counts->records += c->records, counts->out_of_order += c->out_of_order, counts->crossed += c->crossed;
    counts->skipped += c->skipped;
  }
  tg_bars_free(&one);
  tg_tick_close(src);
  return st;
}

tg_status tg_ticks_to_contract_bars(const char *path, const tg_tick_opts *opts, const tg_bar_recipe *r,
                                    const tg_bar_opts *bo, tg_bars *out, tg_bar_stats *stats, tg_tick_counts *counts) {
  tg_bars_init(out);
  tg_bar_stats s = {0};
  tg_tick_counts c = {0};
  tg_tick_contracts list;
  tg_status st = tg_tick_contracts_list(path, TG_TICK_TRADES, &list);
  if (st != TG_OK) return st;
  if (list.n < 2) {
    tg_tick_source *src = NULL;
    st = tg_tick_open(path, TG_TICK_TRADES, opts, &src);
    if (st == TG_OK) st = tg_ticks_to_bars(src, NULL, r, bo, out, &s);
    if (st == TG_OK) c = *tg_tick_source_counts(src);
    tg_tick_close(src);
  }
  if (list.n >= 2 && (list.spreads || list.options) && opts && opts->warn)
    fprintf(opts->warn, "warning: %s: left out %d spread and %d option contracts (by %s); a continuous series is made "
            "of outright futures\n", path, list.spreads, list.options,
            list.definitions ? "their definitions' instrument class" : "their names");
  for (int k = 0; list.n >= 2 && k < list.n && st == TG_OK; k++)
    st = one_contract(path, opts, list.names[k], r, bo, out, &s, &c);
  if (st == TG_OK && list.n >= 2) st = tg_bars_sort(out, NULL);
  if (st == TG_OK && list.n >= 2) {
    snprintf(out->source, sizeof out->source, "%.*s", (int)sizeof out->source - 1, path);
    snprintf(out->format, sizeof out->format, "ticks");
  }
  tg_tick_contracts_free(&list);
  if (st != TG_OK) {
    tg_bars_free(out);
    return st;
  }
  if (stats) *stats = s;
  if (counts) *counts = c;
  return TG_OK;
}
