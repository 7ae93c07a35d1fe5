/* CSV reader on handwritten inputs: layouts, column maps, zones, nulls, bad input, truncation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "tickgrad/data.h"
#include "tickgrad/rng.h"

/* Parses len bytes from an exact-size copy (no terminating NUL, so ASan sees any over-read). */
static tg_status parse_n(const char *path, const char *text, size_t len, const tg_read_opts *o, tg_bars *b) {
  tg_bars_init(b);
  char *buf = malloc(len ? len : 1);
  if (len) memcpy(buf, text, len);
  tg_status st = tg_csv_parse(path, buf, len, o, b);
  free(buf);
  return st;
}

static tg_status parse(const char *path, const char *text, const tg_read_opts *o, tg_bars *b) {
  return parse_n(path, text, strlen(text), o, b);
}

static tg_read_opts opts_none(void) {
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  return o;
}

static int64_t ns_of(int64_t y, int m, int d, int hh, int mi, int ss) {
  return ((tg_days_from_civil(y, m, d) * 24 + hh) * 60 + mi) * 60 * TG_NS_PER_S + (int64_t)ss * TG_NS_PER_S;
}

static int has(const char *s, const char *part) { return strstr(s, part) != NULL; }

/* Expects a format error whose message names path and, when line is nonzero, "line <line>", and
 * contains extra (may be NULL). */
#define CHECK_FAILS(path, text, o, line, extra)                                                            \
  do {                                                                                                     \
    tg_bars b_;                                                                                            \
    tg_status s_ = parse(path, text, o, &b_);                                                              \
    char want_[32];                                                                                        \
    snprintf(want_, sizeof want_, "line %d", (int)(line));                                                 \
    const char *m_ = tg_last_error();                                                                      \
    CHECK_MSG(s_ == TG_ERR_FORMAT && has(m_, path) && ((line) == 0 || has(m_, want_)) &&                   \
                  ((extra) == NULL || has(m_, (const char *)(extra))) && b_.n == 0,                        \
              "%s -> %s: %s", #text, tg_status_name(s_), m_);                                               \
    tg_bars_free(&b_);                                                                                     \
  } while (0)

static const char *k_lean = "20131006 22:00,1676.75,1678.25,1673.25,1676.25,8725\n"
                            "20131006 23:00,1676,1677,1675.75,1676.5,1717\n"
                            "20131007 00:00,1676.5,1677.25,1675.5,1676.5,2572\n";

static void check_lean_bars(const tg_bars *b, const char *what) {
  CHECK_MSG(b->n == 3, "%s: %lld bars", what, (long long)b->n);
  if (b->n != 3) return;
  CHECK_MSG(b->ts[0] == ns_of(2013, 10, 6, 22, 0, 0) && b->ts[2] == ns_of(2013, 10, 7, 0, 0, 0), "%s: times", what);
  CHECK_MSG(b->open[0] == 1676.75 && b->high[0] == 1678.25 && b->low[0] == 1673.25 && b->close[0] == 1676.25 &&
                b->volume[0] == 8725,
            "%s: first bar", what);
  CHECK_MSG(b->open[1] == 1676 && b->close[2] == 1676.5 && b->volume[2] == 2572, "%s: later bars", what);
}

/* The same bars with every delimiter, header or not, CRLF, BOM, blank lines, quotes. */
static void test_layouts(void) {
  tg_read_opts o = opts_none();
  tg_bars b;
  CHECK_OK(parse("lean.csv", k_lean, &o, &b));
  check_lean_bars(&b, "plain");
  tg_bars_free(&b);
  /* no trailing newline */
  CHECK_OK(parse_n("lean.csv", k_lean, strlen(k_lean) - 1, &o, &b));
  check_lean_bars(&b, "no final newline");
  tg_bars_free(&b);
  const char delims[] = {';', '\t', '|'};
  for (int d = 0; d < 3; d++) {
    char text[512];
    snprintf(text, sizeof text, "%s", k_lean);
    for (char *p = text; *p; p++)
      if (*p == ',') *p = delims[d];
    CHECK_OK(parse("delim.csv", text, &o, &b));
    char what[32];
    snprintf(what, sizeof what, "delimiter %d", delims[d]);
    check_lean_bars(&b, what);
    tg_bars_free(&b);
  }
  const char *variants[] = {
      "Date,Open,High,Low,Close,Volume\n20131006 22:00,1676.75,1678.25,1673.25,1676.25,8725\n"
      "20131006 23:00,1676,1677,1675.75,1676.5,1717\n20131007 00:00,1676.5,1677.25,1675.5,1676.5,2572\n",
      /* CRLF, a byte-order mark, blank lines, spaces */
      "\xEF\xBB\xBF\r\ntime , open, high ,low,close,volume\r\n\r\n"
      "20131006 22:00 , 1676.75,1678.25,1673.25,1676.25,8725\r\n"
      "20131006 23:00,1676,1677,1675.75,1676.5,1717\r\n  \r\n20131007 00:00,1676.5,1677.25,1675.5,1676.5,2572\r\n\r\n",
      /* quoted fields, shuffled and extra columns, a preamble line */
      "Downloaded from somewhere, see https://example.com\n"
      "\"Symbol\",\"Volume\",\"Close\",\"Date\",\"High\",\"Low\",\"Open\",\"Note\"\n"
      "\"ES\",\"8725\",\"1676.25\",\"20131006 22:00\",\"1678.25\",\"1673.25\",\"1676.75\",\"a, \"\"quoted\"\" note\"\n"
      "ES,1717,1676.5,20131006 23:00,1677,1675.75,1676,\n"
      "ES,2572,1676.5,20131007 00:00,1677.25,1675.5,1676.5,x\n",
      /* decimal commas in a semicolon file */
      "Date;Open;High;Low;Close;Volume\n20131006 22:00;1676,75;1678,25;1673,25;1676,25;8725\n"
      "20131006 23:00;1676;1677;1675,75;1676,5;1717\n20131007 00:00;1676,5;1677,25;1675,5;1676,5;2572\n",
      /* an unnamed index column (pandas), ISO times */
      ",date,open,high,low,close,volume\n0,2013-10-06T22:00:00,1676.75,1678.25,1673.25,1676.25,8725.0\n"
      "1,2013-10-06T23:00:00,1676.0,1677.0,1675.75,1676.5,1717.0\n"
      "2,2013-10-07T00:00:00,1676.5,1677.25,1675.5,1676.5,2572.0\n",
      /* newest first */
      "20131007 00:00,1676.5,1677.25,1675.5,1676.5,2572\n20131006 23:00,1676,1677,1675.75,1676.5,1717\n"
      "20131006 22:00,1676.75,1678.25,1673.25,1676.25,8725\n",
      /* a date and a time column (MetaTrader), upper-case names in angle brackets */
      "<DATE>\t<TIME>\t<OPEN>\t<HIGH>\t<LOW>\t<CLOSE>\t<TICKVOL>\t<VOL>\n"
      "2013.10.06\t22:00:00\t1676.75\t1678.25\t1673.25\t1676.25\t1\t8725\n"
      "2013.10.06\t23:00:00\t1676\t1677\t1675.75\t1676.5\t1\t1717\n"
      "2013.10.07\t00:00:00\t1676.5\t1677.25\t1675.5\t1676.5\t1\t2572\n",
      /* epoch seconds and milliseconds */
      "unix,open,high,low,close,volume\n1381096800,1676.75,1678.25,1673.25,1676.25,8725\n"
      "1381100400,1676,1677,1675.75,1676.5,1717\n1381104000,1676.5,1677.25,1675.5,1676.5,2572\n",
      "ts|o|h|l|c|v\n1381096800000|1676.75|1678.25|1673.25|1676.25|8725\n"
      "1381100400000|1676|1677|1675.75|1676.5|1717\n1381104000000|1676.5|1677.25|1675.5|1676.5|2572\n",
  };
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    char what[32];
    snprintf(what, sizeof what, "variant %zu", i);
    CHECK_MSG(parse("variant.csv", variants[i], &o, &b) == TG_OK, "%s: %s", what, tg_last_error());
    check_lean_bars(&b, what);
    tg_bars_free(&b);
  }
}

static void test_columns(void) {
  tg_read_opts o = opts_none();
  tg_bars b;
  const char *yahoo = "Date,Open,High,Low,Close,Adj Close,Volume\n2009-05-22,198.528534,199.524521,196.196198,"
                      "196.946945,98.47,3433700\n2009-05-26,196.171173,202.702698,195.195190,202.382385,101.19,"
                      "6202700\n";
  CHECK_OK(parse("yahoo.csv", yahoo, &o, &b));
  CHECK(b.n == 2 && b.close[0] == 196.946945 && b.volume[1] == 6202700 && b.ts[1] == ns_of(2009, 5, 26, 0, 0, 0));
  tg_bars_free(&b);
  o.columns = "ts=Date,open=Open,close=Adj Close";
  CHECK_OK(parse("yahoo.csv", yahoo, &o, &b));
  CHECK(b.n == 2 && b.close[0] == 98.47 && b.high[0] == 199.524521 && b.close[1] == 101.19);
  tg_bars_free(&b);
  o.columns = " close = adj_close , volume= ";
  CHECK_OK(parse("yahoo.csv", yahoo, &o, &b));
  CHECK(b.n == 2 && b.close[0] == 98.47 && isnan(b.volume[0]));
  tg_bars_free(&b);
  o.columns = "ts=0,open=4,high=2,low=3,close=1,volume=6";
  CHECK_OK(parse("yahoo.csv", yahoo, &o, &b));
  CHECK(b.n == 2 && b.open[0] == 196.946945 && b.close[0] == 198.528534 && b.volume[0] == 3433700);
  tg_bars_free(&b);
  /* positions without a header; one price column for all four */
  o.columns = "ts=1,open=0,high=0,low=0,close=0";
  CHECK_OK(parse("close_only.csv", "1.5,2020-01-02\n1.25,2020-01-03\n", &o, &b));
  CHECK(b.n == 2 && b.open[1] == 1.25 && b.high[1] == 1.25 && b.low[1] == 1.25 && b.close[1] == 1.25 &&
        isnan(b.volume[0]));
  tg_bars_free(&b);
  /* a date and a time column named in the map */
  o.columns = "date=Day,time=Clock";
  CHECK_OK(parse("pair.csv",
                 "Day,Clock,Open,High,Low,Close\n2020-01-02,09:30,1,2,0.5,1.5\n2020-01-02,9:31:30,1,2,0.5,1.5\n", &o,
                 &b));
  CHECK(b.n == 2 && b.ts[0] == ns_of(2020, 1, 2, 9, 30, 0) && b.ts[1] == ns_of(2020, 1, 2, 9, 31, 30));
  tg_bars_free(&b);
  o.columns = NULL;
  /* volume: the base asset's column wins over plain "volume" (CryptoDataDownload's quote volume) */
  o.columns = NULL;
  CHECK_OK(parse("cdd.csv", "date,symbol,open,high,low,close,volume_btc,volume\n"
                            "2019-10-17 09-AM,BTCUSD,8051,8056.83,8021.23,8035.88,61.25,492394.56\n",
                 &o, &b));
  CHECK(b.n == 1 && b.volume[0] == 61.25 && b.ts[0] == ns_of(2019, 10, 17, 9, 0, 0));
  tg_bars_free(&b);
  CHECK_OK(parse("cdd2.csv", "unix,date,symbol,open,high,low,close,Volume USD,Volume BTC\n"
                             "1571302800,2019-10-17 09:00:00,BTCUSD,8051,8056.83,8021.23,8035.88,492394.56,61.25\n",
                 &o, &b));
  CHECK(b.n == 1 && b.volume[0] == 61.25 && b.ts[0] == ns_of(2019, 10, 17, 9, 0, 0));
  tg_bars_free(&b);
  CHECK_OK(parse("novol.csv", "Date,Open,High,Low,Close\n2020-01-02,1,2,0.5,1.5\n", &o, &b));
  CHECK(b.n == 1 && isnan(b.volume[0]) && b.close[0] == 1.5);
  tg_bars_free(&b);
  /* Lean quote bars (11 columns, no header): bid prices, the bid size as volume, the rest ignored */
  CHECK_OK(parse("eurusd.csv", "20070330 00:00,1.33141,1.33231,1.33131,1.33201,0,1.33149,1.33239,1.33139,1.33199,0\n",
                 &o, &b));
  CHECK(b.n == 1 && b.open[0] == 1.33141 && b.close[0] == 1.33201 && b.volume[0] == 0);
  tg_bars_free(&b);
  /* mistakes in the map */
  const char *bad_maps[] = {"ts=Date,close=Nope", "bogus=1", "close", "close=9", "open=1,open=2", "ts=0,date=1",
                            "close="};
  for (size_t i = 0; i < sizeof bad_maps / sizeof *bad_maps; i++) {
    o.columns = bad_maps[i];
    tg_status st = parse("yahoo.csv", yahoo, &o, &b);
    CHECK_MSG(st == TG_ERR_INVALID && has(tg_last_error(), "yahoo.csv"), "%s -> %s: %s", bad_maps[i],
              tg_status_name(st), tg_last_error());
    tg_bars_free(&b);
  }
  o.columns = "close=Close";
  CHECK_STATUS(parse("nohead.csv", k_lean, &o, &b), TG_ERR_INVALID);
  CHECK(has(tg_last_error(), "no header"));
  o.columns = NULL;
  CHECK_FAILS("nohigh.csv", "Date,Open,Low,Close\n2020-01-02,1,0.5,1.5\n", &o, 0, "no high column");
  CHECK_FAILS("narrow.csv", "2020-01-02,1,2\n2020-01-03,1,2\n", &o, 0, "only 3 columns");
}

static void test_values(void) {
  tg_read_opts o = opts_none();
  tg_bars b;
  /* price scale: prices only */
  o.price_scale = 1e-4;
  CHECK_OK(parse("spy.csv", "19980102 09:00,973100,975300,970300,970300,384500\n", &o, &b));
  CHECK(b.n == 1 && b.open[0] == 973100 * 1e-4 && b.high[0] == 975300 * 1e-4 && b.volume[0] == 384500);
  tg_bars_free(&b);
  o.price_scale = 0;
  /* nulls: an error by default, NaN on request; empty volume is NaN either way */
  const char *nulls = "Date,Open,High,Low,Close,Volume\n2020-01-02,1,2,0.5,1.5,10\n2020-01-03,NaN,2,0.5,1.5,\n"
                      "2020-01-06,1,,0.5,1.5,3\n2020-01-07,1,2,0.5,inf,3\n";
  CHECK_FAILS("nulls.csv", nulls, &o, 3, "'Open'");
  o.nulls = TG_NULLS_NAN;
  CHECK_OK(parse("nulls.csv", nulls, &o, &b));
  CHECK(b.n == 4 && isnan(b.open[1]) && isnan(b.volume[1]) && isnan(b.high[2]) && isnan(b.close[3]) && b.high[1] == 2);
  tg_bars_free(&b);
  o.nulls = TG_NULLS_ERROR;
  CHECK_OK(parse("emptyvol.csv", "Date,Open,High,Low,Close,Volume\n2020-01-02,1,2,0.5,1.5,\n", &o, &b));
  CHECK(b.n == 1 && isnan(b.volume[0]));
  tg_bars_free(&b);
  CHECK_FAILS("empty.csv", "Date,Open,High,Low,Close,Volume\n2020-01-02,1,2,,1.5,4\n", &o, 2, "empty");
  CHECK_FAILS("inf.csv", "Date,Open,High,Low,Close,Volume\n2020-01-02,1,2,1,1e999,4\n", &o, 2, "finite");
  /* Lean minute files take the date from the name; times in New York */
  const char *minute = "14760000,1676500,1676500,1676500,1676500,20000\n34200000,1679000,1680000,1678000,1679500,9\n";
  CHECK_OK(parse("data/20131004_spy_minute_trade.csv", minute, &o, &b));
  CHECK(b.n == 2 && b.ts[0] == ns_of(2013, 10, 4, 4, 6, 0) && b.ts[1] == ns_of(2013, 10, 4, 9, 30, 0));
  tg_bars_free(&b);
  CHECK_FAILS("spy_minute_trade.csv", minute, &o, 1, "YYYYMMDD_");
  if (tg_tz_check("America/New_York") == TG_OK) {
    o.tz = "America/New_York";
    CHECK_OK(parse("data/20131004_spy_minute_trade.csv", minute, &o, &b));
    CHECK(b.n == 2 && b.ts[0] == ns_of(2013, 10, 4, 8, 6, 0) && b.ts[1] == ns_of(2013, 10, 4, 13, 30, 0));
    tg_bars_free(&b);
    /* winter and summer, a spring-forward gap, an explicit offset that overrides the zone, epochs untouched */
    const char *iso = "Date,Open,High,Low,Close\n2021-01-04 09:30,1,1,1,1\n2021-07-01 09:30,1,1,1,1\n"
                      "2021-03-14 02:30,1,1,1,1\n2021-07-01 09:30:00Z,1,1,1,1\n";
    CHECK_OK(parse("ny.csv", iso, &o, &b));
    CHECK(b.n == 4 && b.ts[0] == ns_of(2021, 1, 4, 14, 30, 0) && b.ts[1] == ns_of(2021, 7, 1, 13, 30, 0) &&
          b.ts[2] == ns_of(2021, 3, 14, 7, 30, 0) && b.ts[3] == ns_of(2021, 7, 1, 9, 30, 0));
    tg_bars_free(&b);
    CHECK_OK(parse("epoch.csv", "unix,open,high,low,close\n1609459200,1,1,1,1\n", &o, &b));
    CHECK(b.n == 1 && b.ts[0] == ns_of(2021, 1, 1, 0, 0, 0));
    tg_bars_free(&b);
    o.tz = "Mars/Olympus";
    tg_status st = parse("mars.csv", k_lean, &o, &b);
    CHECK(st == TG_ERR_INVALID && has(tg_last_error(), "mars.csv") && has(tg_last_error(), "Mars/Olympus"));
    tg_bars_free(&b);
    o.tz = NULL;
  } else {
    printf("note: no zone database (install tzdata); zone checks skipped\n");
  }
  /* appending keeps what out already holds; a failure leaves it as it was */
  tg_bars acc;
  tg_bars_init(&acc);
  CHECK_OK(tg_csv_parse("a.csv", k_lean, strlen(k_lean), &o, &acc));
  CHECK_OK(tg_csv_parse("b.csv", k_lean, strlen(k_lean), &o, &acc));
  CHECK(acc.n == 6 && acc.ts[3] == ns_of(2013, 10, 6, 22, 0, 0));
  const char *half = "20131006 22:00,1,2,0.5,1,1\n20131006 23:00,1,2,x,1,1\n";
  CHECK_STATUS(tg_csv_parse("c.csv", half, strlen(half), &o, &acc), TG_ERR_FORMAT);
  CHECK(acc.n == 6);
  tg_bars_free(&acc);
  /* rows in any order are kept as they come (the dispatcher sorts) */
  CHECK_OK(parse("order.csv", "2020-01-03,1,1,1,1\n2020-01-01,1,1,1,1\n2020-01-02,1,1,1,1\n", &o, &b));
  CHECK(b.n == 3 && b.ts[0] == ns_of(2020, 1, 3, 0, 0, 0) && b.ts[1] == ns_of(2020, 1, 1, 0, 0, 0));
  tg_bars_free(&b);
}

static void test_errors(void) {
  tg_read_opts o = opts_none();
  CHECK_FAILS("e.csv", "", &o, 0, "empty file");
  CHECK_FAILS("e.csv", "\n\n  \n", &o, 0, "no data rows");
  CHECK_FAILS("h.csv", "Date,Open,High,Low,Close,Volume\n", &o, 1, "no data rows after the header");
  CHECK_FAILS("h.csv", "Date,Open,High,Low,Close,Volume\n\n\n", &o, 0, "no data rows");
  CHECK_FAILS("g.csv", "hello world\nthis is not a csv\n", &o, 1, "no delimiter");
  CHECK_FAILS("g.csv", "a,b,c,d,e\nf,g,h,i,j\n", &o, 0, "no time column");
  CHECK_FAILS("g.csv", "x,1,2,3,4\ny,1,2,3,4\n", &o, 1, "'x' is not a date");
  /* bad values name the line and the column */
  const char *hdr = "Date,Open,High,Low,Close,Volume\n2020-01-02,1,2,0.5,1.5,10\n";
  char text[4096];
  snprintf(text, sizeof text, "%s2020-01-03,1,2,0.5,abc,10\n", hdr);
  CHECK_FAILS("n.csv", text, &o, 3, "column 'Close': 'abc' is not a number");
  snprintf(text, sizeof text, "%s2020-01-03,1,2,0.5,1.5,ten\n", hdr);
  CHECK_FAILS("n.csv", text, &o, 3, "'Volume'");
  snprintf(text, sizeof text, "%s2020-13-03,1,2,0.5,1.5,10\n", hdr);
  CHECK_FAILS("d.csv", text, &o, 3, "'2020-13-03' is not a time");
  snprintf(text, sizeof text, "%s03.01.2020,1,2,0.5,1.5,10\n", hdr);
  CHECK_FAILS("d.csv", text, &o, 3, "column 'Date'");
  CHECK_FAILS("d.csv", "20131006 22:00,1,2,0.5,1,1\n20131006 22:00,1,2,0.5,x,1\n", &o, 2, "column 5 (close)");
  /* column counts */
  snprintf(text, sizeof text, "%s2020-01-03,1,2,0.5,1.5\n2020-01-06,1,2,0.5,1.5,10\n", hdr);
  CHECK_FAILS("c.csv", text, &o, 3, "5 fields, expected 6");
  snprintf(text, sizeof text, "%s2020-01-03,1,2,0.5,1.5,10,11\n", hdr);
  CHECK_FAILS("c.csv", text, &o, 3, "7 fields");
  snprintf(text, sizeof text, "%s2020-01-03,1,2,0.5,1.5,\"10\n", hdr);
  CHECK_FAILS("q.csv", text, &o, 3, "quote");
  /* bytes that are not text */
  snprintf(text, sizeof text, "%s2020-01-03,1,2,0.5,1.5,1\xE9\n", hdr);
  CHECK_FAILS("u.csv", text, &o, 3, "not UTF-8");
  CHECK_FAILS("u.csv", "Date,Open,High,Low,Close\n2020-01-02,1,2,\xC0\xAF,1\n", &o, 2, "not UTF-8");
  CHECK_FAILS("u.csv", "Date,Open,High,Low,Close\n2020-01-02,1,2,\xED\xA0\x80,1\n", &o, 2, "not UTF-8");
  tg_bars b;
  CHECK_OK(parse("utf8.csv", "Date,\xC3\x96" "ffnung,Open,High,Low,Close\n2020-01-02,x,1,2,0.5,1\n", &o, &b));
  CHECK(b.n == 1);
  tg_bars_free(&b);
  const char nul[] = "Date,Open,High,Low,Close\n2020-01-02,1,2,0.5,1\n2020-01-03,1,2\0,0.5,1\n";
  tg_status st = parse_n("z.csv", nul, sizeof nul - 1, &o, &b);
  CHECK_MSG(st == TG_ERR_FORMAT && has(tg_last_error(), "z.csv") && has(tg_last_error(), "line 3") &&
                has(tg_last_error(), "NUL"),
            "%s", tg_last_error());
  tg_bars_free(&b);
  /* a line over 1 MiB */
  size_t big = (1u << 20) + 100;
  char *longline = malloc(big + 256);
  strcpy(longline, "Date,Open,High,Low,Close\n2020-01-02,1,2,0.5,1\n2020-01-03,1,2,0.5,");
  size_t k = strlen(longline);
  memset(longline + k, '1', big);
  longline[k + big] = '\0';
  CHECK_FAILS("long.csv", longline, &o, 3, "longer than 1 MiB");
  free(longline);
  /* nothing reads past the bytes given: a number cut by the end of the buffer */
  CHECK_OK(parse_n("cut.csv", "2020-01-02,1,2,0.5,1.25999", 22, &o, &b));
  CHECK(b.n == 1 && b.close[0] == 1.2);
  tg_bars_free(&b);
  st = tg_csv_parse("null.csv", NULL, 0, &o, &b);
  CHECK(st == TG_ERR_FORMAT && has(tg_last_error(), "empty"));
  CHECK_STATUS(tg_csv_parse("x.csv", "a", 1, &o, NULL), TG_ERR_INVALID);
  o.price_scale = -1;
  CHECK_STATUS(parse("x.csv", k_lean, &o, &b), TG_ERR_INVALID);
  tg_bars_free(&b);
}

/* Truncated at every byte: a clean error naming the file and a line, or the complete rows before
 * the cut (a cut inside the last field can still read as a shorter number). */
static void test_truncation(void) {
  tg_read_opts o = opts_none();
  const char *files[] = {
      "Date,Open,High,Low,Close,Adj Close,Volume\n2009-05-22,198.528534,199.524521,196.196198,196.946945,196.946945,"
      "3433700\n2009-05-26,196.171173,202.702698,195.195190,202.382385,202.382385,6202700\n",
      "Timestamps are UTC timezone,https://www.CryptoDataDownload.com\r\ndate,symbol,open,high,low,close,volume_btc,"
      "volume\r\n2019-10-17 09-AM,BTCUSD,8051,8056.83,8021.23,8035.88,61.25,492394.56\r\n2019-10-17 08-AM,BTCUSD,"
      "7975.89,8070,7975.89,8051,370.45,2971610.86\r\n",
      "Time,Open,High,Low,Close,Volume\n01.01.2017 22:00:00.000,1.05236,1.05253,1.05221,1.05227,143539993.3\n"
      "01.01.2017 23:00:00.000,1.05227,1.05426,1.05226,1.05282,253139999.4\n",
      "79200000,1676.75,1677.25,1673.5,1675.25,1884\n79260000,1675.5,1675.75,1674,1674.25,753\n79320000,1674.5,"
      "1675.5,1673.25,1675.25,801",
  };
  const char *paths[] = {"t_yahoo.csv", "t_cdd.csv", "t_gym.csv", "20131006_t_lean.csv"};
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    size_t len = strlen(files[f]);
    tg_bars full;
    CHECK_OK(parse(paths[f], files[f], &o, &full));
    int bad = 0;
    for (size_t cut = 0; cut < len; cut++) {
      tg_bars b;
      tg_status st = parse_n(paths[f], files[f], cut, &o, &b);
      if (st == TG_OK) {
        /* rows present must equal the full file's rows, except possibly the last */
        int64_t same = 0;
        for (int64_t i = 0; i < b.n && i < full.n; i++)
          same += b.ts[i] == full.ts[i] && b.open[i] == full.open[i] && b.high[i] == full.high[i] &&
                  b.low[i] == full.low[i];
        bad += b.n > full.n || same < b.n - 1 || b.n == 0;
        if (b.n > full.n || same < b.n - 1)
          fprintf(stderr, "%s cut at %zu: %lld bars differ\n", paths[f], cut, (long long)b.n);
      } else {
        const char *m = tg_last_error();
        int named = st == TG_ERR_FORMAT && has(m, paths[f]) && (has(m, "line") || has(m, "empty"));
        if (!named) fprintf(stderr, "%s cut at %zu: %s: %s\n", paths[f], cut, tg_status_name(st), m);
        bad += !named || b.n != 0;
      }
      tg_bars_free(&b);
    }
    CHECK_MSG(bad == 0, "%s: %d truncations misbehaved", paths[f], bad);
    tg_bars_free(&full);
  }
}

/* Random damage to a valid file must never crash (sanitizer builds watch the reads). */
static void test_mutations(void) {
  const char *base = "Date,Open,High,Low,Close,Volume\n2020-01-02 09:30:00,1.5,2,0.5,1.25,100\n"
                     "2020-01-03 09:30:00,1.5,2,0.5,1.25,100\n\"2020-01-06\",1,2,0.5,1,1e3\n";
  size_t len = strlen(base);
  unsigned long long seed = tg_test_seed(7);
  const char alphabet[] = ",;\t|\"\r\n .-:0123456789eE+TZAPMx\xC3\xA9\xFF";
  char buf[512];
  int ok = 0, unnamed = 0;
  for (uint64_t it = 0; it < 20000; it++) {
    memcpy(buf, base, len);
    size_t n = len;
    int edits = 1 + (int)(tg_rng_uniform(seed, 1, it) * 4);
    for (int e = 0; e < edits; e++) {
      size_t at = (size_t)(tg_rng_uniform(seed, 2, it * 8 + (uint64_t)e) * (float)n);
      if (at >= n) at = n - 1;
      char c = alphabet[(size_t)(tg_rng_uniform(seed, 3, it * 8 + (uint64_t)e) * (sizeof alphabet - 1))];
      float kind = tg_rng_uniform(seed, 4, it * 8 + (uint64_t)e);
      if (kind < 0.5f) buf[at] = c;
      else if (kind < 0.75f && n > 1) memmove(buf + at, buf + at + 1, n-- - at - 1);
      else if (n < sizeof buf - 1) {
        memmove(buf + at + 1, buf + at, n - at);
        buf[at] = c;
        n++;
      }
    }
    tg_read_opts o = opts_none();
    o.nulls = it % 2 ? TG_NULLS_NAN : TG_NULLS_ERROR;
    tg_bars b;
    tg_status st = parse_n(it % 3 ? "m.csv" : "20200102_m.csv", buf, n, &o, &b);
    ok += st == TG_OK;
    if (st != TG_OK && !has(tg_last_error(), "m.csv")) {
      if (!unnamed) fprintf(stderr, "a message without the file name: %s\n", tg_last_error());
      unnamed++;
    }
    tg_bars_free(&b);
  }
  printf("mutations: %d of 20000 still parsed\n", ok);
  CHECK_MSG(unnamed == 0, "%d errors do not name the file", unnamed);
}

/* One pass, no allocation per row or field: a 20,000-row parse allocates a handful of buffers. */
static void test_allocations(void) {
  size_t cap = 20000 * 64;
  char *text = malloc(cap);
  size_t k = 0;
  k += (size_t)snprintf(text + k, cap - k, "Date,Open,High,Low,Close,Volume\n");
  for (int i = 0; i < 20000; i++)
    k += (size_t)snprintf(text + k, cap - k, "%d-01-01 %02d:%02d:00,%d.25,%d.5,%d,%d.125,%d\n", 2000 + i / 1440,
                          i / 60 % 24, i % 60, i, i + 1, i, i, i * 7);
  tg_read_opts o = opts_none();
  tg_bars b;
  tg_bars_init(&b);
  uint64_t before = tg_alloc_count();
  CHECK_OK(tg_csv_parse("many.csv", text, k, &o, &b));
  uint64_t used = tg_alloc_count() - before;
  CHECK_MSG(used <= 20, "%llu allocations for 20,000 rows", (unsigned long long)used);
  CHECK(b.n == 20000 && b.close[19999] == 19999.125 && b.volume[19999] == 19999 * 7);
  tg_bars_free(&b);
  free(text);
}

/* Every price, whichever parser path reads it (the quick one for short plain decimals, the general
 * one for the rest), equals strtod of its text. */
static void test_number_paths(void) {
  unsigned long long seed = tg_test_seed(11);
  size_t cap = 4000 * 200;
  char *text = malloc(cap);
  double *want = malloc(4000 * 4 * sizeof *want);
  size_t k = (size_t)snprintf(text, cap, "ts,open,high,low,close\n");
  for (int i = 0; i < 4000; i++) {
    k += (size_t)snprintf(text + k, cap - k, "%d", 1600000000 + i * 60);
    for (int j = 0; j < 4; j++) {
      uint64_t at = (uint64_t)i * 4 + (uint64_t)j;
      double u = tg_rng_uniform(seed, 1, at), x = pow(10.0, tg_rng_uniform(seed, 2, at) * 16 - 8);
      char num[64];
      int kind = (int)(u * 8);
      if (kind == 0) snprintf(num, sizeof num, "%.17g", x);
      else if (kind == 1) snprintf(num, sizeof num, "%.6f", x);
      else if (kind == 2) snprintf(num, sizeof num, "%.0f", x);
      else if (kind == 3) snprintf(num, sizeof num, "-%.5f", x);
      else if (kind == 4) snprintf(num, sizeof num, "%.3e", x);
      else if (kind == 5) snprintf(num, sizeof num, "%.7f", x * 1e-3);
      else if (kind == 6) snprintf(num, sizeof num, "0%.4f", x);
      else snprintf(num, sizeof num, "%.*g", 1 + (int)(at % 15), x);
      want[at] = strtod(num, NULL);
      k += (size_t)snprintf(text + k, cap - k, ",%s", num);
    }
    text[k++] = '\n';
  }
  tg_read_opts o = opts_none();
  tg_bars b;
  CHECK_OK(parse_n("numbers.csv", text, k, &o, &b));
  int bad = 0;
  for (int64_t i = 0; i < b.n && i < 4000; i++) {
    double got[4] = {b.open[i], b.high[i], b.low[i], b.close[i]};
    for (int j = 0; j < 4; j++) bad += memcmp(&got[j], &want[i * 4 + j], sizeof(double)) != 0;
  }
  CHECK_MSG(b.n == 4000 && bad == 0, "%lld bars, %d values differ from strtod", (long long)b.n, bad);
  tg_bars_free(&b);
  /* a scale that overflows is reported on the quick path too */
  o.price_scale = 1e305;
  CHECK_FAILS("scaled.csv", "ts,open,high,low,close\n1600000000,1,1,1,1\n1600000060,1,1234567.5,1,1\n"
              "1600000120,1,1,1,1\n1600000180,1,1,1,1\n", &o, 3, "column 'high': '1234567.5' is not a finite number");
  free(want);
  free(text);
}

int main(void) {
  test_number_paths();
  test_layouts();
  test_columns();
  test_values();
  test_errors();
  test_truncation();
  test_mutations();
  test_allocations();
  return tg_test_finish();
}
