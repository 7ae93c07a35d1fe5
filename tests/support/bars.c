/* Seeded synthetic bars for the dataset and staging tests. */
#include "support/bars.h"
#include <math.h>
#include "data/readers/timeconv.h"
#include "tickgrad/rng.h"

void tg_test_bars(tg_bars *b, int64_t n, int k, uint64_t seed, uint64_t stream, int draw_stride, uint32_t id_step) {
  tg_bars_init(b);
  tg_bars_reserve(b, n, k > 1);
  double last[4] = {100, 20, 3000, 5};
  int64_t t0 = tg_days_from_civil(2022, 1, 3) * TG_NS_PER_DAY;
  for (int64_t i = 0; i < n; i++) {
    int j = (int)(i % k);
    uint64_t d = (uint64_t)(draw_stride * i);
    double o = last[j] * exp(0.001 * tg_rng_normal(seed, stream, d));
    double c = o * exp(0.004 * tg_rng_normal(seed, stream, d + 1));
    double v = 500 * exp(0.3 * tg_rng_normal(seed, stream, d + 2));
    last[j] = c;
    tg_bars_push(b, t0 + (i / k) * 300 * TG_NS_PER_S, o, fmax(o, c) * 1.001, fmin(o, c) * 0.999, c, v, (uint32_t)j * id_step);
  }
}
