/* The bar builder on hand-made ticks: every bar kind, imbalance and run bars with their guards, the tick rule,
 * flagged trades, quotes, recipes, and constant memory over 5 million ticks. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "tickgrad/ticks.h"

#define S TG_NS_PER_S
#define B TG_SIDE_BUY
#define A TG_SIDE_SELL /* the seller was the aggressor */
#define N TG_SIDE_UNKNOWN

static tg_trade tr(int64_t ts, double price, double size, int side) {
  return (tg_trade){.ts = ts, .price = price, .size = size, .side = (int8_t)side};
}

static tg_bar_recipe recipe(const char *text) {
  tg_bar_recipe r;
  memset(&r, 0, sizeof r);
  CHECK_OK(tg_bar_recipe_parse(text, &r));
  return r;
}

/* Runs n trades through a builder of recipe text; out holds the bars; returns the builder's status. */
static tg_status run(const char *text, const tg_bar_opts *o, const tg_trade *t, int n, tg_bars *out,
                     tg_bar_stats *stats) {
  tg_bar_recipe r = recipe(text);
  tg_bars_init(out);
  tg_bar_builder *b;
  tg_status st = tg_bar_builder_new(&r, o, out, &b);
  for (int i = 0; st == TG_OK && i < n; i++) st = tg_bar_builder_trade(b, &t[i]);
  if (st == TG_OK) st = tg_bar_builder_finish(b);
  if (stats) *stats = *tg_bar_builder_stats(b);
  tg_bar_builder_free(b);
  return st;
}

static double col(const tg_bars *b, const char *name, int64_t i) {
  const tg_bar_column *c = tg_bars_column(b, name);
  return c ? c->values[i] : -999;
}

/* Bars of trade counts want[0..n): each bar's trade_count. */
static void check_counts(const tg_bars *b, const int *want, int n, const char *what) {
  CHECK_MSG(b->n == n, "%s: %lld bars, want %d", what, (long long)b->n, n);
  for (int i = 0; i < n && i < b->n; i++)
    CHECK_MSG(col(b, "trade_count", i) == want[i], "%s: bar %d has %g trades, want %d", what, i,
              col(b, "trade_count", i), want[i]);
}

static void test_time_bars(void) {
  /* [0s, 60s): 10 x1, 11 x2, 9 x1 -> o 10 h 11 l 9 c 9 v 4, vwap (10 + 22 + 9) / 4 = 10.25; [60s, 120s): 12;
   * nothing in [120s, 180s): no bar; [180s, 240s): 13 at 185s. */
  tg_trade t[] = {tr(0, 10, 1, N), tr(30 * S, 11, 2, N), tr(59 * S, 9, 1, N), tr(60 * S, 12, 1, N),
                  tr(185 * S, 13, 1, N)};
  tg_bars b;
  CHECK_OK(run("time:1m", NULL, t, 5, &b, NULL));
  int want[] = {3, 1, 1};
  check_counts(&b, want, 3, "time:1m");
  if (b.n == 3) {
    CHECK(b.ts[0] == 0 && b.ts[1] == 60 * S && b.ts[2] == 180 * S);
    CHECK(b.open[0] == 10 && b.high[0] == 11 && b.low[0] == 9 && b.close[0] == 9 && b.volume[0] == 4);
    CHECK(col(&b, "vwap", 0) == 10.25 && b.close[2] == 13);
  }
  tg_bars_free(&b);
}

static void test_tick_volume_dollar(void) {
  tg_trade t[] = {tr(1 * S, 10, 4, N), tr(2 * S, 10, 5, N), tr(3 * S, 10, 3, N), tr(4 * S, 10, 10, N),
                  tr(5 * S, 10, 1, N)};
  tg_bars b;
  /* tick:2 -> [1,2] [3,4] and the partial [5]; each bar's ts is its first trade's */
  CHECK_OK(run("tick:2", NULL, t, 5, &b, NULL));
  int w1[] = {2, 2, 1};
  check_counts(&b, w1, 3, "tick:2");
  if (b.n == 3) CHECK(b.ts[0] == 1 * S && b.ts[1] == 3 * S && b.ts[2] == 5 * S);
  tg_bars_free(&b);
  /* volume:10 -> sizes 4 + 5 + 3 = 12 >= 10 closes (the crossing trade stays whole), then 10 alone, then 1 */
  CHECK_OK(run("volume:10", NULL, t, 5, &b, NULL));
  int w2[] = {3, 1, 1};
  check_counts(&b, w2, 3, "volume:10");
  if (b.n == 3) CHECK(b.volume[0] == 12 && b.volume[1] == 10 && b.volume[2] == 1);
  tg_bars_free(&b);
  /* dollar:100 -> 10 x 4 = 40, + 20 x 3 = 100 closes; 50 x 1, + 60 x 1 = 110 closes */
  tg_trade d[] = {tr(1 * S, 10, 4, N), tr(2 * S, 20, 3, N), tr(3 * S, 50, 1, N), tr(4 * S, 60, 1, N)};
  CHECK_OK(run("dollar:100", NULL, d, 4, &b, NULL));
  int w3[] = {2, 2};
  check_counts(&b, w3, 2, "dollar:100");
  if (b.n == 2) CHECK(col(&b, "vwap", 0) == 100.0 / 7 && b.open[1] == 50 && b.close[1] == 60);
  tg_bars_free(&b);
}

/* Fills t with sides s (B/A/N) at increasing times, price 10 and size 1 unless sizes is given. */
static int seq(tg_trade *t, const int *sides, const double *sizes, int n) {
  for (int i = 0; i < n; i++) t[i] = tr((i + 1) * S, 10, sizes ? sizes[i] : 1, sides[i]);
  return n;
}

static void test_tick_imbalance(void) {
  /* tick_imbalance:4, alpha 0.5 (warm-up 4 ticks, floor 0.1, cap 10).
   * Warm-up B B B B: E[bv] = 1, V0 = 1, S0 = 4 x 1 = 4, bounds [0.4, 40]; threshold E[T] |E[bv]| = 4 x 1 = 4:
   *   theta reaches 4 at tick 4 -> bar 1 = 4 ticks. E[T] = .5 x 4 + .5 x 4 = 4, E[bv] = .5 x 1 + .5 x 1 = 1.
   * Bar 2, threshold 4: B A B B B B -> theta 1 0 1 2 3 4: closes at its 6th tick.
   *   E[T] = .5 x 6 + .5 x 4 = 5, E[bv] = .5 x 4/6 + .5 x 1 = 5/6: threshold 5 x 5/6 = 4.1667.
   * Bar 3: A A A A A -> |theta| 4 < 4.1667 at the 4th, 5 at the 5th: closes there. */
  int sides[] = {B, B, B, B, B, A, B, B, B, B, A, A, A, A, A};
  tg_trade t[15];
  seq(t, sides, NULL, 15);
  tg_bars b;
  tg_bar_stats st;
  CHECK_OK(run("tick_imbalance:4,alpha=0.5", NULL, t, 15, &b, &st));
  int want[] = {4, 6, 5};
  check_counts(&b, want, 3, "tick_imbalance");
  if (b.n == 3) CHECK(col(&b, "buy_volume", 1) == 5 && col(&b, "sell_volume", 1) == 1 && col(&b, "sell_volume", 2) == 5);
  CHECK(st.floor_hits == 0 && st.cap_hits == 0);
  tg_bars_free(&b);
}

static void test_imbalance_floor(void) {
  /* Warm-up B A B A: E[bv] = 0, so the raw threshold is 0 and would close on any imbalance at all; floor 0.5 makes it
   * 0.5 x S0 = 0.5 x 4 = 2. theta: 1 0 1 0 (warm-up ends, 0 < 2), then B B -> 1, 2: closes at tick 6.
   * With the smallest floor (1e-9 x 4) the first B after the warm-up (theta 1) closes it at tick 5. */
  int sides[] = {B, A, B, A, B, B};
  tg_trade t[6];
  seq(t, sides, NULL, 6);
  tg_bars b;
  tg_bar_stats st;
  CHECK_OK(run("tick_imbalance:4,floor=0.5", NULL, t, 6, &b, &st));
  int want[] = {6};
  check_counts(&b, want, 1, "floor 0.5");
  CHECK(st.floor_hits == 1);
  tg_bars_free(&b);
  CHECK_OK(run("tick_imbalance:4,floor=1e-9", NULL, t, 6, &b, &st));
  int want2[] = {5, 1};
  check_counts(&b, want2, 2, "floor 1e-9");
  tg_bars_free(&b);
}

static void test_imbalance_cap(void) {
  /* volume_imbalance:2, alpha 1, cap 1.5. Warm-up B1 B1: E[bv] = 1, V0 = 1, S0 = 2 x 1 = 2, cap 1.5 x 2 = 3;
   * threshold 2 x 1 = 2: theta 2 at tick 2 closes bar 1 (E[T] = 2, E[bv] = 1).
   * Bar 2: B5: theta 5 >= 2 closes at once; alpha 1: E[T] = 1, E[bv] = 5: raw threshold 5 > 3, capped to 3.
   * Bar 3: B1 B1 B1: theta 3 >= 3 at its 3rd trade (uncapped it would need a 5th). */
  int sides[] = {B, B, B, B, B, B};
  double sizes[] = {1, 1, 5, 1, 1, 1};
  tg_trade t[6];
  seq(t, sides, sizes, 6);
  tg_bars b;
  tg_bar_stats st;
  CHECK_OK(run("volume_imbalance:2,alpha=1,cap=1.5", NULL, t, 6, &b, &st));
  int want[] = {2, 1, 3};
  check_counts(&b, want, 3, "cap 1.5");
  CHECK(st.cap_hits == 1 && st.floor_hits == 0);
  tg_bars_free(&b);
  /* the default cap (10 x 2 = 20) leaves the threshold at 5: bar 3's theta 3 never reaches it (a partial bar) */
  CHECK_OK(run("volume_imbalance:2,alpha=1", NULL, t, 6, &b, &st));
  check_counts(&b, want, 3, "cap 10");
  CHECK(st.cap_hits == 0 && st.bars == 3);
  tg_bars_free(&b);
}

static void test_run_bars(void) {
  /* tick_run:4, alpha 0.5. Warm-up B B A B: E[buy v] = 3/4, E[sell v] = 1/4, S0 = 4; threshold 4 x 3/4 = 3:
   *   buys reach 3 at tick 4 -> bar 1. E[T] = 4, E[buy] = .75, E[sell] = .25 (its own means again).
   * Bar 2, threshold 3: A A B A -> sells 1 2 2 3: closes at its 4th tick (runs count every sell of the bar, not only
   *   consecutive ones). E[buy] = .5 x 1/4 + .5 x .75 = .5, E[sell] = .5 x 3/4 + .5 x .25 = .5: threshold 4 x .5 = 2.
   * Bar 3: B A A -> sells 2 at its 3rd tick. */
  int sides[] = {B, B, A, B, A, A, B, A, B, A, A};
  tg_trade t[11];
  seq(t, sides, NULL, 11);
  tg_bars b;
  CHECK_OK(run("tick_run:4,alpha=0.5", NULL, t, 11, &b, NULL));
  int want[] = {4, 4, 3};
  check_counts(&b, want, 3, "tick_run");
  tg_bars_free(&b);
}

static void test_tick_rule(void) {
  /* prices 10 11 11 10 10 12, no sides: b = 0 (no change seen yet), +1, +1 (carried), -1, -1 (carried), +1;
   * sizes 1..6: buy volume 2 + 3 + 6 = 11, sell volume 4 + 5 = 9; the first trade in neither. */
  double px[] = {10, 11, 11, 10, 10, 12};
  tg_trade t[6];
  for (int i = 0; i < 6; i++) t[i] = tr((i + 1) * S, px[i], i + 1, N);
  tg_bars b;
  CHECK_OK(run("tick:6", NULL, t, 6, &b, NULL));
  CHECK(b.n == 1 && col(&b, "buy_volume", 0) == 11 && col(&b, "sell_volume", 0) == 9);
  tg_bars_free(&b);
  tg_bar_opts off = {.no_tick_rule = 1};
  CHECK_OK(run("tick:6", &off, t, 6, &b, NULL));
  CHECK(b.n == 1 && col(&b, "buy_volume", 0) == 0 && col(&b, "sell_volume", 0) == 0);
  tg_bars_free(&b);
  /* a side given wins over the rule: the 2nd trade (up-tick) marked a sell */
  t[1].side = A;
  CHECK_OK(run("tick:6", NULL, t, 6, &b, NULL));
  CHECK(b.n == 1 && col(&b, "buy_volume", 0) == 9 && col(&b, "sell_volume", 0) == 11);
  tg_bars_free(&b);
  /* imbalance bars on trades with no side and the rule off: no bar could close, so the warm-up end fails */
  for (int i = 0; i < 6; i++) t[i].side = N;
  CHECK_STATUS(run("tick_imbalance:3", &off, t, 6, &b, NULL), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "tick rule is off") != NULL);
  tg_bars_free(&b);
  CHECK_OK(run("tick_imbalance:3", NULL, t, 6, &b, NULL)); /* the rule gives the warm-up its signs */
  tg_bars_free(&b);
}

static void test_flags(void) {
  tg_trade t[] = {tr(1 * S, 10, 1, N), tr(2 * S, 99, 1, N), tr(3 * S, 11, 1, N), tr(4 * S, 12, 1, N)};
  t[1].flags = TG_TRADE_SUSPICIOUS;
  tg_bars b;
  tg_bar_stats st;
  CHECK_OK(run("tick:2", NULL, t, 4, &b, &st));
  CHECK(b.n == 2 && b.high[0] == 11 && st.excluded == 1 && st.trades == 3);
  tg_bars_free(&b);
  tg_bar_opts keep = {.keep_flagged = 1};
  CHECK_OK(run("tick:2", &keep, t, 4, &b, &st));
  CHECK(b.n == 2 && b.high[0] == 99 && st.excluded == 0);
  tg_bars_free(&b);
  t[1].flags = TG_TRADE_CANCELLED;
  CHECK_OK(run("tick:2", NULL, t, 4, &b, &st));
  CHECK(st.excluded == 1);
  tg_bars_free(&b);
  /* out of order at the builder: an error naming the record */
  tg_trade bad[] = {tr(2 * S, 10, 1, N), tr(1 * S, 10, 1, N)};
  bad[1].line = 7;
  CHECK_STATUS(run("tick:5", NULL, bad, 2, &b, NULL), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "line 7") != NULL);
  tg_bars_free(&b);
}

static void test_quotes(void) {
  /* time:1m. Quotes 9/11 at 0s, 10/11 at 10s; a trade at 20s; a quote 12/13 at 70s closes the first minute's bar
   * (bid 10, ask 11, spread mean (2 + 1) / 2 = 1.5, mid 10.5); a trade at 80s, then a crossed quote (dropped, counted);
   * bar 2: bid 12, ask 13, spread 1, mid 12.5. A quote and a trade at the same time: the quote first. */
  tg_quote q[] = {{.ts = 0, .bid = 9, .ask = 11}, {.ts = 10 * S, .bid = 10, .ask = 11},
                  {.ts = 70 * S, .bid = 12, .ask = 13}, {.ts = 85 * S, .bid = 14, .ask = 13}};
  tg_trade t[] = {tr(20 * S, 10.5, 1, N), tr(80 * S, 12.5, 2, N)};
  tg_tick_source *ts, *qs;
  CHECK_OK(tg_tick_open_memory(t, 2, TG_TICK_TRADES, NULL, "trades", &ts));
  CHECK_OK(tg_tick_open_memory(q, 4, TG_TICK_QUOTES, NULL, "quotes", &qs));
  tg_bar_recipe r = recipe("time:1m");
  tg_bars b;
  tg_bar_stats st;
  CHECK_OK(tg_ticks_to_bars(ts, qs, &r, NULL, &b, &st));
  CHECK(b.n == 2 && st.quotes == 3 && tg_tick_source_counts(qs)->crossed == 1);
  if (b.n == 2) {
    CHECK(col(&b, "bid", 0) == 10 && col(&b, "ask", 0) == 11 && col(&b, "spread_mean", 0) == 1.5 &&
          col(&b, "mid", 0) == 10.5);
    CHECK(col(&b, "bid", 1) == 12 && col(&b, "spread_mean", 1) == 1 && col(&b, "mid", 1) == 12.5);
  }
  tg_bars_free(&b);
  tg_tick_close(ts);
  tg_tick_close(qs);
}

static void test_memory_source_checks(void) {
  tg_trade t[] = {tr(2 * S, 10, 1, N), tr(1 * S, 10, 1, N), tr(3 * S, 10, 1, N)};
  for (int i = 0; i < 3; i++) t[i].line = i + 1;
  tg_trade buf[8];
  int64_t n;
  tg_tick_source *s;
  CHECK_OK(tg_tick_open_memory(t, 3, TG_TICK_TRADES, NULL, "mem", &s));
  CHECK_OK(tg_tick_next(s, buf, 8, &n));
  CHECK(n == 2 && tg_tick_source_counts(s)->out_of_order == 1 && buf[1].ts == 3 * S);
  tg_tick_close(s);
  tg_tick_opts strict = {.order = TG_TICKS_ORDER_ERROR};
  CHECK_OK(tg_tick_open_memory(t, 3, TG_TICK_TRADES, &strict, "mem", &s));
  CHECK_STATUS(tg_tick_next(s, buf, 8, &n), TG_ERR_FORMAT);
  CHECK(strstr(tg_last_error(), "mem: record 2") != NULL);
  tg_tick_close(s);
  t[1] = tr(4 * S, -1, 1, N);
  t[1].line = 2;
  CHECK_OK(tg_tick_open_memory(t, 3, TG_TICK_TRADES, NULL, "mem", &s));
  CHECK_STATUS(tg_tick_next(s, buf, 8, &n), TG_ERR_FORMAT);
  CHECK(strstr(tg_last_error(), "record 2: price -1 is not a positive number") != NULL);
  tg_tick_close(s);
}

static void test_recipes(void) {
  tg_bar_recipe r = recipe("time:5s");
  CHECK(r.kind == TG_BARS_TIME && r.interval_ns == 5 * S);
  r = recipe("dollar:5e6");
  CHECK(r.kind == TG_BARS_DOLLAR && r.size == 5e6);
  r = recipe("dollar_run:100,alpha=0.3,floor=0.2,cap=4,warmup=50");
  CHECK(r.kind == TG_BARS_DOLLAR_RUN && r.size == 100 && r.alpha == 0.3 && r.floor == 0.2 && r.cap == 4 &&
        r.warmup == 50);
  r = recipe("volume_imbalance:30");
  CHECK(r.warmup == 30 && r.alpha == 0.2 && r.floor == 0.1 && r.cap == 10);
  const char *bad[][2] = {{"tick:0", "positive"},          {"volume:-5", "positive"},
                          {"renko:5", "unknown kind"},     {"tick", "KIND:SIZE"},
                          {"time:0m", "positive"},         {"tick:2.5", "whole number"},
                          {"tick:abc", "not a number"},    {"tick_run:10,beta=1", "unknown setting"},
                          {"tick:10,alpha=0.5", "only imbalance"}, {"tick_imbalance:10,cap=0.5", "out of range"},
                          {"tick_imbalance:10,floor=2", "out of range"}, {"dollar:inf", "positive"}};
  /* a recipe made by hand gets the same ranges from the builder */
  tg_bar_recipe hand = {.kind = TG_BARS_TICK_RUN, .size = 10};
  tg_bars b;
  tg_bars_init(&b);
  tg_bar_builder *bb = NULL;
  CHECK_STATUS(tg_bar_builder_new(&hand, NULL, &b, &bb), TG_ERR_INVALID);
  CHECK(bb == NULL && strstr(tg_last_error(), "0 < alpha <= 1") != NULL);
  tg_bars_free(&b);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tg_status st = tg_bar_recipe_parse(bad[i][0], &r);
    CHECK_MSG(st == TG_ERR_INVALID && strstr(tg_last_error(), bad[i][1]), "%s: %s", bad[i][0], tg_last_error());
  }
}

/* The CSV writer: bars with fractional-second times and a NaN column read back bit for bit by the bar reader. */
static void test_write_csv(void) {
  tg_trade t[] = {tr(1 * S + 123456789, 10.1, 0.3, B), tr(2 * S, 10.2, 0.7, A), tr(3 * S + 5, 1.0 / 3, 2, N)};
  tg_quote q[] = {{.ts = 3 * S, .bid = 0.3, .ask = 0.4}};
  tg_tick_source *ts, *qs;
  CHECK_OK(tg_tick_open_memory(t, 3, TG_TICK_TRADES, NULL, "trades", &ts));
  CHECK_OK(tg_tick_open_memory(q, 1, TG_TICK_QUOTES, NULL, "quotes", &qs));
  tg_bar_recipe r = recipe("tick:1");
  tg_bars b, back;
  CHECK_OK(tg_ticks_to_bars(ts, qs, &r, NULL, &b, NULL));
  char path[128];
  snprintf(path, sizeof path, "/tmp/tg_tick_bars_%ld.csv", (long)getpid());
  CHECK_OK(tg_bars_write_csv(&b, path));
  tg_read_opts ro;
  memset(&ro, 0, sizeof ro);
  CHECK_OK(tg_bars_read(path, &ro, &back));
  CHECK(back.n == 3 && back.n_cols == b.n_cols && isnan(col(&back, "bid", 0)) && col(&back, "bid", 2) == 0.3);
  int same = back.n == b.n && back.n_cols == b.n_cols;
  for (int64_t i = 0; same && i < b.n; i++) {
    same = back.ts[i] == b.ts[i] && back.open[i] == b.open[i] && back.close[i] == b.close[i] &&
           back.volume[i] == b.volume[i];
    for (int k = 0; same && k < b.n_cols; k++) {
      double x = b.cols[k].values[i], y = col(&back, b.cols[k].name, i);
      same = x == y || (isnan(x) && isnan(y));
    }
  }
  CHECK_MSG(same, "bars read back differ from the bars written");
  remove(path);
  tg_bars_free(&b);
  tg_bars_free(&back);
  tg_tick_close(ts);
  tg_tick_close(qs);
}

/* 5 million ticks through the builder: the builder allocates nothing per tick; only the bar series grows (doubling). */
static void test_constant_memory(void) {
  tg_bar_recipe r = recipe("dollar_imbalance:200");
  tg_bars b;
  tg_bars_init(&b);
  tg_bar_builder *bb;
  CHECK_OK(tg_bar_builder_new(&r, NULL, &b, &bb));
  uint64_t before = tg_alloc_count(), x = 88172645463325252ull;
  double price = 100;
  tg_status st = TG_OK;
  for (int64_t i = 0; st == TG_OK && i < 5000000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
    price = fmax(1, price + ((x & 3) == 0 ? -0.01 : (x & 3) == 1 ? 0.01 : 0));
    tg_trade t = tr(i * 1000, price, 1 + (double)(x >> 60), (x >> 8) & 1 ? B : (x >> 9) & 1 ? A : N);
    st = tg_bar_builder_trade(bb, &t);
  }
  CHECK_OK(st);
  CHECK_OK(tg_bar_builder_finish(bb));
  uint64_t used = tg_alloc_count() - before;
  /* each doubling of the series reallocates its 6 bar fields and 4 extra columns: about 10 per doubling */
  int doublings = 0;
  for (int64_t c = 1024; c < b.n; c *= 2) doublings++;
  CHECK_MSG(b.n > 1000 && used <= (uint64_t)(10 * (doublings + 2)), "%lld bars, %llu allocations",
            (long long)b.n, (unsigned long long)used);
  tg_bar_builder_free(bb);
  tg_bars_free(&b);
}

int main(void) {
  test_time_bars();
  test_tick_volume_dollar();
  test_tick_imbalance();
  test_imbalance_floor();
  test_imbalance_cap();
  test_run_bars();
  test_tick_rule();
  test_flags();
  test_quotes();
  test_memory_source_checks();
  test_recipes();
  test_write_csv();
  test_constant_memory();
  return tg_test_finish();
}
