/* The CUDA backend table: devices, cached device memory, fills and copies on the compute stream, the sum of squares,
 * the whole optimizer update on the device (scalars included, so it can be captured; it writes the parameters' bf16
 * mirror too), and the rest of the API. */
#include <cuda_bf16.h>
#include <math.h>
#include <stdio.h>
#include "graph/backend.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_kernels.h"
#include "ops/lr_schedule.h"

#define SSQ_BLOCKS 256 /* fixed grid for the sum of squares: the summation order never changes */

namespace {

__global__ void fill_kernel(float *p, int64_t n, float value) { /* p [n] */
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    p[i] = value;
}

/* part [SSQ_BLOCKS]: block b's sum of g[i]^2 over i = b*256 + t + k*SSQ_BLOCKS*256, in double. */
__global__ void ssq_partials(const float *g, int64_t n, double *part) {
  __shared__ double sh[TG_CUDA_THREADS];
  double acc = 0.0;
  for (int64_t i = (int64_t)blockIdx.x * TG_CUDA_THREADS + threadIdx.x; i < n; i += (int64_t)SSQ_BLOCKS * TG_CUDA_THREADS) {
    double x = (double)g[i];
    acc += x * x;
  }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int s = TG_CUDA_THREADS / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

/* One block of SSQ_BLOCKS threads: the fixed-order total of the partials (valid in thread 0). */
__device__ double ssq_total(const double *part) {
  __shared__ double sh[SSQ_BLOCKS];
  sh[threadIdx.x] = part[threadIdx.x];
  __syncthreads();
  for (int s = SSQ_BLOCKS / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  return sh[0];
}

__global__ void ssq_final(const double *part, double *out) {
  double t = ssq_total(part);
  if (threadIdx.x == 0) *out = t;
}

/* The update's scalars from the gradient norm and the step counter (see tg_optim_update). */
__global__ void optim_prepare(const double *part, tg_optim_scalars *sc, float clip_norm, tg_lr_schedule sched,
                              float base_lr, float beta1, float beta2) {
  double ss = ssq_total(part);
  if (threadIdx.x != 0) return;
  double norm = sqrt(ss);
  sc->sumsq = ss;
  sc->norm = (float)norm;
  sc->skipped = !isfinite(norm);
  if (sc->skipped) return;
  float gscale = 1.0f;
  if (clip_norm > 0.0f && norm > (double)clip_norm) gscale = (float)((double)clip_norm / norm);
  float lr = tg_lr_eval(&sched, base_lr, sc->step);
  int64_t t = sc->step + 1;
  sc->bc1 = 1.0 - pow((double)beta1, (double)t);
  sc->bc2 = 1.0 - pow((double)beta2, (double)t);
  sc->lr = lr;
  sc->gscale = gscale;
  sc->step = t;
}

/* PyTorch SGD, as tg_cpu_sgd_step (__fmul_rn: no fused multiply-add, so rounding matches the CPU). p, g, m [n];
 * pb [n] (NULL: none) gets the new p rounded to bf16. */
__global__ void sgd_kernel(float *p, __nv_bfloat16 *pb, const float *g, float *m, int64_t n, const tg_optim_scalars *sc,
                           float momentum, float wd) {
  if (sc->skipped) return;
  float lr = sc->lr, gscale = sc->gscale;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float gi = __fmul_rn(g[i], gscale) + __fmul_rn(wd, p[i]);
    float pi;
    if (m) {
      float b = __fmul_rn(momentum, m[i]) + gi;
      m[i] = b;
      pi = p[i] - __fmul_rn(lr, b);
    } else {
      pi = p[i] - __fmul_rn(lr, gi);
    }
    p[i] = pi;
    if (pb) pb[i] = __float2bfloat16_rn(pi);
  }
}

/* torch.optim.Adam / AdamW, as tg_cpu_adam_step (the constants rounded the same way, no fused
 * multiply-add). p, g, m, v [n]; pb [n] (NULL: none) gets the new p rounded to bf16. */
__global__ void adam_kernel(float *p, __nv_bfloat16 *pb, const float *g, float *m, float *v, int64_t n,
                            const tg_optim_scalars *sc, float beta1, float beta2, float eps, float wd, int decoupled) {
  if (sc->skipped) return;
  const float lr = sc->lr, gscale = sc->gscale;
  const float bc1 = (float)sc->bc1, bc2 = (float)sc->bc2;
  const float step_size = (float)((double)lr / (double)bc1);
  const float bc2_sqrt = (float)sqrt((double)bc2);
  const float decay = decoupled ? (float)(1.0 - (double)lr * (double)wd) : 1.0f;
  const float l2 = decoupled ? 0.0f : wd;
  const float one_b1 = 1.0f - beta1, one_b2 = 1.0f - beta2;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float pi = p[i];
    float gi = __fmul_rn(g[i], gscale) + __fmul_rn(l2, pi);
    pi *= decay;
    float mi = __fmul_rn(beta1, m[i]) + __fmul_rn(one_b1, gi);
    float vi = __fmul_rn(beta2, v[i]) + __fmul_rn(__fmul_rn(one_b2, gi), gi);
    m[i] = mi;
    v[i] = vi;
    float denom = sqrtf(vi) / bc2_sqrt + eps;
    pi -= __fmul_rn(step_size, mi / denom);
    p[i] = pi;
    if (pb) pb[i] = __float2bfloat16_rn(pi);
  }
}

__global__ void counter_kernel(uint64_t *c) { /* c [2] */
  c[1] = c[0];
  c[0] += 1;
}

tg_status cuda_alloc(tg_device d, size_t bytes, void **out) { return tg_cuda_alloc(d.index, bytes, out); }

void cuda_free(tg_device d, void *p) { tg_cuda_free(d.index, p); }

tg_status cuda_fill_f32(tg_device d, float *p, size_t n, float value) {
  if (n == 0) return TG_OK;
  cudaStream_t s = tg_cuda_stream(d.index);
  if (!s) return TG_ERR_DEVICE;
  fill_kernel<<<tg_cuda_blocks((int64_t)n), TG_CUDA_THREADS, 0, s>>>(p, (int64_t)n, value);
  return tg_cuda_launched("fill", "fill_f32");
}

tg_status cuda_fill_bytes(tg_device d, void *p, size_t bytes, unsigned char value) {
  cudaStream_t s = tg_cuda_stream(d.index);
  if (!s) return TG_ERR_DEVICE;
  return tg_cuda_fail(cudaMemsetAsync(p, value, bytes, s), "cudaMemsetAsync", "fill_bytes");
}

/* Device to host: waits for the copy, and raises any kernel fault recorded before it. */
tg_status cuda_to_host(tg_device d, void *host_dst, const void *src, size_t bytes) {
  cudaStream_t s = tg_cuda_stream(d.index);
  if (!s) return TG_ERR_DEVICE;
  char dev[16], where[64];
  snprintf(where, sizeof where, "%zu bytes from %s to the host", bytes, tg_device_str(d, dev, sizeof dev));
  tg_status st = tg_cuda_fail(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync", where);
  if (st == TG_OK) tg_cuda_count_transfer(d.index, 0, bytes);
  return st == TG_OK ? tg_cuda_sync(d.index) : st;
}

/* Host to device: returns once the copy is done, so the caller may reuse its buffer at once. */
tg_status cuda_from_host(tg_device d, void *dst, const void *host_src, size_t bytes) {
  cudaStream_t s = tg_cuda_stream(d.index);
  if (!s) return TG_ERR_DEVICE;
  tg_status st = tg_cuda_fail(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync",
                              "copy from the host");
  if (st == TG_OK) tg_cuda_count_transfer(d.index, 1, bytes);
  return st == TG_OK ? tg_cuda_fail(cudaStreamSynchronize(s), "cudaStreamSynchronize", "copy from the host") : st;
}

tg_status cuda_copy(tg_device d, void *dst, const void *src, size_t bytes) {
  cudaStream_t s = tg_cuda_stream(d.index);
  if (!s) return TG_ERR_DEVICE;
  if (!bytes) return TG_OK;
  return tg_cuda_fail(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync", "device copy");
}

/* Queues the partial sums of squares of g [n] into the scratch buffer; returns it. */
double *ssq_queue(int dev, const float *g, size_t n, tg_status *st) {
  cudaStream_t s = tg_cuda_stream(dev);
  double *part = (double *)tg_cuda_scratch(dev, (SSQ_BLOCKS + 1) * sizeof(double));
  if (!s || !part) {
    *st = TG_ERR_DEVICE;
    return NULL;
  }
  ssq_partials<<<SSQ_BLOCKS, TG_CUDA_THREADS, 0, s>>>(g, (int64_t)n, part);
  *st = tg_cuda_launched("ssq_partials", "sum of squares");
  return *st == TG_OK ? part : NULL;
}

tg_status cuda_sum_squares(tg_device d, const float *g, size_t n, double *out) {
  tg_status st = TG_OK;
  double *part = ssq_queue(d.index, g, n, &st);
  if (!part) return st;
  ssq_final<<<1, SSQ_BLOCKS, 0, tg_cuda_stream(d.index)>>>(part, part + SSQ_BLOCKS);
  if ((st = tg_cuda_launched("ssq_final", "sum of squares")) != TG_OK) return st;
  return cuda_to_host(d, out, part + SSQ_BLOCKS, sizeof(double));
}

tg_status cuda_optim_update(tg_device d, const tg_optim_update *u) {
  int dev = d.index;
  tg_status st = TG_OK;
  double *part = ssq_queue(dev, u->grads, u->numel, &st);
  if (!part) return st;
  cudaStream_t s = tg_cuda_stream(dev);
  optim_prepare<<<1, SSQ_BLOCKS, 0, s>>>(part, u->scalars, u->clip_norm, u->schedule, u->lr, u->beta1, u->beta2);
  if ((st = tg_cuda_launched("optim_prepare", "optimizer")) != TG_OK) return st;
  for (int i = 0; i < u->n_seg; i++) {
    const tg_optim_seg *g = &u->segs[i];
    int64_t n = (int64_t)g->numel;
    size_t o = g->offset;
    __nv_bfloat16 *pb = u->values_bf16 ? (__nv_bfloat16 *)u->values_bf16 + o : NULL; /* [n] or none */
    if (u->kind == TG_SGD)
      sgd_kernel<<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, s>>>(u->values + o, pb, u->grads + o,
                                                               u->m ? u->m + o : NULL, n, u->scalars, u->momentum,
                                                               g->wd);
    else
      adam_kernel<<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, s>>>(u->values + o, pb, u->grads + o, u->m + o, u->v + o,
                                                                n, u->scalars, u->beta1, u->beta2, u->eps, g->wd,
                                                                u->kind == TG_ADAMW);
    if ((st = tg_cuda_launched(u->kind == TG_SGD ? "sgd" : "adam", "optimizer")) != TG_OK) return st;
  }
  return TG_OK;
}

tg_status cuda_advance_counter(tg_device d, uint64_t *c) {
  cudaStream_t s = tg_cuda_stream(d.index);
  if (!s) return TG_ERR_DEVICE;
  counter_kernel<<<1, 1, 0, s>>>(c);
  return tg_cuda_launched("counter", "run counter");
}

}  // namespace

/* Adapters from the table's untyped handles to the CUDA API's types. */
static tg_status cuda_fence_new(int dev, void **out) { return tg_cuda_fence_new(dev, (tg_cuda_fence **)out); }
static void cuda_fence_free(void *f) { tg_cuda_fence_free((tg_cuda_fence *)f); }
static tg_status cuda_fence_record(void *f) { return tg_cuda_fence_record((tg_cuda_fence *)f); }
static tg_status cuda_fence_wait(void *f) { return tg_cuda_fence_wait((tg_cuda_fence *)f); }
static tg_status cuda_capture_end(int dev, void **graph) { return tg_cuda_capture_end(dev, (tg_cuda_graph **)graph); }
static tg_status cuda_graph_launch(void *graph) { return tg_cuda_graph_launch((tg_cuda_graph *)graph); }
static void cuda_graph_free(void *graph) { tg_cuda_graph_free((tg_cuda_graph *)graph); }

static tg_backend make_cuda_backend() {
  tg_backend b = {};
  b.name = "cuda";
  b.kind = TG_CUDA;
  b.host_memory = 0;
  b.device_count = tg_cuda_device_count;
  b.unavailable_reason = tg_cuda_unavailable_reason;
  b.use = tg_cuda_use;
  b.sync = tg_cuda_sync;
  b.info = tg_cuda_info;
  b.mem_stats = tg_cuda_mem_stats;
  b.kernels = tg_cuda_op_kernels;
  b.alloc = cuda_alloc;
  b.free = cuda_free;
  b.fill_f32 = cuda_fill_f32;
  b.fill_bytes = cuda_fill_bytes;
  b.to_host = cuda_to_host;
  b.from_host = cuda_from_host;
  b.copy = cuda_copy;
  b.round_bf16 = tg_cuda_round_bf16;
  b.host_alloc = tg_cuda_host_alloc;
  b.host_free = tg_cuda_host_free;
  b.copy_async = tg_cuda_copy_async;
  b.copy_on_compute = tg_cuda_copy_on_compute;
  b.compute_waits_copy = tg_cuda_compute_waits_copy;
  b.copy_waits_compute = tg_cuda_copy_waits_compute;
  b.fence_new = cuda_fence_new;
  b.fence_free = cuda_fence_free;
  b.fence_record = cuda_fence_record;
  b.fence_wait = cuda_fence_wait;
  b.capture_begin = tg_cuda_capture_begin;
  b.capture_end = cuda_capture_end;
  b.graph_launch = cuda_graph_launch;
  b.graph_free = cuda_graph_free;
  b.stage_batch = tg_cuda_stage_batch;
  b.sum_squares = cuda_sum_squares;
  b.optim_update = cuda_optim_update;
  b.advance_counter = cuda_advance_counter;
  b.collectives = tg_cuda_collectives();
  return b;
}

extern "C" const tg_backend tg_cuda_backend = make_cuda_backend();
