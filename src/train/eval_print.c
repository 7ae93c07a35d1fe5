/* An evaluation as text: one line per split, or a split's tables (pinball, q-risk, coverage, calibration). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "data/readers/timeconv.h"
#include "train/train_internal.h"

/* The index of quantile q in e, or -1. */
static int quantile_at(const tg_evaluation *e, float q) {
  for (int k = 0; k < e->nq; k++)
    if (fabsf(e->q[k] - q) < 1e-6f) return k;
  return -1;
}

/* "test (2345 windows, 2020-03-01 14:30:00 .. end)" */
static void split_head(FILE *f, const tg_evaluation *e, int sp) {
  char a[TG_TIME_TEXT], b[TG_TIME_TEXT];
  fprintf(f, "%s (%lld windows, %s .. %s)", tg_eval_split_name(sp), (long long)e->s[sp].windows,
          tg_format_bound(e->from_ns[sp], a, sizeof a), tg_format_bound(e->to_ns[sp], b, sizeof b));
}

void tg_evaluation_line(FILE *f, const tg_evaluation *e, int sp) {
  const tg_eval_split *s = &e->s[sp];
  if (!e->scored[sp]) {
    fprintf(f, "%s: not scored\n", tg_eval_split_name(sp));
    return;
  }
  split_head(f, e, sp);
  if (e->n_classes) {
    fprintf(f, ": log loss %.5f (majority %.5f), accuracy %.4f (majority %.4f), balanced accuracy %.4f (majority "
            "%.4f)\n", s->log_loss, s->base_log_loss, s->accuracy, s->base_accuracy, s->balanced_accuracy,
            s->base_balanced_accuracy);
    return;
  }
  fprintf(f, ": pinball %.5f (zero %.5f, naive %.5f)", s->loss, s->zero_loss, s->naive_loss);
  int k50 = quantile_at(e, 0.5f), k90 = quantile_at(e, 0.9f);
  if (k50 >= 0) fprintf(f, ", q-risk P50 %.4f (naive %.4f)", s->qrisk[k50], s->naive_qrisk[k50]);
  if (k90 >= 0) fprintf(f, " P90 %.4f (naive %.4f)", s->qrisk[k90], s->naive_qrisk[k90]);
  if (s->n_intervals)
    fprintf(f, ", %g%% interval covers %.3f", 100.0 * (e->q[s->iv_hi[0]] - e->q[s->iv_lo[0]]), s->coverage[0]);
  fprintf(f, "\n");
}

static void quantile_header(FILE *f, const tg_evaluation *e, const char *first) {
  fprintf(f, "  %-16s", first);
  for (int k = 0; k < e->nq; k++) {
    char q[24];
    snprintf(q, sizeof q, "q%g", (double)e->q[k]);
    fprintf(f, " %10s", q);
  }
  fprintf(f, "\n");
}

static void row(FILE *f, const char *name, const double *v, int n, double extra) {
  fprintf(f, "  %-16s", name);
  for (int k = 0; k < n; k++) fprintf(f, " %10.4f", v[k]);
  if (!isnan(extra)) fprintf(f, " %10.5f", extra);
  fprintf(f, "\n");
}

static void class_tables(FILE *f, const tg_evaluation *e, const tg_eval_split *s) {
  if (e->n_classes > TG_TRAIN_CM_CLASSES || s->windows == 0) return;
  fprintf(f, "  confusion counts (row: true class, column: predicted, by class index)\n");
  for (int r = 0; r < e->n_classes; r++) {
    fprintf(f, "  %-4d", r);
    for (int k = 0; k < e->n_classes; k++) fprintf(f, " %8lld", (long long)s->confusion[r * e->n_classes + k]);
    fprintf(f, "\n");
  }
}

void tg_evaluation_print(FILE *f, const tg_evaluation *e, int sp) {
  const tg_eval_split *s = &e->s[sp];
  tg_evaluation_line(f, e, sp);
  if (e->n_classes) {
    class_tables(f, e, s);
    return;
  }
  if (s->windows == 0) return;
  char name[32];
  fprintf(f, "mean pinball loss (target-std units; last column: over the quantiles)\n");
  quantile_header(f, e, "horizon");
  for (int h = 0; h < e->H; h++) {
    double mean = 0;
    for (int k = 0; k < e->nq; k++) mean += s->pinball[h][k] / e->nq;
    snprintf(name, sizeof name, "%d", h + 1);
    row(f, name, s->pinball[h], e->nq, mean);
  }
  fprintf(f, "  %-16s %.5f   zero forecast %.5f   naive (training quantiles) %.5f\n", "all", s->loss, s->zero_loss,
          s->naive_loss);
  fprintf(f, "q-risk 2 sum QL / sum |y| (original units, every horizon)\n");
  quantile_header(f, e, "");
  row(f, "model", s->qrisk, e->nq, NAN);
  row(f, "zero forecast", s->zero_qrisk, e->nq, NAN);
  row(f, "naive", s->naive_qrisk, e->nq, NAN);
  for (int v = 0; v < s->n_intervals; v++)
    fprintf(f, "interval q%g..q%g: covers %.4f of the targets (nominal %.2f; naive %.4f)\n", (double)e->q[s->iv_lo[v]],
            (double)e->q[s->iv_hi[v]], s->coverage[v], (double)(e->q[s->iv_hi[v]] - e->q[s->iv_lo[v]]),
            s->naive_coverage[v]);
  fprintf(f, "calibration: share of targets below each forecast quantile (ideal: the quantile)\n");
  quantile_header(f, e, "horizon");
  row(f, "all", s->below, e->nq, NAN);
  for (int h = 0; h < e->H; h++) {
    snprintf(name, sizeof name, "%d", h + 1);
    row(f, name, s->below_h[h], e->nq, NAN);
  }
}
