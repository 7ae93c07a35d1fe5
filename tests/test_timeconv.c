/* Calendar arithmetic and zone conversion: round trips, leap years, DST edges, parsed zones against libc. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "data/readers/timeconv.h"
#include "data/readers/tz_zone.h"
#include "support/check.h"

/* ---- the reference: the C library through TZ (set once per zone, restored at the end) ---------- */

static char g_ref_tz[128];

static void ref_set(const char *tz) {
  if (strcmp(g_ref_tz, tz) == 0) return;
  snprintf(g_ref_tz, sizeof g_ref_tz, "%s", tz);
  setenv("TZ", tz, 1);
  tzset();
}

static void ref_done(void) {
  g_ref_tz[0] = '\0';
  unsetenv("TZ");
  tzset();
}

static int ref_offset(const char *tz, int64_t u) {
  ref_set(tz);
  time_t t = (time_t)u;
  struct tm lt;
  if (!localtime_r(&t, &lt)) return 1 << 30;
  return (int)lt.tm_gmtoff;
}

/* tg_tz_local_to_utc's rules on libc offsets: the offsets a day either side are the candidates, the
 * larger first; the first consistent one wins; in a gap the smaller one moves the time forward. */
static int64_t ref_local_to_utc(const char *tz, int64_t local) {
  int a = ref_offset(tz, local - 86400), b = ref_offset(tz, local + 86400);
  int cand[2] = {a > b ? a : b, a > b ? b : a};
  for (int i = 0; i < 2; i++)
    if (ref_offset(tz, local - cand[i]) == cand[i]) return local - cand[i];
  return local - cand[1];
}

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

#define Y1900 (-2208988800LL)
#define Y2100 4102444800LL

/* Offsets at random instants from 1900 to 2100 (the zone file's table, its footer rule past 2037,
 * the first standard type before its first change) and wall-clock times around every change. */
static void zone_against_libc(const char *tz, uint64_t seed) {
  if (tg_tz_check(tz) != TG_OK) {
    printf("note: zone %s missing; skipped\n", tz);
    return;
  }
  int bad = 0, fails = 0, n = 0;
  uint64_t s = seed | 1;
  for (int i = 0; i < 20000; i++) {
    int64_t u = Y1900 + (int64_t)(next_rand(&s) % (uint64_t)(Y2100 - Y1900));
    int off = 0;
    fails += tg_tz_offset_at_utc(tz, u, &off) != TG_OK;
    bad += off != ref_offset(tz, u);
    n++;
  }
  for (int i = 0; i < 2000; i++) { /* random wall-clock times */
    int64_t local = Y1900 + (int64_t)(next_rand(&s) % (uint64_t)(Y2100 - Y1900)), u = 0;
    local -= local % 60;
    fails += tg_tz_local_to_utc(tz, local, &u) != TG_OK;
    bad += u != ref_local_to_utc(tz, local);
    n++;
  }
  /* every change from 1900 to 2100 (found daily, then to the second), and quarter hours around it */
  int changes = 0, prev = ref_offset(tz, Y1900);
  for (int64_t d = Y1900 + 86400; d <= Y2100; d += 86400) {
    int o = ref_offset(tz, d);
    if (o == prev) continue;
    int64_t a = d - 86400, b = d; /* offset prev at a, o at b */
    while (b - a > 1) {
      int64_t m = a + (b - a) / 2;
      if (ref_offset(tz, m) == prev) a = m;
      else b = m;
    }
    int before = 0, at = 0;
    fails += tg_tz_offset_at_utc(tz, b - 1, &before) != TG_OK;
    fails += tg_tz_offset_at_utc(tz, b, &at) != TG_OK;
    bad += before != prev || at != o;
    for (int64_t local = b + prev - 4 * 3600; local <= b + prev + 4 * 3600; local += 900) {
      int64_t u = 0;
      fails += tg_tz_local_to_utc(tz, local, &u) != TG_OK;
      bad += u != ref_local_to_utc(tz, local);
      n++;
    }
    changes++;
    prev = o;
  }
  /* the memo gives the same answers: hours forward and back over years of changes, then random */
  tg_tz_memo memo = {0, 0, 0};
  int memo_bad = 0;
  const int64_t spans[3][2] = {{946684800, 1104537600}, {2208988800, 2272147200}, {-1577923200, -1514764800}};
  for (int k = 0; k < 3; k++)
    for (int64_t local = spans[k][0]; local < spans[k][1]; local += 3600 - 60 * k) {
      int64_t a = 0, b = 0, l = k == 1 ? spans[k][1] - (local - spans[k][0]) : local;
      fails += tg_tz_local_to_utc_memo(tz, &memo, l, &a) != TG_OK;
      fails += tg_tz_local_to_utc(tz, l, &b) != TG_OK;
      memo_bad += a != b;
    }
  for (int i = 0; i < 5000; i++) {
    int64_t local = Y1900 + (int64_t)(next_rand(&s) % (uint64_t)(Y2100 - Y1900)), a = 0, b = 0;
    fails += tg_tz_local_to_utc_memo(tz, &memo, local, &a) != TG_OK;
    fails += tg_tz_local_to_utc(tz, local, &b) != TG_OK;
    memo_bad += a != b;
  }
  CHECK_MSG(memo_bad == 0, "%s: %d answers through the memo differ", tz, memo_bad);
  CHECK_MSG(bad == 0 && fails == 0, "%s: %d of %d answers differ from the C library, %d failed", tz, bad, n, fails);
  printf("%s: %d offsets and wall-clock times around %d changes equal the C library's\n", tz, n, changes);
}

/* Footer rules against the C library reading the same string as TZ, 1971 to 2100. */
static void rule_against_libc(const char *spec, uint64_t seed) {
  tg_tz_rule r;
  int parsed = tg_tz_rule_parse(spec, strlen(spec), &r);
  CHECK_MSG(parsed, "rule '%s' not parsed", spec);
  if (!parsed) return;
  int bad = 0;
  uint64_t s = seed | 1;
  for (int i = 0; i < 20000; i++) {
    int64_t u = 31536000 + (int64_t)(next_rand(&s) % (uint64_t)(Y2100 - 31536000));
    if (i < 4000) u = 2145916800 + (int64_t)(i * 3 * 3600 + 1); /* 2038-2039, every three hours */
    bad += tg_tz_rule_offset(&r, u, NULL, NULL) != ref_offset(spec, u);
  }
  CHECK_MSG(bad == 0, "rule '%s': %d of 20000 offsets differ from the C library", spec, bad);
}

static void test_rules(void) {
  static const char *const good[] = {"EST5EDT,M3.2.0,M11.1.0", "<+0330>-3:30", "<-02>2<-01>,M3.5.0/-1,M10.5.0/0",
                                     "<-04>4<-03>,M9.1.6/24,M4.1.6/24", "IST-2IDT,M3.4.4/26,M10.5.0",
                                     "EET-2EEST,M3.4.4/50,M10.4.4/50", "IST-1GMT0,M10.5.0,M3.5.0/1",
                                     "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45", "NST3:30NDT,M3.2.0,M11.1.0",
                                     "XXX3YYY,J60/2,300/25", "AAA-10BBB-11:30,M10.1.0/-2:30,M4.1.0/167",
                                     "<-03>3<-02>,M3.2.0,M11.1.0", "UTC0"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) rule_against_libc(good[i], 17 + i);
  tg_tz_rule r;
  static const char *const bad[] = {"", "EST", "EST5EDT", "<+0330", "EST5EDT,M3.2.0", "EST5EDT,M13.2.0,M11.1.0",
                                    "EST5EDT,M3.2.0,M11.1.0x", "EST25", "EST5EDT,M3.2.0/168,M11.1.0", "E5"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    CHECK_MSG(!tg_tz_rule_parse(bad[i], strlen(bad[i]), &r), "rule '%s' parsed", bad[i]);
  CHECK(tg_tz_rule_parse("EST5EDT,M3.2.0,M11.1.0", 22, &r) && r.std_off == -18000 && r.dst_off == -14400 &&
        r.start.kind == 'M' && r.start.m == 3 && r.start.w == 2 && r.start.d == 0 && r.start.secs == 7200);
  CHECK(tg_tz_rule_parse("<+0330>-3:30", 12, &r) && !r.has_dst && r.std_off == 12600);
}


/* Times in messages: seconds, with the nanoseconds only when there are some; before 1970 too. */
static void test_format_time(void) {
  char t[TG_TIME_TEXT];
  CHECK(strcmp(tg_format_time(1577977200000000000LL, t, sizeof t), "2020-01-02 15:00:00") == 0);
  CHECK(strcmp(tg_format_time(1577977200000000001LL, t, sizeof t), "2020-01-02 15:00:00.000000001") == 0);
  CHECK(strcmp(tg_format_time(-1, t, sizeof t), "1969-12-31 23:59:59.999999999") == 0);
}

int main(void) {
  test_format_time();
  CHECK(tg_days_from_civil(1970, 1, 1) == 0);
  CHECK(tg_days_from_civil(2000, 3, 1) == 11017);
  CHECK(tg_days_from_civil(1969, 12, 31) == -1);
  int bad = 0;
  for (int64_t d = -800000; d < 800000; d += 7) {
    int64_t y;
    int m, dd;
    tg_civil_from_days(d, &y, &m, &dd);
    bad += tg_days_from_civil(y, m, dd) != d || !tg_valid_date(y, m, dd);
  }
  CHECK(bad == 0);
  CHECK(tg_valid_date(2000, 2, 29) && !tg_valid_date(1900, 2, 29) && !tg_valid_date(2021, 4, 31));
  if (tg_tz_check("America/New_York") != TG_OK) return tg_test_skip("no zone database (install tzdata)");
  int off = 0;
  CHECK_OK(tg_tz_offset_at_utc("America/New_York", 1609459200, &off)); /* 2021-01-01 00:00 UTC */
  CHECK(off == -18000);
  CHECK_OK(tg_tz_offset_at_utc("America/New_York", 1625097600, &off)); /* 2021-07-01 */
  CHECK(off == -14400);
  int64_t day = tg_days_from_civil(2021, 3, 31) * 86400, utc = 0;
  CHECK_OK(tg_tz_local_to_utc("America/New_York", day + 9 * 3600 + 1800, &utc)); /* 09:30 EDT */
  CHECK(utc == day + 13 * 3600 + 1800);
  day = tg_days_from_civil(2021, 3, 14) * 86400; /* spring forward at 02:00 */
  CHECK_OK(tg_tz_local_to_utc("America/New_York", day + 2 * 3600 + 1800, &utc)); /* 02:30 does not exist */
  CHECK(utc == day + 7 * 3600 + 1800);                                             /* = 03:30 EDT */
  day = tg_days_from_civil(2021, 11, 7) * 86400; /* fall back at 02:00 */
  CHECK_OK(tg_tz_local_to_utc("America/New_York", day + 1 * 3600 + 1800, &utc)); /* 01:30 twice */
  CHECK(utc == day + 5 * 3600 + 1800);                                             /* the EDT one */
  CHECK_STATUS(tg_tz_check("Mars/Olympus"), TG_ERR_INVALID);
  CHECK_STATUS(tg_tz_check("../../etc/passwd"), TG_ERR_INVALID);
  CHECK_STATUS(tg_tz_check("zone.tab"), TG_ERR_INVALID); /* a file, but no zone */
  CHECK_STATUS(tg_tz_offset_at_utc("Mars/Olympus", 0, &off), TG_ERR_INVALID);
  CHECK_STATUS(tg_tz_local_to_utc("Mars/Olympus", 0, &utc), TG_ERR_INVALID);
  CHECK_OK(tg_tz_offset_at_utc("UTC", 12345, &off));
  CHECK(off == 0);

  test_rules();
  uint64_t seed = tg_test_seed(20240611);
  static const char *const zones[] = {"America/New_York", "Europe/London",   "Australia/Lord_Howe",
                                      "America/Sao_Paulo", "Asia/Kolkata",   "Pacific/Chatham",
                                      "Africa/Casablanca", "America/Noronha", "Europe/Dublin"};
  for (size_t i = 0; i < sizeof zones / sizeof *zones; i++) zone_against_libc(zones[i], seed + i);
  /* Noronha kept summer time for one week of October 2000; Lord Howe moves by half an hour */
  int64_t u = 0;
  day = tg_days_from_civil(2000, 10, 12) * 86400;
  if (tg_tz_check("America/Noronha") == TG_OK) {
    CHECK_OK(tg_tz_local_to_utc("America/Noronha", day + 12 * 3600, &u));
    CHECK(u == day + 13 * 3600);
  }
  day = tg_days_from_civil(2021, 10, 3) * 86400; /* Lord Howe: 02:00 becomes 02:30 */
  CHECK_OK(tg_tz_local_to_utc("Australia/Lord_Howe", day + 2 * 3600 + 600, &u)); /* 02:10 does not exist */
  CHECK(u == day + 2 * 3600 + 600 - 37800);                                      /* read at +10:30: 02:40 */
  ref_done();
  return tg_test_finish();
}
