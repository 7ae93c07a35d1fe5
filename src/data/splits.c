/* Chronological train / validation / test splits: time regions, then the window starts that fit inside each with a purge gap. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/timeconv.h"
#include "tickgrad/dataset.h"

static const char *k_split_names[TG_SPLIT_COUNT] = {"training", "validation", "test"};

void tg_splits_free(tg_splits *sp) {
  for (int s = 0; s < TG_SPLIT_COUNT; s++) {
    tg_free(sp->s[s].begin);
    tg_free(sp->s[s].end);
  }
  memset(sp, 0, sizeof *sp);
}

/* "2021-03-01 14:30" (UTC), "start" or "end" for the open bounds. */
static const char *fmt_ts(int64_t ts, char *buf, size_t n) {
  if (ts == INT64_MIN) return "start";
  if (ts == INT64_MAX) return "end";
  int64_t days = ts / TG_NS_PER_DAY - (ts % TG_NS_PER_DAY < 0);
  int64_t rem = (ts - days * TG_NS_PER_DAY) / TG_NS_PER_S, y;
  int m, d;
  tg_civil_from_days(days, &y, &m, &d);
  snprintf(buf, n, "%04lld-%02d-%02d %02d:%02d", (long long)y, m, d, (int)(rem / 3600), (int)(rem / 60 % 60));
  return buf;
}

/* First position in [lo, hi) whose bar has ts >= t (positions of one instrument are in time order). */
static int64_t lower_bound(const tg_bars *b, const tg_layout *lay, int64_t lo, int64_t hi, int64_t t) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (b->ts[lay->rows[mid]] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* With per-row target reach: the starts in [lo, b) whose window and target span end before b, from the first that
 * passes to the first that fails after it. */
static void fit_reach(const tg_layout *lay, const tg_split_opts *o, int64_t lo, int64_t b, int64_t *begin,
                      int64_t *end) {
  int64_t L = o->window, off = o->target_offset ? o->target_offset : L - 1, p = lo;
  int64_t last = b - (off + 1 > L ? off + 1 : L); /* the last start whose window and target row lie before b */
#define FITS(q) (o->reach[lay->rows[(q) + off]] >= 0 && \
                 (q) + off + o->reach[lay->rows[(q) + off]] < b)
  while (p <= last && !FITS(p)) p++;
  *begin = p;
  while (p <= last && FITS(p)) p++;
  *end = p > *begin ? p : *begin;
#undef FITS
}

static tg_status check_opts(const tg_split_opts *o) {
  if (o->window < 1) return tg_error(TG_ERR_INVALID, "splits: window %d (must be >= 1)", o->window);
  if (o->horizon < 0 || o->warmup < 0 || o->embargo < 0 || o->min_windows < 0)
    return tg_error(TG_ERR_INVALID, "splits: horizon %d, warmup %d, embargo %d, min_windows %lld (none may be negative)",
                    o->horizon, o->warmup, o->embargo, (long long)o->min_windows);
  if (o->by_date) {
    if (o->val_start_ns > o->test_start_ns)
      return tg_error(TG_ERR_INVALID, "splits: validation starts after the test split (%lld > %lld ns)",
                      (long long)o->val_start_ns, (long long)o->test_start_ns);
  } else if (o->frac_train != 0.0 || o->frac_val != 0.0) {
    double ft = o->frac_train, fv = o->frac_val;
    if (!(ft > 0.0 && ft <= 1.0 && fv >= 0.0 && ft + fv <= 1.0 + 1e-12))
      return tg_error(TG_ERR_INVALID, "splits: fractions train %g, validation %g (need train in (0, 1], "
                      "validation >= 0, their sum <= 1; test is the rest)", ft, fv);
  }
  return TG_OK;
}

tg_status tg_splits_make(const tg_bars *bars, const tg_layout *lay, const tg_split_opts *opts, tg_splits *out) {
  memset(out, 0, sizeof *out);
  if (!bars || !lay || !opts || lay->n != bars->n)
    return tg_error(TG_ERR_INVALID, "splits: missing options, or the layout does not belong to these bars");
  tg_status st = check_opts(opts);
  if (st != TG_OK) return st;
  int64_t n = bars->n, L = opts->window, h = opts->horizon;
  int64_t minw = opts->min_windows ? opts->min_windows : 1;
  int64_t t[TG_SPLIT_COUNT + 1] = {INT64_MIN, 0, 0, INT64_MAX}; /* split s is [t[s], t[s+1]) */
  int requested[TG_SPLIT_COUNT] = {1, 1, 1};
  if (opts->by_date) {
    t[1] = opts->val_start_ns;
    t[2] = opts->test_start_ns;
    requested[TG_VAL] = t[1] < t[2];
    requested[TG_TEST] = t[2] < INT64_MAX;
  } else {
    double ft = opts->frac_train, fv = opts->frac_val;
    if (ft == 0.0 && fv == 0.0) ft = 0.7, fv = 0.15;
    int64_t i1 = (int64_t)floor(ft * (double)n), i2 = (int64_t)floor((ft + fv) * (double)n);
    if (i2 > n) i2 = n;
    t[1] = i1 < n ? bars->ts[i1] : INT64_MAX;
    t[2] = i2 < n ? bars->ts[i2] : INT64_MAX;
    requested[TG_VAL] = fv > 0.0;
    requested[TG_TEST] = 1.0 - ft - fv > 1e-12;
  }
  out->k = lay->k;
  out->window = (int)L;
  out->horizon = (int)h;
  for (int s = 0; s < TG_SPLIT_COUNT; s++) {
    out->s[s].begin = tg_calloc((size_t)lay->k, sizeof(int64_t));
    out->s[s].end = tg_calloc((size_t)lay->k, sizeof(int64_t));
    if (!out->s[s].begin || !out->s[s].end) {
      tg_splits_free(out);
      return tg_error(TG_ERR_NOMEM, "splits: out of memory");
    }
  }
  for (int s = 0; s < TG_SPLIT_COUNT && st == TG_OK; s++) {
    tg_split *sp = &out->s[s];
    sp->ts_begin = t[s];
    sp->ts_end = t[s + 1];
    int64_t bars_in = 0, longest = 0, warm_max = opts->warmup;
    for (int j = 0; j < lay->k; j++) {
      int64_t p0 = lay->seg[j], p1 = lay->seg[j + 1];
      int64_t a = lower_bound(bars, lay, p0, p1, t[s]);          /* the region: positions [a, b) */
      int64_t b = t[s + 1] == INT64_MAX ? p1 : lower_bound(bars, lay, a, p1, t[s + 1]);
      int64_t lo = a + (s > 0 ? opts->embargo : 0);
      int64_t warm = opts->warmup_inst && opts->warmup_inst[j] > opts->warmup ? opts->warmup_inst[j] : opts->warmup;
      if (lo < p0 + warm) lo = p0 + warm;                        /* first row past the feature warm-up */
      if (warm > warm_max) warm_max = warm;
      if (opts->reach) {
        fit_reach(lay, opts, lo, b, &sp->begin[j], &sp->end[j]);
      } else {
        int64_t hi = b - L - h + 1;                              /* window and targets end before b */
        sp->begin[j] = lo;
        sp->end[j] = hi > lo ? hi : lo;
      }
      sp->count += sp->end[j] - sp->begin[j];
      bars_in += b - a;
      if (b - a > longest) longest = b - a;
    }
    char b0[32], b1[32], late[128] = "";
    if (s == 0 && warm_max > opts->warmup)
      snprintf(late, sizeof late, " (and covariates' first values come up to %lld bars into an instrument)",
               (long long)warm_max);
    if (bars_in == 0 && requested[s])
      st = tg_error(TG_ERR_INVALID, "splits: the %s split (%s .. %s) holds no bars; %lld bars in all", k_split_names[s],
                    fmt_ts(t[s], b0, sizeof b0), fmt_ts(t[s + 1], b1, sizeof b1), (long long)n);
    else if (bars_in > 0 && sp->count < minw)
      st = tg_error(TG_ERR_INVALID,
                    "splits: the %s split (%s .. %s, %lld bars, longest instrument run %lld) has %lld windows, "
                    "needs at least %lld: a window of %lld bars plus a horizon of %lld%s%d needs %lld bars in one run%s",
                    k_split_names[s], fmt_ts(t[s], b0, sizeof b0), fmt_ts(t[s + 1], b1, sizeof b1), (long long)bars_in,
                    (long long)longest, (long long)sp->count, (long long)minw, (long long)L, (long long)h,
                    s == 0 ? " plus the feature warm-up of " : " plus the embargo of ", s == 0 ? opts->warmup : opts->embargo,
                    (long long)(L + h + (s == 0 ? opts->warmup : opts->embargo)), late);
  }
  if (st != TG_OK) tg_splits_free(out);
  return st;
}
