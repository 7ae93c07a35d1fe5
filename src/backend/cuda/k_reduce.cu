/* CUDA kernels for the reductions (sum, mean, sum/mean/max/argmax over the last dim) and dropout. */
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_internal.h"
#include "base/philox.h"

#define WARP 32
#define ROWS_PER_BLOCK (TG_CUDA_THREADS / WARP) /* the *_last kernels give each row one warp */

/* Grid-stride loop of i over [0, n). */
#define RD_LOOP(i, n)                                                       \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (int64_t)gridDim.x * blockDim.x)

/* Grid-stride loop of the warp's row r over [0, R): every lane of a warp takes the same rows. */
#define RD_ROWS(r, R)                                                                  \
  for (int64_t r = (int64_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP; r < (R); \
       r += (int64_t)gridDim.x * ROWS_PER_BLOCK)

/* Sum over the TG_CUDA_THREADS threads of the block, a fixed tree in shared s [TG_CUDA_THREADS]. */
static __device__ double block_sum(double v, double *s) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = TG_CUDA_THREADS / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  return s[0];
}

/* Sum over the warp, a fixed tree; valid in lane 0. */
static __device__ double warp_sum(double v) {
  for (int o = WARP / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

/* ---- sum, mean: x [n] -> out [] ---- */

/* partial [gridDim.x]: block b's sum, in double, of its grid-stride share of x [n]. */
static __global__ void sum_blocks_k(const float *x, int64_t n, double *partial) {
  __shared__ double s[TG_CUDA_THREADS];
  double acc = 0.0;
  RD_LOOP(i, n) acc += x[i];
  acc = block_sum(acc, s);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

/* One block: out [] = (sum of partial [m]) / div. */
static __global__ void sum_final_k(const double *partial, int64_t m, double div, float *out) {
  __shared__ double s[TG_CUDA_THREADS];
  double acc = 0.0;
  for (int64_t i = threadIdx.x; i < m; i += TG_CUDA_THREADS) acc += partial[i];
  acc = block_sum(acc, s);
  if (threadIdx.x == 0) *out = (float)(acc / div);
}

/* gx [n] += (float)(gy[0] / div) */
static __global__ void add_scalar_k(float *gx, int64_t n, const float *gy, double div) {
  float g = (float)((double)gy[0] / div);
  RD_LOOP(i, n) gx[i] += g;
}

/* out = sum(x) / div, in double: per-block sums, then one block over them. */
static tg_status reduce_all(const tg_kernel_args *a, double div, const char *kernel) {
  int dev = tg_cuda_dev_of(a);
  cudaStream_t stream = tg_cuda_stream(dev);
  int64_t n = tg_numel(a->in[0]);
  unsigned blocks = tg_cuda_blocks(n);
  double *partial = (double *)tg_cuda_scratch(dev, blocks * sizeof(double)); /* [blocks] */
  if (!partial) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
  sum_blocks_k<<<blocks, TG_CUDA_THREADS, 0, stream>>>((const float *)a->in[0]->data, n, partial);
  tg_status st = tg_cuda_launched(kernel, a->node_name);
  if (st != TG_OK) return st;
  sum_final_k<<<1, TG_CUDA_THREADS, 0, stream>>>(partial, blocks, div, (float *)a->out->data);
  return tg_cuda_launched(kernel, a->node_name);
}

static tg_status reduce_all_bwd(const tg_kernel_args *a, double div, const char *kernel) {
  if (!a->in_grad[0]) return TG_OK;
  int64_t n = tg_numel(a->in[0]);
  cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
  add_scalar_k<<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, stream>>>(a->in_grad[0], n, a->out_grad, div);
  return tg_cuda_launched(kernel, a->node_name);
}

tg_status tg_cuda_sum_fwd(const tg_kernel_args *a) { return reduce_all(a, 1.0, "sum_fwd"); }
tg_status tg_cuda_sum_bwd(const tg_kernel_args *a) { return reduce_all_bwd(a, 1.0, "sum_bwd"); }
tg_status tg_cuda_mean_fwd(const tg_kernel_args *a) {
  return reduce_all(a, (double)tg_numel(a->in[0]), "mean_fwd");
}
tg_status tg_cuda_mean_bwd(const tg_kernel_args *a) {
  return reduce_all_bwd(a, (double)tg_numel(a->in[0]), "mean_bwd");
}

/* ---- over the last dim: x [R, D] -> out [R], one warp per row ---- */

static int64_t last_dim(const tg_tensor *x) { return x->shape[x->ndim - 1]; }

/* out[r] = (float)(scale * sum_j x[r, j]), the sum in double */
static __global__ void sum_rows_k(const float *x /* [R, D] */, float *out /* [R] */, int64_t R, int64_t D,
                                  double scale) {
  int lane = threadIdx.x % WARP;
  RD_ROWS(r, R) {
    const float *v = x + r * D; /* [D] */
    double acc = 0.0;
    for (int64_t j = lane; j < D; j += WARP) acc += v[j];
    acc = warp_sum(acc);
    if (lane == 0) out[r] = (float)(acc * scale);
  }
}

/* gx[r, j] += (float)(gy[r] * scale) */
static __global__ void sum_rows_bwd_k(float *gx /* [R, D] */, const float *gy /* [R] */, int64_t R, int64_t D,
                                      double scale) {
  int lane = threadIdx.x % WARP;
  RD_ROWS(r, R) {
    float g = (float)((double)gy[r] * scale);
    for (int64_t j = lane; j < D; j += WARP) gx[r * D + j] += g;
  }
}

static tg_status sum_rows(const tg_kernel_args *a, int mean, const char *kernel) {
  const tg_tensor *x = a->in[0];
  int64_t D = last_dim(x), R = tg_numel(x) / D;
  double scale = mean ? 1.0 / (double)D : 1.0;
  cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
  sum_rows_k<<<tg_cuda_blocks(R * WARP), TG_CUDA_THREADS, 0, stream>>>((const float *)x->data,
                                                                       (float *)a->out->data, R, D, scale);
  return tg_cuda_launched(kernel, a->node_name);
}

static tg_status sum_rows_bwd(const tg_kernel_args *a, int mean, const char *kernel) {
  if (!a->in_grad[0]) return TG_OK;
  const tg_tensor *x = a->in[0];
  int64_t D = last_dim(x), R = tg_numel(x) / D;
  double scale = mean ? 1.0 / (double)D : 1.0;
  cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
  sum_rows_bwd_k<<<tg_cuda_blocks(R * WARP), TG_CUDA_THREADS, 0, stream>>>(a->in_grad[0], a->out_grad, R, D,
                                                                           scale);
  return tg_cuda_launched(kernel, a->node_name);
}

tg_status tg_cuda_sum_last_fwd(const tg_kernel_args *a) { return sum_rows(a, 0, "sum_last_fwd"); }
tg_status tg_cuda_sum_last_bwd(const tg_kernel_args *a) { return sum_rows_bwd(a, 0, "sum_last_bwd"); }
tg_status tg_cuda_mean_last_fwd(const tg_kernel_args *a) { return sum_rows(a, 1, "mean_last_fwd"); }
tg_status tg_cuda_mean_last_bwd(const tg_kernel_args *a) { return sum_rows_bwd(a, 1, "mean_last_bwd"); }

/* Whether (v2 at i2) beats (v1 at i1) as the CPU's row_argmax picks: a NaN beats a number, then the
 * larger value, then (equal values, or both NaN) the smaller index. So the winner is the first NaN,
 * else the first maximum. */
static __device__ bool argmax_beats(float v2, int64_t i2, float v1, int64_t i1) {
  bool n1 = isnan(v1), n2 = isnan(v2);
  if (n1 != n2) return n2;
  if (!n1 && v2 != v1) return v2 > v1;
  return i2 < i1;
}

/* Index of row v [D]'s winner, in every lane: each lane scans its strided share, then a butterfly.
 * A lane with no element holds (-inf, D), which every element beats. */
static __device__ int64_t warp_argmax(const float *v, int64_t D, int lane) {
  float bv = -INFINITY;
  int64_t bi = D;
  for (int64_t j = lane; j < D; j += WARP)
    if (argmax_beats(v[j], j, bv, bi)) {
      bv = v[j];
      bi = j;
    }
  for (int o = WARP / 2; o > 0; o >>= 1) {
    float ov = __shfl_xor_sync(0xffffffffu, bv, o);
    int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (argmax_beats(ov, oi, bv, bi)) {
      bv = ov;
      bi = oi;
    }
  }
  return bi;
}

enum argmax_use { AM_MAX, AM_ARGMAX, AM_MAX_BWD };

/* Per row of x [R, D] with winner k: max out [R] f32 = x[r, k]; argmax out [R] i64 = k;
 * max backward gx [R, D] at [r, k] += gy [R]. */
template <argmax_use USE>
static __global__ void argmax_rows_k(const float *x, int64_t R, int64_t D, void *out, const float *gy) {
  int lane = threadIdx.x % WARP;
  RD_ROWS(r, R) {
    int64_t k = warp_argmax(x + r * D, D, lane);
    if (lane == 0) {
      if constexpr (USE == AM_MAX) ((float *)out)[r] = x[r * D + k];
      else if constexpr (USE == AM_ARGMAX) ((int64_t *)out)[r] = k;
      else ((float *)out)[r * D + k] += gy[r];
    }
  }
}

template <argmax_use USE>
static tg_status argmax_rows(const tg_kernel_args *a, void *out, const char *kernel) {
  const tg_tensor *x = a->in[0];
  int64_t D = last_dim(x), R = tg_numel(x) / D;
  cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
  argmax_rows_k<USE><<<tg_cuda_blocks(R * WARP), TG_CUDA_THREADS, 0, stream>>>((const float *)x->data, R, D,
                                                                               out, a->out_grad);
  return tg_cuda_launched(kernel, a->node_name);
}

tg_status tg_cuda_max_last_fwd(const tg_kernel_args *a) {
  return argmax_rows<AM_MAX>(a, a->out->data, "max_last_fwd");
}
tg_status tg_cuda_max_last_bwd(const tg_kernel_args *a) {
  if (!a->in_grad[0]) return TG_OK;
  return argmax_rows<AM_MAX_BWD>(a, a->in_grad[0], "max_last_bwd");
}
tg_status tg_cuda_argmax_last_fwd(const tg_kernel_args *a) {
  return argmax_rows<AM_ARGMAX>(a, a->out->data, "argmax_last_fwd");
}

/* ---- dropout: x [n] -> out [n]; element e kept when uniform(seed, stream key, e) >= p ---- */

/* dst[e] (+)= keep(e) ? src[e] * scale : 0 when active, else dst[e] (+)= src[e]. One thread per
 * Philox counter q, i.e. elements [4q, 4q + 4): keep(e) is word e % 4 of counter e / 4 under key
 * (offset << 20) | rng_stream, exactly the CPU's mask. The offset is read here, from offset_dev when
 * set, so a replayed graph uses the current run's. */
template <bool ACCUMULATE>
static __global__ void dropout_k(const float *src /* [n] */, float *dst /* [n] */, int64_t n, bool active,
                                 float p, float scale, uint64_t seed, uint64_t rng_stream,
                                 const uint64_t *offset_dev, uint64_t offset) {
  uint64_t key = 0;
  if (active) key = ((offset_dev ? *offset_dev : offset) << 20) | rng_stream;
  RD_LOOP(q, (n + 3) / 4) {
    uint32_t w[4] = {0, 0, 0, 0};
    if (active) tg_philox4x32(seed, key, (uint64_t)q, w);
    for (int j = 0; j < 4 && q * 4 + j < n; j++) {
      int64_t e = q * 4 + j;
      float v = src[e];
      if (active) v = tg_unit_of_u32(w[j]) >= p ? __fmul_rn(v, scale) : 0.0f;
      if (ACCUMULATE)
        dst[e] += v;
      else
        dst[e] = v;
    }
  }
}

template <bool ACCUMULATE>
static tg_status dropout(const tg_kernel_args *a, const float *src, float *dst, const char *kernel) {
  int64_t n = tg_numel(a->in[0]);
  float p = a->attr->f[0], scale = 1.0f / (1.0f - p);
  cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
  dropout_k<ACCUMULATE><<<tg_cuda_blocks((n + 3) / 4), TG_CUDA_THREADS, 0, stream>>>(
      src, dst, n, a->attr->i[0] != 0, p, scale, a->seed, a->rng_stream, a->rng_offset_dev, a->rng_offset);
  return tg_cuda_launched(kernel, a->node_name);
}

tg_status tg_cuda_dropout_fwd(const tg_kernel_args *a) {
  return dropout<false>(a, (const float *)a->in[0]->data, (float *)a->out->data, "dropout_fwd");
}
tg_status tg_cuda_dropout_bwd(const tg_kernel_args *a) {
  if (!a->in_grad[0]) return TG_OK;
  return dropout<true>(a, a->out_grad, a->in_grad[0], "dropout_bwd");
}
