/* CUDA kernels for scalar-mean losses, mirroring k_loss.c: mse, huber, pinball, softmax xent. */
#include <math.h>
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_rows.cuh"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* Numerics follow the CPU kernels step by step (double sums, float gradients). Products that feed
 * an addition go through __fmul_rn / __dmul_rn, which nvcc never fuses into an FMA, so they round
 * as on the CPU (ISO C, no contraction). Each loss is a deterministic two-stage sum: a fixed grid
 * of per-block double sums into scratch, then one block adds those in order and divides. */

#define LOSS_THREADS TG_CUDA_THREADS /* threads per block of the scalar-mean kernels */

static_assert(LOSS_THREADS % 32 == 0, "whole warps");

/* ---- scalar mean of n terms ---- */

/* part[block] = sum of term(i) over this block's grid-stride share of [0, n), in double. */
template <typename Term>
static __global__ void k_loss_parts(Term term, int64_t n, double *part) {
  double s = 0.0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    s += term(i);
  s = group_reduce<LOSS_THREADS>(s, SumOp());
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

/* out[0] = (sum of part[0..nparts)) / n, NaN for n 0 (as PyTorch and the CPU); one block. */
static __global__ void k_loss_mean(const double *part, int64_t nparts, int64_t n, float *out) {
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < nparts; i += blockDim.x) s += part[i];
  s = group_reduce<LOSS_THREADS>(s, SumOp());
  if (threadIdx.x == 0) out[0] = n > 0 ? (float)(s / (double)n) : NAN;
}

/* The loss output = mean of term(i) over i in [0, n); part has tg_cuda_blocks(n) doubles. */
template <typename Term>
static tg_status loss_reduce(const tg_kernel_args *a, cudaStream_t s, Term term, int64_t n,
                             double *part) {
  unsigned nb = tg_cuda_blocks(n);
  k_loss_parts<<<nb, LOSS_THREADS, 0, s>>>(term, n, part);
  tg_status st = tg_cuda_launched("k_loss_parts", a->node_name);
  if (st != TG_OK) return st;
  k_loss_mean<<<1, LOSS_THREADS, 0, s>>>(part, (int64_t)nb, n, (float *)a->out->data);
  return tg_cuda_launched("k_loss_mean", a->node_name);
}

/* loss_reduce with scratch for just the partial sums. */
template <typename Term>
static tg_status loss_mean(const tg_kernel_args *a, Term term, int64_t n) {
  int dev = tg_cuda_dev_of(a);
  cudaStream_t s = tg_cuda_stream(dev);
  double *part = (double *)tg_cuda_scratch(dev, sizeof(double) * tg_cuda_blocks(n)); /* [blocks] */
  if (!part) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
  return loss_reduce(a, s, term, n, part);
}

/* ---- gradients of the elementwise losses (mse, huber): dp += g, dt -= g ---- */

/* dp[i] += g, dt[i] -= g with g = grad(s, p[i], t[i]) and s = grad.scale(dL, n). */
template <typename Grad>
static __global__ void k_pair_bwd(const float *p, const float *t, float *dp, float *dt,
                                  const float *dl, int64_t n, Grad grad) {
  /* p, t, dp, dt: [n] (dp, dt may be NULL); dl: [1] */
  float s = grad.scale(dl[0], n);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    float g = grad(s, p[i], t[i]);
    if (dp) dp[i] += g;
    if (dt) dt[i] -= g;
  }
}

/* The backward of a loss of p and t [n] (inputs 0 and 1) whose elementwise gradient is grad;
 * kernel is the name launch errors give. */
template <typename Grad>
static tg_status pair_bwd(const tg_kernel_args *a, Grad grad, const char *kernel) {
  int64_t n = tg_numel(a->in[0]);
  const float *p = (const float *)a->in[0]->data; /* [n] */
  const float *t = (const float *)a->in[1]->data; /* [n] */
  float *dp = a->in_grad[0], *dt = a->in_grad[1]; /* [n] each, may be NULL */
  if (n == 0 || (!dp && !dt)) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  k_pair_bwd<<<tg_cuda_blocks(n), LOSS_THREADS, 0, s>>>(p, t, dp, dt, a->out_grad, n, grad);
  return tg_cuda_launched(kernel, a->node_name);
}

/* ---- mse: mean((p - t)^2) ---- */

struct MseTerm {
  const float *p, *t; /* [n] each */
  __device__ double operator()(int64_t i) const {
    double d = (double)p[i] - t[i];
    return __dmul_rn(d, d);
  }
};

tg_status tg_cuda_mse_fwd(const tg_kernel_args *a) {
  MseTerm term = {(const float *)a->in[0]->data, (const float *)a->in[1]->data};
  return loss_mean(a, term, tg_numel(a->in[0]));
}

/* g = (2 dL / n) (p - t). */
struct MseGrad {
  __device__ float scale(float dl, int64_t n) const { return (float)(2.0 * dl / (double)n); }
  __device__ float operator()(float s, float p, float t) const { return __fmul_rn(s, p - t); }
};

tg_status tg_cuda_mse_bwd(const tg_kernel_args *a) { return pair_bwd(a, MseGrad{}, "k_mse_bwd"); }

/* ---- huber: mean(0.5 d^2 if |d| < delta else delta (|d| - 0.5 delta)), d = p - t ---- */

struct HuberTerm {
  const float *p, *t; /* [n] each */
  double delta;
  __device__ double operator()(int64_t i) const {
    double d = (double)p[i] - t[i], ad = fabs(d);
    return ad < delta ? __dmul_rn(0.5 * d, d) : __dmul_rn(delta, ad - 0.5 * delta);
  }
};

tg_status tg_cuda_huber_fwd(const tg_kernel_args *a) {
  HuberTerm term = {(const float *)a->in[0]->data, (const float *)a->in[1]->data, a->attr->f[0]};
  return loss_mean(a, term, tg_numel(a->in[0]));
}

/* g = s c with c = clamp(p - t, -delta, delta), s = dL / n. */
struct HuberGrad {
  float delta;
  __device__ float scale(float dl, int64_t n) const { return (float)(dl / (double)n); }
  __device__ float operator()(float s, float p, float t) const {
    float d = p - t, h = delta; /* a local copy keeps the clamp two selects, no branches */
    float c = d < -h ? -h : (d > h ? h : d);
    return __fmul_rn(s, c);
  }
};

tg_status tg_cuda_huber_bwd(const tg_kernel_args *a) {
  return pair_bwd(a, HuberGrad{a->attr->f[0]}, "k_huber_bwd");
}

/* ---- pinball: mean over elements and quantiles of max(q e, (q - 1) e), e = t - p[..., k] ---- */

/* The quantiles, by value (attr lives on the host). */
struct Quantiles {
  float q[TG_MAX_QUANTILES]; /* [n] */
  int64_t n;
};

static Quantiles quantiles_of(const tg_kernel_args *a) {
  Quantiles q = {};
  q.n = a->attr->i[0];
  for (int64_t k = 0; k < q.n; k++) q.q[k] = a->attr->f[k];
  return q;
}

struct PinballTerm {
  const float *p, *t; /* [m, Q], [m] */
  Quantiles q;
  __device__ double operator()(int64_t i) const { /* i = row * Q + k */
    int64_t row = i / q.n, k = i - row * q.n;
    double e = (double)t[row] - p[i], qk = q.q[k];
    double l1 = __dmul_rn(qk, e), l2 = __dmul_rn(qk - 1.0, e);
    return l1 > l2 ? l1 : l2;
  }
};

tg_status tg_cuda_pinball_fwd(const tg_kernel_args *a) {
  const float *p = (const float *)a->in[0]->data; /* [m, Q] */
  const float *t = (const float *)a->in[1]->data; /* [m] */
  PinballTerm term = {p, t, quantiles_of(a)};
  return loss_mean(a, term, tg_numel(a->in[1]) * term.q.n);
}

/* dp[i, k] += g = s (e > 0 ? -q : 1 - q) with s = dL / (m Q); dt[i] += -sum_k g (in k order). */
static __global__ void k_pinball_bwd(const float *p, const float *t, float *dp, float *dt,
                                     const float *dl, Quantiles q, int64_t m) {
  /* p, dp: [m, Q]; t, dt: [m] (dp, dt may be NULL); dl: [1] */
  float s = (float)(dl[0] / (double)(m * q.n));
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m;
       i += (int64_t)gridDim.x * blockDim.x) {
    float st = 0.0f;
    for (int64_t k = 0; k < q.n; k++) {
      float e = t[i] - p[i * q.n + k];
      float g = __fmul_rn(s, e > 0.0f ? -q.q[k] : 1.0f - q.q[k]);
      if (dp) dp[i * q.n + k] += g;
      st -= g;
    }
    if (dt) dt[i] += st;
  }
}

tg_status tg_cuda_pinball_bwd(const tg_kernel_args *a) {
  int64_t m = tg_numel(a->in[1]);
  Quantiles q = quantiles_of(a);
  const float *p = (const float *)a->in[0]->data; /* [m, Q] */
  const float *t = (const float *)a->in[1]->data; /* [m] */
  float *dp = a->in_grad[0];                      /* [m, Q] or NULL */
  float *dt = a->in_grad[1];                      /* [m] or NULL */
  if (m * q.n == 0 || (!dp && !dt)) return TG_OK;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  k_pinball_bwd<<<tg_cuda_blocks(m), LOSS_THREADS, 0, s>>>(p, t, dp, dt, a->out_grad, q, m);
  return tg_cuda_launched("k_pinball_bwd", a->node_name);
}

/* ---- softmax cross-entropy: mean over rows of logsumexp(x) - x[label] ---- */

/* Row r's label, or -1 for one outside [0, C) (reported once per row, by lane 0, as a fault). */
static __device__ int64_t row_label(const void *labels, int i32, int64_t r, int64_t C,
                                    tg_cuda_fault *fault, int lane) {
  int64_t l = i32 ? ((const int32_t *)labels)[r] : ((const int64_t *)labels)[r];
  if (l >= 0 && l < C) return l;
  if (lane == 0) tg_cuda_report_fault(fault, TG_OP_SOFTMAX_XENT, l, C);
  return -1;
}

/* loss[r] = m + log(sum exp(x - m)) - x[label] in double; 0 for a bad label (reported). */
template <int G>
static __global__ void k_xent_rows(const float *x, const void *labels, int i32, double *loss,
                                   tg_cuda_fault *fault, int64_t N, int64_t C) {
  /* x: [N, C]; labels: [N] i32 or i64; loss: [N] */
  const int lane = threadIdx.x % G;
  for (int64_t r = first_row<G>(); r < N; r += row_step<G>()) {
    int64_t l = row_label(labels, i32, r, C, fault, lane);
    if (l < 0) {
      if (lane == 0) loss[r] = 0.0;
      continue;
    }
    const float *xr = x + r * C; /* [C] */
    float m = row_max<G>(xr, C, lane);
    double s = row_exp_sum<G>(xr, C, m, lane);
    if (lane == 0) loss[r] = (double)m + log(s) - xr[l];
  }
}

/* dx[r, j] += (dL / N) softmax(x[r])[j], then dx[r, label] -= dL / N; a bad-label row is left
 * alone (reported). */
template <int G>
static __global__ void k_xent_bwd(const float *x, const void *labels, int i32, float *dx,
                                  const float *dl, tg_cuda_fault *fault, int64_t N, int64_t C) {
  /* x, dx: [N, C]; labels: [N] i32 or i64; dl: [1] */
  const int lane = threadIdx.x % G;
  float g = (float)(dl[0] / (double)N);
  for (int64_t r = first_row<G>(); r < N; r += row_step<G>()) {
    int64_t l = row_label(labels, i32, r, C, fault, lane);
    if (l < 0) continue;
    const float *xr = x + r * C; /* [C] */
    float *dr = dx + r * C;      /* [C] */
    float m = row_max<G>(xr, C, lane);
    float inv = (float)(1.0 / row_exp_sum<G>(xr, C, m, lane));
    for (int64_t j = lane; j < C; j += G) {
      float v = dr[j] + __fmul_rn(g * expf(xr[j] - m), inv);
      if (j == l) v -= g;
      dr[j] = v;
    }
  }
}

/* The per-row losses as terms of the mean. */
struct RowLossTerm {
  const double *loss; /* [N] */
  __device__ double operator()(int64_t i) const { return loss[i]; }
};

/* Per-row losses into scratch, then their mean. */
tg_status tg_cuda_softmax_xent_fwd(const tg_kernel_args *a) {
  int64_t N = a->in[0]->shape[0], C = a->in[0]->shape[1];
  const float *x = (const float *)a->in[0]->data; /* [N, C] */
  const void *labels = a->in[1]->data;            /* [N] i32 or i64 */
  int i32 = a->in[1]->dtype == TG_I32;
  int dev = tg_cuda_dev_of(a);
  cudaStream_t s = tg_cuda_stream(dev);
  double *loss = (double *)tg_cuda_scratch(dev, sizeof(double) * ((size_t)N + tg_cuda_blocks(N)));
  if (!loss) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
  double *part = loss + N;        /* loss: [N]; part: [tg_cuda_blocks(N)] */
  tg_status st = launch_rows(k_xent_rows<32>, k_xent_rows<TG_ROW_THREADS>, "k_xent_rows",
                             a->node_name, s, N, C, x, labels, i32, loss, tg_cuda_fault_slot(dev),
                             N, C);
  if (st != TG_OK) return st;
  return loss_reduce(a, s, RowLossTerm{loss}, N, part);
}

tg_status tg_cuda_softmax_xent_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [N, C] */
  int64_t N = a->in[0]->shape[0], C = a->in[0]->shape[1];
  if (!dx || N == 0) return TG_OK;
  const float *x = (const float *)a->in[0]->data; /* [N, C] */
  const void *labels = a->in[1]->data;            /* [N] i32 or i64 */
  int i32 = a->in[1]->dtype == TG_I32;
  int dev = tg_cuda_dev_of(a);
  cudaStream_t s = tg_cuda_stream(dev);
  return launch_rows(k_xent_bwd<32>, k_xent_bwd<TG_ROW_THREADS>, "k_xent_bwd", a->node_name, s, N, C,
                     x, labels, i32, dx, a->out_grad, tg_cuda_fault_slot(dev), N, C);
}
