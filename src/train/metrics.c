/* Validation metrics (pinball loss, q-risk, the naive forecaster); the per-epoch line and metrics.csv row. */
#include <math.h>
#include <string.h>
#include "tickgrad/device.h"
#include "train/train_internal.h"

static double pinball(double e, double q) {
  double a = q * e, b = (q - 1.0) * e;
  return a > b ? a : b;
}

void tr_qacc_add(tr_qacc *a, const tr_data *d, const float *q, const float *pred, const float *tgt, int64_t b) {
  int H = d->H, nq = d->nq;
  for (int64_t i = 0; i < b; i++)
    for (int h = 0; h < H; h++) {
      double ys = tgt[i * H + h], s = d->scale[h], y = ys * s; /* scaled and original units */
      a->abs_y += fabs(y);
      for (int k = 0; k < nq; k++) {
        double ps = pred[(i * H + h) * nq + k];
        a->pinball += pinball(ys - ps, q[k]);
        a->ql[k] += pinball(y - ps * s, q[k]);
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
        a->pinball += pinball(e / d->scale[h], q[k]);
        a->ql[k] += pinball(e, q[k]);
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
    "mem_allocated_mib", "mem_peak_mib", "h2d_bytes", "d2h_bytes"};

void tr_metrics_to_array(const tg_train_metrics *m, double *v) {
  double a[TR_METRIC_COLS] = {m->epoch, m->train_loss, m->val_loss, m->q50, m->q90, m->naive50, m->naive90, m->lr,
                              m->grad_norm, m->seconds, m->samples_per_s, m->data_s, m->forward_s, m->backward_s, m->optimizer_s,
                              m->step_s, m->val_s, m->mem_allocated_mib, m->mem_peak_mib, m->h2d_bytes, m->d2h_bytes};
  memcpy(v, a, sizeof a);
}

void tr_metrics_from_array(tg_train_metrics *m, const double *v) {
  double *f[TR_METRIC_COLS - 1] = {&m->train_loss, &m->val_loss, &m->q50, &m->q90, &m->naive50, &m->naive90, &m->lr,
                                   &m->grad_norm, &m->seconds, &m->samples_per_s, &m->data_s, &m->forward_s, &m->backward_s,
                                   &m->optimizer_s, &m->step_s, &m->val_s, &m->mem_allocated_mib, &m->mem_peak_mib,
                                   &m->h2d_bytes, &m->d2h_bytes};
  m->epoch = (int)v[0];
  for (int i = 1; i < TR_METRIC_COLS; i++) *f[i - 1] = v[i];
}

void tr_metrics_header(FILE *f) {
  for (int i = 0; i < TR_METRIC_COLS; i++) fprintf(f, "%s%s", i ? "," : "", COLS[i]);
  fprintf(f, "\n");
}

void tr_metrics_row(FILE *f, const tg_train_metrics *m) {
  double v[TR_METRIC_COLS];
  tr_metrics_to_array(m, v);
  fprintf(f, "%d", m->epoch);
  for (int i = 1; i < TR_METRIC_COLS; i++) {
    if (!isfinite(v[i])) fprintf(f, ",");
    else if (i >= TR_METRIC_COLS - 2) fprintf(f, ",%.0f", v[i]); /* bytes */
    else fprintf(f, ",%.8g", v[i]);
  }
  fprintf(f, "\n");
}

static void bytes_str(char *buf, size_t n, double b) {
  if (b < 1024) snprintf(buf, n, "%.0f B", b);
  else if (b < 1048576.0) snprintf(buf, n, "%.1f KiB", b / 1024);
  else snprintf(buf, n, "%.1f MiB", b / 1048576.0);
}

void tr_metrics_print(FILE *f, const tg_train_metrics *m, int epochs, tg_device dev, tg_precision precision) {
  char h2d[32], d2h[32];
  bytes_str(h2d, sizeof h2d, m->h2d_bytes);
  bytes_str(d2h, sizeof d2h, m->d2h_bytes);
  fprintf(f, "epoch %3d/%d  train %.5f  val %.5f  q-risk P50 %.4f (naive %.4f)  P90 %.4f (naive %.4f)  lr %.2e  "
          "grad %.3g  %.2f s  %.0f samples/s  ", m->epoch, epochs, m->train_loss, m->val_loss, m->q50, m->naive50,
          m->q90, m->naive90, m->lr, m->grad_norm, m->seconds, m->samples_per_s);
  if (tg_device_captures(dev))
    fprintf(f, "data %.2f step %.2f (fwd+bwd+opt, one call) val %.2f s  mem %.1f/%.1f MiB", m->data_s, m->step_s,
            m->val_s, m->mem_allocated_mib, m->mem_peak_mib);
  else
    fprintf(f, "data %.2f fwd %.2f bwd %.2f opt %.2f val %.2f s  mem -", m->data_s, m->forward_s, m->backward_s,
            m->optimizer_s, m->val_s);
  fprintf(f, "  h2d %s  d2h %s  %s\n", h2d, d2h, tg_precision_name(precision));
  fflush(f);
}
