/* The col: target: an extra numeric column's level, difference or log ratio at each horizon. */
#include <math.h>
#include <string.h>
#include "data/targets_internal.h"

/* "unknown column 'x'; the bars hold: a, b" or "...; the bars hold no extra columns". */
static tg_status unknown_column(const tg_bars *bars, const char *name) {
  char list[512];
  if (bars->n_cols == 0)
    return tg_error(TG_ERR_INVALID, "target col:%s: the bars hold no extra columns (only ts, open, high, low, close, "
                    "volume%s)", name, bars->instrument ? ", instrument" : "");
  return tg_error(TG_ERR_INVALID, "target col:%s: no such column; the bars' extra columns are: %s", name,
                  tg_bars_column_names(bars, list, sizeof list));
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
      if (!isnan(v[r]) && !(v[r] > 0.0 && isfinite(v[r])))
        return tg_error(TG_ERR_NUMERIC, "target col:%s:logdiff: bar %lld (ts %lld) holds %g; a log ratio needs values "
                        "> 0", o->column, (long long)r, (long long)bars->ts[r], v[r]);
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
