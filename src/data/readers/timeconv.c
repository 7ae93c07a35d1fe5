/* Calendar arithmetic (days from civil dates) and zone conversion from parsed zone files (tz_zone.c). */
#define _DEFAULT_SOURCE
#include "data/readers/timeconv.h"
#include "data/readers/tz_zone.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t tg_days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void tg_civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

int tg_valid_date(int64_t y, int m, int d) {
  static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return 0;
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= days[m - 1] + (m == 2 && leap);
}

int tg_tz_is_utc(const char *tz) { return !tz || !*tz || strcmp(tz, "UTC") == 0 || strcmp(tz, "Etc/UTC") == 0; }

tg_status tg_tz_check(const char *tz) {
  if (tg_tz_is_utc(tz)) return TG_OK;
  const tg_tz_zone *z;
  return tg_tz_zone_get(tz, &z);
}

/* The C library's answer, for what the parsed zone cannot say (tz_zone.h). It converts through the
 * TZ variable, which is process-wide: one conversion at a time, about 20 us each. */
static pthread_mutex_t g_libc_lock = PTHREAD_MUTEX_INITIALIZER;

static tg_status libc_offset(const char *tz, int64_t utc_s, int *offset_s) {
  pthread_mutex_lock(&g_libc_lock);
  const char *old = getenv("TZ");
  char saved[256];
  int had = old != NULL;
  snprintf(saved, sizeof saved, "%s", old ? old : "");
  setenv("TZ", tz, 1);
  tzset();
  time_t t = (time_t)utc_s;
  struct tm lt;
  int ok = (int64_t)t == utc_s && localtime_r(&t, &lt) != NULL;
  long off = ok ? lt.tm_gmtoff : 0;
  if (had) setenv("TZ", saved, 1);
  else unsetenv("TZ");
  tzset();
  pthread_mutex_unlock(&g_libc_lock);
  if (!ok) return tg_error(TG_ERR_INVALID, "time zone '%s': cannot convert %lld", tz, (long long)utc_s);
  *offset_s = (int)off;
  return TG_OK;
}

static tg_status zone_offset(const tg_tz_zone *z, const char *tz, int64_t utc_s, int *offset_s) {
  if (tg_tz_zone_offset(z, utc_s, offset_s, NULL, NULL)) return TG_OK;
  return libc_offset(tz, utc_s, offset_s);
}

tg_status tg_tz_offset_at_utc(const char *tz, int64_t utc_s, int *offset_s) {
  if (tg_tz_is_utc(tz)) {
    *offset_s = 0;
    return TG_OK;
  }
  const tg_tz_zone *z;
  tg_status st = tg_tz_zone_get(tz, &z);
  if (st != TG_OK) return st;
  return zone_offset(z, tz, utc_s, offset_s);
}

static tg_status local_to_utc(const tg_tz_zone *z, const char *tz, int64_t local_s, int64_t *utc_s) {
  tg_status st;
  if (local_s < INT64_MIN / 2 || local_s > INT64_MAX / 2)
    return tg_error(TG_ERR_INVALID, "time zone '%s': cannot convert %lld", tz, (long long)local_s);
  /* offsets are found at instants near the wall-clock time: try the offset in force a day before and
   * after; the first consistent one wins (daylight first for repeated hours) */
  int off_a, off_b;
  st = zone_offset(z, tz, local_s - 86400, &off_a);
  if (st == TG_OK) st = zone_offset(z, tz, local_s + 86400, &off_b);
  if (st != TG_OK) return st;
  int cand[2] = {off_a > off_b ? off_a : off_b, off_a > off_b ? off_b : off_a};
  for (int i = 0; i < 2; i++) {
    int check;
    if ((st = zone_offset(z, tz, local_s - cand[i], &check)) != TG_OK) return st;
    if (check == cand[i]) {
      *utc_s = local_s - cand[i];
      return TG_OK;
    }
  }
  *utc_s = local_s - cand[1]; /* in a spring gap: read with the pre-gap offset, i.e. moved forward */
  return TG_OK;
}

tg_status tg_tz_local_to_utc(const char *tz, int64_t local_s, int64_t *utc_s) {
  if (tg_tz_is_utc(tz)) {
    *utc_s = local_s;
    return TG_OK;
  }
  const tg_tz_zone *z;
  tg_status st = tg_tz_zone_get(tz, &z);
  if (st != TG_OK) return st;
  return local_to_utc(z, tz, local_s, utc_s);
}

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

tg_status tg_tz_local_to_utc_memo(const char *tz, tg_tz_memo *m, int64_t local_s, int64_t *utc_s) {
  if (local_s >= m->lo && local_s < m->hi) {
    *utc_s = local_s - m->off;
    return TG_OK;
  }
  if (tg_tz_is_utc(tz)) {
    *utc_s = local_s;
    return TG_OK;
  }
  const tg_tz_zone *z;
  tg_status st = tg_tz_zone_get(tz, &z);
  if (st == TG_OK) st = local_to_utc(z, tz, local_s, utc_s);
  if (st != TG_OK) return st;
  /* Where the offset is one value over UTC [a, b), tg_tz_local_to_utc(L) is L - off whenever L - 86400,
   * L + 86400 and L - off all lie in [a, b): the span of such L is the memo */
  int off;
  int64_t a, b, off_l = local_s - *utc_s;
  m->lo = m->hi = 0;
  if (tg_tz_zone_offset(z, *utc_s, &off, &a, &b) && off == off_l) {
    m->lo = sat_add(a, off > 86400 ? off : 86400);
    m->hi = sat_add(b, off < -86400 ? off : -86400);
    m->lo = m->lo > INT64_MIN / 2 ? m->lo : INT64_MIN / 2; /* tg_tz_local_to_utc's range */
    m->hi = m->hi < INT64_MAX / 2 ? m->hi : INT64_MAX / 2;
    m->off = off;
  }
  return TG_OK;
}

const char *tg_format_utc(int64_t ns, int frac, char *buf, size_t n) {
  /* floor division without overflow for any ns (INT64_MIN included): the day, and the ns into it in [0, a day) */
  int64_t days = ns / TG_NS_PER_DAY - (ns % TG_NS_PER_DAY < 0), rem = ns % TG_NS_PER_DAY, y;
  if (rem < 0) rem += TG_NS_PER_DAY;
  int m, d;
  tg_civil_from_days(days, &y, &m, &d);
  int64_t s = rem / TG_NS_PER_S;
  if (frac)
    snprintf(buf, n, "%04lld-%02d-%02d %02d:%02d:%02d.%09lld", (long long)y, m, d, (int)(s / 3600),
             (int)(s / 60 % 60), (int)(s % 60), (long long)(rem % TG_NS_PER_S));
  else
    snprintf(buf, n, "%04lld-%02d-%02d %02d:%02d:%02d", (long long)y, m, d, (int)(s / 3600), (int)(s / 60 % 60),
             (int)(s % 60));
  return buf;
}

const char *tg_format_time(int64_t ns, char *buf, size_t n) { return tg_format_utc(ns, ns % TG_NS_PER_S != 0, buf, n); }

const char *tg_format_bound(int64_t ns, char *buf, size_t n) {
  return ns == INT64_MIN ? "start" : ns == INT64_MAX ? "end" : tg_format_time(ns, buf, n);
}

const char *tg_format_duration(int64_t ns, char *buf, size_t n) {
  int64_t s = ns / TG_NS_PER_S;
  if (ns % TG_NS_PER_S) snprintf(buf, n, "%.3fs", (double)ns / 1e9);
  else if (s < 60 || s % 60) snprintf(buf, n, "%llds", (long long)s);
  else if (s < 3600 || s % 3600) snprintf(buf, n, "%lldm", (long long)(s / 60));
  else if (s < 86400) snprintf(buf, n, "%lldh", (long long)(s / 3600));
  else if (s % 86400) snprintf(buf, n, "%lldd %lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
  else snprintf(buf, n, "%lldd", (long long)(s / 86400));
  return buf;
}
