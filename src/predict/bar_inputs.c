/* A bar of a series with the run's extra inputs (covariates) taken from its columns, for predict and backtests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "predict/predict_internal.h"

/* The value of the lead "NAME@+h": column NAME at the h-th next bar of row's instrument (NaN past its last). */
static int lead_value(const tg_bars *bars, int64_t row, const char *input, double *v) {
  const char *at = strstr(input, "@+");
  if (!at) return 0;
  char name[TG_NAME_MAX];
  size_t len = (size_t)(at - input);
  if (len >= sizeof name) return 0;
  memcpy(name, input, len);
  name[len] = '\0';
  const tg_bar_column *c = tg_bars_column(bars, name);
  if (!c || c->kind != TG_COLUMN_NUMERIC) return 0;
  long h = strtol(at + 2, NULL, 10);
  uint32_t inst = bars->instrument ? bars->instrument[row] : 0;
  *v = NAN;
  for (int64_t r = row + 1; r < bars->n && h > 0; r++)
    if (!bars->instrument || bars->instrument[r] == inst)
      if (--h == 0) *v = c->values[r];
  return 1;
}

tg_status tg_predictor_bar_at(tg_predictor *p, const tg_bars *bars, int64_t row, int leads_from_rows, tg_pbar *b) {
  const tg_predictor_info *in = tg_predictor_get_info(p);
  if (!in || !bars || row < 0 || row >= bars->n || !b)
    return tg_error(TG_ERR_INVALID, "predict: bar_at needs a predictor, bars and a row inside them");
  memset(b, 0, sizeof *b);
  b->ts = bars->ts[row];
  b->instrument = bars->instrument ? bars->instrument[row] : 0;
  b->open = bars->open[row], b->high = bars->high[row], b->low = bars->low[row];
  b->close = bars->close[row], b->volume = bars->volume[row];
  if (!in->n_inputs) return TG_OK;
  double *num = pr_input_numbers(p);
  const char **cat = pr_input_names(p);
  char list[400];
  for (int i = 0; i < in->n_inputs; i++) {
    const char *name = in->input_names[i];
    int is_num = i < in->n_num_inputs;
    const tg_bar_column *c = tg_bars_column(bars, name);
    if (!c && is_num && leads_from_rows && lead_value(bars, row, name, &num[i])) continue;
    if (!c)
      return tg_error(TG_ERR_INVALID, "predict: %s reads the column '%s'; %s has none (extra columns there: %s)",
                      in->run, name, bars->source[0] ? bars->source : "the input", tg_bars_column_names(bars, list, sizeof list));
    if (is_num != (c->kind == TG_COLUMN_NUMERIC))
      return tg_error(TG_ERR_INVALID, "predict: the column '%s' of %s holds %s; %s reads it as %s", name,
                      bars->source[0] ? bars->source : "the bars", is_num ? "names" : "numbers", in->run,
                      is_num ? "numbers" : "category names");
    if (is_num) num[i] = c->values[row];
    else cat[i - in->n_num_inputs] = c->codes[row] == TG_CATEGORY_MISSING ? NULL : tg_categories_name(&c->cats, c->codes[row]);
  }
  b->inputs = in->n_num_inputs ? num : NULL;
  b->cats = in->n_inputs > in->n_num_inputs ? cat : NULL;
  return TG_OK;
}
