/* Continuous futures: a series of several interleaved contracts stitched into the front contract's bars, one day at a
 * time, and back-adjusted at each roll (docs/TICKS.md "Continuous futures"). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/bar_columns.h"
#include "data/readers/roll/roll_internal.h"
#include "data/readers/timeconv.h"

/* The series being stitched, its contracts ([nc] arrays by code) and the current day's figures. */
typedef struct roller {
  tg_bars *b;
  const tg_roll_spec *spec;
  const char *what;
  uint32_t *code;          /* [b->n] the contract column */
  const tg_categories *cats;
  uint32_t nc;
  const double *oi;        /* [b->n] the open_interest column, NULL without one */
  unsigned char *present;  /* [nc] some bar names it */
  int64_t *expiry;         /* [nc] days since the epoch, INT64_MIN unknown */
  int64_t *rank;           /* [nc] later contracts rank higher: the expiry, or the last bar's time */
  unsigned char *has;      /* [nc] the day: the contract has a bar */
  double *volume, *close, *last_oi; /* [nc] the day: its volume, last close, last open interest (NaN: none) */
} roller;

static const char *name_of(const roller *r, int c) { return tg_categories_name(r->cats, (uint32_t)c); }

static int64_t day_of(int64_t ts) {
  return ts >= 0 ? ts / TG_NS_PER_DAY : -((-ts + TG_NS_PER_DAY - 1) / TG_NS_PER_DAY);
}

/* "a, b, c, ..." of the contracts present into buf[n]. */
static void list_contracts(const roller *r, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t c = 0; c < r->nc && len + 8 < n; c++) {
    if (!r->present[c]) continue;
    int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name_of(r, (int)c));
    if (w < 0 || (size_t)w >= n - len) {
      size_t at = len + 6 < n ? len : n - 6;
      memcpy(buf + at, ", ...", 6);
      return;
    }
    len += (size_t)w;
  }
}

/* Drops the bars of spreads and options (counted into rolls); a bar without a contract is an error naming it. */
static tg_status drop_non_outrights(roller *r, tg_roll_list *rolls, FILE *warn) {
  tg_bars *b = r->b;
  unsigned char *counted = tg_calloc(r->nc ? r->nc : 1, 1);
  if (!counted) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %u contracts", r->what, r->nc);
  int64_t k = 0, dropped = 0;
  for (int64_t i = 0; i < b->n; i++) {
    uint32_t c = r->code[i];
    if (c == TG_CATEGORY_MISSING) {
      char t[48];
      tg_free(counted);
      return tg_error(TG_ERR_FORMAT, "%s: bar %lld (%s) names no contract; every bar of a futures series needs one",
                      r->what, (long long)i + 1, tg_format_time(b->ts[i], t, sizeof t));
    }
    tg_contract_kind kind = tg_contract_kind_of(name_of(r, (int)c));
    if (kind != TG_CONTRACT_FUTURE) {
      if (!counted[c]) counted[c] = 1, *(kind == TG_CONTRACT_SPREAD ? &rolls->spreads : &rolls->options) += 1;
      dropped++;
      continue;
    }
    r->present[c] = 1;
    if (k != i) tg_bars_move_row(b, i, k);
    k++;
  }
  b->n = k;
  rolls->dropped_bars += dropped;
  tg_free(counted);
  if (warn && dropped)
    fprintf(warn, "warning: %s: dropped %lld spread and %lld option contracts (%lld bars); a continuous series is made "
            "of outright futures\n", r->what, (long long)rolls->spreads, (long long)rolls->options, (long long)dropped);
  return TG_OK;
}

/* 1 when every contract's bars come in one run (a stitched series); its contract changes go into rolls. */
static tg_status one_run_each(roller *r, tg_roll_list *rolls, int *runs) {
  int64_t changes = 0;
  uint32_t n_present = 0;
  for (uint32_t c = 0; c < r->nc; c++) n_present += r->present[c];
  for (int64_t i = 1; i < r->b->n; i++) changes += r->code[i] != r->code[i - 1];
  *runs = changes == (int64_t)n_present - 1;
  if (!*runs) return TG_OK;
  rolls->stitched = 1;
  for (int64_t i = 1; i < r->b->n; i++) {
    if (r->code[i] == r->code[i - 1]) continue;
    tg_roll x = {.ts = r->b->ts[i], .basis_day = INT64_MIN, .from_close = NAN, .to_close = NAN, .adjustment = NAN};
    snprintf(x.from, sizeof x.from, "%s", name_of(r, (int)r->code[i - 1]));
    snprintf(x.to, sizeof x.to, "%s", name_of(r, (int)r->code[i]));
    tg_status st = tg_roll_list_push(rolls, &x);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

/* What the rule needs: volumes, an open_interest column, expiries; and the order of the contracts. */
static tg_status prepare(roller *r) {
  tg_bars *b = r->b;
  int all_expiries = 1, any_volume = 0;
  for (uint32_t c = 0; c < r->nc; c++) r->expiry[c] = tg_contract_expiry_day(name_of(r, (int)c));
  /* a numeric column expiry (YYYYMMDD, as DBN definition records give) names the expiries the names do not */
  const tg_bar_column *ex = tg_bars_column(b, "expiry");
  for (int64_t i = 0; ex && ex->kind == TG_COLUMN_NUMERIC && i < b->n; i++) {
    double v = ex->values[i];
    uint32_t c = r->code[i];
    if (r->expiry[c] != INT64_MIN || !(v >= 10000101 && v <= 99991231) || v != floor(v)) continue;
    int64_t ymd = (int64_t)v;
    int y = (int)(ymd / 10000), m = (int)(ymd / 100 % 100), d = (int)(ymd % 100);
    if (tg_valid_date(y, m, d)) r->expiry[c] = tg_days_from_civil(y, m, d);
  }
  for (uint32_t c = 0; c < r->nc; c++) {
    if (r->present[c] && r->expiry[c] == INT64_MIN) {
      all_expiries = 0;
      if (r->spec->rule == TG_ROLL_CALENDAR)
        return tg_error(TG_ERR_INVALID, "%s: --roll calendar: contract '%s' has no known expiry (a contract named "
                        "YYYYMM or YYYYMMDD gives one, and so do DBN definition records beside DBN ticks: a numeric "
                        "column expiry, YYYYMMDD); use --roll volume or open_interest", r->what,
                        name_of(r, (int)c));
    }
    r->rank[c] = INT64_MIN;
  }
  for (int64_t i = 0; i < b->n; i++) {
    any_volume |= isfinite(b->volume[i]);
    r->rank[r->code[i]] = b->ts[i]; /* the last bar's time, kept where neither an expiry nor a month code is known */
  }
  int all_months = 1;
  for (uint32_t c = 0; c < r->nc; c++)
    all_months &= !r->present[c] || tg_contract_month_key(name_of(r, (int)c), r->rank[c]) != INT64_MIN;
  for (uint32_t c = 0; c < r->nc; c++) {
    if (!r->present[c]) continue;
    if (all_expiries) r->rank[c] = r->expiry[c];
    else if (all_months) r->rank[c] = tg_contract_month_key(name_of(r, (int)c), r->rank[c]);
  }
  if (r->spec->rule == TG_ROLL_VOLUME && !any_volume)
    return tg_error(TG_ERR_INVALID, "%s: --roll volume: the bars have no volume; use --roll open_interest or calendar",
                    r->what);
  if (r->spec->rule == TG_ROLL_OPEN_INTEREST) {
    const tg_bar_column *col = tg_bars_column(b, "open_interest");
    char names[256];
    if (!col || col->kind != TG_COLUMN_NUMERIC)
      return tg_error(TG_ERR_INVALID, "%s: --roll open_interest needs a numeric column open_interest, and the bars "
                      "have %s (columns: %s); use --roll volume or calendar", r->what, col ? "one of names" : "none",
                      tg_bars_column_names(b, names, sizeof names));
    r->oi = col->values;
  }
  return TG_OK;
}

/* The figures of day [i, j) per contract. */
static void day_figures(roller *r, int64_t i, int64_t j) {
  for (uint32_t c = 0; c < r->nc; c++) r->has[c] = 0, r->volume[c] = 0, r->close[c] = NAN, r->last_oi[c] = NAN;
  for (int64_t t = i; t < j; t++) {
    uint32_t c = r->code[t];
    r->has[c] = 1;
    if (isfinite(r->b->volume[t])) r->volume[c] += r->b->volume[t];
    r->close[c] = r->b->close[t];
    if (r->oi && isfinite(r->oi[t])) r->last_oi[c] = r->oi[t];
  }
}

/* Volume or open interest: the later contract (any, with no front) with the day's largest figure, when it beats the
 * front's (or the front did not trade); else the front. */
static int pick_by_figure(const roller *r, int front) {
  const double *m = r->spec->rule == TG_ROLL_OPEN_INTEREST ? r->last_oi : r->volume;
  int best = -1;
  for (uint32_t c = 0; c < r->nc; c++) {
    if (!r->has[c] || !isfinite(m[c]) || (front >= 0 && r->rank[c] <= r->rank[front])) continue;
    if (best < 0 || m[c] > m[best] || (m[c] == m[best] && r->rank[c] < r->rank[best])) best = (int)c;
  }
  if (front < 0 || best < 0) return best >= 0 ? best : front;
  if (!r->has[front] || !isfinite(m[front]) || m[best] > m[front]) return best;
  return front;
}

/* Calendar: the earliest contract from the front on (any, with no front) not within days of its expiry on day; only
 * those trading today when trading is set. No such contract: the front. */
static int pick_by_calendar(const roller *r, int front, int64_t day, int trading) {
  int best = -1;
  for (uint32_t c = 0; c < r->nc; c++) {
    if (!r->present[c] || (trading && !r->has[c]) || (front >= 0 && r->rank[c] < r->rank[front])) continue;
    if (day + r->spec->days >= r->expiry[c]) continue;
    if (best < 0 || r->expiry[c] < r->expiry[best]) best = (int)c;
  }
  return best >= 0 ? best : front;
}

/* The first front: the day's largest figure, or the calendar's contract. */
static int first_front(const roller *r, int64_t day) {
  int f = r->spec->rule == TG_ROLL_CALENDAR ? pick_by_calendar(r, -1, day, 1) : pick_by_figure(r, -1);
  for (uint32_t c = 0; f < 0 && c < r->nc; c++)
    if (r->has[c]) f = (int)c;
  return f;
}

/* A roll decided but not yet seen: its basis, and the contract rolled from. */
typedef struct pending {
  int active, from;
  int64_t day;
  double from_close, to_close;
} pending;

static tg_status record(roller *r, pending *p, int to, int64_t ts, tg_roll_list *rolls) {
  tg_roll x = {.ts = ts, .basis_day = p->day, .from_close = p->from_close, .to_close = p->to_close, .adjustment = NAN};
  snprintf(x.from, sizeof x.from, "%s", name_of(r, p->from));
  snprintf(x.to, sizeof x.to, "%s", name_of(r, to));
  p->active = 0;
  return tg_roll_list_push(rolls, &x);
}

/* Walks the days: keeps the front's bars, decides the next day's front at each day's end. */
static tg_status stitch(roller *r, tg_roll_list *rolls) {
  tg_bars *b = r->b;
  int64_t i = 0, k = 0;
  int front = -1, last_kept = -1;
  pending p = {0};
  while (i < b->n) {
    int64_t day = day_of(b->ts[i]), j = i;
    while (j < b->n && day_of(b->ts[j]) == day) j++;
    day_figures(r, i, j);
    if (front < 0) front = first_front(r, day);
    else if (!r->has[front]) { /* the front stopped trading: the rule's pick among those that trade, no basis */
      int f = r->spec->rule == TG_ROLL_CALENDAR ? pick_by_calendar(r, front, day, 1) : pick_by_figure(r, front);
      if (f != front && r->has[f]) {
        p = (pending){.active = 1, .from = last_kept, .day = INT64_MIN, .from_close = NAN, .to_close = NAN};
        front = f;
      }
    }
    for (int64_t t = i; t < j; t++) {
      if ((int)r->code[t] != front) continue;
      if (p.active && p.from >= 0 && p.from != front) {
        tg_status st = record(r, &p, front, b->ts[t], rolls);
        if (st != TG_OK) return st;
      }
      p.active = 0;
      if (k != t) tg_bars_move_row(b, t, k);
      k++, last_kept = front;
    }
    if (j < b->n) {
      int f = r->spec->rule == TG_ROLL_CALENDAR ? pick_by_calendar(r, front, day_of(b->ts[j]), 0)
                                                : pick_by_figure(r, front);
      if (f >= 0 && f != front) {
        int both = last_kept >= 0 && r->has[last_kept] && r->has[f];
        p = (pending){.active = 1, .from = last_kept, .day = both ? day * TG_NS_PER_DAY : INT64_MIN,
                      .from_close = both ? r->close[last_kept] : NAN, .to_close = both ? r->close[f] : NAN};
        front = f;
      }
    }
    i = j;
  }
  rolls->dropped_bars += b->n - k;
  b->n = k;
  return TG_OK;
}

/* Back-adjusts every bar before each roll by the roll's basis (and the later rolls'). */
static void adjust(tg_bars *b, tg_adjust how, tg_roll_list *rolls) {
  static const char *const both[] = {"vwap", "bid", "ask", "mid"};
  int cols[5], n_cols = 0;
  for (int c = 0; c < 5; c++) {
    int at = tg_bars_column_index(b, c < 4 ? both[c] : "spread_mean");
    if (at >= 0 && b->cols[at].kind == TG_COLUMN_NUMERIC && (c < 4 || how == TG_ADJUST_RATIO)) cols[n_cols++] = at;
  }
  double add = 0, mul = 1;
  int r = rolls->n - 1;
  for (int64_t i = b->n - 1; i >= 0; i--) {
    for (; r >= 0 && b->ts[i] < rolls->v[r].ts; r--) {
      tg_roll *x = &rolls->v[r];
      int basis = x->from_close > 0 && x->to_close > 0;
      if (how == TG_ADJUST_NONE || !basis) continue;
      x->adjustment = how == TG_ADJUST_RATIO ? x->to_close / x->from_close : x->to_close - x->from_close;
      if (how == TG_ADJUST_RATIO) mul *= x->adjustment;
      else add += x->adjustment;
    }
    if (how == TG_ADJUST_NONE || (add == 0 && mul == 1)) continue;
    double *px[4] = {&b->open[i], &b->high[i], &b->low[i], &b->close[i]};
    for (int c = 0; c < 4; c++) *px[c] = how == TG_ADJUST_RATIO ? *px[c] * mul : *px[c] + add;
    for (int c = 0; c < n_cols; c++) {
      double *v = &b->cols[cols[c]].values[i];
      *v = how == TG_ADJUST_RATIO ? *v * mul : *v + add;
    }
  }
}

/* Several instruments of which one holds several contracts (ES and NQ contracts in one file) would be mixed into one
 * series: TG_ERR_UNSUPPORTED naming them. One instrument of several contracts, or one instrument per contract (DBN's
 * ids), is one future. */
static tg_status one_future(const roller *r) {
  const tg_bars *b = r->b;
  if (!b->instrument) return TG_OK;
  typedef struct seen {
    uint32_t instrument, code;
  } seen;
  seen *v = NULL;
  int n = 0, cap = 0;
  int64_t shared = -1; /* a bar whose instrument showed another contract before */
  tg_status st = TG_OK;
  for (int64_t i = 0; i < b->n && st == TG_OK && (shared < 0 || n < 2); i++) {
    int k = 0;
    while (k < n && v[k].instrument != b->instrument[i]) k++;
    if (k < n) {
      if (v[k].code != r->code[i] && shared < 0) shared = i;
      continue;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      seen *w = tg_malloc((size_t)cap * sizeof *w);
      if (!w) {
        st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %d instruments", r->what, cap);
        break;
      }
      if (n) memcpy(w, v, (size_t)n * sizeof *w);
      tg_free(v);
      v = w;
    }
    v[n++] = (seen){b->instrument[i], r->code[i]};
  }
  if (st == TG_OK && shared >= 0 && n > 1)
    st = tg_error(TG_ERR_UNSUPPORTED, "%s: %d instruments, and instrument %u alone holds several contracts (%s and "
                  "more); rolls are made for one future at a time: read each instrument's bars on their own", r->what,
                  n, b->instrument[shared], name_of(r, (int)r->code[shared]));
  tg_free(v);
  return st;
}

/* Contracts that a source names by instrument id (DBN) become one instrument: the latest contract's id. */
static void one_instrument(tg_bars *b) {
  for (int64_t i = 0; b->instrument && i + 1 < b->n; i++) b->instrument[i] = b->instrument[b->n - 1];
}

static tg_status roll_contracts(roller *r, tg_roll_list *rolls, FILE *warn) {
  tg_status st = drop_non_outrights(r, rolls, warn);
  uint32_t n_present = 0;
  for (uint32_t c = 0; c < r->nc; c++) n_present += r->present[c];
  if (st != TG_OK || n_present < 2) return st;
  int runs = 0;
  if ((st = one_run_each(r, rolls, &runs)) != TG_OK) return st;
  if (runs) return one_instrument(r->b), TG_OK;
  if (r->spec->rule == TG_ROLL_NONE) {
    char names[256];
    list_contracts(r, names, sizeof names);
    return tg_error(TG_ERR_INVALID, "%s holds %u futures contracts whose bars overlap in time (%s); give --roll "
                    "volume|open_interest|calendar[:N] (and --adjust difference|ratio|none) for one continuous series, "
                    "or read one contract", r->what, n_present, names);
  }
  if ((st = one_future(r)) != TG_OK || (st = prepare(r)) != TG_OK || (st = stitch(r, rolls)) != TG_OK) return st;
  adjust(r->b, r->spec->adjust, rolls);
  one_instrument(r->b);
  return TG_OK;
}

/* A contract column of whole numbers (expiries such as 201312: what the CSV reader makes of a stitched series written
 * by tickgrad bars) becomes the category of their digits; any other number is an error naming the bar. */
static tg_status contract_names(tg_bars *b, int k, const char *what) {
  double *v = tg_malloc((size_t)(b->n ? b->n : 1) * sizeof *v);
  if (!v) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld contracts", what, (long long)b->n);
  memcpy(v, b->cols[k].values, (size_t)b->n * sizeof *v);
  tg_status st = TG_OK;
  for (int64_t t = 0; t < b->n && st == TG_OK; t++)
    if (!isnan(v[t]) && !(v[t] >= 0 && v[t] < 1e15 && v[t] == floor(v[t])))
      st = tg_error(TG_ERR_FORMAT, "%s: bar %lld: contract %g is not a contract's name (a whole number such as an "
                    "expiry 201312, or a text)", what, (long long)t, v[t]);
  if (st == TG_OK) st = tg_bars_reset_column(b, k, TG_COLUMN_CATEGORY);
  for (int64_t t = 0; t < b->n && st == TG_OK; t++) {
    uint32_t code = TG_CATEGORY_MISSING;
    char name[32];
    int len = isnan(v[t]) ? 0 : snprintf(name, sizeof name, "%.0f", v[t]);
    if (len > 0) st = tg_categories_intern(&b->cols[k].cats, name, (size_t)len, &code);
    b->cols[k].codes[t] = code;
  }
  tg_free(v);
  return st;
}

tg_status tg_bars_roll(tg_bars *b, const tg_roll_spec *spec, const char *what, FILE *warn, tg_roll_list *rolls) {
  tg_roll_list own = {0};
  if (!rolls) rolls = &own;
  tg_roll_list_free(rolls);
  int k = tg_bars_column_index(b, "contract");
  if (k < 0) return TG_OK;
  tg_status cst = b->cols[k].kind == TG_COLUMN_CATEGORY ? TG_OK : contract_names(b, k, what);
  if (cst != TG_OK) return cst;
  tg_roll_spec none = {0};
  roller r = {.b = b, .spec = spec ? spec : &none, .what = what, .code = b->cols[k].codes, .cats = &b->cols[k].cats,
              .nc = b->cols[k].cats.n};
  size_t nc = r.nc ? r.nc : 1;
  r.present = tg_calloc(nc, 1), r.has = tg_calloc(nc, 1);
  r.expiry = tg_malloc(nc * sizeof *r.expiry), r.rank = tg_malloc(nc * sizeof *r.rank);
  r.volume = tg_malloc(nc * sizeof *r.volume), r.close = tg_malloc(nc * sizeof *r.close);
  r.last_oi = tg_malloc(nc * sizeof *r.last_oi);
  tg_status st = TG_OK;
  if (!r.present || !r.has || !r.expiry || !r.rank || !r.volume || !r.close || !r.last_oi)
    st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %u contracts", what, r.nc);
  if (st == TG_OK) st = roll_contracts(&r, rolls, warn);
  tg_free(r.present), tg_free(r.has), tg_free(r.expiry), tg_free(r.rank);
  tg_free(r.volume), tg_free(r.close), tg_free(r.last_oi);
  tg_roll_list_free(&own);
  return st;
}
