/* Targets per instrument: forward log returns or a column at several horizons, or classes (labels, barriers); next-bar prices. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "data/dataset/targets_internal.h"
#include "data/readers/timeconv.h"

#define HORIZON_MAX 100000

void tg_targets_free(tg_targets *y) {
  tg_free(y->ret);
  tg_free(y->cls);
  tg_free(y->next_open);
  tg_free(y->next_close);
  tg_free(y->last_valid);
  tg_free(y->reach);
  tg_free(y->class_names);
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

/* Forward log returns at the horizons and the dead-zone class of horizon ch. */
static void returns(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *opts, tg_targets *out, int ch) {
  double dz = opts ? opts->dead_zone : 0.0;
  const double *c = bars->close;
  int nh = out->nh;
  const int *hs = out->horizons;
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
      out->reach[r] = out->hmax;
    }
  }
}

/* Next-bar prices, and the last row of each instrument with every target: a regression target's last row with
 * hmax bars after it, a class kind's last row with a class. */
static void next_prices_and_last(const tg_bars *bars, const tg_layout *lay, tg_targets *out) {
  out->last_valid_row = out->n - 1;
  for (int j = 0; j < lay->k; j++) {
    const int64_t *rows = lay->rows + lay->seg[j];
    int64_t m = lay->seg[j + 1] - lay->seg[j];
    for (int64_t p = 0; p < m; p++) {
      out->next_open[rows[p]] = p + 1 < m ? bars->open[rows[p + 1]] : NAN;
      out->next_close[rows[p]] = p + 1 < m ? bars->close[rows[p + 1]] : NAN;
    }
    if (out->n_classes) {
      out->last_valid[j] = -1;
      for (int64_t p = m - 1; p >= 0 && out->last_valid[j] < 0; p--)
        if (out->cls[rows[p]] >= 0) out->last_valid[j] = rows[p];
    } else {
      out->last_valid[j] = m > out->hmax ? rows[m - 1 - out->hmax] : -1;
    }
    if (out->last_valid[j] < out->last_valid_row) out->last_valid_row = out->last_valid[j];
  }
}

tg_status tg_targets_compute(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *opts,
                             tg_targets *out) {
  memset(out, 0, sizeof *out);
  if (!bars || !lay || lay->n != bars->n)
    return tg_error(TG_ERR_INVALID, "targets: the layout does not belong to these bars");
  int nh = 1, hs[TG_MAX_HORIZONS] = {1}, ch = 0;
  tg_status st = check_opts(opts, &nh, hs, &ch);
  if (st != TG_OK) return st;
  int64_t n = bars->n;
  for (int64_t i = 0; i < n; i++)
    if (!(isfinite(bars->close[i]) && bars->close[i] > 0.0 && isfinite(bars->open[i]) && bars->open[i] > 0.0)) {
      char t[TG_TIME_TEXT];
      return tg_error(TG_ERR_NUMERIC, "targets: bar %lld (%s): open %g, close %g; prices must be finite and > 0",
                      (long long)i, tg_format_time(bars->ts[i], t, sizeof t), bars->open[i], bars->close[i]);
    }
  out->n = n;
  out->nh = nh;
  out->k = lay->k;
  memcpy(out->horizons, hs, sizeof hs);
  for (int i = 0; i < nh; i++)
    if (hs[i] > out->hmax) out->hmax = hs[i];
  out->ret = tg_malloc((size_t)n * (size_t)nh * sizeof(float));
  out->cls = tg_malloc((size_t)n * sizeof(int32_t));
  out->reach = tg_malloc((size_t)n * sizeof(int32_t));
  out->next_open = tg_malloc((size_t)n * sizeof(double));
  out->next_close = tg_malloc((size_t)n * sizeof(double));
  out->last_valid = tg_malloc((size_t)lay->k * sizeof(int64_t));
  if (!out->ret || !out->cls || !out->reach || !out->next_open || !out->next_close || !out->last_valid) {
    tg_targets_free(out);
    return tg_error(TG_ERR_NOMEM, "targets: out of memory for %lld rows", (long long)n);
  }
  tg_target_kind kind = opts ? opts->kind : TG_TARGET_LOGRET;
  if (kind == TG_TARGET_COLUMN) st = tg_targets_column(bars, lay, opts, out);
  else if (kind == TG_TARGET_LABELS) st = tg_targets_labels(bars, lay, opts, out);
  else if (kind == TG_TARGET_TRIPLE_BARRIER) st = tg_targets_barrier(bars, lay, opts, out);
  else if (kind == TG_TARGET_LOGRET) returns(bars, lay, opts, out, ch);
  else st = tg_error(TG_ERR_INVALID, "targets: unknown kind %d", (int)kind);
  if (st != TG_OK) {
    tg_targets_free(out);
    return st;
  }
  next_prices_and_last(bars, lay, out);
  return TG_OK;
}

tg_status tg_targets_set_classes(tg_targets *out, const char (*names)[TG_NAME_MAX], int n) {
  out->class_names = tg_malloc((size_t)n * sizeof *out->class_names);
  if (!out->class_names) return tg_error(TG_ERR_NOMEM, "targets: out of memory for %d class names", n);
  memcpy(out->class_names, names, (size_t)n * sizeof *out->class_names);
  out->n_classes = n;
  return TG_OK;
}
