/* Row helpers shared by the last-dim kernels: the row maximum and its ordered keys, the shifted exp-sum, layernorm's
 * row stats, a lane dot. */
#ifndef TG_CPU_ROWS_H
#define TG_CPU_ROWS_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "backend/cpu/cpu_simd.h"

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

/* An int32 that orders as the float v does (-0 below +0): a row maximum over these keys vectorises, where a float one
 * does not without finite-math assumptions (only a NaN or the sign of a zero maximum could differ). */
TG_CPU_INLINE int32_t tg_float_key(float v) {
  int32_t k;
  memcpy(&k, &v, sizeof k);
  return k ^ (int32_t)((uint32_t)(k >> 31) >> 1);
}

TG_CPU_INLINE float tg_float_unkey(int32_t k) {
  k ^= (int32_t)((uint32_t)(k >> 31) >> 1);
  float v;
  memcpy(&v, &k, sizeof v);
  return v;
}

/* Layernorm row sums run in TG_ROW_LANES partial double sums, added pairwise at the end: the loops
 * vectorise and every build (and SIMD clone) adds in the same order. */
#define TG_ROW_LANES 8

static inline double tg_row_lanes_total(const double *acc) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* a . b over n elements, a read at stride sa: element p goes to float lane p % TG_ROW_LANES, in order, and the lanes
 * are added 0 to 7, so the vector loop (sa == 1) and the scalar one give the same bits in every clone. */
TG_CPU_INLINE float tg_lane_dot(const float *restrict a, int64_t sa, const float *restrict b, int64_t n) {
  float lane[TG_ROW_LANES] = {0};
  int64_t p = 0;
  if (sa == 1)
    for (; p + TG_ROW_LANES <= n; p += TG_ROW_LANES)
      for (int l = 0; l < TG_ROW_LANES; l++) lane[l] += a[p + l] * b[p + l];
  for (; p < n; p++) lane[p % TG_ROW_LANES] += a[p * sa] * b[p];
  float sum = 0.0f;
  for (int l = 0; l < TG_ROW_LANES; l++) sum += lane[l];
  return sum;
}

/* 8 floats from p as 8 doubles. */
#if TG_CPU_VEC
#define TG_LOAD_D8(p) __extension__({ tg_vf8 v_; memcpy(&v_, (p), sizeof v_); __builtin_convertvector(v_, tg_vd8); })
#endif

/* Rows per call of the blocked row helpers below. A row's lane sums are chains of dependent additions; interleaving
 * TG_ROW_BLOCK rows lets the chains overlap, which for short rows (D = 64: eight additions per lane) is most of the
 * speed. A block of fewer rows repeats its last row pointer (the extra results are dropped). */
#define TG_ROW_BLOCK 4

/* The row pointers of rows r0 .. r0 + n - 1 of base [.., ld] into p[TG_ROW_BLOCK], the last repeated. */
static inline void tg_row_ptrs(const float *base, int64_t ld, int64_t r0, int n, const float **p) {
  for (int i = 0; i < TG_ROW_BLOCK; i++) p[i] = base + (r0 + (i < n ? i : n - 1)) * ld;
}

/* Per row x[i] [D] of a block: the mean and 1/sqrt(biased variance + eps), in double, lane-wise: element j of the
 * first D - D % 8 goes to lane j % 8, in order, the rest to lanes 0, 1, ... (the vector and the scalar loops add in
 * the same order, so every clone gives the same bits). */
TG_CPU_INLINE void tg_rows_ln_stats(const float *const *x, int64_t D, double eps, double *mean, double *rstd) {
  double acc[TG_ROW_BLOCK][TG_ROW_LANES], mu[TG_ROW_BLOCK];
  int64_t j0 = D - D % TG_ROW_LANES;
#if TG_CPU_VEC
  {
    tg_vd8 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
    for (int64_t j = 0; j < j0; j += TG_ROW_LANES) {
      s0 += TG_LOAD_D8(x[0] + j);
      s1 += TG_LOAD_D8(x[1] + j);
      s2 += TG_LOAD_D8(x[2] + j);
      s3 += TG_LOAD_D8(x[3] + j);
    }
    memcpy(acc[0], &s0, sizeof acc[0]);
    memcpy(acc[1], &s1, sizeof acc[1]);
    memcpy(acc[2], &s2, sizeof acc[2]);
    memcpy(acc[3], &s3, sizeof acc[3]);
  }
#else
  memset(acc, 0, sizeof acc);
  for (int i = 0; i < TG_ROW_BLOCK; i++)
    for (int64_t j = 0; j < j0; j += TG_ROW_LANES)
      for (int k = 0; k < TG_ROW_LANES; k++) acc[i][k] += x[i][j + k];
#endif
  for (int i = 0; i < TG_ROW_BLOCK; i++) {
    for (int64_t j = j0; j < D; j++) acc[i][j - j0] += x[i][j];
    mu[i] = tg_row_lanes_total(acc[i]) / (double)D;
  }
#if TG_CPU_VEC
  {
    tg_vd8 q0 = {0}, q1 = {0}, q2 = {0}, q3 = {0};
    for (int64_t j = 0; j < j0; j += TG_ROW_LANES) {
      tg_vd8 d0 = TG_LOAD_D8(x[0] + j) - mu[0], d1 = TG_LOAD_D8(x[1] + j) - mu[1];
      tg_vd8 d2 = TG_LOAD_D8(x[2] + j) - mu[2], d3 = TG_LOAD_D8(x[3] + j) - mu[3];
      q0 += d0 * d0;
      q1 += d1 * d1;
      q2 += d2 * d2;
      q3 += d3 * d3;
    }
    memcpy(acc[0], &q0, sizeof acc[0]);
    memcpy(acc[1], &q1, sizeof acc[1]);
    memcpy(acc[2], &q2, sizeof acc[2]);
    memcpy(acc[3], &q3, sizeof acc[3]);
  }
#else
  memset(acc, 0, sizeof acc);
  for (int i = 0; i < TG_ROW_BLOCK; i++)
    for (int64_t j = 0; j < j0; j += TG_ROW_LANES)
      for (int k = 0; k < TG_ROW_LANES; k++) {
        double d = x[i][j + k] - mu[i];
        acc[i][k] += d * d;
      }
#endif
  for (int i = 0; i < TG_ROW_BLOCK; i++) {
    for (int64_t j = j0; j < D; j++) {
      double d = x[i][j] - mu[i];
      acc[i][j - j0] += d * d;
    }
    mean[i] = mu[i];
    rstd[i] = 1.0 / sqrt(tg_row_lanes_total(acc[i]) / (double)D + eps);
  }
}

/* The layernorm backward's two means of each row of a block, lane-wise as tg_rows_ln_stats: m1 = mean(gy),
 * m2 = mean(gy * xhat) with gy = dy * g (dy where g is NULL; g NULL for every row or none) and
 * xhat = (x - fm) * fr, each rounded to float as the elementwise loops compute them, the products and sums in
 * double. */
TG_CPU_INLINE void tg_rows_ln_bwd_means(const float *const *dy, const float *const *g, const float *const *x,
                                        int64_t D, const float *fm, const float *fr, float *m1, float *m2) {
  double a1[TG_ROW_BLOCK][TG_ROW_LANES], a2[TG_ROW_BLOCK][TG_ROW_LANES];
  int64_t j0 = D - D % TG_ROW_LANES;
  int has_g = g[0] != NULL;
#if TG_CPU_VEC
  {
    tg_vd8 s[TG_ROW_BLOCK] = {{0}}, q[TG_ROW_BLOCK] = {{0}};
    for (int64_t j = 0; j < j0; j += TG_ROW_LANES)
      for (int i = 0; i < TG_ROW_BLOCK; i++) {
        tg_vf8 gy, xv, gv;
        memcpy(&gy, dy[i] + j, sizeof gy);
        memcpy(&xv, x[i] + j, sizeof xv);
        if (has_g) {
          memcpy(&gv, g[i] + j, sizeof gv);
          gy = gy * gv;
        }
        tg_vf8 xh = (xv - fm[i]) * fr[i];
        tg_vd8 gd = __builtin_convertvector(gy, tg_vd8);
        s[i] += gd;
        q[i] += gd * __builtin_convertvector(xh, tg_vd8);
      }
    memcpy(a1, s, sizeof a1);
    memcpy(a2, q, sizeof a2);
  }
#else
  memset(a1, 0, sizeof a1);
  memset(a2, 0, sizeof a2);
  for (int i = 0; i < TG_ROW_BLOCK; i++)
    for (int64_t j = 0; j < j0; j += TG_ROW_LANES)
      for (int k = 0; k < TG_ROW_LANES; k++) {
        float gy = has_g ? dy[i][j + k] * g[i][j + k] : dy[i][j + k];
        a1[i][k] += gy;
        a2[i][k] += (double)gy * ((x[i][j + k] - fm[i]) * fr[i]);
      }
#endif
  for (int i = 0; i < TG_ROW_BLOCK; i++) {
    for (int64_t j = j0; j < D; j++) {
      float gy = has_g ? dy[i][j] * g[i][j] : dy[i][j];
      a1[i][j - j0] += gy;
      a2[i][j - j0] += (double)gy * ((x[i][j] - fm[i]) * fr[i]);
    }
    m1[i] = (float)(tg_row_lanes_total(a1[i]) / (double)D);
    m2[i] = (float)(tg_row_lanes_total(a2[i]) / (double)D);
  }
}

#endif
