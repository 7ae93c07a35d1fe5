/* Row helpers shared by the CUDA kernels: fixed-order warp/block reductions, row max and exp-sum, and the warp-or-block row launch. */
#ifndef TG_CUDA_ROWS_CUH
#define TG_CUDA_ROWS_CUH

#include <math.h>
#include "backend/cuda/cuda_internal.h"

/* Row kernels run TG_ROW_THREADS threads per block: one warp per row while rows are at most
 * TG_WARP_ROW_MAX long (TG_ROW_THREADS / 32 rows per block), else the whole block per row. */
#define TG_ROW_THREADS 256
#define TG_WARP_ROW_MAX 1024
#define TG_MAX_ROW_BLOCKS 65536 /* grid cap; the row loop covers the rest */
#define TG_FULL_MASK 0xffffffffu

static_assert(TG_ROW_THREADS % 32 == 0, "whole warps");

/* ---- reductions (device) ---- */

struct SumOp {
  template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct MaxOp { /* as tg_row_max: a NaN b never wins */
  __device__ float operator()(float a, float b) const { return b > a ? b : a; }
};

/* op over v of the G threads of one row (G = 32: a warp; G = the block's thread count: the block),
 * in a fixed order; every thread of the row gets the same value. */
template <int G, typename T, typename Op>
static __device__ inline T group_reduce(T v, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(TG_FULL_MASK, v, o));
  if constexpr (G == 32) {
    return __shfl_sync(TG_FULL_MASK, v, 0);
  } else {
    __shared__ T warp_v[G / 32]; /* [warps] */
    if (threadIdx.x % 32 == 0) warp_v[threadIdx.x / 32] = v;
    __syncthreads();
    T r = warp_v[0];
    for (int w = 1; w < G / 32; w++) r = op(r, warp_v[w]);
    __syncthreads(); /* warp_v is reused by the next reduction */
    return r;
  }
}

/* ---- rows of G threads each (G = 32 or TG_ROW_THREADS; device) ---- */

/* This thread's first row and the step to its next. */
template <int G> static __device__ inline int64_t first_row() {
  return (int64_t)blockIdx.x * (TG_ROW_THREADS / G) + threadIdx.x / G;
}
template <int G> static __device__ inline int64_t row_step() {
  return (int64_t)gridDim.x * (TG_ROW_THREADS / G);
}

/* tg_row_max of xr[0..D): NaN exactly when xr[0] is NaN, else the largest non-NaN value. */
template <int G>
static __device__ inline float row_max(const float *xr, int64_t D, int lane) {
  float m = -INFINITY;
  for (int64_t j = lane; j < D; j += G) m = MaxOp()(m, xr[j]);
  m = group_reduce<G>(m, MaxOp());
  return isnan(xr[0]) ? xr[0] : m;
}

/* tg_row_exp_sum of xr[0..D): the sum of exp(xr[j] - m) in double, every thread of the row. */
template <int G>
static __device__ inline double row_exp_sum(const float *xr, int64_t D, float m, int lane) {
  double s = 0.0;
  for (int64_t j = lane; j < D; j += G) s += expf(xr[j] - m);
  return group_reduce<G>(s, SumOp());
}

/* ---- launch (host) ---- */

template <typename T> struct same_type { using type = T; };

/* warp(args...) with a warp per row when rows of D are short, else block(args...) with a block
 * per row; nothing for no rows. */
template <typename... P>
static inline tg_status launch_rows(void (*warp)(P...), void (*block)(P...), const char *kernel,
                                    const char *node, cudaStream_t s, int64_t rows, int64_t D,
                                    typename same_type<P>::type... args) {
  if (rows == 0) return TG_OK;
  int64_t per_block = D <= TG_WARP_ROW_MAX ? TG_ROW_THREADS / 32 : 1;
  int64_t nb = (rows + per_block - 1) / per_block;
  if (nb > TG_MAX_ROW_BLOCKS) nb = TG_MAX_ROW_BLOCKS;
  if (per_block > 1)
    warp<<<(unsigned)nb, TG_ROW_THREADS, 0, s>>>(args...);
  else
    block<<<(unsigned)nb, TG_ROW_THREADS, 0, s>>>(args...);
  return tg_cuda_launched(kernel, node);
}

#endif
