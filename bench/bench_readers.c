/* Benchmark cases read_*: reading one real market file from ../shared/data into a bar series. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "tickgrad/data.h"

/* Median microseconds of tg_bars_read over reps runs; the bar count goes to stderr. */
static int bench_read(const char *rel, const char *tz, int warmup, int reps, double *median_us) {
  const char *shared = getenv("TG_SHARED_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", shared ? shared : "../shared/data", rel);
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.tz = tz;
  double *times = malloc(sizeof(double) * (size_t)reps);
  if (!times) return 1;
  for (int r = -warmup; r < reps; r++) {
    tg_bars b;
    double t0 = bench_now_us();
    if (tg_bars_read(path, &o, &b) != TG_OK) {
      free(times);
      return 1;
    }
    if (r >= 0) times[r] = bench_now_us() - t0;
    if (r == reps - 1) fprintf(stderr, "%s: %lld bars\n", rel, (long long)b.n);
    tg_bars_free(&b);
  }
  *median_us = bench_median(times, reps);
  free(times);
  return 0;
}

int bench_read_spy_hour_csv(int warmup, int reps, double *us) {
  return bench_read("lean/equity/usa/hour/spy.csv", "America/New_York", warmup, reps, us);
}

int bench_read_eurusd_hour_csv(int warmup, int reps, double *us) {
  return bench_read("lean/forex/fxcm/hour/eurusd.csv", NULL, warmup, reps, us);
}

int bench_read_es_snappy_parquet(int warmup, int reps, double *us) {
  return bench_read("parquet-ohlcv/es_201312_1m.snappy.parquet", NULL, warmup, reps, us);
}

int bench_read_es_zstd_parquet(int warmup, int reps, double *us) {
  return bench_read("parquet-ohlcv/es_201312_1m.zstd.parquet", NULL, warmup, reps, us);
}
