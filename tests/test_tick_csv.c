/* CSV tick files: trades and quotes by header name, time formats, and every error naming the file, line and value. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/ticks.h"

static char g_dir[256];

static const char *write_file(const char *name, const char *text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return path;
}

/* Reads every record of a file of kind into buf[cap]; returns the status, *n the count. */
static tg_status read_all(const char *name, const char *text, tg_tick_kind kind, const tg_tick_opts *o, void *buf,
                          int64_t cap, int64_t *n, tg_tick_counts *counts) {
  tg_tick_source *s = NULL;
  *n = 0;
  tg_status st = tg_tick_open(write_file(name, text), kind, o, &s);
  size_t each = kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  for (int64_t got = 1; st == TG_OK && got > 0 && *n < cap; *n += got)
    st = tg_tick_next(s, (char *)buf + (size_t)*n * each, cap - *n, &got);
  if (s && counts) *counts = *tg_tick_source_counts(s);
  tg_tick_close(s);
  return st;
}

static void test_trades(void) {
  tg_trade t[8];
  int64_t n;
  const char *text = "Timestamp,Price,Size,Side,Flags\n"
                     "2024-01-02 14:30:00.5,100.25,3,B,\n"
                     "2024-01-02 14:30:01,100.5,1,sell,suspicious\n"
                     "\n"
                     "2024-01-02 14:30:01,100.5,2,N,cancelled|suspicious\n";
  CHECK_OK(read_all("t1.csv", text, TG_TICK_TRADES, NULL, t, 8, &n, NULL));
  int64_t t0 = tg_days_from_civil(2024, 1, 2) * TG_NS_PER_DAY + (14 * 3600 + 30 * 60) * TG_NS_PER_S;
  CHECK(n == 3);
  if (n == 3) {
    CHECK(t[0].ts == t0 + TG_NS_PER_S / 2 && t[0].price == 100.25 && t[0].size == 3 && t[0].side == TG_SIDE_BUY);
    CHECK(t[1].side == TG_SIDE_SELL && t[1].flags == TG_TRADE_SUSPICIOUS && t[1].line == 3);
    CHECK(t[2].side == TG_SIDE_UNKNOWN && t[2].flags == (TG_TRADE_SUSPICIOUS | TG_TRADE_CANCELLED) && t[2].line == 5);
  }
  /* epoch nanoseconds, columns in another order, no side */
  CHECK_OK(read_all("t2.csv", "size,ts_event,price\n5,1704205800000000000,99\n", TG_TICK_TRADES, NULL, t, 8, &n, NULL));
  CHECK(n == 1 && t[0].ts == t0 && t[0].size == 5 && t[0].price == 99 && t[0].side == TG_SIDE_UNKNOWN);
  /* a naive time in New York */
  tg_tick_opts ny = {.tz = "America/New_York"};
  CHECK_OK(read_all("t3.csv", "ts,price,size\n2024-01-02 09:30:00,1,1\n", TG_TICK_TRADES, &ny, t, 8, &n, NULL));
  CHECK(n == 1 && t[0].ts == t0);
}

/* Expects the file to fail with want in the message (which also names the file). */
static void fails(const char *name, const char *text, tg_tick_kind kind, const tg_tick_opts *o, const char *want) {
  char buf[8 * sizeof(tg_quote)];
  int64_t n;
  tg_status st = read_all(name, text, kind, o, buf, 8, &n, NULL);
  const char *m = tg_last_error();
  CHECK_MSG(st != TG_OK && strstr(m, name) && strstr(m, want), "%s: %s (want '%s')", name, m, want);
}

static void test_errors(void) {
  fails("e1.csv", "ts,price,size\n2024-01-02,0,1\n", TG_TICK_TRADES, NULL, "line 2: price 0 is not a positive");
  fails("e2.csv", "ts,price,size\n2024-01-02,1,1\n2024-01-03,1,-2\n", TG_TICK_TRADES, NULL,
        "line 3: size -2 is not a positive");
  fails("e3.csv", "ts,price,size\n2024-01-02,abc,1\n", TG_TICK_TRADES, NULL, "line 2: price 'abc' is not a number");
  fails("e4.csv", "ts,price,size,side\n2024-01-02,1,1,up\n", TG_TICK_TRADES, NULL, "line 2: side 'up' is not a side");
  fails("e5.csv", "ts,price\n2024-01-02,1\n", TG_TICK_TRADES, NULL, "line 1: the header has no size column");
  fails("e6.csv", "ts,price,size\nyesterday,1,1\n", TG_TICK_TRADES, NULL, "line 2: time 'yesterday'");
  fails("e7.csv", "ts,price,size\n2024-01-02,1\n", TG_TICK_TRADES, NULL, "line 2: 2 fields where the header has 3");
  fails("e8.csv", "", TG_TICK_TRADES, NULL, "empty");
  fails("e9.csv", "ts,bid,ask,bid_size\n", TG_TICK_QUOTES, NULL, "no ask_size column");
  fails("e10.csv", "ts,bid,ask,bid_size,ask_size\n2024-01-02,-1,2,1,1\n", TG_TICK_QUOTES, NULL,
        "line 2: bid -1 is not a positive");
  fails("e11.csv", "ts,price,size,flags\n2024-01-02,1,1,odd\n", TG_TICK_TRADES, NULL, "line 2: flags 'odd'");
  tg_tick_opts strict = {.order = TG_TICKS_ORDER_ERROR};
  fails("e12.csv", "ts,price,size\n2024-01-02,1,1\n2024-01-01,1,1\n", TG_TICK_TRADES, &strict,
        "line 3: time 2024-01-01 00:00:00 is before the previous record's 2024-01-02 00:00:00");
}

static void test_order_and_crossed(void) {
  tg_trade t[8];
  int64_t n;
  tg_tick_counts c;
  CHECK_OK(read_all("o1.csv", "ts,price,size\n2024-01-02,1,1\n2024-01-01,2,1\n2024-01-03,3,1\n", TG_TICK_TRADES,
                    NULL, t, 8, &n, &c));
  CHECK(n == 2 && c.out_of_order == 1 && c.records == 2 && t[1].price == 3);
  tg_quote q[8];
  CHECK_OK(read_all("q1.csv", "ts,bid,ask,bid_size,ask_size\n2024-01-02,10,11,5,6\n2024-01-02,11,10,1,1\n"
                    "2024-01-03,10,10,0,1\n", TG_TICK_QUOTES, NULL, q, 8, &n, &c));
  CHECK(n == 2 && c.crossed == 1 && q[0].bid_size == 5 && q[0].ask_size == 6 && q[1].bid == 10 && q[1].ask == 10);
}

/* A file longer than the reader's buffer, so lines straddle refills: every record arrives in order. */
static void test_long_file(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/long.csv", g_dir);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs("ts,price,size\n", f);
  for (int i = 0; i < 100000; i++) fprintf(f, "%d,%d.5,%d\n", 1000000000 + i, 100 + i % 7, 1 + i % 3);
  fclose(f);
  tg_tick_source *s;
  CHECK_OK(tg_tick_open(path, TG_TICK_TRADES, NULL, &s));
  tg_trade t[1000];
  int64_t n, total = 0, bad = 0;
  while (tg_tick_next(s, t, 1000, &n) == TG_OK && n > 0)
    for (int64_t k = 0; k < n; k++, total++) bad += t[k].ts != (1000000000LL + total) * TG_NS_PER_S;
  CHECK_MSG(total == 100000 && bad == 0, "%lld records, %lld wrong", (long long)total, (long long)bad);
  tg_tick_close(s);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_tick_csv_%ld", (long)getpid());
  if (mkdir(g_dir, 0700) != 0) return tg_test_skip("cannot make a scratch folder in /tmp");
  test_trades();
  test_errors();
  test_order_and_crossed();
  test_long_file();
  tg_test_remove_tree(g_dir);
  return tg_test_finish();
}
