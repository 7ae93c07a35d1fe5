/* Lean tick zips as tick sources: trades, the quote book kept side by side, futures contracts, folders in date order,
 * and bad zips, members and rows refused naming the file, member, line and value. The zips are written here through
 * libzip, so the test runs without ../shared/data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/ticks.h"

static char g_dir[256];

/* Writes g_dir/name holding members names[i] with texts[i]; returns the path (static). */
static const char *write_zip(const char *name, int n, const char *const *names, const char *const *texts) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  int err = 0;
  zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
  CHECK(z != NULL);
  for (int i = 0; z && i < n; i++) {
    zip_source_t *src = zip_source_buffer(z, texts[i], strlen(texts[i]), 0);
    CHECK(src && zip_file_add(z, names[i], src, ZIP_FL_OVERWRITE) >= 0);
  }
  CHECK(z && zip_close(z) == 0);
  return path;
}

static const char *one(const char *zip, const char *member, const char *text) {
  return write_zip(zip, 1, (const char *const[]){member}, (const char *const[]){text});
}

/* Reads every record of path (cap at most) with contract; the status of the first failure. */
static tg_status read_all(const char *path, tg_tick_kind kind, const char *contract, void *buf, int64_t cap,
                          int64_t *n, int64_t *skipped) {
  tg_tick_opts o = {.contract = contract};
  tg_tick_source *s = NULL;
  *n = 0;
  tg_status st = tg_tick_open(path, kind, &o, &s);
  size_t each = kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  for (int64_t got = 1; st == TG_OK && got > 0 && *n < cap; *n += got)
    st = tg_tick_next(s, (char *)buf + (size_t)*n * each, cap - *n, &got);
  if (skipped) *skipped = s ? tg_tick_source_counts(s)->skipped : 0;
  tg_tick_close(s);
  return st;
}

/* 2013-10-07 at ms since midnight New York (EDT, UTC-4), in ns UTC. */
static int64_t ny(int64_t ms) { return (tg_days_from_civil(2013, 10, 7) * 86400 + 4 * 3600) * TG_NS_PER_S + ms * 1000000; }

static void test_trades(void) {
  const char *p = one("20131007_trade.zip", "20131007_spy_Trade_Tick.csv",
                      "14400464,1674100,100,P,20002000,0\n14400465,1674200,200,P,1,1\n");
  tg_trade t[4];
  int64_t n;
  CHECK_OK(read_all(p, TG_TICK_TRADES, NULL, t, 4, &n, NULL));
  CHECK(n == 2);
  CHECK(t[0].ts == ny(14400464) && t[0].price == 167.41 && t[0].size == 100 && t[0].flags == 0 && t[0].line == 1);
  CHECK(t[1].ts == ny(14400465) && t[1].price == 167.42 && t[1].flags == TG_TRADE_SUSPICIOUS);
}

/* Each row moves one side; a record is the book after it, once both sides are known. */
static void test_quotes(void) {
  const char *p = one("20131007_quote.zip", "20131007_bac_Quote_Tick.csv",
                      "14400151,0,0,140200,500,Q,1,0\n"   /* ask only: no record */
                      "14400554,138400,700,0,0,P,1,0\n"   /* bid: 13.84 x 14.02 */
                      "14400560,138500,300,0,0,P,1,1\n"   /* suspicious: no record, book unchanged */
                      "14400600,0,0,140100,900,P,1,0\n"); /* ask: 13.84 x 14.01 */
  tg_quote q[4];
  int64_t n, skipped;
  CHECK_OK(read_all(p, TG_TICK_QUOTES, NULL, q, 4, &n, &skipped));
  CHECK(n == 2 && skipped == 2);
  CHECK(q[0].ts == ny(14400554) && q[0].bid == 13.84 && q[0].bid_size == 700 && q[0].ask == 14.02 &&
        q[0].ask_size == 500 && q[0].line == 2);
  CHECK(q[1].bid == 13.84 && q[1].bid_size == 700 && q[1].ask == 14.01 && q[1].ask_size == 900 && q[1].line == 4);
  tg_trade t[4];
  CHECK_STATUS(read_all(p, TG_TICK_TRADES, NULL, t, 4, &n, NULL), TG_ERR_FORMAT);
  CHECK(strstr(tg_last_error(), "holds quotes, and it was opened as trades") != NULL);
}

static void test_futures(void) {
  const char *names[] = {"20131007_gc_tick_trade_201312.csv", "20131007_gc_tick_trade_201402.csv"};
  const char *texts[] = {"4933381,1313.8,1,usa,,0\n4933382,1313.9,0,usa,,0\n", "5000000,1315.5,2,usa,,0\n"};
  const char *p = write_zip("20131007_trade.zip", 2, names, texts);
  tg_trade t[4];
  int64_t n, skipped;
  CHECK_STATUS(read_all(p, TG_TICK_TRADES, NULL, t, 4, &n, NULL), TG_ERR_UNSUPPORTED);
  CHECK(strstr(tg_last_error(), "2 contracts (201312, 201402): name one with --contract") != NULL);
  CHECK_OK(read_all(p, TG_TICK_TRADES, "201312", t, 4, &n, &skipped));
  CHECK(n == 1 && skipped == 1 && t[0].price == 1313.8 && t[0].ts == ny(4933381)); /* the size-0 print skipped */
  CHECK_OK(read_all(p, TG_TICK_TRADES, "201402", t, 4, &n, NULL));
  CHECK(n == 1 && t[0].price == 1315.5 && t[0].size == 2);
  CHECK_STATUS(read_all(p, TG_TICK_TRADES, "201404", t, 4, &n, NULL), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "no contract 201404 here (it holds 201312, 201402)") != NULL);
  p = one("20131007_openinterest.zip", "20131007_gc_tick_openinterest_201312.csv", "0,123\n");
  CHECK_STATUS(read_all(p, TG_TICK_TRADES, NULL, t, 4, &n, NULL), TG_ERR_UNSUPPORTED);
  CHECK(strstr(tg_last_error(), "not a trade or quote file") != NULL);
}

/* A folder reads its *_trade.zip files in date order as one stream. */
static void test_folder(void) {
  one("20131008_trade.zip", "20131008_spy_Trade_Tick.csv", "36000000,1680000,5,P,1,0\n");
  one("20131007_trade.zip", "20131007_spy_Trade_Tick.csv", "36000000,1670000,3,P,1,0\n");
  one("20131007_quote.zip", "20131007_spy_Quote_Tick.csv", "36000000,1670000,3,0,0,P,1,0\n");
  tg_trade t[4];
  int64_t n;
  CHECK_OK(read_all(g_dir, TG_TICK_TRADES, NULL, t, 4, &n, NULL));
  CHECK(n == 2 && t[0].price == 167 && t[1].price == 168 && t[1].ts - t[0].ts == 86400 * TG_NS_PER_S);
}

/* Rows in the usual plain form (read in one pass) and the same rows with blanks, quotes or a decimal written out (read
 * by the general path) give the same trades; futures prices of up to 15 digits read exactly (correctly rounded). */
static void test_row_forms(void) {
  const char *plain = "14400464,1674100,100,P,20002000,0\n14400465,1674200,200,P,1,1\n14400466,1674300,0,Q,,0\n";
  const char *other = "14400464, 1674100 ,100,\"P\",\"20002000\",0\n"
                      " 14400465,1674200.0,200,P,1 , 1\n14400466,1674300,0.0,Q,\"\",0\n";
  tg_trade a[4], b[4];
  int64_t na, nb, sa, sb;
  CHECK_OK(read_all(one("20131007_trade.zip", "20131007_spy_Trade_Tick.csv", plain), TG_TICK_TRADES, NULL, a, 4, &na,
                    &sa));
  CHECK_OK(read_all(one("20131007_trade.zip", "20131007_spy_Trade_Tick.csv", other), TG_TICK_TRADES, NULL, b, 4, &nb,
                    &sb));
  CHECK(na == 2 && nb == 2 && sa == 1 && sb == 1);
  for (int i = 0; i < 2 && na == 2 && nb == 2; i++)
    CHECK(a[i].ts == b[i].ts && a[i].price == b[i].price && a[i].size == b[i].size && a[i].flags == b[i].flags &&
          a[i].side == b[i].side && a[i].line == b[i].line);
  CHECK(na == 2 && a[0].ts == ny(14400464) && a[0].price == 167.41 && a[1].flags == TG_TRADE_SUSPICIOUS);
  const char *gc = "4933381,1313.8,1,usa,,0\n4933382,12345.6789012345,2,usa,,0\n4933383,0.00012345678901,3,usa,,0\n";
  CHECK_OK(read_all(one("20131007_trade.zip", "20131007_gc_tick_trade_201312.csv", gc), TG_TICK_TRADES, NULL, a, 4,
                    &na, NULL));
  CHECK(na == 3 && a[0].price == 1313.8 && a[1].price == 12345.6789012345 && a[2].price == 0.00012345678901);
}

/* 2013-11-03 in New York repeats 01:00-02:00 (EDT, UTC-4, then EST, UTC-5): the day's rows change offset there, the
 * repeated hour read as its first (daylight) time, as every zone conversion does. */
static void test_dst_day(void) {
  const char *p = one("20131103_trade.zip", "20131103_spy_Trade_Tick.csv",
                      "1800000,1674100,1,P,1,0\n5400000,1674100,1,P,1,0\n10800000,1674100,1,P,1,0\n"
                      "36000000,1674100,1,P,1,0\n");
  tg_trade t[4];
  int64_t n;
  CHECK_OK(read_all(p, TG_TICK_TRADES, NULL, t, 4, &n, NULL));
  int64_t day = tg_days_from_civil(2013, 11, 3) * 86400 * TG_NS_PER_S, h = 3600 * TG_NS_PER_S;
  CHECK(n == 4 && t[0].ts == day + h / 2 + 4 * h && t[1].ts == day + 3 * h / 2 + 4 * h && t[2].ts == day + 3 * h + 5 * h &&
        t[3].ts == day + 10 * h + 5 * h);
}

/* The message of reading a one-member trades zip holding text under member, or "" when it reads. */
static const char *error_of(const char *member, const char *text) {
  tg_trade t[4];
  int64_t n;
  const char *p = one("20131007_trade.zip", member, text);
  return read_all(p, TG_TICK_TRADES, NULL, t, 4, &n, NULL) == TG_OK ? "" : tg_last_error();
}

static void test_bad_rows(void) {
  const char *m = "20131007_spy_Trade_Tick.csv";
  CHECK(strstr(error_of(m, "14400464,1674100,100,P,1,0\n14400465,abc,100,P,1,0\n"),
               "20131007_trade.zip:20131007_spy_Trade_Tick.csv: line 2: price 'abc' is not a number") != NULL);
  CHECK(strstr(error_of(m, "14400464,0,100,P,1,0\n"), "Tick.csv: line 1: price 0 is not a positive number") != NULL);
  CHECK(strstr(error_of(m, "14400464,1674100,100,P,1\n"), "line 1: 5 fields where a Lean trade row has 6") != NULL);
  CHECK(strstr(error_of(m, "86400000,1674100,100,P,1,0\n"), "line 1: time '86400000' is not milliseconds") != NULL);
  CHECK(strstr(error_of(m, "14400464,1674100,100,P,1,2\n"), "line 1: suspicious '2' is not 0 or 1") != NULL);
  CHECK(strstr(error_of("readme.txt", "hello\n"), "member 'readme.txt' is not a Lean tick CSV of 20131007") != NULL);
  CHECK(strstr(error_of("20131008_spy_Trade_Tick.csv", "1,1,1,P,1,0\n"), "is not a Lean tick CSV of 20131007") != NULL);
}

/* A zip cut short (its directory gone) and one whose member's bytes changed (its checksum fails). */
static void test_bad_zips(void) {
  static char text[64 * 1024];
  size_t at = 0;
  for (int i = 0; at + 64 < sizeof text; i++) at += (size_t)snprintf(text + at, 64, "%d,1674100,100,P,1,0\n", 14400000 + i);
  const char *p = one("20131007_trade.zip", "20131007_spy_Trade_Tick.csv", text);
  size_t len;
  unsigned char *b = tg_test_read_file(p, &len);
  CHECK(b != NULL);
  if (!b) return;
  tg_trade t[4096];
  int64_t n;
  FILE *f = fopen(p, "wb");
  fwrite(b, 1, len - 40, f);
  fclose(f);
  CHECK_STATUS(read_all(p, TG_TICK_TRADES, NULL, t, 4096, &n, NULL), TG_ERR_FORMAT);
  CHECK(strstr(tg_last_error(), "20131007_trade.zip: not a readable zip") != NULL);
  b[len / 2] ^= 0x55; /* inside the compressed data */
  f = fopen(p, "wb");
  fwrite(b, 1, len, f);
  fclose(f);
  CHECK(read_all(p, TG_TICK_TRADES, NULL, t, 4096, &n, NULL) != TG_OK);
  CHECK_MSG(strstr(tg_last_error(), "20131007_trade.zip") != NULL, "%s", tg_last_error());
  free(b);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_tick_lean_%ld", (long)getpid());
  mkdir(g_dir, 0700);
  test_trades();
  test_quotes();
  test_futures();
  test_folder();
  test_row_forms();
  test_dst_day();
  test_bad_rows();
  test_bad_zips();
  tg_test_remove_tree(g_dir);
  return tg_test_finish();
}
