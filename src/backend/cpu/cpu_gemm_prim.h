/* GEMMs planned once for their shapes: oneDNN matmul primitives created at plan time, then only executed. */
#ifndef TG_CPU_GEMM_PRIM_H
#define TG_CPU_GEMM_PRIM_H

#include <stdint.h>
#include "tickgrad/status.h"

/* C[i] (m x n) = A[i] (m x k) B[i] (k x n) (+ bias) (+ C), i < batch; each operand by element strides over
 * (batch, row, column), so transposed and interleaved layouts need no copy. */
typedef struct tg_gemm_shape {
  int64_t batch, m, n, k;
  int64_t a_st[3], b_st[3], c_st[3]; /* b_st[0] = 0: one B for every batch */
  int bias;                          /* 1: bias [batch or 1, 1, n] added, strides bias_st (bias_st[0] = 0: shared) */
  int64_t bias_st[3];
  int accumulate; /* 1: C += A B (+ bias); 0: C = A B (+ bias) */
  int bf16;       /* 1: A and B are bf16 (C and the bias f32), 0: everything f32 */
  int brgemm_only; /* 1: only oneDNN's brgemm kernels (AVX-512, AMX), which work in the primitive's scratchpad; its
                      AVX2 gemm:jit allocates packing buffers on every call and lost to OpenBLAS (BENCHMARKS.md) */
} tg_gemm_shape;

typedef struct tg_gemm_prim tg_gemm_prim;

/* The primitive for s; NULL (not an error) when oneDNN is not in this build, or it has only a slow reference
 * implementation for s, or no implementation (bf16 on a CPU without AVX-512). Allocates everything it will use. */
tg_gemm_prim *tg_gemm_prim_new(const tg_gemm_shape *s);
void tg_gemm_prim_free(tg_gemm_prim *p); /* NULL: nothing */
/* One product on the calling thread's OpenMP threads; allocates nothing. */
tg_status tg_gemm_prim_run(tg_gemm_prim *p, const void *A, const void *B, const float *bias, float *C,
                           const char *where);

/* "oneDNN 2.6.3" (the library found at run time), or "" when this build has no oneDNN. */
const char *tg_gemm_prim_library(void);
/* 1 when oneDNN has a native bf16 matmul on this CPU (brgemm on AVX512-BF16 or AMX), else 0 (also on AVX-512 without
 * BF16, where oneDNN only emulates bf16). */
int tg_gemm_prim_has_bf16(void);
/* 1 when oneDNN has brgemm f32 matmul kernels (AVX-512 and up) on this CPU, else 0. */
int tg_gemm_prim_has_brgemm(void);
/* 1 when oneDNN's bf16 matmuls run on AMX tiles on this CPU (its effective ISA, which ONEDNN_MAX_CPU_ISA caps),
 * else 0. */
int tg_gemm_prim_has_amx(void);

#endif
