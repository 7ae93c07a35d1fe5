/* Branch-free float exp, expm1, logistic and tanh that vectorise inside loops (no libm calls). */
#ifndef TG_CPU_VMATH_H
#define TG_CPU_VMATH_H

#include <stdint.h>
#include <string.h>

/* cond ? a : b by bit masks: both sides are always computed, so a loop stays branch-free (a float
 * ?: whose side holds arithmetic would be a branch under the default trapping-math rules). */
static inline float tg_vsel(int cond, float a, float b) {
  uint32_t m = 0u - (uint32_t)(cond != 0), ua, ub;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  uint32_t r = (ua & m) | (ub & ~m);
  float f;
  memcpy(&f, &r, sizeof f);
  return f;
}

/* Where a backward kernel adds into an input gradient element g: +0 when the graph left that gradient unzeroed
 * (fresh: bit k of tg_kernel_args.grad_fresh), else g. Chosen bit-wise, so whatever garbage g holds never enters an
 * operation, and base + v has the bits (+0) + v of a zeroed buffer. */
static inline float tg_grad_base(int fresh, float g) { return tg_vsel(fresh, 0.0f, g); }

/* exp of xc, already clamped to [-104, 88.7] or NaN, by Cephes' expf polynomial after Cody-Waite reduction
 * x = n ln2 + r, |r| <= ln2 / 2. nan_in: x was NaN (n is taken as 0; the polynomial is NaN already). */
static inline float tg_vexpf_clamped(float xc, int nan_in) {
  const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
  float t = xc * 1.44269504088896341f + shifter;
  float n = t - shifter; /* round(x / ln2) */
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  /* n as an integer from t's bits (t stays in [2^23, 2^24), one unit per ulp), 0 for a NaN (p is NaN already); 2^n in
   * two factors so that n down to -150 (subnormal results) and up to 128 stay exact: p 2^n1 is exact, the second
   * product rounds once, so any split gives the same bits (n1 = floor(n / 2); >> is arithmetic in GCC and Clang) */
  uint32_t tb;
  memcpy(&tb, &t, sizeof tb);
  int32_t ni = (int32_t)(tb - 0x4B400000u);
  ni = nan_in ? 0 : ni;
  int32_t n1 = ni >> 1, n2 = ni - n1;
  uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  return p * s1 * s2;
}

/* Relative error within 2 ulp of expf over the float range. Inputs are clamped to [-104, 88.7]: above, the result is
 * ~FLT_MAX instead of inf; below, +0 or a subnormal as expf gives. NaN passes. Plain multiplies and adds only (ISO C
 * mode: no contraction), so every SIMD clone gives the same bits. */
static inline float tg_vexpf(float x) {
  const float hi = 88.7f, lo = -104.0f;
  float xc = x < hi ? x : hi; /* plain selects of values (min and max instructions); a NaN becomes hi here ... */
  xc = xc > lo ? xc : lo;
  xc = tg_vsel(x != x, x, xc); /* ... and is put back */
  return tg_vexpf_clamped(xc, x != x);
}

/* tg_vexpf for x <= 0 or NaN only (the Gaussian exp(-x^2 / 2) of the GELU): the same bits for every x <= 0 and NaN for
 * NaN, with neither the upper clamp nor tg_vexpf's NaN selects (a NaN stays NaN through the reduction, so the
 * polynomial, and the product, is NaN whatever the exponent bits). */
static inline float tg_vexpf_nonpos(float x) {
  return tg_vexpf_clamped(x < -104.0f ? -104.0f : x, 0); /* a NaN passes the clamp */
}

/* exp(x) - 1 with relative error within a few ulp: a degree-8 Taylor polynomial for |x| <= 0.5
 * (remainder below 2e-9 relative), tg_vexpf(x) - 1 elsewhere (where |exp(x) - 1| >= 0.39). */
static inline float tg_vexpm1f(float x) {
  float p = 2.48015873e-5f; /* 1/8! */
  p = p * x + 1.98412698e-4f; /* 1/7! */
  p = p * x + 1.38888889e-3f; /* 1/6! */
  p = p * x + 8.33333333e-3f; /* 1/5! */
  p = p * x + 4.16666667e-2f; /* 1/4! */
  p = p * x + 1.66666667e-1f; /* 1/3! */
  p = p * x + 0.5f;
  float small = p * (x * x) + x;
  float big = tg_vexpf(x) - 1.0f;
  return tg_vsel((x <= 0.5f) & (x >= -0.5f), small, big);
}

/* Overflow-free logistic: exp of a non-positive argument only. */
static inline float tg_vsigmoid(float x) {
  float ax = tg_vsel(x < 0.0f, -x, x);
  float e = tg_vexpf(-ax);
  float s = 1.0f / (1.0f + e);
  return tg_vsel(x >= 0.0f, s, e * s);
}

/* tanh with relative error within a few ulp: -expm1(-2|x|) / (2 + expm1(-2|x|)) with the sign of x
 * (exactly +-1 from |x| ~ 9 on, +-0 at +-0, NaN passes). */
static inline float tg_vtanhf(float x) {
  float ax = tg_vsel(x < 0.0f, -x, x);
  float em = tg_vexpm1f(-2.0f * ax);
  float t = -em / (2.0f + em);
  return tg_vsel(x < 0.0f, -t, tg_vsel(x == 0.0f, x, t));
}

/* The standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2 for the exact (erf) GELU, given e = exp(-x^2 / 2) (the caller
 * computes it once for Phi and for the density e / sqrt(2 pi)). erfc(z) = t P(t) exp(-z^2) with z = |x| / sqrt 2 and
 * t = 1 / (1 + 0.3275911 z), Abramowitz and Stegun 7.1.26: |error| below 1.5e-7 (absolute), the form PyTorch's
 * vectorised CPU erf uses; Phi = 1 - erfc(z) / 2 for x >= 0, erfc(z) / 2 below. Branch-free; NaN passes. */
static inline float tg_vnormcdf_e(float x, float e) {
  float z = tg_vsel(x < 0.0f, -x, x) * 0.707106781186547524f;
  float t = 1.0f / (1.0f + 0.3275911f * z);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  float half_erfc = 0.5f * (t * p) * e;
  return tg_vsel(x < 0.0f, half_erfc, 1.0f - half_erfc);
}

#endif
