/* Per-column normalisation: mean and std from the training windows' rows only, each once (lead columns: their finite values), applied to every row in place. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/dataset/split_rows.h"
#include "data/readers/timeconv.h"
#include "tickgrad/dataset.h"

void tg_norm_free(tg_norm *nm) {
  tg_free(nm->mean);
  tg_free(nm->std);
  tg_vocabs_free(nm->vocab, nm->n_vocab);
  memset(nm, 0, sizeof *nm);
}

/* Why column c's mean or std is not finite: its first non-finite value on the training rows (by bar, its time when ts
 * is given, and whether the bar is inside the column's warm-up), or, all values finite, the sum that overflowed. */
static tg_status not_finite(const tg_features *fx, const tg_layout *lay, const tg_splits *sp, const int64_t *ts, int c,
                            double mean) {
  const tg_split *tr = &sp->s[TG_TRAIN];
  const char *name = fx->names ? fx->names[c] : "";
  int64_t bad = -1; /* the first row holding a non-finite value (leads fit on finite values) */
  TG_FOR_SPLIT_ROWS(lay, tr, lay->k, sp->window, r, {
    double v = fx->x[r * fx->f + c];
    if (bad < 0 && !isfinite(v) && !(fx->role && fx->role[c] == TG_FEATURE_KNOWN_LEAD)) bad = r;
  });
  if (bad < 0)
    return tg_error(TG_ERR_NUMERIC, "normalise: column %d '%s': every value on the training rows is finite, but its %s "
                    "overflows a double; rescale the column", c, name, isfinite(mean) ? "std" : "mean");
  int j = lay->inst[bad];
  int64_t p = 0;
  while (lay->rows[p] != bad) p++; /* the bad row's position, for its bar number within its instrument */
  int64_t at = p - lay->seg[j];
  char t[TG_TIME_TEXT], when[TG_TIME_TEXT + 4] = "";
  if (ts) snprintf(when, sizeof when, " (%s)", tg_format_time(ts[bad], t, sizeof t));
  int warm = fx->warmup && at < fx->warmup[c];
  return tg_error(TG_ERR_NUMERIC, "normalise: column %d '%s' is %g at bar %lld%s, a training row (its instrument's "
                  "bar %lld); %s", c, name, (double)fx->x[bad * fx->f + c], (long long)bad, when, (long long)at,
                  warm ? "inside the column's warm-up: a window starting inside the feature warm-up"
                       : "past the column's warm-up: a value or feature beyond float32's range (+-3.4e38)");
}

tg_status tg_norm_fit(const tg_features *fx, const tg_layout *lay, const tg_splits *sp, tg_norm *out) {
  return tg_norm_fit_times(fx, lay, sp, NULL, out);
}

tg_status tg_norm_fit_times(const tg_features *fx, const tg_layout *lay, const tg_splits *sp, const int64_t *ts,
                            tg_norm *out) {
  memset(out, 0, sizeof *out);
  if (!fx || !lay || !sp || fx->n != lay->n || sp->k != lay->k)
    return tg_error(TG_ERR_INVALID, "normalise: features, layout and splits do not belong together");
  int f = fx->f;
  int64_t L = sp->window;
  const tg_split *tr = &sp->s[TG_TRAIN];
  out->f = f;
  out->mean = tg_calloc((size_t)f, sizeof(double));
  out->std = tg_calloc((size_t)f, sizeof(double));
  double *acc = tg_calloc((size_t)f, sizeof(double)); /* [f] running sums */
  int64_t *cnt = tg_calloc((size_t)f + 1, sizeof(int64_t)); /* [f] finite values of the lead columns */
  if (!out->mean || !out->std || !acc || !cnt) {
    tg_free(acc);
    tg_free(cnt);
    tg_norm_free(out);
    return tg_error(TG_ERR_NOMEM, "normalise: out of memory");
  }
  int leads = 0;
  for (int c = 0; fx->role && c < f; c++) leads |= fx->role[c] == TG_FEATURE_KNOWN_LEAD;
  int64_t rows = 0;
  TG_FOR_SPLIT_ROWS(lay, tr, lay->k, L, r, {
    const float *x = fx->x + r * f;
    if (!leads) {
      for (int c = 0; c < f; c++) acc[c] += x[c];
    } else {
      for (int c = 0; c < f; c++) {
        if (fx->role[c] != TG_FEATURE_KNOWN_LEAD) acc[c] += x[c];
        else if (isfinite(x[c])) {
          acc[c] += x[c];
          cnt[c]++;
        }
      }
    }
    rows++;
  });
  out->rows = rows;
  if (rows == 0) {
    tg_free(acc);
    tg_free(cnt);
    tg_norm_free(out);
    return tg_error(TG_ERR_INVALID, "normalise: the training split has no windows to fit on");
  }
  for (int c = 0; c < f; c++) {
    if (!leads || fx->role[c] != TG_FEATURE_KNOWN_LEAD) cnt[c] = rows;
    out->mean[c] = cnt[c] ? acc[c] / (double)cnt[c] : 0.0, acc[c] = 0.0;
  }
  TG_FOR_SPLIT_ROWS(lay, tr, lay->k, L, r, {
    const float *x = fx->x + r * f;
    for (int c = 0; c < f; c++) {
      double d = x[c] - out->mean[c];
      if (!leads || fx->role[c] != TG_FEATURE_KNOWN_LEAD || isfinite(d)) acc[c] += d * d;
    }
  });
  for (int c = 0; c < f; c++) {
    double sd = cnt[c] ? sqrt(acc[c] / (double)cnt[c]) : 1.0;
    if (fx->scale && !fx->scale[c]) {
      out->mean[c] = 0.0, out->std[c] = 1.0;
    } else if (!isfinite(out->mean[c]) || !isfinite(sd)) {
      tg_free(acc);
      tg_free(cnt);
      tg_status st = not_finite(fx, lay, sp, ts, c, out->mean[c]);
      tg_norm_free(out);
      return st;
    } else {
      out->std[c] = sd > 1e-7 * fabs(out->mean[c]) && sd > 1e-30 ? sd : 1.0; /* constant: centre only */
    }
  }
  tg_free(acc);
  tg_free(cnt);
  return TG_OK;
}

tg_status tg_norm_apply(const tg_norm *nm, tg_features *fx) {
  if (!nm || !fx || nm->f != fx->f)
    return tg_error(TG_ERR_INVALID, "normalise: statistics for %d columns, features have %d", nm ? nm->f : -1,
                    fx ? fx->f : -1);
  int f = fx->f;
  for (int64_t r = 0; r < fx->n; r++) {
    float *x = fx->x + r * f; /* [f] */
    for (int c = 0; c < f; c++) x[c] = (float)((x[c] - nm->mean[c]) / nm->std[c]);
  }
  return TG_OK;
}
