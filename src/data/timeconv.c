/* Calendar arithmetic (days from civil dates) and zone offsets from the system's zone database. */
#define _DEFAULT_SOURCE
#include "data/timeconv.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static int is_utc(const char *tz) { return !tz || !*tz || strcmp(tz, "UTC") == 0 || strcmp(tz, "Etc/UTC") == 0; }

tg_status tg_tz_check(const char *tz) {
  if (is_utc(tz)) return TG_OK;
  char path[512];
  struct stat sb;
  if (strstr(tz, "..") || tz[0] == '/' || snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", tz) >= (int)sizeof path ||
      stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
    return tg_error(TG_ERR_INVALID, "time zone '%s' is unknown (use a name from /usr/share/zoneinfo such as "
                    "America/New_York; the tzdata package provides them)", tz);
  return TG_OK;
}

/* The C library converts through the TZ variable, which is process-wide: one conversion at a time. */
static pthread_mutex_t g_tz_lock = PTHREAD_MUTEX_INITIALIZER;

static void tz_enter(const char *tz, char *saved, size_t n, int *had) {
  pthread_mutex_lock(&g_tz_lock);
  const char *old = getenv("TZ");
  *had = old != NULL;
  snprintf(saved, n, "%s", old ? old : "");
  setenv("TZ", tz, 1);
  tzset();
}

static void tz_leave(const char *saved, int had) {
  if (had) setenv("TZ", saved, 1);
  else unsetenv("TZ");
  tzset();
  pthread_mutex_unlock(&g_tz_lock);
}

tg_status tg_tz_offset_at_utc(const char *tz, int64_t utc_s, int *offset_s) {
  if (is_utc(tz)) {
    *offset_s = 0;
    return TG_OK;
  }
  tg_status st = tg_tz_check(tz);
  if (st != TG_OK) return st;
  char saved[256];
  int had;
  tz_enter(tz, saved, sizeof saved, &had);
  time_t t = (time_t)utc_s;
  struct tm lt;
  int ok = localtime_r(&t, &lt) != NULL;
  long off = ok ? lt.tm_gmtoff : 0;
  tz_leave(saved, had);
  if (!ok) return tg_error(TG_ERR_INVALID, "time zone '%s': cannot convert %lld", tz, (long long)utc_s);
  *offset_s = (int)off;
  return TG_OK;
}

tg_status tg_tz_local_to_utc(const char *tz, int64_t local_s, int64_t *utc_s) {
  if (is_utc(tz)) {
    *utc_s = local_s;
    return TG_OK;
  }
  /* offsets are found at instants near the wall-clock time: try the offset in force a day before and
   * after; the first consistent one wins (daylight first for repeated hours) */
  int off_a, off_b;
  tg_status st = tg_tz_offset_at_utc(tz, local_s - 86400, &off_a);
  if (st == TG_OK) st = tg_tz_offset_at_utc(tz, local_s + 86400, &off_b);
  if (st != TG_OK) return st;
  int cand[2] = {off_a > off_b ? off_a : off_b, off_a > off_b ? off_b : off_a};
  for (int i = 0; i < 2; i++) {
    int check;
    if ((st = tg_tz_offset_at_utc(tz, local_s - cand[i], &check)) != TG_OK) return st;
    if (check == cand[i]) {
      *utc_s = local_s - cand[i];
      return TG_OK;
    }
  }
  *utc_s = local_s - cand[1]; /* in a spring gap: read with the pre-gap offset, i.e. moved forward */
  return TG_OK;
}

const char *tg_format_utc(int64_t ns, int frac, char *buf, size_t n) {
  int64_t days = ns >= 0 ? ns / TG_NS_PER_DAY : -((-ns + TG_NS_PER_DAY - 1) / TG_NS_PER_DAY);
  int64_t rem = ns - days * TG_NS_PER_DAY, y;
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
