/* RUN/evaluation.json: every split's scores (tg_evaluation), written atomically. */
#include <stdint.h>
#include <string.h>
#include "base/json.h"
#include "data/readers/timeconv.h"
#include "train/train_internal.h"

#define EVAL_FORMAT "tickgrad-evaluation-1"

/* [v0, v1, ..] with digits as tg_json_append_real's (0: a double's shortest text, -1: a float's) */
static void reals(tg_text *t, const double *v, int n, int digits) {
  tg_text_puts(t, "[");
  for (int i = 0; i < n; i++) {
    tg_text_puts(t, i ? ", " : "");
    tg_json_append_real(t, v[i], digits);
  }
  tg_text_puts(t, "]");
}

static void member(tg_text *t, const char *key, double v) {
  tg_text_printf(t, ",\n      \"%s\": ", key);
  tg_json_append_real(t, v, 0);
}

/* A split's bound as a time, or null where it is open (the first split's start, the last one's end). */
static void time_value(tg_text *t, int64_t ns) {
  char buf[TG_TIME_TEXT];
  if (ns == INT64_MIN || ns == INT64_MAX) tg_text_puts(t, "null");
  else tg_text_printf(t, "\"%s UTC\"", tg_format_time(ns, buf, sizeof buf));
}

static void quantile_split(tg_text *t, const tg_evaluation *e, const tg_eval_split *s) {
  member(t, "loss", s->loss);
  member(t, "zero_loss", s->zero_loss);
  member(t, "naive_loss", s->naive_loss);
  tg_text_puts(t, ",\n      \"pinball\": [");
  for (int h = 0; h < e->H; h++) {
    tg_text_puts(t, h ? ", " : "");
    reals(t, s->pinball[h], e->nq, 0);
  }
  tg_text_puts(t, "],\n      \"qrisk\": ");
  reals(t, s->qrisk, e->nq, 0);
  tg_text_puts(t, ",\n      \"zero_qrisk\": ");
  reals(t, s->zero_qrisk, e->nq, 0);
  tg_text_puts(t, ",\n      \"naive_qrisk\": ");
  reals(t, s->naive_qrisk, e->nq, 0);
  tg_text_puts(t, ",\n      \"intervals\": [");
  for (int v = 0; v < s->n_intervals; v++) {
    double lo = e->q[s->iv_lo[v]], hi = e->q[s->iv_hi[v]];
    tg_text_printf(t, "%s{\"lo\": %g, \"hi\": %g, \"nominal\": ", v ? ", " : "", lo, hi);
    tg_json_append_real(t, hi - lo, 6);
    tg_text_puts(t, ", \"coverage\": ");
    tg_json_append_real(t, s->coverage[v], 0);
    tg_text_puts(t, ", \"naive_coverage\": ");
    tg_json_append_real(t, s->naive_coverage[v], 0);
    tg_text_puts(t, "}");
  }
  tg_text_puts(t, "],\n      \"below\": ");
  reals(t, s->below, e->nq, 0);
  tg_text_puts(t, ",\n      \"below_by_horizon\": [");
  for (int h = 0; h < e->H; h++) {
    tg_text_puts(t, h ? ", " : "");
    reals(t, s->below_h[h], e->nq, 0);
  }
  tg_text_puts(t, "]");
}

static void class_split(tg_text *t, const tg_evaluation *e, const tg_eval_split *s) {
  member(t, "log_loss", s->log_loss);
  member(t, "accuracy", s->accuracy);
  member(t, "balanced_accuracy", s->balanced_accuracy);
  member(t, "base_log_loss", s->base_log_loss);
  member(t, "base_accuracy", s->base_accuracy);
  member(t, "base_balanced_accuracy", s->base_balanced_accuracy);
  if (e->n_classes > TG_TRAIN_CM_CLASSES || s->windows == 0) return;
  tg_text_puts(t, ",\n      \"confusion\": [");
  for (int r = 0; r < e->n_classes; r++) {
    tg_text_puts(t, r ? ", [" : "[");
    for (int k = 0; k < e->n_classes; k++) tg_text_printf(t, "%s%lld", k ? ", " : "", (long long)s->confusion[r * e->n_classes + k]);
    tg_text_puts(t, "]");
  }
  tg_text_puts(t, "]");
}

tg_status tr_evaluation_write(const char *run, const tg_evaluation *e) {
  tg_text t = {0};
  tg_text_printf(&t, "{\n  \"format\": \"%s\",\n  \"weights\": \"%s\",\n  \"horizons\": %d,\n", EVAL_FORMAT, e->weights,
                 e->H);
  if (e->n_classes) {
    tg_text_printf(&t, "  \"classes\": %d,\n", e->n_classes);
  } else {
    double q[TG_MAX_QUANTILES];
    for (int k = 0; k < e->nq; k++) q[k] = e->q[k];
    tg_text_puts(&t, "  \"quantiles\": ");
    reals(&t, q, e->nq, -1);
    tg_text_puts(&t, ",\n");
  }
  tg_text_puts(&t, "  \"splits\": {");
  for (int sp = 0, first = 1; sp < TG_SPLIT_COUNT; sp++) {
    const tg_eval_split *s = &e->s[sp];
    if (!e->scored[sp]) continue;
    tg_text_printf(&t, "%s\n    \"%s\": {\n      \"from\": ", first ? "" : ",", tg_eval_split_name(sp));
    first = 0;
    time_value(&t, e->from_ns[sp]);
    tg_text_puts(&t, ",\n      \"to\": ");
    time_value(&t, e->to_ns[sp]);
    tg_text_printf(&t, ",\n      \"windows\": %lld", (long long)s->windows);
    if (e->n_classes) class_split(&t, e, s);
    else quantile_split(&t, e, s);
    tg_text_puts(&t, "\n    }");
  }
  tg_text_puts(&t, "\n  }\n}\n");
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/evaluation.json", run);
  tg_status st = t.oom ? tg_error(TG_ERR_NOMEM, "evaluate: out of memory writing %s", path)
                       : tg_write_atomic(path, t.data, t.len);
  tg_text_free(&t);
  return st;
}
