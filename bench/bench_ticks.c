/* Benchmark cases ticks_*: Lean's SPY trade ticks (five daily zips from ../shared/data) streamed into time, volume and
 * dollar bars in one pass, as `tickgrad bars` does; bench/tick_peers.py builds the same bars in pandas and polars. */
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"
#include "tickgrad/ticks.h"

#define SPY_TICKS "lean/tick/equity/spy"

/* Median microseconds of opening the folder and building the recipe's bars over reps runs (skipped without the shared
 * data or libzip); the bar count goes to stderr. */
static int bench_ticks(const char *recipe, int warmup, int reps, double *median_us) {
  const char *shared = getenv("TG_SHARED_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", shared ? shared : "../shared/data", SPY_TICKS);
  tg_bar_recipe r;
  if (tg_bar_recipe_parse(recipe, &r) != TG_OK) return 1;
  tg_tick_source *probe;
  if (tg_tick_open(path, TG_TICK_TRADES, NULL, &probe) != TG_OK) {
    printf("skipped: %s\n", tg_last_error());
    return BENCH_SKIP;
  }
  tg_tick_close(probe);
  double *times = malloc(sizeof(double) * (size_t)reps);
  if (!times) return 1;
  tg_bar_opts bo = {0};
  for (int k = -warmup; k < reps; k++) {
    double t0 = bench_now_us();
    tg_tick_source *src;
    tg_bars b;
    tg_bar_stats st;
    if (tg_tick_open(path, TG_TICK_TRADES, NULL, &src) != TG_OK) break;
    tg_status s = tg_ticks_to_bars(src, NULL, &r, &bo, &b, &st);
    tg_tick_close(src);
    if (s != TG_OK) break;
    if (k >= 0) times[k] = bench_now_us() - t0;
    if (k == reps - 1) fprintf(stderr, "%s %s: %lld trades, %lld bars\n", SPY_TICKS, recipe, (long long)st.trades,
                               (long long)b.n);
    tg_bars_free(&b);
    if (k == reps - 1) {
      *median_us = bench_median(times, reps);
      free(times);
      return 0;
    }
  }
  fprintf(stderr, "%s\n", tg_last_error());
  free(times);
  return 1;
}

int bench_ticks_spy_time(int warmup, int reps, double *us) { return bench_ticks("time:1m", warmup, reps, us); }
int bench_ticks_spy_volume(int warmup, int reps, double *us) { return bench_ticks("volume:1e5", warmup, reps, us); }
int bench_ticks_spy_dollar(int warmup, int reps, double *us) { return bench_ticks("dollar:1.7e7", warmup, reps, us); }
