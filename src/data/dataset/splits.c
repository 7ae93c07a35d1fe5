/* Chronological train / validation / test splits: time regions, then the window starts that fit inside each with a purge gap, as runs around the starts a bad target row removes. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "tickgrad/dataset.h"

static const char *k_split_names[TG_SPLIT_COUNT] = {"training", "validation", "test"};

void tg_splits_free(tg_splits *sp) {
  for (int s = 0; s < TG_SPLIT_COUNT; s++) {
    tg_free(sp->s[s].begin);
    tg_free(sp->s[s].end);
    tg_free(sp->s[s].run_begin);
    tg_free(sp->s[s].run_end);
  }
  memset(sp, 0, sizeof *sp);
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

/* The runs of valid starts being collected for one split: [n] each, room for cap. */
typedef struct run_list {
  int64_t n, cap;
  int64_t *b, *e;
} run_list;

static tg_status run_push(run_list *l, int64_t b, int64_t e) {
  if (l->n == l->cap) {
    int64_t cap = l->cap ? 2 * l->cap : 16;
    int64_t *nb = tg_malloc((size_t)cap * sizeof *nb), *ne = tg_malloc((size_t)cap * sizeof *ne);
    if (!nb || !ne) {
      tg_free(nb);
      tg_free(ne);
      return tg_error(TG_ERR_NOMEM, "splits: out of memory for %lld runs of window starts", (long long)cap);
    }
    if (l->n) memcpy(nb, l->b, (size_t)l->n * sizeof *nb), memcpy(ne, l->e, (size_t)l->n * sizeof *ne);
    tg_free(l->b);
    tg_free(l->e);
    l->b = nb, l->e = ne, l->cap = cap;
  }
  l->b[l->n] = b, l->e[l->n] = e, l->n++;
  return TG_OK;
}

/* The first position of [p0, p1) whose row has a target (reach >= 0): p1 when none. Starts whose target row lies
 * before it are the target's own warm-up, not dropped windows. */
static int64_t first_target(const tg_layout *lay, const int32_t *reach, int64_t p0, int64_t p1) {
  while (p0 < p1 && reach[lay->rows[p0]] < 0) p0++;
  return p0;
}

/* With per-row target reach: judges every start in [lo, b) on its own (window and target span end before b, the
 * target exists), pushes the runs of valid starts, sets instrument j's outer range [*begin, *end) and counts the
 * windows of the usual range (target row past tgt0, span within the split's horizon) each cause removed. */
static tg_status fit_reach(const tg_layout *lay, const tg_split_opts *o, int64_t lo, int64_t b, int64_t tgt0,
                           tg_split *sp, run_list *runs, int64_t *begin, int64_t *end) {
  int64_t L = o->window, off = o->target_offset ? o->target_offset : L - 1;
  int64_t last = b - (off + 1 > L ? off + 1 : L); /* the last start whose window and target row lie before b */
  int64_t run0 = -1;                              /* the open run's first start (-1: none open) */
  *begin = *end = lo > last + 1 ? lo : last + 1;
  for (int64_t p = lo; p <= last + 1; p++) {
    int32_t reach = p <= last ? o->reach[lay->rows[p + off]] : -1;
    int fits = p <= last && reach >= 0 && p + off + reach < b;
    if (fits && run0 < 0) run0 = p;
    if (fits) continue;
    if (run0 >= 0) {
      tg_status st = run_push(runs, run0, p);
      if (st != TG_OK) return st;
      if (*begin == *end) *begin = run0;
      *end = p;
      run0 = -1;
    }
    if (p <= last && p + off >= tgt0 && p + off + o->horizon < b) /* inside the usual range: a dropped window */
      sp->dropped[reach < 0 ? TG_DROP_TARGET : TG_DROP_SPAN]++;
  }
  return TG_OK;
}

/* "col:x", "labels:FILE", ... as --target writes it ("logret" for NULL). */
static const char *target_text(const tg_target_opts *t, char *buf, size_t n) {
  if (!t || t->kind == TG_TARGET_LOGRET) snprintf(buf, n, "logret");
  else if (t->kind == TG_TARGET_COLUMN) snprintf(buf, n, "col:%s", t->column);
  else if (t->kind == TG_TARGET_LABELS) snprintf(buf, n, "labels:%s", t->labels_path);
  else snprintf(buf, n, "triple-barrier:%g,%g,%d", t->tb_up, t->tb_down, t->tb_bars);
  return buf;
}

/* One cause's words: "target 'x' missing or not finite at 2 bars", "1 label ends past the split", ... */
static int drop_words(int cause, int64_t m, const tg_target_opts *t, char *buf, size_t n) {
  const char *s = m == 1 ? "" : "s";
  int col = t && t->kind == TG_TARGET_COLUMN, labels = t && t->kind == TG_TARGET_LABELS;
  if (cause == TG_DROP_TARGET && col)
    return snprintf(buf, n, "target '%s' missing or not finite at %lld bar%s", t->column, (long long)m, s);
  if (cause == TG_DROP_TARGET) return snprintf(buf, n, "no target at %lld bar%s", (long long)m, s);
  if (labels) return snprintf(buf, n, "%lld label%s end%s past the split", (long long)m, s, m == 1 ? "s" : "");
  return snprintf(buf, n, "the target's span leaves the split at %lld bar%s", (long long)m, s);
}

const char *tg_split_drops_str(const tg_split *s, const tg_target_opts *target, char *buf, size_t n) {
  int64_t total = 0;
  size_t at = 0;
  if (n) buf[0] = 0;
  for (int c = 0; c < TG_DROP_COUNT; c++) total += s->dropped[c];
  if (total == 0 || n == 0) return buf;
  int w = snprintf(buf, n, "%lld dropped: ", (long long)total);
  at = w > 0 && (size_t)w < n ? (size_t)w : n - 1;
  for (int c = 0, first = 1; c < TG_DROP_COUNT && at + 1 < n; c++) {
    if (!s->dropped[c]) continue;
    if (!first) at += (size_t)snprintf(buf + at, n - at, "; ");
    if (at + 1 >= n) break;
    w = drop_words(c, s->dropped[c], target, buf + at, n - at);
    at = w > 0 && at + (size_t)w < n ? at + (size_t)w : n - 1;
    first = 0;
  }
  return buf;
}

static tg_status check_opts(const tg_split_opts *o) {
  if (o->window < 1) return tg_error(TG_ERR_INVALID, "splits: window %d (must be >= 1)", o->window);
  if (o->horizon < 0 || o->warmup < 0 || o->embargo < 0 || o->min_windows < 0)
    return tg_error(TG_ERR_INVALID, "splits: horizon %d, warmup %d, embargo %d, min_windows %lld (none may be negative)",
                    o->horizon, o->warmup, o->embargo, (long long)o->min_windows);
  if (o->by_date) {
    if (o->val_start_ns > o->test_start_ns) {
      char a[TG_TIME_TEXT], b[TG_TIME_TEXT];
      return tg_error(TG_ERR_INVALID, "splits: validation starts after the test split (%s > %s)",
                      tg_format_time(o->val_start_ns, a, sizeof a), tg_format_time(o->test_start_ns, b, sizeof b));
    }
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
  int64_t *tgt0 = tg_malloc((size_t)lay->k * sizeof *tgt0); /* [k] each instrument's first target position */
  if (!tgt0) st = tg_error(TG_ERR_NOMEM, "splits: out of memory");
  for (int j = 0; j < lay->k && tgt0; j++)
    tgt0[j] = opts->reach ? first_target(lay, opts->reach, lay->seg[j], lay->seg[j + 1]) : lay->seg[j];
  for (int s = 0; s < TG_SPLIT_COUNT && st == TG_OK; s++) {
    tg_split *sp = &out->s[s];
    run_list runs = {0};
    sp->ts_begin = t[s];
    sp->ts_end = t[s + 1];
    int64_t bars_in = 0, longest = 0, warm_max = opts->warmup;
    for (int j = 0; j < lay->k && st == TG_OK; j++) {
      int64_t p0 = lay->seg[j], p1 = lay->seg[j + 1];
      int64_t a = lower_bound(bars, lay, p0, p1, t[s]);          /* the region: positions [a, b) */
      int64_t b = t[s + 1] == INT64_MAX ? p1 : lower_bound(bars, lay, a, p1, t[s + 1]);
      int64_t lo = a + (s > 0 ? opts->embargo : 0);
      int64_t warm = opts->warmup_inst && opts->warmup_inst[j] > opts->warmup ? opts->warmup_inst[j] : opts->warmup;
      if (lo < p0 + warm) lo = p0 + warm;                        /* first row past the feature warm-up */
      if (warm > warm_max) warm_max = warm;
      if (opts->reach) {
        st = fit_reach(lay, opts, lo, b, tgt0[j], sp, &runs, &sp->begin[j], &sp->end[j]);
      } else {
        int64_t hi = b - L - h + 1;                              /* window and targets end before b */
        sp->begin[j] = lo;
        sp->end[j] = hi > lo ? hi : lo;
        if (hi > lo) st = run_push(&runs, lo, hi);
      }
      bars_in += b - a;
      if (b - a > longest) longest = b - a;
    }
    if (st == TG_OK && runs.n == 0) st = run_push(&runs, 0, 0), runs.n = 0; /* room, so the runs are never NULL */
    sp->run_begin = runs.b, sp->run_end = runs.e, sp->n_runs = runs.n;
    for (int64_t r = 0; r < runs.n; r++) sp->count += runs.e[r] - runs.b[r];
    if (st != TG_OK) break;
    char b0[TG_TIME_TEXT], b1[TG_TIME_TEXT], late[128] = "", tgt[TG_PATH_MAX + 64], why[TG_PATH_MAX + 96] = "", drops[400];
    if (s == 0 && warm_max > opts->warmup)
      snprintf(late, sizeof late, " (and covariates' first values come up to %lld bars into an instrument)",
               (long long)warm_max);
    if (opts->target) snprintf(why, sizeof why, " (target %s)", target_text(opts->target, tgt, sizeof tgt));
    tg_split_drops_str(sp, opts->target, drops, sizeof drops);
    if (bars_in == 0 && requested[s])
      st = tg_error(TG_ERR_INVALID, "splits: the %s split (%s .. %s) holds no bars; %lld bars in all", k_split_names[s],
                    tg_format_bound(t[s], b0, sizeof b0), tg_format_bound(t[s + 1], b1, sizeof b1), (long long)n);
    else if (bars_in > 0 && sp->count < minw)
      st = tg_error(TG_ERR_INVALID,
                    "splits: the %s split (%s .. %s, %lld bars, longest instrument run %lld) has %lld windows, "
                    "needs at least %lld: a window of %lld bars plus a horizon of %lld%s%s%d needs %lld bars in one "
                    "run%s%s%s",
                    k_split_names[s], tg_format_bound(t[s], b0, sizeof b0), tg_format_bound(t[s + 1], b1, sizeof b1),
                    (long long)bars_in, (long long)longest, (long long)sp->count, (long long)minw, (long long)L, (long long)h, why,
                    s == 0 ? " plus the feature warm-up of " : " plus the embargo of ", s == 0 ? opts->warmup : opts->embargo,
                    (long long)(L + h + (s == 0 ? opts->warmup : opts->embargo)), late, drops[0] ? "; " : "", drops);
  }
  tg_free(tgt0);
  if (st != TG_OK) tg_splits_free(out);
  return st;
}
