/* Embedding tickgrad in a trading loop: open a trained forecaster run, push each new bar, act on its forecast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tickgrad/tickgrad.h"

/* Bars here come from a file to keep the example self-contained; a live engine pushes each bar as its feed closes it. */
int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s RUN BARS.csv   (RUN: a `tickgrad train --model tft|mamba2|mlp` run folder)\n", argv[0]);
    return 2;
  }
  tg_set_threads(1); /* one bar at a time: a single core is fastest */
  tg_predictor *p = NULL;
  if (tg_predictor_open(argv[1], NULL, &p) != TG_OK) { /* every allocation happens here */
    fprintf(stderr, "%s\n", tg_last_error());
    return 1;
  }
  const tg_predictor_info *info = tg_predictor_get_info(p);
  tg_bars bars;
  tg_read_opts ro;
  memset(&ro, 0, sizeof ro);
  if (tg_bars_read(argv[2], &ro, &bars) != TG_OK) {
    fprintf(stderr, "%s\n", tg_last_error());
    tg_predictor_free(p);
    return 1;
  }
  float forecast[TG_MAX_HORIZONS * TG_MAX_QUANTILES]; /* [horizons, nq] */
  int h = info->horizons - 1, lo = 0, mid = info->nq / 2, hi = info->nq - 1; /* the longest horizon; quantiles ascending */
  double position = 0, busy_ns = 0;
  long changes = 0, forecasts = 0;
  for (int64_t t = 0; t < bars.n; t++) {
    tg_pbar bar = {bars.ts[t], bars.instrument ? bars.instrument[t] : 0, bars.open[t], bars.high[t], bars.low[t],
                   bars.close[t], bars.volume[t], NULL, NULL};
    struct timespec t0, t1;
    int ready = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tg_status st = tg_predictor_push(p, &bar, forecast, &ready);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st != TG_OK) { /* a bad bar is refused and changes nothing; a live loop would log it and go on */
      fprintf(stderr, "bar %lld: %s\n", (long long)t, tg_last_error());
      continue;
    }
    busy_ns += (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    if (!ready) continue; /* still warming up */
    forecasts++;
    const float *q = forecast + h * info->nq;
    double want = q[lo] > 0 ? 1 : q[hi] < 0 ? -1 : 0; /* the band rule at zero cost */
    if (want != position) changes++, position = want;
    if (t == bars.n - 1)
      printf("last bar: %d-bar return quantiles %.5f / %.5f / %.5f -> position %+.0f\n", h + 1, q[lo], q[mid], q[hi],
             position);
  }
  printf("%lld bars, %ld forecasts, %ld position changes; %.1f us per bar in tg_predictor_push\n", (long long)bars.n,
         forecasts, changes, bars.n ? busy_ns / 1e3 / (double)bars.n : 0.0);
  tg_bars_free(&bars);
  tg_predictor_free(p);
  return 0;
}
