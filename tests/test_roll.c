/* Continuous futures: hand-made two-contract series whose fronts, rolls and adjusted prices are worked out below, for
 * each rule and each adjustment; the errors; and the Lean ES minute folder when the shared data is there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "support/check.h"
#include "data/readers/roll/roll_internal.h"
#include "tickgrad/data.h"

#define HOUR 3600000000000LL
#define DAY (24 * HOUR)
#define D0 1393804800000000000LL /* 2014-03-03 00:00 UTC */

/* One bar at day d (0-3), hour h of contract name: open = close, high = close + 1, low = close - 1. */
static void add(tg_bars *b, int d, int h, const char *name, double close, double volume, double oi) {
  CHECK(tg_bars_push(b, D0 + d * DAY + h * HOUR, close, close + 1, close - 1, close, volume, 0) == TG_OK);
  int c = tg_bars_column_index(b, "contract"), o = tg_bars_column_index(b, "open_interest");
  uint32_t code = 0;
  CHECK(tg_categories_intern(&b->cols[c].cats, name, strlen(name), &code) == TG_OK);
  b->cols[c].codes[b->n - 1] = code;
  if (o >= 0) b->cols[o].values[b->n - 1] = oi;
}

/* Contracts A and B, two bars a day (10:00, 14:00) on four days; per day (A closes, A volume | B closes, B volume,
 * open interest A | B at the day's end):
 *   day 0: A 100, 101 vol 200 | B 103, 104   vol 20   oi 500 | 100
 *   day 1: A 102, 103 vol 200 | B 105, 106.5 vol 300  oi 500 | 400   <- B's volume beats A's
 *   day 2: A 104, 105 vol 100 | B 107, 108   vol 800  oi 500 | 600   <- B's open interest beats A's
 *   day 3: A 106, 107 vol 100 | B 109, 110   vol 800  oi 500 | 700 */
static void two_contracts(tg_bars *b, const char *a, const char *bn, int with_oi) {
  tg_bars_init(b);
  CHECK(tg_bars_add_column(b, "contract", TG_COLUMN_CATEGORY) == TG_OK);
  if (with_oi) CHECK(tg_bars_add_column(b, "open_interest", TG_COLUMN_NUMERIC) == TG_OK);
  static const double ac[4][2] = {{100, 101}, {102, 103}, {104, 105}, {106, 107}}, av[4] = {100, 100, 50, 50};
  static const double bc[4][2] = {{103, 104}, {105, 106.5}, {107, 108}, {109, 110}}, bv[4] = {10, 150, 400, 400};
  static const double boi[4] = {100, 400, 600, 700};
  for (int d = 0; d < 4; d++)
    for (int h = 0; h < 2; h++) {
      add(b, d, 10 + 4 * h, a, ac[d][h], av[d], 500);
      add(b, d, 10 + 4 * h, bn, bc[d][h], bv[d], boi[d]);
    }
}

static const char *contract_of(const tg_bars *b, int64_t i) {
  const tg_bar_column *c = tg_bars_column(b, "contract");
  return tg_categories_name(&c->cats, c->codes[i]);
}

/* The kept bars' contracts and closes are want_c[i] and want_close[i]. */
static void expect(const tg_bars *b, int n, const char *const *want_c, const double *want_close) {
  CHECK_MSG(b->n == n, "%lld bars, want %d", (long long)b->n, n);
  for (int64_t i = 0; i < b->n && i < n; i++) {
    CHECK_MSG(strcmp(contract_of(b, i), want_c[i]) == 0, "bar %lld: %s, want %s", (long long)i, contract_of(b, i),
              want_c[i]);
    CHECK_MSG(fabs(b->close[i] - want_close[i]) < 1e-9, "bar %lld: close %.12g, want %.12g", (long long)i, b->close[i],
              want_close[i]);
    CHECK(fabs(b->high[i] - b->close[i] - (b->high[i] - b->open[i])) < 1e-9); /* open moved with close */
  }
}

static tg_status roll(tg_bars *b, tg_roll_rule rule, int days, tg_adjust adj, tg_roll_list *l) {
  tg_roll_spec s = {.rule = rule, .days = days, .adjust = adj};
  return tg_bars_roll(b, &s, "test", NULL, l);
}

static void by_volume(void) {
  /* B's day-1 volume (300) beats A's (200): B is the front from day 2's first bar. Basis: day 1's last closes, A 103,
   * B 106.5. Difference: A's bars + 3.5; ratio: A's bars x 106.5 / 103. */
  static const char *const c[8] = {"201403", "201403", "201403", "201403", "201406", "201406", "201406", "201406"};
  tg_bars b;
  tg_roll_list l = {0};
  two_contracts(&b, "201403", "201406", 0);
  CHECK(roll(&b, TG_ROLL_VOLUME, 0, TG_ADJUST_DIFFERENCE, &l) == TG_OK);
  expect(&b, 8, c, (const double[8]){103.5, 104.5, 105.5, 106.5, 107, 108, 109, 110});
  CHECK(l.n == 1 && !l.stitched);
  if (l.n == 1) {
    CHECK(l.v[0].ts == D0 + 2 * DAY + 10 * HOUR && strcmp(l.v[0].from, "201403") == 0 && strcmp(l.v[0].to, "201406") == 0);
    CHECK(l.v[0].basis_day == D0 + DAY && l.v[0].from_close == 103 && l.v[0].to_close == 106.5);
    CHECK(l.v[0].adjustment == 3.5);
  }
  CHECK(l.dropped_bars == 8);
  tg_bars_free(&b);

  two_contracts(&b, "201403", "201406", 0);
  CHECK(roll(&b, TG_ROLL_VOLUME, 0, TG_ADJUST_RATIO, &l) == TG_OK);
  double k = 106.5 / 103;
  expect(&b, 8, c, (const double[8]){100 * k, 101 * k, 102 * k, 103 * k, 107, 108, 109, 110});
  CHECK(l.n == 1 && l.n == 1 && fabs(l.v[0].adjustment - k) < 1e-15);
  tg_bars_free(&b);

  two_contracts(&b, "201403", "201406", 0);
  CHECK(roll(&b, TG_ROLL_VOLUME, 0, TG_ADJUST_NONE, &l) == TG_OK);
  expect(&b, 8, c, (const double[8]){100, 101, 102, 103, 107, 108, 109, 110});
  CHECK(l.n == 1 && isnan(l.v[0].adjustment));
  tg_bars_free(&b);
  tg_roll_list_free(&l);
}

static void by_open_interest(void) {
  /* B's open interest at day 2's end (600) beats A's (500): B from day 3. Basis day 2: A 105, B 108, so A's six bars
   * get + 3. */
  static const char *const c[8] = {"201403", "201403", "201403", "201403", "201403", "201403", "201406", "201406"};
  tg_bars b;
  tg_roll_list l = {0};
  two_contracts(&b, "201403", "201406", 1);
  CHECK(roll(&b, TG_ROLL_OPEN_INTEREST, 0, TG_ADJUST_DIFFERENCE, &l) == TG_OK);
  expect(&b, 8, c, (const double[8]){103, 104, 105, 106, 107, 108, 109, 110});
  CHECK(l.n == 1 && l.v[0].ts == D0 + 3 * DAY + 10 * HOUR && l.v[0].adjustment == 3);
  tg_bars_free(&b);
  /* without the column: an error that says what is missing */
  two_contracts(&b, "201403", "201406", 0);
  CHECK_STATUS(roll(&b, TG_ROLL_OPEN_INTEREST, 0, TG_ADJUST_DIFFERENCE, &l), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "open_interest") != NULL);
  tg_bars_free(&b);
  tg_roll_list_free(&l);
}

static void by_calendar(void) {
  /* A expires 2014-03-10 (day 7), B 2014-06-10. calendar:6 keeps A while day + 6 < 7: day 0 only. B from day 1's first
   * bar; basis day 0: A 101, B 104, so A's two bars + 3. calendar:1 keeps A on all four days (day 3 + 1 < 7): no roll. */
  static const char *const c[8] = {"20140310", "20140310", "20140610", "20140610",
                                   "20140610", "20140610", "20140610", "20140610"};
  tg_bars b;
  tg_roll_list l = {0};
  two_contracts(&b, "20140310", "20140610", 0);
  CHECK(roll(&b, TG_ROLL_CALENDAR, 6, TG_ADJUST_DIFFERENCE, &l) == TG_OK);
  expect(&b, 8, c, (const double[8]){103, 104, 105, 106.5, 107, 108, 109, 110});
  CHECK(l.n == 1 && l.v[0].ts == D0 + DAY + 10 * HOUR && l.v[0].adjustment == 3);
  tg_bars_free(&b);
  two_contracts(&b, "20140310", "20140610", 0);
  CHECK(roll(&b, TG_ROLL_CALENDAR, 1, TG_ADJUST_DIFFERENCE, &l) == TG_OK);
  CHECK(b.n == 8 && l.n == 0 && strcmp(contract_of(&b, 7), "20140310") == 0 && b.close[7] == 107);
  tg_bars_free(&b);
  /* a name without an expiry: the error names the contract */
  two_contracts(&b, "ESH4", "ESM4", 0);
  CHECK_STATUS(roll(&b, TG_ROLL_CALENDAR, 5, TG_ADJUST_DIFFERENCE, &l), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "'ESH4'") != NULL);
  tg_bars_free(&b);
  tg_roll_list_free(&l);
}

static void errors_and_pass_through(void) {
  tg_bars b;
  tg_roll_list l = {0};
  /* no rule: an error naming the contracts and the flags */
  two_contracts(&b, "201403", "201406", 0);
  CHECK_STATUS(roll(&b, TG_ROLL_NONE, 0, TG_ADJUST_DIFFERENCE, &l), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "201403, 201406") && strstr(tg_last_error(), "--roll") &&
        strstr(tg_last_error(), "--adjust"));
  CHECK(b.n == 16);
  tg_bars_free(&b);
  /* spreads and options are dropped and counted; the outrights roll as in by_volume */
  two_contracts(&b, "201403", "201406", 0);
  add(&b, 3, 20, "201403-201406", 3, 5, 0);
  add(&b, 3, 21, "201403 C100", 2, 5, 0);
  add(&b, 3, 22, "201403 C105", 1, 5, 0);
  CHECK(tg_bars_sort(&b, NULL) == TG_OK);
  CHECK(roll(&b, TG_ROLL_VOLUME, 0, TG_ADJUST_DIFFERENCE, &l) == TG_OK);
  CHECK(l.spreads == 1 && l.options == 2 && b.n == 8 && l.n == 1 && l.v[0].adjustment == 3.5);
  tg_bars_free(&b);
  /* contracts that follow one another (a stitched series) are left as they are, their change listed */
  tg_bars_init(&b);
  CHECK(tg_bars_add_column(&b, "contract", TG_COLUMN_CATEGORY) == TG_OK);
  add(&b, 0, 10, "201403", 100, 1, 0);
  add(&b, 1, 10, "201403", 101, 1, 0);
  add(&b, 2, 10, "201406", 105, 1, 0);
  CHECK(roll(&b, TG_ROLL_NONE, 0, TG_ADJUST_DIFFERENCE, &l) == TG_OK);
  CHECK(b.n == 3 && b.close[0] == 100 && l.stitched && l.n == 1 && l.v[0].ts == D0 + 2 * DAY + 10 * HOUR);
  tg_bars_free(&b);
  /* the front stops trading: the next contract takes over where it does, with no basis and no adjustment.
   * A trades days 0-1 with the larger volume, B days 0-3. */
  tg_bars_init(&b);
  CHECK(tg_bars_add_column(&b, "contract", TG_COLUMN_CATEGORY) == TG_OK);
  for (int d = 0; d < 4; d++) {
    if (d < 2) add(&b, d, 10, "201403", 100 + d, 100, 0);
    add(&b, d, 11, "201406", 110 + d, 10, 0);
  }
  CHECK(roll(&b, TG_ROLL_VOLUME, 0, TG_ADJUST_DIFFERENCE, &l) == TG_OK);
  CHECK(b.n == 4 && b.close[0] == 100 && b.close[1] == 101 && b.close[2] == 112 && b.close[3] == 113);
  CHECK(l.n == 1 && l.v[0].basis_day == INT64_MIN && isnan(l.v[0].adjustment));
  tg_bars_free(&b);
  /* exchange-style names order contracts by their delivery month: a one-digit year is the first from the year before
   * the contract's last bar on (ESH0 last seen in 2019-12: March 2020; ESZ9 seen in 2019: December 2019) */
  const int64_t y2019 = 1575158400000000000LL; /* 2019-12-01 */
  CHECK(tg_contract_month_key("ESH0", y2019) == 2020 * 12 + 2 && tg_contract_month_key("ESZ9", y2019) == 2019 * 12 + 11);
  CHECK(tg_contract_month_key("ESZ23", y2019) == 2023 * 12 + 11 && tg_contract_month_key("ES.FUT", y2019) == INT64_MIN);
  CHECK(tg_contract_month_key("ESA1", y2019) == INT64_MIN && tg_contract_month_key("es", y2019) == INT64_MIN);
  /* two instruments each with several contracts would mix two futures: refused */
  two_contracts(&b, "201403", "201406", 0);
  CHECK(tg_bars_reserve(&b, b.cap, 1) == TG_OK);
  for (int64_t i = 0; i < b.n; i++) b.instrument[i] = i % 4 < 2 ? 7 : 8; /* both contracts under 7 and under 8 */
  CHECK_STATUS(roll(&b, TG_ROLL_VOLUME, 0, TG_ADJUST_DIFFERENCE, &l), TG_ERR_UNSUPPORTED);
  CHECK(strstr(tg_last_error(), "several contracts") != NULL);
  /* one instrument per contract (DBN's ids) is one future: stitched, the latest contract's id kept */
  for (int64_t i = 0; i < b.n; i++) b.instrument[i] = i % 2 ? 9 : 8;
  CHECK(roll(&b, TG_ROLL_VOLUME, 0, TG_ADJUST_DIFFERENCE, &l) == TG_OK);
  CHECK(b.n == 8 && b.instrument[0] == 9 && b.instrument[7] == 9 && l.n == 1);
  tg_bars_free(&b);
  /* the rule's text */
  tg_roll_spec s;
  CHECK(tg_roll_parse("calendar:12", &s) == TG_OK && s.rule == TG_ROLL_CALENDAR && s.days == 12);
  CHECK(tg_roll_parse("calendar", &s) == TG_OK && s.days == 5);
  CHECK_STATUS(tg_roll_parse("calendar:-1", &s), TG_ERR_INVALID);
  CHECK_STATUS(tg_roll_parse("volumes", &s), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "'volumes'") != NULL);
  tg_roll_list_free(&l);
}

/* Lean's ES minute folder: by volume, 201403 beats 201312 on 2013-12-18 and is the front from 12-20 (the next day in
 * the folder); 202003 takes over in 2020, where no 2013 contract trades. Every bar is its own contract's, and the
 * difference-adjusted close of 201312's last bar of 12-18 is 201403's close of that day. */
static void lean_es_minutes(const char *root) {
  char dir[4096], one[4200];
  snprintf(dir, sizeof dir, "%s/lean/future/cme/minute/es", root);
  tg_roll_list l = {0};
  tg_read_opts o = {.roll = "volume", .rolls = &l};
  tg_bars b;
  if (tg_bars_read(dir, &o, &b) != TG_OK) {
    CHECK_MSG(0, "%s", tg_last_error());
    return;
  }
  CHECK(l.n == 2);
  if (l.n == 2) {
    CHECK(strcmp(l.v[0].from, "201312") == 0 && strcmp(l.v[0].to, "201403") == 0);
    CHECK(strcmp(l.v[1].from, "201403") == 0 && strcmp(l.v[1].to, "202003") == 0 && isnan(l.v[1].adjustment));
  }
  /* the bars expected: every 201312 file's up to 12-18, then 201403's of 12-20, 202003's of 2020 */
  static const char *const days312[] = {"20131006", "20131007", "20131008", "20131009", "20131010", "20131011",
                                        "20131014", "20131029", "20131030", "20131118", "20131202", "20131203",
                                        "20131218"};
  int64_t want = 0;
  double close312 = 0, close403 = 0;
  for (int k = 0; k < 13 + 3; k++) {
    const char *name = k < 13 ? days312[k] : k == 13 ? "20131220" : k == 14 ? "20200105" : "20200106";
    const char *c = k < 13 ? "201312" : k == 13 ? "201403" : "202003";
    snprintf(one, sizeof one, "%s/%s_es_minute_trade_%s.csv", dir, name, c);
    tg_bars f;
    if (tg_bars_read(one, NULL, &f) != TG_OK) {
      CHECK_MSG(0, "%s", tg_last_error());
      continue;
    }
    want += f.n;
    if (k == 12) close312 = f.close[f.n - 1];
    tg_bars_free(&f);
  }
  snprintf(one, sizeof one, "%s/20131218_es_minute_trade_201403.csv", dir);
  tg_bars f;
  if (tg_bars_read(one, NULL, &f) == TG_OK) close403 = f.close[f.n - 1], tg_bars_free(&f);
  CHECK_MSG(b.n == want, "%lld bars, want %lld", (long long)b.n, (long long)want);
  if (l.n == 2) CHECK(l.v[0].from_close == close312 && l.v[0].to_close == close403);
  int64_t last_before = -1;
  for (int64_t i = 0; i < b.n; i++) {
    if (i > 0) CHECK(b.ts[i] > b.ts[i - 1]); /* one bar per time: no two contracts mixed */
    if (l.n == 2 && b.ts[i] < l.v[0].ts) last_before = i;
  }
  CHECK(last_before >= 0 && strcmp(contract_of(&b, last_before), "201312") == 0);
  if (last_before >= 0) CHECK_MSG(fabs(b.close[last_before] - close403) < 1e-9, "adjusted %.10g, 201403 %.10g",
                                  b.close[last_before], close403);
  if (last_before >= 0) CHECK(strcmp(contract_of(&b, last_before + 1), "201403") == 0);
  tg_bars_free(&b);
  /* without a rule the folder is an error naming its contracts */
  o.roll = NULL;
  CHECK_STATUS(tg_bars_read(dir, &o, &b), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "201312, 201403") != NULL);
  o.roll = "calendar:5";
  CHECK(tg_bars_read(dir, &o, &b) == TG_OK);
  tg_bars_free(&b);
  /* two globs of one contract each meet only when the paths are merged: stitched there */
  char g1[4200], g2[4200];
  snprintf(g1, sizeof g1, "%s/*_201312.csv", dir);
  snprintf(g2, sizeof g2, "%s/*_201403.csv", dir);
  const char *const paths[2] = {g1, g2};
  o.roll = "volume";
  CHECK(tg_bars_read_paths(2, paths, &o, &b) == TG_OK);
  CHECK(l.n == 1 && b.n > 0 && strcmp(contract_of(&b, b.n - 1), "201403") == 0);
  if (l.n == 1) CHECK(l.v[0].ts == b.ts[b.n - 1308] && l.v[0].adjustment == close403 - close312); /* 1308: 12-20 */
  tg_bars_free(&b);
  tg_roll_list_free(&l);
}

int main(void) {
  by_volume();
  by_open_interest();
  by_calendar();
  errors_and_pass_through();
  const char *root = getenv("TG_SHARED_DATA");
  char probe[4096];
  struct stat sb;
  snprintf(probe, sizeof probe, "%s/lean/future/cme/minute/es", root ? root : "");
  if (root && *root && stat(probe, &sb) == 0) lean_es_minutes(root);
  else printf("skipped the Lean ES minutes: no shared data (set TG_SHARED_DATA to ../shared/data)\n");
  return tg_test_finish();
}
