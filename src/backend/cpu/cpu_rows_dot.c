/* Few-row products as dot products in 16 fixed lanes (one AVX-512 register, two AVX2 ones, four SSE ones). */
#include "backend/cpu/cpu_rows_dot.h"

#include <string.h>
#include "backend/cpu/cpu_simd.h"

/* the vector helpers are always inlined into each clone, so the ABI of a vector argument never applies */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define LANES 16
#define OUTS 4 /* outputs per pass over x: 4 accumulators, x loaded once for them */

typedef float v16 __attribute__((vector_size(LANES * sizeof(float))));
typedef uint16_t v16h __attribute__((vector_size(LANES * sizeof(uint16_t))));
typedef uint32_t v16u __attribute__((vector_size(LANES * sizeof(uint32_t))));

TG_CPU_INLINE v16 load(const float *p) {
  v16 v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* 16 bf16 values widened to f32 (exact: a bf16 is the top half of an f32). */
TG_CPU_INLINE v16 load_bf16(const uint16_t *p) {
  v16h h;
  memcpy(&h, p, sizeof h);
  v16u u = __builtin_convertvector(h, v16u) << 16;
  v16 v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* The first n < 16 values of a row, the other lanes 0 (so they add +0 * 0 to their lane). */
TG_CPU_INLINE v16 load_part(const float *p, int64_t n) {
  float t[LANES] = {0};
  memcpy(t, p, (size_t)n * sizeof *p);
  return load(t);
}

TG_CPU_INLINE v16 load_part_bf16(const uint16_t *h, int64_t n) {
  uint16_t t[LANES] = {0};
  memcpy(t, h, (size_t)n * sizeof *h);
  return load_bf16(t);
}

/* The lanes added pairwise: lane j + lane j + 8, then + 4, + 2, + 1. */
TG_CPU_INLINE float lanes_sum(v16 v) {
  float l[LANES];
  memcpy(l, &v, sizeof l);
  for (int h = LANES / 2; h > 0; h /= 2)
    for (int j = 0; j < h; j++) l[j] += l[j + h];
  return l[0];
}

/* y[o + q] for q < nq (a literal at each call, so the loops over q unroll into registers): x [nin] against rows o..o+nq
 * of w (f32, or bf16 when bf16 is 1). */
TG_CPU_INLINE void dot_outs(int nq, int bf16, int64_t nin, const float *x, const float *w, const uint16_t *wh,
                            int64_t o, const float *bias, float *y) {
  v16 acc[OUTS] = {{0}};
  int64_t full = nin / LANES * LANES;
  for (int64_t i = 0; i < full; i += LANES) {
    v16 xv = load(x + i);
    for (int q = 0; q < nq; q++) {
      v16 p = xv * (bf16 ? load_bf16(wh + (o + q) * nin + i) : load(w + (o + q) * nin + i));
      acc[q] += p; /* a statement of its own: no compiler fuses it with the product into an FMA */
    }
  }
  if (full < nin) {
    v16 xv = load_part(x + full, nin - full);
    for (int q = 0; q < nq; q++) {
      v16 p = xv * (bf16 ? load_part_bf16(wh + (o + q) * nin + full, nin - full)
                         : load_part(w + (o + q) * nin + full, nin - full));
      acc[q] += p;
    }
  }
  for (int q = 0; q < nq; q++) y[o + q] = lanes_sum(acc[q]) + (bias ? bias[o + q] : 0.0f);
}

TG_CPU_INLINE void rows_dot(int bf16, int64_t rows, int64_t nin, int64_t nout, const float *x, const float *w,
                            const uint16_t *wh, const float *bias, float *y) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * nin; /* [nin] */
    float *yr = y + r * nout;      /* [nout] */
    int64_t o = 0;
    for (; o + OUTS <= nout; o += OUTS) dot_outs(OUTS, bf16, nin, xr, w, wh, o, bias, yr);
    for (; o < nout; o++) dot_outs(1, bf16, nin, xr, w, wh, o, bias, yr);
  }
}

TG_CPU_CLONES static void rows_dot_f32(int64_t rows, int64_t nin, int64_t nout, const float *x, const float *w,
                                       const float *bias, float *y) {
  rows_dot(0, rows, nin, nout, x, w, NULL, bias, y);
}

TG_CPU_CLONES static void rows_dot_bf16(int64_t rows, int64_t nin, int64_t nout, const float *x, const uint16_t *wh,
                                        const float *bias, float *y) {
  rows_dot(1, rows, nin, nout, x, NULL, wh, bias, y);
}

void tg_cpu_rows_dot(int64_t rows, int64_t nin, int64_t nout, const float *x, const float *w, const uint16_t *w_bf16,
                     const float *bias, float *y) {
  if (w_bf16) rows_dot_bf16(rows, nin, nout, x, w_bf16, bias, y);
  else rows_dot_f32(rows, nin, nout, x, w, bias, y);
}
