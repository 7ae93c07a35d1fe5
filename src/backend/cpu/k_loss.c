/* CPU kernels for the scalar-mean losses: mse, huber, pinball, softmax cross-entropy. */
#include <math.h>
#include "backend/cpu/cpu_kernels.h"
#include "ops/index_errors.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_rows.h"

/* Below this many elements a kernel runs on the calling thread only. */
#define LOSS_PAR_MIN 32768

/* sum / n as the float loss; NaN for an empty mean, as PyTorch. */
static float loss_mean(double sum, int64_t n) { return n > 0 ? (float)(sum / (double)n) : NAN; }

/* ---- mse: mean((p - t)^2) ---- */

tg_status tg_cpu_mse_fwd(const tg_kernel_args *a) {
  int64_t n = tg_numel(a->in[0]);
  const float *p = (const float *)a->in[0]->data; /* [n] */
  const float *t = (const float *)a->in[1]->data; /* [n] */
  double acc = 0.0;
  TG_PAR_FOR(n > LOSS_PAR_MIN, reduction(+ : acc),
  for (int64_t i = 0; i < n; i++) {
    double d = (double)p[i] - t[i];
    acc += d * d;
  });
  *(float *)a->out->data = loss_mean(acc, n); /* [] */
  return TG_OK;
}

tg_status tg_cpu_mse_bwd(const tg_kernel_args *a) {
  int64_t n = tg_numel(a->in[0]);
  const float *p = (const float *)a->in[0]->data; /* [n] */
  const float *t = (const float *)a->in[1]->data; /* [n] */
  float *dp = a->in_grad[0], *dt = a->in_grad[1]; /* [n] each, may be NULL */
  if (n == 0 || (!dp && !dt)) return TG_OK;
  float s = (float)(2.0 * a->out_grad[0] / (double)n);
  TG_PAR_FOR(n > LOSS_PAR_MIN, ,
  for (int64_t i = 0; i < n; i++) {
    float g = s * (p[i] - t[i]);
    if (dp) dp[i] += g;
    if (dt) dt[i] -= g;
  });
  return TG_OK;
}

/* ---- huber: mean(0.5 d^2 if |d| < delta else delta (|d| - 0.5 delta)), d = p - t ---- */

tg_status tg_cpu_huber_fwd(const tg_kernel_args *a) {
  int64_t n = tg_numel(a->in[0]);
  const float *p = (const float *)a->in[0]->data; /* [n] */
  const float *t = (const float *)a->in[1]->data; /* [n] */
  double delta = a->attr->f[0];
  double acc = 0.0;
  TG_PAR_FOR(n > LOSS_PAR_MIN, reduction(+ : acc),
  for (int64_t i = 0; i < n; i++) {
    double d = (double)p[i] - t[i], ad = fabs(d);
    acc += ad < delta ? 0.5 * d * d : delta * (ad - 0.5 * delta);
  });
  *(float *)a->out->data = loss_mean(acc, n); /* [] */
  return TG_OK;
}

/* d loss / d p = clamp(d, -delta, delta) / n. */
tg_status tg_cpu_huber_bwd(const tg_kernel_args *a) {
  int64_t n = tg_numel(a->in[0]);
  const float *p = (const float *)a->in[0]->data; /* [n] */
  const float *t = (const float *)a->in[1]->data; /* [n] */
  float *dp = a->in_grad[0], *dt = a->in_grad[1]; /* [n] each, may be NULL */
  if (n == 0 || (!dp && !dt)) return TG_OK;
  float delta = a->attr->f[0];
  float s = (float)(a->out_grad[0] / (double)n);
  TG_PAR_FOR(n > LOSS_PAR_MIN, ,
  for (int64_t i = 0; i < n; i++) {
    float d = p[i] - t[i];
    float c = d < -delta ? -delta : (d > delta ? delta : d);
    if (dp) dp[i] += s * c;
    if (dt) dt[i] -= s * c;
  });
  return TG_OK;
}

/* ---- pinball: mean over elements and quantiles of max(q e, (q - 1) e), e = t - p[..., k] ---- */

tg_status tg_cpu_pinball_fwd(const tg_kernel_args *a) {
  int64_t m = tg_numel(a->in[1]);
  int64_t Q = a->attr->i[0];
  const float *p = (const float *)a->in[0]->data; /* [m, Q] */
  const float *t = (const float *)a->in[1]->data; /* [m] */
  const float *q = a->attr->f;                    /* [Q] */
  double acc = 0.0;
  TG_PAR_FOR(m * Q > LOSS_PAR_MIN, reduction(+ : acc),
  for (int64_t i = 0; i < m; i++) {
    for (int64_t k = 0; k < Q; k++) {
      double e = (double)t[i] - p[i * Q + k], qk = q[k];
      double l1 = qk * e, l2 = (qk - 1.0) * e;
      acc += l1 > l2 ? l1 : l2;
    }
  });
  *(float *)a->out->data = loss_mean(acc, m * Q); /* [] */
  return TG_OK;
}

/* d loss / d p[i, k] = (e > 0 ? -q : 1 - q) / (m Q); d loss / d t[i] = -sum_k of that. */
tg_status tg_cpu_pinball_bwd(const tg_kernel_args *a) {
  int64_t m = tg_numel(a->in[1]);
  int64_t Q = a->attr->i[0];
  const float *p = (const float *)a->in[0]->data; /* [m, Q] */
  const float *t = (const float *)a->in[1]->data; /* [m] */
  const float *q = a->attr->f;                    /* [Q] */
  float *dp = a->in_grad[0];                      /* [m, Q] or NULL */
  float *dt = a->in_grad[1];                      /* [m] or NULL */
  if (m * Q == 0 || (!dp && !dt)) return TG_OK;
  float s = (float)(a->out_grad[0] / (double)(m * Q));
  TG_PAR_FOR(m * Q > LOSS_PAR_MIN, ,
  for (int64_t i = 0; i < m; i++) {
    float st = 0.0f;
    for (int64_t k = 0; k < Q; k++) {
      float e = t[i] - p[i * Q + k];
      float g = s * (e > 0.0f ? -q[k] : 1.0f - q[k]);
      if (dp) dp[i * Q + k] += g;
      st -= g;
    }
    if (dt) dt[i] += st;
  });
  return TG_OK;
}

/* ---- softmax cross-entropy: mean over rows of logsumexp(x) - x[label] ---- */

static int64_t xent_label(const tg_tensor *labels, int64_t r) {
  return labels->dtype == TG_I32 ? ((const int32_t *)labels->data)[r]
                                 : ((const int64_t *)labels->data)[r];
}

/* Every label in [0, C), or an error naming the node, the row and the value. */
static tg_status xent_check_labels(const tg_kernel_args *a, int64_t N, int64_t C) {
  for (int64_t r = 0; r < N; r++) {
    int64_t l = xent_label(a->in[1], r);
    if (l < 0 || l >= C) return tg_xent_bad_label(a, r, l);
  }
  return TG_OK;
}

tg_status tg_cpu_softmax_xent_fwd(const tg_kernel_args *a) {
  int64_t N = a->in[0]->shape[0], C = a->in[0]->shape[1];
  const float *x = (const float *)a->in[0]->data; /* [N, C] */
  tg_status st = xent_check_labels(a, N, C);
  if (st != TG_OK) return st;
  double acc = 0.0;
  TG_PAR_FOR(N * C > LOSS_PAR_MIN, reduction(+ : acc),
  for (int64_t r = 0; r < N; r++) {
    const float *xr = x + r * C;
    float m = tg_row_max(xr, C);
    acc += (double)m + log(tg_row_exp_sum(xr, C, m)) - xr[xent_label(a->in[1], r)];
  });
  *(float *)a->out->data = loss_mean(acc, N); /* [] */
  return TG_OK;
}

/* d loss / d x[r, j] = (softmax(x[r])[j] - [j == label[r]]) / N. */
tg_status tg_cpu_softmax_xent_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [N, C] */
  int64_t N = a->in[0]->shape[0], C = a->in[0]->shape[1];
  if (!dx || N == 0) return TG_OK;
  const float *x = (const float *)a->in[0]->data; /* [N, C] */
  tg_status st = xent_check_labels(a, N, C);
  if (st != TG_OK) return st;
  float g = (float)(a->out_grad[0] / (double)N);
  TG_PAR_FOR(N * C > LOSS_PAR_MIN, ,
  for (int64_t r = 0; r < N; r++) {
    const float *xr = x + r * C;
    float m = tg_row_max(xr, C);
    float inv = (float)(1.0 / tg_row_exp_sum(xr, C, m));
    float *dr = dx + r * C;
    for (int64_t j = 0; j < C; j++) dr[j] += g * expf(xr[j] - m) * inv;
    dr[xent_label(a->in[1], r)] -= g;
  });
  return TG_OK;
}
