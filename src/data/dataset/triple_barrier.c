/* The triple-barrier target: which of an upper, a lower (in trailing volatilities) or a time barrier each bar hits first. */
#include <math.h>
#include "data/dataset/targets_internal.h"

static const char k_names[3][TG_NAME_MAX] = {"down", "time", "up"}; /* the classes, sorted bytewise */
enum { TB_DOWN = 0, TB_TIME = 1, TB_UP = 2 };

/* Sample standard deviation of the W log returns ending at position p of rows (p >= W). */
static double trailing_vol(const double *c, const int64_t *rows, int64_t p, int W) {
  double mean = 0.0, ss = 0.0;
  for (int i = 0; i < W; i++) mean += log(c[rows[p - i]] / c[rows[p - i - 1]]);
  mean /= W;
  for (int i = 0; i < W; i++) {
    double d = log(c[rows[p - i]] / c[rows[p - i - 1]]) - mean;
    ss += d * d;
  }
  return sqrt(ss / (W - 1));
}

tg_status tg_targets_barrier(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *o, tg_targets *out) {
  int W = o->tb_vol_window ? o->tb_vol_window : 20, B = o->tb_bars;
  if (W < 2 || W > 100000 || B < 1 || B > 100000 || !(o->tb_up > 0 && o->tb_down > 0))
    return tg_error(TG_ERR_INVALID, "target triple-barrier: up %g, down %g (> 0), %d bars (1..100000), volatility "
                    "window %d (2..100000)", o->tb_up, o->tb_down, B, W);
  tg_status st = tg_targets_set_classes(out, k_names, 3);
  if (st != TG_OK) return st;
  const double *c = bars->close;
  for (int j = 0; j < lay->k; j++) {
    const int64_t *rows = lay->rows + lay->seg[j]; /* [m] this instrument's rows in time order */
    int64_t m = lay->seg[j + 1] - lay->seg[j];
    for (int64_t p = 0; p < m; p++) {
      int64_t r = rows[p];
      for (int i = 0; i < out->nh; i++) out->ret[r * out->nh + i] = NAN;
      out->cls[r] = -1;
      out->reach[r] = -1;
      if (p < W || p + B >= m) continue;
      double sigma = trailing_vol(c, rows, p, W), up = o->tb_up * sigma, down = -o->tb_down * sigma;
      int cls = TB_TIME, at = B;
      for (int i = 1; i <= B; i++) {
        double x = log(c[rows[p + i]] / c[r]);
        if (x >= up) cls = TB_UP;
        else if (x <= down) cls = TB_DOWN;
        else continue;
        at = i;
        break;
      }
      out->cls[r] = cls;
      out->reach[r] = at;
    }
  }
  return TG_OK;
}
