/* A classifier's scores against true classes: accuracy, balanced accuracy, log loss, confusion, majority baseline. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "tickgrad/train.h"

static int argmax_f(const float *p, int C) {
  int k = 0;
  for (int j = 1; j < C; j++)
    if (p[j] > p[k]) k = j;
  return k;
}

tg_status tg_class_metrics(const int32_t *y, const float *p, int64_t n, int C, const double *prior,
                           tg_class_report *out) {
  int64_t *cm = out->confusion;
  memset(out, 0, sizeof *out);
  out->confusion = cm;
  if (C < 2) return tg_error(TG_ERR_INVALID, "class metrics: %d classes (need 2 or more)", C);
  int64_t *own = cm ? NULL : tg_calloc((size_t)C * (size_t)C, sizeof *own);
  if (!cm && !own) return tg_error(TG_ERR_NOMEM, "class metrics: out of memory for %d classes", C);
  if (cm) memset(cm, 0, (size_t)C * (size_t)C * sizeof *cm);
  else cm = own;
  int base = 0;
  for (int j = 1; j < C; j++)
    if (prior[j] > prior[base]) base = j;
  double ll = 0, base_ll = 0;
  int64_t m = 0, hit = 0, base_hit = 0;
  tg_status st = TG_OK;
  for (int64_t i = 0; i < n; i++) {
    if (y[i] < 0) continue;
    if (y[i] >= C) {
      st = tg_error(TG_ERR_INVALID, "class metrics: row %lld has class %d of %d", (long long)i, y[i], C);
      break;
    }
    const float *pi = p + i * C;
    int k = argmax_f(pi, C);
    cm[(int64_t)y[i] * C + k]++;
    hit += k == y[i];
    base_hit += base == y[i];
    ll -= log(fmax((double)pi[y[i]], 1e-12));
    base_ll -= log(fmax(prior[y[i]], 1e-12));
    m++;
  }
  if (st == TG_OK && m == 0) st = tg_error(TG_ERR_INVALID, "class metrics: no row has a class");
  if (st == TG_OK) {
    double recall = 0;
    int present = 0;
    for (int c = 0; c < C; c++) {
      int64_t row = 0;
      for (int k = 0; k < C; k++) row += cm[c * C + k];
      if (!row) continue;
      present++;
      recall += (double)cm[c * C + c] / (double)row;
    }
    out->C = C;
    out->n = m;
    out->accuracy = (double)hit / (double)m;
    out->balanced_accuracy = recall / present;
    out->log_loss = ll / (double)m;
    out->base_accuracy = (double)base_hit / (double)m;
    out->base_balanced_accuracy = 1.0 / present; /* one class predicted: recall 1 for it (if present), 0 elsewhere */
    int base_present = 0;
    for (int k = 0; k < C; k++) base_present += cm[base * C + k] > 0;
    if (!base_present) out->base_balanced_accuracy = 0.0;
    out->base_log_loss = base_ll / (double)m;
  }
  tg_free(own);
  return st;
}
