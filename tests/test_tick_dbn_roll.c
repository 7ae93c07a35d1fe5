/* Continuous futures from a DBN trades file of several contracts (ESH4, ESM4 and their calendar spread), with and
 * without definition and statistics files beside it: contracts named, the spread left out and counted, each
 * contract's daily bars stitched by volume, open interest and the calendar, the rolls and back-adjustment computed by
 * hand below. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "support/check.h"
#include "support/dbn_write.h"
#include "support/files.h"
#include "tickgrad/data.h"
#include "tickgrad/ticks.h"

#define DAY 86400000000000LL
#define HOUR 3600000000000LL
#define MON 1709510400000000000LL         /* 2024-03-04 00:00 UTC, day 0 of five */
#define ESH4_EXPIRY 1710509400000000000LL /* 2024-03-15 13:30 UTC */
#define ESM4_EXPIRY 1718976600000000000LL /* 2024-06-21 13:30 UTC */

/* Each day one trade of each outright at 14:00 and of the spread at 14:00:01 (by time:1d: one bar of each a day). */
static const double k_h_px[5] = {5000, 5010, 5020, 5030, 5040}, k_m_px[5] = {5050, 5062, 5075, 5080, 5095};
static const uint32_t k_h_vol[5] = {100, 80, 30, 20, 10}, k_m_vol[5] = {10, 50, 90, 100, 120};
/* Open interest published at each day's start (so each day's bar, timed at 00:00, sees that day's value). */
static const int64_t k_h_oi[5] = {2000, 1800, 1500, 1000, 900}, k_m_oi[5] = {500, 1900, 1600, 2000, 2100};

static char g_dir[200], g_bare[256];

static void write_trades(const char *path) {
  const char *raw[3] = {"ESH4", "ESM4", "ESH4-ESM4"};
  const uint32_t ids[3] = {101, 102, 103};
  tg_test_dbn b;
  tg_test_dbn_begin(&b, 2, 4, 3, raw, ids);
  for (int d = 0; d < 5; d++) {
    int64_t t = MON + d * DAY + 14 * HOUR;
    tg_test_dbn_trade(&b, 101, t, k_h_px[d], k_h_vol[d], 'B');
    tg_test_dbn_trade(&b, 102, t + 1, k_m_px[d], k_m_vol[d], 'A');
    tg_test_dbn_trade(&b, 103, t + 1000000000LL, -50 - d, 5, 'B');
  }
  CHECK(tg_test_dbn_save(&b, path) == 0);
  tg_test_dbn_free(&b);
}

static void write_refdata(const char *dir) {
  char path[512];
  tg_test_dbn b;
  tg_test_dbn_begin(&b, 2, 9, 0, NULL, NULL);
  tg_test_dbn_definition(&b, 101, MON - DAY, "ESH4", 'F', ESH4_EXPIRY, 50, 0.25);
  tg_test_dbn_definition(&b, 102, MON - DAY, "ESM4", 'F', ESM4_EXPIRY, 50, 0.25);
  tg_test_dbn_definition(&b, 103, MON - DAY, "ESH4-ESM4", 'S', ESH4_EXPIRY, 50, 0.05);
  snprintf(path, sizeof path, "%s/es.definition.dbn", dir);
  CHECK(tg_test_dbn_save(&b, path) == 0);
  tg_test_dbn_free(&b);
  tg_test_dbn_begin(&b, 2, 10, 0, NULL, NULL);
  for (int d = 0; d < 5; d++) {
    tg_test_dbn_stat(&b, 101, MON + d * DAY, TG_DBN_STAT_OPEN_INTEREST, MON + (d - 1) * DAY, k_h_oi[d]);
    tg_test_dbn_stat(&b, 102, MON + d * DAY, TG_DBN_STAT_OPEN_INTEREST, MON + (d - 1) * DAY, k_m_oi[d]);
    tg_test_dbn_stat(&b, 102, MON + d * DAY + HOUR, 7, INT64_MIN, 1); /* another stat type: not open interest */
  }
  snprintf(path, sizeof path, "%s/es.statistics.dbn", dir);
  CHECK(tg_test_dbn_save(&b, path) == 0);
  tg_test_dbn_free(&b);
}

static void test_list(const char *trades, int with_defs) {
  tg_tick_contracts l;
  CHECK_OK(tg_tick_contracts_list(trades, TG_TICK_TRADES, &l));
  CHECK_MSG(l.n == 2 && l.spreads == 1 && l.options == 0 && l.definitions == with_defs, "%d contracts, %d spreads",
            l.n, l.spreads);
  if (l.n == 2) CHECK(!strcmp(l.names[0], "ESH4") && !strcmp(l.names[1], "ESM4"));
  tg_tick_contracts_free(&l);
}

/* Per-contract daily bars: ten (the spread's left out), with the columns the definitions and statistics give. */
static void test_contract_bars(const char *trades, int with_defs) {
  tg_bar_recipe r;
  CHECK_OK(tg_bar_recipe_parse("time:1d", &r));
  tg_bars b;
  FILE *warn = tmpfile();
  tg_tick_opts o = {.warn = warn};
  CHECK_OK(tg_ticks_to_contract_bars(trades, &o, &r, NULL, &b, NULL, NULL));
  char text[512] = "";
  if (warn) {
    rewind(warn);
    size_t n = fread(text, 1, sizeof text - 1, warn);
    text[n] = '\0';
    fclose(warn);
  }
  CHECK_MSG(strstr(text, with_defs ? "left out 1 spread and 0 option contracts (by their definitions' instrument class)"
                                   : "left out 1 spread and 0 option contracts (by their names)"),
            "warning: %s", text);
  CHECK_MSG(b.n == 10, "%lld bars", (long long)b.n);
  const tg_bar_column *con = tg_bars_column(&b, "contract"), *oi = tg_bars_column(&b, "open_interest");
  const tg_bar_column *ex = tg_bars_column(&b, "expiry"), *mult = tg_bars_column(&b, "multiplier");
  const tg_bar_column *tick = tg_bars_column(&b, "tick_size");
  CHECK(con != NULL);
  CHECK(with_defs ? oi && ex && mult && tick : !oi && !ex && !mult && !tick);
  for (int64_t i = 0; con && i < b.n; i++) {
    int h = !strcmp(tg_categories_name(&con->cats, con->codes[i]), "ESH4");
    int d = (int)((b.ts[i] - MON) / DAY);
    CHECK(d >= 0 && d < 5 && b.ts[i] == MON + d * DAY);
    if (d < 0 || d > 4) continue;
    CHECK(b.close[i] == (h ? k_h_px[d] : k_m_px[d]) && b.volume[i] == (h ? k_h_vol[d] : k_m_vol[d]));
    if (!with_defs || !oi || !ex || !mult || !tick) continue;
    CHECK(oi->values[i] == (double)(h ? k_h_oi[d] : k_m_oi[d]));
    CHECK(ex->values[i] == (h ? 20240315 : 20240621) && mult->values[i] == 50 && tick->values[i] == 0.25);
  }
  tg_bars_free(&b);
}

/* Stitched by rule: the front's closes each day (back-adjusted by difference) and the one roll. */
static void check_roll(const char *trades, const char *rule, const double *closes, const char *roll_day_from,
                       int64_t roll_ts, double adjustment) {
  tg_bar_recipe r;
  CHECK_OK(tg_bar_recipe_parse("time:1d", &r));
  tg_bars b;
  tg_roll_spec spec = {0};
  tg_roll_list rolls = {0};
  CHECK_OK(tg_roll_parse(rule, &spec));
  CHECK_OK(tg_ticks_to_contract_bars(trades, NULL, &r, NULL, &b, NULL, NULL));
  tg_status st = tg_bars_roll(&b, &spec, trades, NULL, &rolls);
  CHECK_MSG(st == TG_OK, "%s: %s", rule, tg_last_error());
  CHECK_MSG(b.n == 5 && rolls.n == 1, "%s: %lld bars, %d rolls", rule, (long long)b.n, rolls.n);
  for (int64_t i = 0; st == TG_OK && i < b.n && i < 5; i++)
    CHECK_MSG(b.ts[i] == MON + i * DAY && fabs(b.close[i] - closes[i]) < 1e-9, "%s: day %lld close %.10g, want %.10g",
              rule, (long long)i, b.close[i], closes[i]);
  if (rolls.n == 1) {
    CHECK_MSG(!strcmp(rolls.v[0].from, roll_day_from) && !strcmp(rolls.v[0].to, "ESM4") && rolls.v[0].ts == roll_ts &&
                  rolls.v[0].adjustment == adjustment,
              "%s: roll %s -> %s at %lld by %g", rule, rolls.v[0].from, rolls.v[0].to, (long long)rolls.v[0].ts,
              rolls.v[0].adjustment);
  }
  tg_bars_free(&b);
  tg_roll_list_free(&rolls);
}

static void test_rolls(const char *trades) {
  /* volume: ESH4 leads days 0 and 1 (100 > 10, 80 > 50); on day 2 ESM4 trades 90 against 30, so ESM4 is the front
   * from day 3. Basis: day 2's closes, 5075 - 5020 = 55, added to ESH4's three bars. */
  const double by_volume[5] = {5000 + 55, 5010 + 55, 5020 + 55, 5080, 5095};
  check_roll(trades, "volume", by_volume, "ESH4", MON + 3 * DAY, 55);
  /* open interest: ESH4 leads day 0 (2000 > 500); on day 1 ESM4 holds 1900 against 1800, so ESM4 from day 2. Basis:
   * day 1's closes, 5062 - 5010 = 52. */
  const double by_oi[5] = {5000 + 52, 5010 + 52, 5075, 5080, 5095};
  check_roll(trades, "open_interest", by_oi, "ESH4", MON + 2 * DAY, 52);
  /* calendar:10: ESH4 expires 03-15; on day 1 (03-05) 03-05 + 10 days reaches it, so ESM4 from day 1. Basis: day 0's
   * closes, 5050 - 5000 = 50. */
  const double by_calendar[5] = {5000 + 50, 5062, 5075, 5080, 5095};
  check_roll(trades, "calendar:10", by_calendar, "ESH4", MON + 1 * DAY, 50);
}

/* Without definitions the names come from the mappings, and the calendar has no expiry to go by; without --roll the
 * read names the contracts. */
static void test_without_definitions(const char *trades) {
  tg_bar_recipe r;
  CHECK_OK(tg_bar_recipe_parse("time:1d", &r));
  tg_bars b;
  tg_roll_spec spec = {0};
  CHECK_OK(tg_roll_parse("calendar", &spec));
  CHECK_OK(tg_ticks_to_contract_bars(trades, NULL, &r, NULL, &b, NULL, NULL));
  CHECK_STATUS(tg_bars_roll(&b, &spec, trades, NULL, NULL), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "contract 'ESH4' has no known expiry") && strstr(tg_last_error(), "DBN definition"));
  tg_bars_free(&b);
  const double by_volume[5] = {5055, 5065, 5075, 5080, 5095};
  check_roll(trades, "volume", by_volume, "ESH4", MON + 3 * DAY, 55);
  tg_read_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.by = "time:1d";
  CHECK_STATUS(tg_bars_read(trades, &ro, &b), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "holds 2 futures contracts whose bars overlap in time (ESH4, ESM4); give --roll"),
            "%s", tg_last_error());
}

/* One contract by name reads only its records; a name the file does not hold is an error naming it. */
static void test_one_contract(const char *trades) {
  tg_tick_opts o = {.contract = "ESM4"};
  tg_tick_source *s = NULL;
  tg_trade t[16];
  int64_t n = 0;
  CHECK_OK(tg_tick_open(trades, TG_TICK_TRADES, &o, &s));
  if (s) CHECK_OK(tg_tick_next(s, t, 16, &n));
  CHECK(n == 5 && t[0].price == 5050 && t[4].size == 120);
  tg_tick_close(s);
  o.contract = "ESU4";
  CHECK_STATUS(tg_tick_open(trades, TG_TICK_TRADES, &o, &s), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "no instrument is named 'ESU4'") != NULL);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_dbn_roll_%ld", (long)getpid());
  snprintf(g_bare, sizeof g_bare, "%s/bare", g_dir);
  mkdir(g_dir, 0755);
  mkdir(g_bare, 0755);
  char with[512], without[512];
  snprintf(with, sizeof with, "%s/es.trades.dbn", g_dir);
  snprintf(without, sizeof without, "%s/es.trades.dbn", g_bare);
  write_trades(with);
  write_trades(without);
  write_refdata(g_dir);
  test_list(with, 1);
  test_list(without, 0);
  test_contract_bars(with, 1);
  test_contract_bars(without, 0);
  test_rolls(with);
  test_without_definitions(without);
  test_one_contract(with);
  tg_test_remove_tree(g_dir);
  return tg_test_finish();
}
