/* RUN/inference.json: what prediction needs beyond the weights (features, normalisation, vocabularies, target scales, instruments, bar interval). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/intmath.h"
#include "base/json.h"
#include "train/train_internal.h"

tg_status tr_bar_interval(const tg_dataset *ds, const tg_bars *bars, int64_t *out) {
  const tg_layout *lay = &ds->layout;
  int64_t *dt = tg_malloc((size_t)(lay->n > 0 ? lay->n : 1) * sizeof *dt), m = 0;
  if (!dt) return tg_error(TG_ERR_NOMEM, "train: out of memory for %lld bar intervals", (long long)lay->n);
  for (int j = 0; j < lay->k; j++)
    for (int64_t p = lay->seg[j] + 1; p < lay->seg[j + 1]; p++) {
      int64_t d = bars->ts[lay->rows[p]] - bars->ts[lay->rows[p - 1]];
      if (d > 0) dt[m++] = d;
    }
  qsort(dt, (size_t)m, sizeof *dt, tg_cmp_i64);
  *out = m ? dt[m / 2] : 0;
  tg_free(dt);
  return TG_OK;
}

tg_status tr_meta_write(const char *run, const tr_data *d, tg_precision precision, tg_recompute recompute) {
  const tg_dataset *ds = &d->ds;
  tg_text b = {0};
  tg_text_printf(&b, "{\n  \"format\": \"%s\",\n  \"precision\": \"%s\",\n  \"bar_ns\": %lld,\n  \"warmup\": %d,\n"
                     "  \"training_recompute\": \"%s\",\n  \"features\": [", TR_META_FORMAT, tg_precision_name(precision),
                     (long long)d->bar_ns, ds->fx.warmup_max, tg_recompute_name(recompute));
  for (int c = 0; c < ds->fx.f; c++) {
    tg_text_puts(&b, c ? ", " : "");
    tg_json_append_string(&b, ds->fx.names[c]);
  }
  tg_text_puts(&b, "],\n  \"mean\": [");
  for (int c = 0; c < ds->fx.f; c++) {
    tg_text_puts(&b, c ? ", " : "");
    tg_json_append_real(&b, ds->norm.f ? ds->norm.mean[c] : 0.0, 17);
  }
  tg_text_puts(&b, "],\n  \"std\": [");
  for (int c = 0; c < ds->fx.f; c++) {
    tg_text_puts(&b, c ? ", " : "");
    tg_json_append_real(&b, ds->norm.f ? ds->norm.std[c] : 1.0, 17);
  }
  tg_text_puts(&b, "],\n  \"target_scales\": [");
  for (int h = 0; h < d->H; h++) {
    tg_text_puts(&b, h ? ", " : "");
    tg_json_append_real(&b, d->scale[h], 17);
  }
  if (d->C) {
    tg_text_puts(&b, "],\n  \"classes\": [");
    for (int k = 0; k < d->C; k++) {
      tg_text_puts(&b, k ? ", " : "");
      tg_json_append_string(&b, ds->y.class_names[k]);
    }
  }
  tg_text_printf(&b, "],\n  \"leads\": %d,\n  \"vocab\": [", d->leads);
  for (int v = 0; v < ds->norm.n_vocab; v++) { /* the cat: columns' names; id i + 1 is names[i] */
    const tg_vocab *vo = &ds->norm.vocab[v];
    tg_text_puts(&b, v ? ",\n    {\"column\": " : "\n    {\"column\": ");
    tg_json_append_string(&b, vo->column);
    tg_text_puts(&b, ", \"names\": [");
    for (int i = 0; i < vo->n; i++) {
      tg_text_puts(&b, i ? ", " : "");
      tg_json_append_string(&b, vo->names[i]);
    }
    tg_text_puts(&b, "]}");
  }
  tg_text_puts(&b, "],\n  \"instruments\": [");
  for (int j = 0; j < ds->layout.k; j++) tg_text_printf(&b, "%s%u", j ? ", " : "", ds->layout.ids[j]);
  tg_text_puts(&b, "]");
  if (d->sched.n) { /* the TFT's decoder calendar: the bar times the training split held */
    tg_text_puts(&b, ",\n  \"schedule\": {\"tz\": ");
    tg_json_append_string(&b, d->sched.tz);
    tg_text_puts(&b, ", \"runs\": [");
    for (int i = 0; i < d->sched.n; i++) {
      const tg_sched_run *r = &d->sched.runs[i];
      tg_text_printf(&b, "%s[%d, %lld, %lld, %lld]", i ? ", " : "", r->dow, (long long)r->first_ns,
                     (long long)r->step_ns, (long long)r->count);
    }
    tg_text_puts(&b, "]}");
  }
  tg_text_puts(&b, "\n}\n");
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/inference.json", run);
  tg_status st = b.oom ? tg_error(TG_ERR_NOMEM, "train: out of memory writing %s", path) : tg_write_atomic(path, b.data, b.len);
  tg_text_free(&b);
  return st;
}
