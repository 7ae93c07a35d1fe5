/* One split's quantile scores accumulated window by window: pinball per horizon and quantile, both baselines, q-risks,
 * interval coverage and calibration. */
#include <math.h>
#include <string.h>
#include "train/train_internal.h"

void tr_eval_acc_init(tr_eval_acc *a, const tr_data *d, const float *q) {
  memset(a, 0, sizeof *a);
  for (int k = 0; k < d->nq && a->n_iv < TG_EVAL_MAX_INTERVALS; k++) {
    if (!(q[k] < 0.5f)) continue;
    for (int j = k + 1; j < d->nq; j++)
      if (fabsf(q[j] - (1.0f - q[k])) < 1e-6f) {
        a->iv_lo[a->n_iv] = k, a->iv_hi[a->n_iv] = j, a->n_iv++;
        break;
      }
  }
}

/* The baselines' sums for one target: ys scaled, horizon h. */
static void add_baselines(tr_eval_acc *a, const tr_data *d, const float *q, double ys, int h) {
  double s = d->scale[h], y = ys * s;
  a->zero.abs_y += fabs(y);
  a->naive.abs_y += fabs(y);
  for (int k = 0; k < d->nq; k++) {
    a->zero.pinball += tr_pinball(ys, q[k]);
    a->zero.ql[k] += tr_pinball(y, q[k]);
    a->naive.pinball += tr_pinball(ys - d->naive[h][k] / s, q[k]);
    a->naive.ql[k] += tr_pinball(y - d->naive[h][k], q[k]);
  }
  for (int i = 0; i < a->n_iv; i++)
    a->naive_inside[i] += d->naive[h][a->iv_lo[i]] <= y && y <= d->naive[h][a->iv_hi[i]];
}

void tr_eval_acc_add(tr_eval_acc *a, const tr_data *d, const float *q, const float *pred, const float *tgt, int64_t b) {
  int H = d->H, nq = d->nq;
  tr_qacc_add(&a->model, d, q, pred, tgt, b); /* the trainer's own sums: the loss is its validation loss, bitwise */
  for (int64_t i = 0; i < b; i++)
    for (int h = 0; h < H; h++) {
      double ys = tgt[i * H + h];
      const float *p = pred + (i * H + h) * nq; /* [nq] */
      for (int k = 0; k < nq; k++) {
        a->pin[h][k] += tr_pinball(ys - p[k], q[k]);
        a->below[h][k] += ys < p[k];
      }
      for (int v = 0; v < a->n_iv; v++) a->inside[v] += p[a->iv_lo[v]] <= ys && ys <= p[a->iv_hi[v]];
      add_baselines(a, d, q, ys, h);
    }
  a->zero.n += b;
  a->naive.n += b;
}

static double qrisk(const tr_qacc *a, int k) { return a->abs_y > 0 ? 2.0 * a->ql[k] / a->abs_y : NAN; }

void tr_eval_acc_finish(const tr_eval_acc *a, const tr_data *d, tg_eval_split *s) {
  int H = d->H, nq = d->nq;
  double n = (double)a->model.n, cells = n * H; /* (window, horizon) targets */
  s->windows = a->model.n;
  s->loss = tr_qacc_loss(&a->model, H, nq);
  s->zero_loss = tr_qacc_loss(&a->zero, H, nq);
  s->naive_loss = tr_qacc_loss(&a->naive, H, nq);
  for (int k = 0; k < nq; k++) {
    s->qrisk[k] = qrisk(&a->model, k);
    s->zero_qrisk[k] = qrisk(&a->zero, k);
    s->naive_qrisk[k] = qrisk(&a->naive, k);
    int64_t below = 0;
    for (int h = 0; h < H; h++) {
      s->pinball[h][k] = n > 0 ? a->pin[h][k] / n : NAN;
      s->below_h[h][k] = n > 0 ? (double)a->below[h][k] / n : NAN;
      below += a->below[h][k];
    }
    s->below[k] = cells > 0 ? (double)below / cells : NAN;
  }
  s->n_intervals = a->n_iv;
  for (int v = 0; v < a->n_iv; v++) {
    s->iv_lo[v] = a->iv_lo[v], s->iv_hi[v] = a->iv_hi[v];
    s->coverage[v] = cells > 0 ? (double)a->inside[v] / cells : NAN;
    s->naive_coverage[v] = cells > 0 ? (double)a->naive_inside[v] / cells : NAN;
  }
  s->log_loss = s->accuracy = s->balanced_accuracy = NAN;
  s->base_log_loss = s->base_accuracy = s->base_balanced_accuracy = NAN;
}
