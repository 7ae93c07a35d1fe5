/* Targets per instrument: forward log returns at several horizons, a dead-zone direction class, next-bar prices. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "tickgrad/dataset.h"

#define HORIZON_MAX 100000

void tg_targets_free(tg_targets *y) {
  tg_free(y->ret);
  tg_free(y->cls);
  tg_free(y->next_open);
  tg_free(y->next_close);
  tg_free(y->last_valid);
  memset(y, 0, sizeof *y);
}

static tg_status check_opts(const tg_target_opts *o, int *nh, int *hs, int *ch) {
  *nh = o ? o->nh : 0;
  if (*nh < 0 || *nh > TG_MAX_HORIZONS)
    return tg_error(TG_ERR_INVALID, "targets: %d horizons (1..%d)", *nh, TG_MAX_HORIZONS);
  if (*nh == 0) {
    *nh = 1;
    hs[0] = 1;
  } else {
    memcpy(hs, o->horizons, (size_t)*nh * sizeof *hs);
  }
  for (int i = 0; i < *nh; i++)
    if (hs[i] < 1 || hs[i] > HORIZON_MAX)
      return tg_error(TG_ERR_INVALID, "targets: horizon %d is %d bars (must be 1..%d)", i, hs[i], HORIZON_MAX);
  *ch = o ? o->class_horizon : 0;
  if (*ch < 0 || *ch >= *nh)
    return tg_error(TG_ERR_INVALID, "targets: class_horizon %d is not one of the %d horizons", *ch, *nh);
  double dz = o ? o->dead_zone : 0.0;
  if (!(dz >= 0.0 && isfinite(dz)))
    return tg_error(TG_ERR_INVALID, "targets: dead_zone %g (must be finite and >= 0)", dz);
  return TG_OK;
}

tg_status tg_targets_compute(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *opts,
                             tg_targets *out) {
  memset(out, 0, sizeof *out);
  if (!bars || !lay || lay->n != bars->n)
    return tg_error(TG_ERR_INVALID, "targets: the layout does not belong to these bars");
  int nh = 1, hs[TG_MAX_HORIZONS] = {1}, ch = 0;
  tg_status st = check_opts(opts, &nh, hs, &ch);
  if (st != TG_OK) return st;
  double dz = opts ? opts->dead_zone : 0.0;
  int64_t n = bars->n;
  for (int64_t i = 0; i < n; i++)
    if (!(isfinite(bars->close[i]) && bars->close[i] > 0.0 && isfinite(bars->open[i]) && bars->open[i] > 0.0))
      return tg_error(TG_ERR_NUMERIC, "targets: bar %lld (ts %lld): open %g, close %g; prices must be finite and > 0",
                      (long long)i, (long long)bars->ts[i], bars->open[i], bars->close[i]);
  out->n = n;
  out->nh = nh;
  out->k = lay->k;
  memcpy(out->horizons, hs, sizeof hs);
  for (int i = 0; i < nh; i++)
    if (hs[i] > out->hmax) out->hmax = hs[i];
  out->ret = tg_malloc((size_t)n * (size_t)nh * sizeof(float));
  out->cls = tg_malloc((size_t)n * sizeof(int32_t));
  out->next_open = tg_malloc((size_t)n * sizeof(double));
  out->next_close = tg_malloc((size_t)n * sizeof(double));
  out->last_valid = tg_malloc((size_t)lay->k * sizeof(int64_t));
  if (!out->ret || !out->cls || !out->next_open || !out->next_close || !out->last_valid) {
    tg_targets_free(out);
    return tg_error(TG_ERR_NOMEM, "targets: out of memory for %lld rows", (long long)n);
  }
  const double *c = bars->close;
  out->last_valid_row = n - 1;
  for (int j = 0; j < lay->k; j++) {
    const int64_t *rows = lay->rows + lay->seg[j]; /* [m] this instrument's rows in time order */
    int64_t m = lay->seg[j + 1] - lay->seg[j];
    for (int64_t p = 0; p < m; p++) {
      int64_t r = rows[p];
      for (int i = 0; i < nh; i++)
        out->ret[r * nh + i] = p + hs[i] < m ? (float)log(c[rows[p + hs[i]]] / c[r]) : NAN;
      if (p + hs[ch] < m) {
        double fwd = log(c[rows[p + hs[ch]]] / c[r]);
        out->cls[r] = fwd > dz ? TG_CLASS_UP : fwd < -dz ? TG_CLASS_DOWN : TG_CLASS_FLAT;
      } else {
        out->cls[r] = -1;
      }
      out->next_open[r] = p + 1 < m ? bars->open[rows[p + 1]] : NAN;
      out->next_close[r] = p + 1 < m ? c[rows[p + 1]] : NAN;
    }
    out->last_valid[j] = m > out->hmax ? rows[m - 1 - out->hmax] : -1;
    if (out->last_valid[j] < out->last_valid_row) out->last_valid_row = out->last_valid[j];
  }
  return TG_OK;
}
