/* Row helpers shared by the softmax-family kernels: the row maximum and the shifted exp-sum. */
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

#endif
