/* Row helpers shared by the last-dim kernels: the row maximum, the shifted exp-sum, layernorm's row stats. */
#ifndef TG_CPU_ROWS_H
#define TG_CPU_ROWS_H

#include <math.h>
#include <stdint.h>

/* max of x[0..n), n >= 1 */
static inline float tg_row_max(const float *x, int64_t n) {
  float m = x[0];
  for (int64_t j = 1; j < n; j++) m = x[j] > m ? x[j] : m;
  return m;
}

/* sum of exp(x[j] - m) over x[0..n), accumulated in double */
static inline double tg_row_exp_sum(const float *x, int64_t n, float m) {
  double s = 0.0;
  for (int64_t j = 0; j < n; j++) s += expf(x[j] - m);
  return s;
}

/* Layernorm row sums run in TG_ROW_LANES partial double sums, added pairwise at the end: the loops
 * vectorise and every build (and SIMD clone) adds in the same order. */
#define TG_ROW_LANES 8

static inline double tg_row_lanes_total(const double *acc) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* Mean and 1/sqrt(biased variance + eps) of x[0..D), in double, lane-wise. */
static inline void tg_row_ln_stats(const float *x, int64_t D, double eps, double *mean, double *rstd) {
  double acc[TG_ROW_LANES] = {0};
  int64_t j0 = D - D % TG_ROW_LANES;
  for (int64_t j = 0; j < j0; j += TG_ROW_LANES)
    for (int k = 0; k < TG_ROW_LANES; k++) acc[k] += x[j + k];
  for (int64_t j = j0; j < D; j++) acc[j - j0] += x[j];
  double mu = tg_row_lanes_total(acc) / (double)D;
  double vacc[TG_ROW_LANES] = {0};
  for (int64_t j = 0; j < j0; j += TG_ROW_LANES)
    for (int k = 0; k < TG_ROW_LANES; k++) {
      double d = x[j + k] - mu;
      vacc[k] += d * d;
    }
  for (int64_t j = j0; j < D; j++) {
    double d = x[j] - mu;
    vacc[j - j0] += d * d;
  }
  *mean = mu;
  *rstd = 1.0 / sqrt(tg_row_lanes_total(vacc) / (double)D + eps);
}

#endif
