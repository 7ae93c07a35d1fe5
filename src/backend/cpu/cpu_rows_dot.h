/* Few-row products y = x W^T (+ b) as dot products in fixed lanes: batch-1 inference without a GEMM library's call cost. */
#ifndef TG_CPU_ROWS_DOT_H
#define TG_CPU_ROWS_DOT_H

#include <stdint.h>

/* A linear node of at most this many rows runs on tg_cpu_rows_dot by default (TICKGRAD_GEMM=auto): at batch 1 the
 * libraries' per-call cost is most of the time (oneDNN's AVX-512 brgemm took 12.7 us where this takes 2). */
#define TG_ROWS_DOT_MAX 4

/* y[r, o] = bias[o] + sum_i x[r, i] w[o, i] for r < rows, o < nout: x [rows, nin] f32, w [nout, nin] f32 or, when
 * w_bf16 is not NULL, that bf16 matrix (the store's mirror, read as it is) in place of w; bias [nout] or NULL; y [rows,
 * nout]. Each dot product adds its terms in 16 lanes (term i in lane i mod 16), then the lanes pairwise in a fixed
 * tree: the same bits on every ISA and thread count. */
void tg_cpu_rows_dot(int64_t rows, int64_t nin, int64_t nout, const float *x, const float *w, const uint16_t *w_bf16,
                     const float *bias, float *y);

#endif
