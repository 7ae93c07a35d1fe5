/* Continuous futures from Lean's gold ticks (../shared/data/lean/tick/future/gc): bars per contract, each contract's
 * own, with its open interest beside; the volume and open interest rules keep the contract that leads every day, and
 * the stitched series is that contract's bars as --contract reads them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "support/check.h"
#include "tickgrad/ticks.h"

/* Every contract's daily (UTC) volume: the front by the volume rule is the one that leads each day. */
static void per_contract(const char *dir, const tg_bar_recipe *r) {
  tg_bars b;
  tg_bar_stats s;
  tg_tick_counts c;
  if (tg_ticks_to_contract_bars(dir, NULL, r, NULL, &b, &s, &c) != TG_OK) {
    CHECK_MSG(0, "%s", tg_last_error());
    return;
  }
  const tg_bar_column *con = tg_bars_column(&b, "contract"), *oi = tg_bars_column(&b, "open_interest");
  CHECK(con && con->kind == TG_COLUMN_CATEGORY && oi && oi->kind == TG_COLUMN_NUMERIC);
  if (!con || !oi) {
    tg_bars_free(&b);
    return;
  }
  CHECK_MSG(con->cats.n == 11, "%u contracts", con->cats.n);
  /* no bar without a contract; bars sorted; the leader of each UTC day by volume */
  uint32_t lead[8] = {0};
  double best[8] = {0}, vol[8][32] = {{0}};
  for (int64_t i = 0; i < b.n; i++) {
    CHECK(con->codes[i] != TG_CATEGORY_MISSING);
    if (i) CHECK(b.ts[i] >= b.ts[i - 1]);
    int64_t day = b.ts[i] / 86400000000000LL - 15985; /* 2013-10-07 is day 15985 */
    if (day >= 0 && day < 8 && con->codes[i] < 32) vol[day][con->codes[i]] += b.volume[i];
  }
  for (int d = 0; d < 8; d++)
    for (uint32_t k = 0; k < con->cats.n && k < 32; k++)
      if (vol[d][k] > best[d]) best[d] = vol[d][k], lead[d] = k;
  for (int d = 0; d < 4; d++)
    CHECK_MSG(strcmp(tg_categories_name(&con->cats, lead[d]), "201312") == 0, "day %d: %s leads", d,
              tg_categories_name(&con->cats, lead[d]));
  /* open interest of 201312 at its last bar: the last row of 10-09's file, 221210 */
  int64_t last = -1;
  for (int64_t i = 0; i < b.n; i++)
    if (strcmp(tg_categories_name(&con->cats, con->codes[i]), "201312") == 0) last = i;
  CHECK(last >= 0 && oi->values[last] == 221210);
  tg_bars_free(&b);
}

/* The rules that follow volume or open interest keep 201312's bars: the same series --contract 201312 reads, plus
 * the contract column. */
static void stitched(const char *dir, const tg_bar_recipe *r, tg_roll_rule rule) {
  tg_bars all, one;
  tg_roll_list l = {0};
  tg_roll_spec spec = {.rule = rule};
  tg_tick_opts o = {.contract = "201312"};
  tg_tick_source *src = NULL;
  CHECK(tg_ticks_to_contract_bars(dir, NULL, r, NULL, &all, NULL, NULL) == TG_OK);
  CHECK(tg_bars_roll(&all, &spec, dir, NULL, &l) == TG_OK);
  CHECK(tg_tick_open(dir, TG_TICK_TRADES, &o, &src) == TG_OK);
  CHECK(tg_ticks_to_bars(src, NULL, r, NULL, &one, NULL) == TG_OK);
  tg_tick_close(src);
  CHECK_MSG(l.n == 0 && all.n == one.n, "%d rolls, %lld bars, 201312 alone %lld", l.n, (long long)all.n,
            (long long)one.n);
  CHECK(l.dropped_bars > 0);
  for (int64_t i = 0; i < all.n && i < one.n; i++) {
    CHECK(all.ts[i] == one.ts[i] && all.open[i] == one.open[i] && all.close[i] == one.close[i]);
    CHECK(all.high[i] == one.high[i] && all.low[i] == one.low[i] && all.volume[i] == one.volume[i]);
  }
  tg_bars_free(&all);
  tg_bars_free(&one);
  tg_roll_list_free(&l);
}

int main(void) {
  const char *root = getenv("TG_SHARED_DATA");
  char dir[4096];
  struct stat sb;
  snprintf(dir, sizeof dir, "%s/lean/tick/future/gc", root ? root : "");
  if (!root || !*root || stat(dir, &sb) != 0)
    return tg_test_skip("no Lean gold ticks: set TG_SHARED_DATA to the shared data folder (../shared/data)");
  tg_bar_recipe r;
  CHECK(tg_bar_recipe_parse("volume:200", &r) == TG_OK);
  per_contract(dir, &r);
  stitched(dir, &r, TG_ROLL_VOLUME);
  stitched(dir, &r, TG_ROLL_OPEN_INTEREST);
  /* the default: several contracts are an error naming them */
  tg_bars all;
  tg_roll_spec none = {0};
  CHECK(tg_ticks_to_contract_bars(dir, NULL, &r, NULL, &all, NULL, NULL) == TG_OK);
  CHECK_STATUS(tg_bars_roll(&all, &none, dir, NULL, NULL), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "201310, 201311, 201312") != NULL);
  tg_bars_free(&all);
  return tg_test_finish();
}
