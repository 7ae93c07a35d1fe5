/* The weekly bar schedule: local (weekday, time of day) of every bar seen, as runs; the next scheduled bar. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/intmath.h"
#include "data/readers/schedule.h"
#include "data/readers/timeconv.h"

/* ts's local time: days since 1970-01-01 and ns into the day. */
static tg_status local_of(const char *tz, int64_t ts, int64_t *day, int64_t *tod) {
  int off = 0;
  tg_status st = tg_tz_offset_at_utc(tz, tg_floor_div(ts, TG_NS_PER_S), &off);
  int64_t local = ts + (int64_t)off * TG_NS_PER_S;
  *day = tg_floor_div(local, TG_NS_PER_DAY);
  *tod = tg_floor_mod(local, TG_NS_PER_DAY);
  return st;
}

static int dow_of(int64_t day) { return (int)tg_floor_mod(day + 3, 7); } /* 1970-01-01 was a Thursday: 0 is Monday */

/* The sorted distinct keys dow * day + tod as runs of equal steps within a weekday. */
static tg_status make_runs(const int64_t *key, int64_t m, tg_schedule *out) {
  out->runs = tg_malloc((size_t)(m > 0 ? m : 1) * sizeof *out->runs);
  if (!out->runs) return tg_error(TG_ERR_NOMEM, "schedule: out of memory for %lld times", (long long)m);
  for (int64_t i = 0; i < m;) {
    tg_sched_run *r = &out->runs[out->n++];
    r->dow = (int)(key[i] / TG_NS_PER_DAY), r->first_ns = key[i] % TG_NS_PER_DAY, r->step_ns = 0, r->count = 1;
    int64_t j = i + 1;
    if (j < m && key[j] / TG_NS_PER_DAY == r->dow) {
      r->step_ns = key[j] - key[i];
      while (j < m && key[j] / TG_NS_PER_DAY == r->dow && key[j] - key[j - 1] == r->step_ns) j++, r->count++;
    }
    i = j;
  }
  return TG_OK;
}

tg_status tg_schedule_learn(const int64_t *ts, int64_t n, const char *tz, tg_schedule *out) {
  memset(out, 0, sizeof *out);
  if (tz && strlen(tz) >= sizeof out->tz) return tg_error(TG_ERR_INVALID, "schedule: zone name too long: %.32s..", tz);
  snprintf(out->tz, sizeof out->tz, "%s", tz ? tz : "");
  int64_t *key = tg_malloc((size_t)(n > 0 ? n : 1) * sizeof *key), m = 0;
  if (!key) return tg_error(TG_ERR_NOMEM, "schedule: out of memory for %lld bars", (long long)n);
  tg_status st = TG_OK;
  for (int64_t i = 0; i < n && st == TG_OK; i++) {
    int64_t day, tod;
    st = local_of(tz, ts[i], &day, &tod);
    key[i] = dow_of(day) * TG_NS_PER_DAY + tod;
  }
  if (st == TG_OK) {
    qsort(key, (size_t)n, sizeof *key, tg_cmp_i64);
    for (int64_t i = 0; i < n; i++)
      if (m == 0 || key[i] != key[m - 1]) key[m++] = key[i];
    st = make_runs(key, m, out);
  }
  tg_free(key);
  if (st != TG_OK) tg_schedule_free(out);
  return st;
}

/* The first scheduled time of day after tod on weekday dow (INT64_MAX: none); *on when tod is one. */
static int64_t next_on_day(const tg_schedule *s, int dow, int64_t tod, int *on) {
  int64_t best = INT64_MAX;
  for (int i = 0; i < s->n; i++) {
    const tg_sched_run *r = &s->runs[i];
    if (r->dow != dow) continue;
    int64_t last = r->first_ns + (r->count - 1) * r->step_ns, cand = INT64_MAX;
    if (tod < r->first_ns) cand = r->first_ns;
    else if (tod < last) cand = r->first_ns + ((tod - r->first_ns) / r->step_ns + 1) * r->step_ns;
    if (tod >= r->first_ns && tod <= last && (r->step_ns == 0 || (tod - r->first_ns) % r->step_ns == 0)) *on = 1;
    if (cand < best) best = cand;
  }
  return best;
}

tg_status tg_schedule_next(const tg_schedule *s, int64_t ts, int64_t *next, int *on) {
  *on = 0;
  if (!s || s->n == 0) return tg_error(TG_ERR_INVALID, "schedule: no bar times to go by");
  const char *tz = s->tz[0] ? s->tz : NULL;
  int64_t day, tod;
  tg_status st = local_of(tz, ts, &day, &tod);
  if (st != TG_OK) return st;
  int dow = dow_of(day), ignored = 0;
  int64_t best = next_on_day(s, dow, tod, on);
  for (int d = 1; d <= 7 && best == INT64_MAX; d++) { /* the first bar of the next weekday that has bars */
    best = next_on_day(s, (dow + d) % 7, -1, &ignored);
    if (best != INT64_MAX) day += d;
  }
  int64_t local = day * TG_NS_PER_DAY + best, utc_s;
  st = tg_tz_local_to_utc(tz, tg_floor_div(local, TG_NS_PER_S), &utc_s);
  if (st == TG_OK) *next = utc_s * TG_NS_PER_S + tg_floor_mod(local, TG_NS_PER_S);
  return st;
}

void tg_schedule_free(tg_schedule *s) {
  tg_free(s->runs);
  memset(s, 0, sizeof *s);
}
