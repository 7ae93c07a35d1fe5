/* POSIX TZ strings (the footer of a TZif file): parsing, and the offset they give at an instant. */
#include "data/readers/timeconv.h"
#include "data/readers/tz_zone.h"

typedef struct cursor {
  const char *p, *e;
} cursor;

static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A run of at most four digits as a number no larger than max. */
static int number(cursor *c, int max, int *v) {
  int n = 0, k = 0;
  while (c->p < c->e && is_digit(*c->p) && k < 5) n = n * 10 + (*c->p++ - '0'), k++;
  if (k == 0 || k > 4 || n > max) return 0;
  *v = n;
  return 1;
}

/* A zone abbreviation: three or more letters, or <...> of letters, digits, '+' and '-'. */
static int name(cursor *c) {
  const char *s = c->p;
  if (c->p < c->e && *c->p == '<') {
    for (s = ++c->p; c->p < c->e && *c->p != '>'; c->p++)
      if (!is_alpha(*c->p) && !is_digit(*c->p) && *c->p != '+' && *c->p != '-') return 0;
    if (c->p >= c->e || c->p - s < 3) return 0;
    c->p++;
    return 1;
  }
  while (c->p < c->e && is_alpha(*c->p)) c->p++;
  return c->p - s >= 3;
}

/* [+-]hh[:mm[:ss]] with hh <= max_h, as signed seconds. */
static int clock_time(cursor *c, int max_h, int32_t *secs) {
  int sign = 1, h, m = 0, s = 0;
  if (c->p < c->e && (*c->p == '+' || *c->p == '-')) sign = *c->p++ == '-' ? -1 : 1;
  if (!number(c, max_h, &h)) return 0;
  if (c->p < c->e && *c->p == ':') {
    c->p++;
    if (!number(c, 59, &m)) return 0;
    if (c->p < c->e && *c->p == ':') {
      c->p++;
      if (!number(c, 59, &s)) return 0;
    }
  }
  *secs = sign * (h * 3600 + m * 60 + s);
  return 1;
}

/* date[/time]: Jn, n or Mm.w.d; the time defaults to 02:00 and may be -167 to 167 hours. */
static int rule_date(cursor *c, tg_tz_date *d) {
  d->m = d->w = d->d = 0;
  if (c->p < c->e && *c->p == 'J') {
    c->p++;
    d->kind = 'J';
    if (!number(c, 365, &d->d) || d->d < 1) return 0;
  } else if (c->p < c->e && *c->p == 'M') {
    c->p++;
    d->kind = 'M';
    if (!number(c, 12, &d->m) || d->m < 1 || c->p >= c->e || *c->p++ != '.') return 0;
    if (!number(c, 5, &d->w) || d->w < 1 || c->p >= c->e || *c->p++ != '.') return 0;
    if (!number(c, 6, &d->d)) return 0;
  } else {
    d->kind = 'D';
    if (!number(c, 365, &d->d)) return 0;
  }
  d->secs = 2 * 3600;
  if (c->p < c->e && *c->p == '/') {
    c->p++;
    return clock_time(c, 167, &d->secs);
  }
  return 1;
}

int tg_tz_rule_parse(const char *s, size_t n, tg_tz_rule *r) {
  cursor c = {s, s + n};
  int32_t std_west, dst_west;
  if (!name(&c) || !clock_time(&c, 24, &std_west)) return 0;
  r->std_off = r->dst_off = -std_west;
  r->has_dst = 0;
  if (c.p == c.e) return 1;
  if (!name(&c)) return 0;
  r->dst_off = r->std_off + 3600;
  if (c.p < c.e && *c.p != ',') {
    if (!clock_time(&c, 24, &dst_west)) return 0;
    r->dst_off = -dst_west;
  }
  if (c.p >= c.e || *c.p++ != ',' || !rule_date(&c, &r->start) || c.p >= c.e || *c.p++ != ',' ||
      !rule_date(&c, &r->end) || c.p != c.e)
    return 0;
  r->has_dst = 1;
  return 1;
}

static int is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* The UTC instant of a change in year y, read on a clock off seconds east of UTC. */
static int64_t change_at(const tg_tz_date *d, int64_t y, int32_t off) {
  static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int64_t day;
  if (d->kind == 'J') {
    day = tg_days_from_civil(y, 1, 1) + d->d - 1 + (is_leap(y) && d->d >= 60);
  } else if (d->kind == 'D') {
    day = tg_days_from_civil(y, 1, 1) + d->d;
  } else {
    int64_t first = tg_days_from_civil(y, d->m, 1);
    int wd = (int)(((first + 4) % 7 + 7) % 7); /* 0 Sunday; 1970-01-01 was a Thursday */
    int len = mdays[d->m - 1] + (d->m == 2 && is_leap(y)), dd = (d->d - wd + 7) % 7;
    for (int i = 1; i < d->w && dd + 7 < len; i++) dd += 7;
    day = first + dd;
  }
  return day * 86400 + d->secs - off;
}

int32_t tg_tz_rule_offset(const tg_tz_rule *r, int64_t utc_s, int64_t *from, int64_t *until) {
  if (!r->has_dst) {
    if (from) *from = INT64_MIN;
    if (until) *until = INT64_MAX;
    return r->std_off;
  }
  int64_t days = utc_s >= 0 ? utc_s / 86400 : -((-utc_s + 86399) / 86400), y;
  int m, d;
  tg_civil_from_days(days, &y, &m, &d);
  int64_t start = change_at(&r->start, y, r->std_off), end = change_at(&r->end, y, r->dst_off);
  int dst = start > end ? (utc_s < end || utc_s >= start) : (utc_s >= start && utc_s < end);
  if (from || until) { /* within the UTC year the answer changes only at start and end */
    int64_t lo = tg_days_from_civil(y, 1, 1) * 86400, hi = tg_days_from_civil(y + 1, 1, 1) * 86400;
    const int64_t at[2] = {start, end};
    for (int k = 0; k < 2; k++) {
      if (at[k] <= utc_s && at[k] > lo) lo = at[k];
      if (at[k] > utc_s && at[k] < hi) hi = at[k];
    }
    if (from) *from = lo;
    if (until) *until = hi;
  }
  return dst ? r->dst_off : r->std_off;
}
