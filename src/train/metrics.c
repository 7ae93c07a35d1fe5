/* Validation metrics (pinball loss, q-risk, the naive forecaster); the per-epoch line and metrics.csv row. */
#include <math.h>
#include <string.h>
#include "tickgrad/device.h"
#include "train/train_internal.h"

void tr_qacc_add(tr_qacc *a, const tr_data *d, const float *q, const float *pred, const float *tgt, int64_t b) {
  int H = d->H, nq = d->nq;
  for (int64_t i = 0; i < b; i++)
    for (int h = 0; h < H; h++) {
      double ys = tgt[i * H + h], s = d->scale[h], y = ys * s; /* scaled and original units */
      a->abs_y += fabs(y);
      for (int k = 0; k < nq; k++) {
        double ps = pred[(i * H + h) * nq + k];
        a->pinball += tr_pinball(ys - ps, q[k]);
        a->ql[k] += tr_pinball(y - ps * s, q[k]);
      }
    }
  a->n += b;
}

void tr_qacc_naive(tr_qacc *a, const tr_data *d, const float *q, const double *y, int64_t n) {
  memset(a, 0, sizeof *a);
  for (int64_t i = 0; i < n; i++)
    for (int h = 0; h < d->H; h++) {
      double v = y[i * d->H + h];
      a->abs_y += fabs(v);
      for (int k = 0; k < d->nq; k++) {
        double e = v - d->naive[h][k];
        a->pinball += tr_pinball(e / d->scale[h], q[k]);
        a->ql[k] += tr_pinball(e, q[k]);
      }
    }
  a->n = n;
}

double tr_qacc_qrisk(const tr_qacc *a, const tg_forecast_cfg *m, float q) {
  for (int k = 0; k < m->nq; k++)
    if (fabsf(m->q[k] - q) < 1e-6f) return a->abs_y > 0 ? 2.0 * a->ql[k] / a->abs_y : NAN;
  return NAN;
}

double tr_qacc_loss(const tr_qacc *a, int H, int nq) {
  return a->n > 0 ? a->pinball / ((double)a->n * H * nq) : NAN;
}

/* ---- the row: one column list for the line, metrics.csv and trainer.json ---- */

static const char *COLS[TR_METRIC_COLS] = {
    "epoch", "train_loss", "val_loss", "val_qrisk50", "val_qrisk90", "naive_qrisk50", "naive_qrisk90", "lr",
    "grad_norm", "seconds", "samples_per_s", "data_s", "forward_s", "backward_s", "optimizer_s", "step_s", "val_s",
    "mem_allocated_mib", "mem_peak_mib", "h2d_bytes", "d2h_bytes", "val_acc", "val_bal_acc", "base_acc",
    "base_bal_acc", "base_logloss"};

/* confusion counts a row carries after the fixed columns: C * C for a classifier of up to TG_TRAIN_CM_CLASSES */
int tr_metrics_cm_cols(int n_classes) {
  return n_classes > 0 && n_classes <= TG_TRAIN_CM_CLASSES ? n_classes * n_classes : 0;
}

int tr_metrics_numbers(int n_classes) {
  return n_classes > 0 ? TR_METRIC_COLS + tr_metrics_cm_cols(n_classes) : TR_METRIC_COLS_REG;
}

void tr_metrics_to_array(const tg_train_metrics *m, double *v) {
  double a[TR_METRIC_COLS] = {m->epoch, m->train_loss, m->val_loss, m->q50, m->q90, m->naive50, m->naive90, m->lr,
                              m->grad_norm, m->seconds, m->samples_per_s, m->data_s, m->forward_s, m->backward_s, m->optimizer_s,
                              m->step_s, m->val_s, m->mem_allocated_mib, m->mem_peak_mib, m->h2d_bytes, m->d2h_bytes,
                              m->acc, m->bal_acc, m->base_acc, m->base_bal_acc, m->base_logloss};
  memcpy(v, a, sizeof a);
  int ncm = tr_metrics_cm_cols(m->n_classes);
  if (ncm) memcpy(v + TR_METRIC_COLS, m->cm, (size_t)ncm * sizeof *v);
}

void tr_metrics_from_array(tg_train_metrics *m, const double *v, int n_classes) {
  double *f[TR_METRIC_COLS - 1] = {&m->train_loss, &m->val_loss, &m->q50, &m->q90, &m->naive50, &m->naive90, &m->lr,
                                   &m->grad_norm, &m->seconds, &m->samples_per_s, &m->data_s, &m->forward_s, &m->backward_s,
                                   &m->optimizer_s, &m->step_s, &m->val_s, &m->mem_allocated_mib, &m->mem_peak_mib,
                                   &m->h2d_bytes, &m->d2h_bytes, &m->acc, &m->bal_acc, &m->base_acc, &m->base_bal_acc,
                                   &m->base_logloss};
  m->epoch = (int)v[0];
  for (int i = 1; i < TR_METRIC_COLS; i++) *f[i - 1] = v[i];
  m->n_classes = n_classes;
  int ncm = tr_metrics_cm_cols(n_classes);
  if (ncm) memcpy(m->cm, v + TR_METRIC_COLS, (size_t)ncm * sizeof *v);
}

void tr_metrics_header(FILE *f, int n_classes) {
  for (int i = 0; i < (n_classes > 0 ? TR_METRIC_COLS : TR_METRIC_COLS_REG); i++) fprintf(f, "%s%s", i ? "," : "", COLS[i]);
  if (tr_metrics_cm_cols(n_classes))
    for (int t = 0; t < n_classes; t++)
      for (int p = 0; p < n_classes; p++) fprintf(f, ",cm_%d_%d", t, p);
  fprintf(f, "\n");
}

void tr_metrics_row(FILE *f, const tg_train_metrics *m) {
  double v[TR_METRIC_COLS + TG_TRAIN_CM_MAX];
  tr_metrics_to_array(m, v);
  fprintf(f, "%d", m->epoch);
  for (int i = 1; i < tr_metrics_numbers(m->n_classes); i++) {
    if (!isfinite(v[i])) fprintf(f, ",");
    else if (i == TR_METRIC_H2D || i == TR_METRIC_H2D + 1 || i >= TR_METRIC_COLS) fprintf(f, ",%.0f", v[i]); /* counts */
    else fprintf(f, ",%.8g", v[i]);
  }
  fprintf(f, "\n");
}

void tg_train_metrics_header(FILE *f, int n_classes) { tr_metrics_header(f, n_classes); }
void tg_train_metrics_row(FILE *f, const tg_train_metrics *m) { tr_metrics_row(f, m); }

static void bytes_str(char *buf, size_t n, double b) {
  if (b < 1024) snprintf(buf, n, "%.0f B", b);
  else if (b < 1048576.0) snprintf(buf, n, "%.1f KiB", b / 1024);
  else snprintf(buf, n, "%.1f MiB", b / 1048576.0);
}

void tr_metrics_print(FILE *f, const tg_train_metrics *m, int epochs, tg_device dev, tg_precision precision) {
  char h2d[32], d2h[32];
  bytes_str(h2d, sizeof h2d, m->h2d_bytes);
  bytes_str(d2h, sizeof d2h, m->d2h_bytes);
  if (m->n_classes > 0) {
    fprintf(f, "epoch %3d/%d  train %.5f  val logloss %.5f (majority %.5f)  acc %.4f (majority %.4f)  bal-acc %.4f "
            "(majority %.4f)  ", m->epoch, epochs, m->train_loss, m->val_loss, m->base_logloss, m->acc, m->base_acc,
            m->bal_acc, m->base_bal_acc);
    if (tr_metrics_cm_cols(m->n_classes)) {
      fprintf(f, "confusion [");
      for (int t = 0; t < m->n_classes; t++)
        for (int p = 0; p < m->n_classes; p++)
          fprintf(f, "%s%.0f", p ? " " : t ? "|" : "", m->cm[t * m->n_classes + p]);
      fprintf(f, "]  ");
    }
    fprintf(f, "lr %.2e  grad %.3g  %.2f s  %.0f samples/s  ", m->lr, m->grad_norm, m->seconds, m->samples_per_s);
  } else {
    fprintf(f, "epoch %3d/%d  train %.5f  val %.5f  q-risk P50 %.4f (naive %.4f)  P90 %.4f (naive %.4f)  lr %.2e  "
            "grad %.3g  %.2f s  %.0f samples/s  ", m->epoch, epochs, m->train_loss, m->val_loss, m->q50, m->naive50,
            m->q90, m->naive90, m->lr, m->grad_norm, m->seconds, m->samples_per_s);
  }
  if (tg_device_captures(dev))
    fprintf(f, "data %.2f step %.2f (fwd+bwd+opt, one call) val %.2f s  mem %.1f/%.1f MiB", m->data_s, m->step_s,
            m->val_s, m->mem_allocated_mib, m->mem_peak_mib);
  else
    fprintf(f, "data %.2f fwd %.2f bwd %.2f opt %.2f val %.2f s  mem -", m->data_s, m->forward_s, m->backward_s,
            m->optimizer_s, m->val_s);
  fprintf(f, "  h2d %s  d2h %s  %s\n", h2d, d2h, tg_precision_name(precision));
  fflush(f);
}

void tr_class_metrics(const tr_data *d, tg_train_metrics *t) {
  int64_t cm[TG_MAX_CLASSES * TG_MAX_CLASSES];
  tg_class_report r;
  memset(&r, 0, sizeof r);
  r.confusion = cm;
  t->q50 = t->q90 = t->naive50 = t->naive90 = NAN;
  t->n_classes = d->C;
  if (tg_class_metrics(d->val_y, d->val_p, d->n_val, d->C, d->prior, &r) != TG_OK) {
    t->val_loss = t->acc = t->bal_acc = t->base_acc = t->base_bal_acc = t->base_logloss = NAN;
    return;
  }
  t->val_loss = r.log_loss;
  t->acc = r.accuracy;
  t->bal_acc = r.balanced_accuracy;
  t->base_acc = r.base_accuracy;
  t->base_bal_acc = r.base_balanced_accuracy;
  t->base_logloss = r.base_log_loss;
  for (int k = 0; k < tr_metrics_cm_cols(d->C); k++) t->cm[k] = (double)cm[k];
}
