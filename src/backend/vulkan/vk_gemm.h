/* The tiled GEMM (shaders/gemm.comp) and the column sums (shaders/col_sums.comp) as host calls, for the GEMM ops'
 * kernels (vk_k_gemm.c) and for kernels that multiply matrices along the way (vk_k_lstm.c). */
#ifndef TG_VK_GEMM_H
#define TG_VK_GEMM_H

#include <stdint.h>
#include "graph/backend.h"

/* One strided batched product: C[i] (m x n) = op(A)[i] (m x k) op(B)[i] (k x n) (+ bias [n] at i * bias_b) (+ C[i]),
 * each operand by element strides over (batch, row, column). */
typedef struct tg_vk_gemm {
  int64_t batch, m, n, k;
  const float *a, *b, *bias;
  float *c;
  int64_t a_st[3], b_st[3], c_st[3], bias_b;
  int accumulate;
} tg_vk_gemm;

/* Runs g on the device of a's output (a K longer than one dispatch covers in pieces, each adding into C); errors name
 * a's node. */
tg_status tg_vk_gemm_run(const tg_kernel_args *a, const tg_vk_gemm *g);

/* s [ncol] += the column sums of x [rows, ncol], on the device of a's output (many rows in pieces, each adding into s). */
tg_status tg_vk_col_sums(const tg_kernel_args *a, const float *x, float *s, int64_t rows, int64_t ncol);

#endif
