/* The col: target: an extra numeric column's level, difference or log ratio at each horizon. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "data/dataset/targets_internal.h"
#include "data/readers/timeconv.h"

/* "unknown column 'x'; the bars hold: a, b" or "...; the bars hold no extra columns". */
static tg_status unknown_column(const tg_bars *bars, const char *name) {
  char list[512];
  if (bars->n_cols == 0)
    return tg_error(TG_ERR_INVALID, "target col:%s: the bars hold no extra columns (only ts, open, high, low, close, "
                    "volume%s)", name, bars->instrument ? ", instrument" : "");
  return tg_error(TG_ERR_INVALID, "target col:%s: no such column; the bars' extra columns are: %s", name,
                  tg_bars_column_names(bars, list, sizeof list));
}

/* A target beyond float32's range (the type targets are trained in, and their training std with them): the bar whose
 * value gives it, or the two bars whose difference does. */
static tg_status too_large(const tg_bars *bars, const tg_target_opts *o, int64_t from, int64_t to, double y) {
  const double *v = tg_bars_column(bars, o->column)->values;
  char t0[TG_TIME_TEXT], t1[TG_TIME_TEXT];
  if (o->transform == TG_COL_DIFF)
    return tg_error(TG_ERR_NUMERIC, "target col:%s:diff: bar %lld (%s) holds %g and bar %lld (%s) %g: their "
                    "difference %g is beyond float32's range (+-%g), the type targets and their training std are kept "
                    "in; rescale the column (or use col:%s:logdiff)", o->column, (long long)from,
                    tg_format_time(bars->ts[from], t0, sizeof t0), v[from], (long long)to,
                    tg_format_time(bars->ts[to], t1, sizeof t1), v[to], y, (double)FLT_MAX, o->column);
  return tg_error(TG_ERR_NUMERIC, "target col:%s: bar %lld (%s) holds %g, beyond float32's range (+-%g), the type "
                  "targets and their training std are kept in; rescale the column (or use col:%s:logdiff)", o->column,
                  (long long)to, tg_format_time(bars->ts[to], t1, sizeof t1), y, (double)FLT_MAX, o->column);
}

tg_status tg_targets_column(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *o, tg_targets *out) {
  const tg_bar_column *col = tg_bars_column(bars, o->column);
  if (!col) return unknown_column(bars, o->column);
  if (col->kind != TG_COLUMN_NUMERIC)
    return tg_error(TG_ERR_INVALID, "target col:%s: the column holds text (a category), not numbers", o->column);
  const double *v = col->values;
  int nh = out->nh;
  if (o->transform == TG_COL_LOGDIFF)
    for (int64_t r = 0; r < bars->n; r++)
      if (!isnan(v[r]) && !(v[r] > 0.0 && isfinite(v[r]))) {
        char t[TG_TIME_TEXT];
        return tg_error(TG_ERR_NUMERIC, "target col:%s:logdiff: bar %lld (%s) holds %g; a log ratio needs values > 0",
                        o->column, (long long)r, tg_format_time(bars->ts[r], t, sizeof t), v[r]);
      }
  for (int j = 0; j < lay->k; j++) {
    const int64_t *rows = lay->rows + lay->seg[j]; /* [m] this instrument's rows in time order */
    int64_t m = lay->seg[j + 1] - lay->seg[j];
    for (int64_t p = 0; p < m; p++) {
      int64_t r = rows[p];
      int missing = 0;
      for (int i = 0; i < nh; i++) {
        double y = NAN;
        if (p + out->horizons[i] < m) {
          double a = v[r], b = v[rows[p + out->horizons[i]]];
          y = o->transform == TG_COL_DIFF ? b - a : o->transform == TG_COL_LOGDIFF ? log(b / a) : b;
          if (fabs(y) > FLT_MAX && isfinite(y)) return too_large(bars, o, r, rows[p + out->horizons[i]], y);
        }
        out->ret[r * nh + i] = (float)y;
        missing |= !isfinite(y);
      }
      out->cls[r] = -1;
      out->reach[r] = missing ? -1 : out->hmax;
    }
  }
  return TG_OK;
}
