/* The CUDA emulator's own launch model: barriers, shared memory, shuffles, votes, atomics, misuse detection, capture and replay, the reference GEMM, bf16 rounding and the typed GEMM. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <vector>

static int g_pass, g_fail;
#define EXPECT(cond, ...)                                          \
  do {                                                             \
    if (cond) {                                                    \
      g_pass++;                                                    \
    } else {                                                       \
      g_fail++;                                                    \
      fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                \
      fputc('\n', stderr);                                         \
    }                                                              \
  } while (0)

/* Each thread writes its slot, then reads its neighbour's: right only if the barrier really waits. */
__global__ void k_neighbour(int *out) {
  __shared__ int sh[256];
  sh[threadIdx.x] = (int)(blockIdx.x * 1000 + threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = sh[(threadIdx.x + 1) % blockDim.x];
}

/* A tree reduction with barriers in a loop, per block. */
__global__ void k_block_sum(const float *x, float *out) {
  __shared__ float sh[128];
  sh[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  for (int s = 64; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

__global__ void k_shuffles(int *out) { /* out [5][64] */
  int lane = (int)(threadIdx.x % 32), t = (int)threadIdx.x;
  out[0 * 64 + t] = __shfl_xor_sync(0xffffffffu, t, 5);
  out[1 * 64 + t] = __shfl_down_sync(0xffffffffu, t, 3);
  out[2 * 64 + t] = __shfl_up_sync(0xffffffffu, t, 2, 16);
  out[3 * 64 + t] = __shfl_sync(0xffffffffu, t, 7, 8);
  out[4 * 64 + t] = (int)__ballot_sync(0xffffffffu, lane % 3 == 0);
}

__global__ void k_warp_sum(const double *x, double *out) { /* one warp per row of 32 */
  double v = x[blockIdx.x * 32 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  out[blockIdx.x * 32 + threadIdx.x] = v;
}

__global__ void k_atomics(int *count, int *first, unsigned long long *sum) {
  atomicAdd(count, 1);
  atomicCAS(first, -1, (int)(blockIdx.x * blockDim.x + threadIdx.x));
  atomicAdd(sum, (unsigned long long)threadIdx.x);
}

__global__ void k_partial_barrier(int *out) {
  if (threadIdx.x < 16) __syncthreads(); /* misuse: the other threads never come */
  out[threadIdx.x] = 1;
}

__global__ void k_partial_shuffle(int *out) {
  if (threadIdx.x >= 20) return; /* lanes 20..31 exit before the shuffle */
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
}

__global__ void k_dynamic_shared(float *out, int n) {
  extern __shared__ float dyn[];
  dyn[threadIdx.x] = (float)threadIdx.x * 2.0f;
  __syncthreads();
  out[threadIdx.x] = dyn[n - 1 - (int)threadIdx.x];
}

__global__ void k_dims(int *out) { /* block (4, 3, 2), grid (2, 2) */
  int b = (int)(blockIdx.y * gridDim.x + blockIdx.x);
  int t = (int)((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x);
  out[b * 24 + t] = (int)(threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z + 1000 * blockIdx.x + 10000 * blockIdx.y);
}

/* out[i] = in[i] rounded to bf16, on the device. */
__global__ void k_to_bf16(__nv_bfloat16 *out, const float *in, int n) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = __float2bfloat16_rn(in[i]);
}

template <typename T> __global__ void k_axpb(T *x, T a, T b, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    x[i] = x[i] * a + b;
}

static void barriers_and_shared(void) {
  int *d;
  cudaMalloc(&d, 4 * 256 * sizeof(int));
  k_neighbour<<<4, 256>>>(d);
  std::vector<int> h(4 * 256);
  cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int b = 0; b < 4; b++)
    for (int t = 0; t < 256; t++) bad += h[(size_t)(b * 256 + t)] != b * 1000 + (t + 1) % 256;
  EXPECT(bad == 0, "%d threads read a neighbour's slot before it was written, or another block's", bad);
  cudaFree(d);

  float *x, *s;
  cudaMalloc(&x, 3 * 128 * sizeof(float));
  cudaMalloc(&s, 3 * sizeof(float));
  std::vector<float> hx(3 * 128);
  for (size_t i = 0; i < hx.size(); i++) hx[i] = (float)(i % 17);
  cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice);
  k_block_sum<<<3, 128>>>(x, s);
  float hs[3];
  cudaMemcpy(hs, s, sizeof hs, cudaMemcpyDeviceToHost);
  for (int b = 0; b < 3; b++) {
    float want = 0;
    for (int i = 0; i < 128; i++) want += hx[(size_t)(b * 128 + i)];
    EXPECT(hs[b] == want, "block %d sum %g, want %g", b, (double)hs[b], (double)want);
  }
  cudaFree(x);
  cudaFree(s);

  float *o;
  cudaMalloc(&o, 96 * sizeof(float));
  k_dynamic_shared<<<1, 96, 96 * sizeof(float)>>>(o, 96);
  float ho[96];
  cudaMemcpy(ho, o, sizeof ho, cudaMemcpyDeviceToHost);
  bad = 0;
  for (int t = 0; t < 96; t++) bad += ho[t] != (float)(95 - t) * 2.0f;
  EXPECT(bad == 0, "dynamic shared memory: %d wrong", bad);
  cudaFree(o);

  int *dd;
  cudaMalloc(&dd, 4 * 24 * sizeof(int));
  k_dims<<<dim3(2, 2), dim3(4, 3, 2)>>>(dd);
  int hd[96];
  cudaMemcpy(hd, dd, sizeof hd, cudaMemcpyDeviceToHost);
  EXPECT(hd[0] == 0 && hd[23] == 3 + 20 + 100 && hd[24 + 5] == 1000 + 1 + 10 && hd[3 * 24 + 23] == 11123, "dims: %d %d %d %d",
         hd[0], hd[23], hd[29], hd[95]);
  cudaFree(dd);
}

static void warps(void) {
  int *d;
  cudaMalloc(&d, 5 * 64 * sizeof(int));
  k_shuffles<<<1, 64>>>(d);
  int h[5 * 64];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int t = 0; t < 64; t++) {
    int lane = t % 32, base = t - lane;
    bad += h[t] != base + (lane ^ 5);
    bad += h[64 + t] != (lane + 3 < 32 ? t + 3 : t);
    bad += h[128 + t] != ((lane % 16) >= 2 ? t - 2 : t);
    bad += h[192 + t] != base + (lane & ~7) + 7;
    unsigned want = 0;
    for (int l = 0; l < 32; l += 3) want |= 1u << l;
    bad += (unsigned)h[256 + t] != want;
  }
  EXPECT(bad == 0, "%d wrong shuffle/ballot results", bad);
  cudaFree(d);

  double *x, *y;
  cudaMalloc(&x, 64 * sizeof(double));
  cudaMalloc(&y, 64 * sizeof(double));
  double hx[64], hy[64];
  for (int i = 0; i < 64; i++) hx[i] = i * 0.5;
  cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
  k_warp_sum<<<2, 32>>>(x, y);
  cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
  EXPECT(hy[0] == 248.0 && hy[31] == 248.0 && hy[32] == 760.0 && hy[63] == 760.0, "warp sums %g %g", hy[0], hy[32]);
  cudaFree(x);
  cudaFree(y);
}

static void atomics(void) {
  int *c, *f;
  unsigned long long *s;
  cudaMalloc(&c, sizeof(int));
  cudaMalloc(&f, sizeof(int));
  cudaMalloc(&s, sizeof(unsigned long long));
  cudaMemset(c, 0, sizeof(int));
  cudaMemset(f, 0xFF, sizeof(int));
  cudaMemset(s, 0, sizeof(unsigned long long));
  k_atomics<<<7, 160>>>(c, f, s);
  int hc, hf;
  unsigned long long hs;
  cudaMemcpy(&hc, c, sizeof hc, cudaMemcpyDeviceToHost);
  cudaMemcpy(&hf, f, sizeof hf, cudaMemcpyDeviceToHost);
  cudaMemcpy(&hs, s, sizeof hs, cudaMemcpyDeviceToHost);
  EXPECT(hc == 7 * 160 && hf >= 0 && hf < 7 * 160 && hs == 7ull * (159 * 160 / 2), "count %d first %d sum %llu", hc, hf, hs);
  cudaFree(c);
  cudaFree(f);
  cudaFree(s);
}

static void misuse(void) {
  int *d;
  cudaMalloc(&d, 64 * sizeof(int));
  k_partial_barrier<<<2, 64>>>(d);
  EXPECT(cudaGetLastError() == cudaSuccess, "the launch itself is valid");
  cudaError_t e = cudaDeviceSynchronize();
  EXPECT(e == cudaErrorLaunchFailure, "a barrier reached by 16 of 64 threads: %s", cudaGetErrorName(e));
  EXPECT(strstr(cudaGetErrorString(e), "k_partial_barrier") && strstr(cudaGetErrorString(e), "deadlock"), "message: %s",
         cudaGetErrorString(e));
  EXPECT(cudaDeviceSynchronize() == cudaSuccess, "raised once");
  k_partial_shuffle<<<1, 32>>>(d);
  e = cudaDeviceSynchronize();
  EXPECT(e == cudaErrorLaunchFailure && strstr(cudaGetErrorString(e), "k_partial_shuffle"), "%s", cudaGetErrorString(e));

  k_neighbour<<<1, 2048>>>(d); /* too many threads */
  EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration, "a 2048-thread block is refused");
  k_neighbour<<<0, 32>>>(d);
  EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration, "an empty grid is refused");

  int host[64];
  k_neighbour<<<1, 64>>>(host); /* a host pointer handed to a kernel */
  e = cudaDeviceSynchronize();
  EXPECT(e == cudaErrorLaunchFailure && strstr(cudaGetErrorString(e), "argument 0"), "%s", cudaGetErrorString(e));
  EXPECT(cudaMemcpy(host, host + 1, 4, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue, "copy from a host pointer as device");
  (void)cudaGetLastError();
  cudaFree(d);
}

static void capture(void) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  float *x, *y;
  cudaMalloc(&x, 1000 * sizeof(float));
  cudaMalloc(&y, 1000 * sizeof(float));
  float h[1000];
  for (int i = 0; i < 1000; i++) h[i] = (float)i;
  EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "begin");
  cudaMemcpyAsync(x, h, sizeof h, cudaMemcpyHostToDevice, s);       /* reads h when replayed */
  k_axpb<float><<<4, 128, 0, s>>>(x, 2.0f, 1.0f, (int64_t)1000);     /* x = 2x + 1 */
  cudaMemsetAsync(y, 0, sizeof h, s);
  k_axpb<<<2, 64, 0, s>>>(x, 0.5f, 0.0f, (int64_t)1000);            /* deduced template: x = x / 2 */
  cudaMemcpyAsync(y, x, sizeof h, cudaMemcpyDeviceToDevice, s);
  float out[1000];
  cudaMemcpy(out, x, 4, cudaMemcpyDeviceToHost); /* not before the replay: nothing has run yet */
  cudaGraph_t g;
  cudaGraphExec_t ex;
  EXPECT(cudaStreamEndCapture(s, &g) == cudaErrorStreamCaptureInvalidated, "a synchronous copy during capture invalidates it");
  (void)cudaGetLastError();
  EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "begin again");
  cudaMemcpyAsync(x, h, sizeof h, cudaMemcpyHostToDevice, s);
  k_axpb<float><<<4, 128, 0, s>>>(x, 2.0f, 1.0f, (int64_t)1000);
  cudaMemsetAsync(y, 0, sizeof h, s);
  k_axpb<<<2, 64, 0, s>>>(x, 0.5f, 0.0f, (int64_t)1000);
  cudaMemcpyAsync(y, x, sizeof h, cudaMemcpyDeviceToDevice, s);
  EXPECT(cudaStreamEndCapture(s, &g) == cudaSuccess && cudaGraphInstantiate(&ex, g, 0) == cudaSuccess, "end");
  for (int rep = 0; rep < 2; rep++) {
    for (int i = 0; i < 1000; i++) h[i] = (float)(i + rep);
    cudaMemset(y, 0xFF, sizeof h);
    EXPECT(cudaGraphLaunch(ex, s) == cudaSuccess, "launch");
    cudaMemcpy(out, y, sizeof out, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < 1000; i++) bad += out[i] != (2.0f * (float)(i + rep) + 1.0f) * 0.5f;
    EXPECT(bad == 0, "replay %d: %d values wrong (order of the recorded work)", rep, bad);
  }
  cudaGraphExecDestroy(ex);
  cudaGraphDestroy(g);
  cudaFree(x);
  cudaFree(y);
  cudaStreamDestroy(s);
}

static void gemm(void) {
  cublasHandle_t hb;
  cublasCreate(&hb);
  const int m = 5, n = 4, k = 3;
  float A[15], B[12], C[20], ref[20];
  for (int i = 0; i < 15; i++) A[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < 12; i++) B[i] = (float)(i % 5) * 0.5f;
  float *dA, *dB, *dC;
  cudaMalloc(&dA, sizeof A);
  cudaMalloc(&dB, sizeof B);
  cudaMalloc(&dC, sizeof C);
  cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      int lda = ta ? k : m, ldb = tb ? n : k;
      for (int i = 0; i < 20; i++) C[i] = NAN; /* beta 0: never read */
      cudaMemcpy(dC, C, sizeof C, cudaMemcpyHostToDevice);
      float alpha = 1.5f, beta = 0.0f;
      cublasStatus_t st = cublasSgemm(hb, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha,
                                      dA, lda, dB, ldb, &beta, dC, m);
      cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost);
      for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
          double acc = 0;
          for (int p = 0; p < k; p++)
            acc += (double)(ta ? A[i * lda + p] : A[p * lda + i]) * (double)(tb ? B[p * ldb + j] : B[j * ldb + p]);
          ref[j * m + i] = (float)(1.5 * acc);
        }
      EXPECT(st == CUBLAS_STATUS_SUCCESS && memcmp(C, ref, sizeof C) == 0, "sgemm ta %d tb %d", ta, tb);
    }
  float one = 1.0f;
  EXPECT(cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m - 1, dB, k, &one, dC, m) ==
             CUBLAS_STATUS_INVALID_VALUE, "lda < m is refused");
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  cublasDestroy(hb);
}

static float f_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The nearest bfloat16 to the finite float with bits u, ties to the even one, found without bit tricks: of the two
 * bfloat16 values around it (u with its low half cleared, and one step further from zero), the nearer by the
 * difference in double. Past the largest finite bfloat16 the step further is 2^128 as if the exponent went on
 * (IEEE's rule for overflow), and choosing it means infinity. */
static unsigned short bf16_nearest(uint32_t u) {
  uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
  double x = (double)f_of(u), dl = fabs(x - (double)f_of(lo));
  double dh = (hi & 0x7fffffffu) == 0x7f800000u ? fabs(x - copysign(ldexp(1.0, 128), x)) : fabs(x - (double)f_of(hi));
  if (dl < dh) return (unsigned short)(lo >> 16);
  if (dh < dl) return (unsigned short)(hi >> 16);
  return (unsigned short)(((lo >> 16) & 1u) ? hi >> 16 : lo >> 16);
}

static unsigned short bf16_bits(float f) { return __float2bfloat16_rn(f).__x; }

static void bf16_rounding(void) {
  /* ties to even, below and above a tie, signs, overflow, infinities, NaN, zeros and subnormals */
  const struct {
    uint32_t in;
    unsigned short out;
  } k[] = {{0x3f800000u, 0x3f80}, {0x3f808000u, 0x3f80}, {0x3f818000u, 0x3f82}, {0x3f808001u, 0x3f81},
           {0x3f807fffu, 0x3f80}, {0xbf808001u, 0xbf81}, {0xbf818000u, 0xbf82}, {0x7f7fffffu, 0x7f80},
           {0x7f7f7fffu, 0x7f7f}, {0x7f7f8000u, 0x7f80}, {0xff7fffffu, 0xff80}, {0x7f800000u, 0x7f80},
           {0xff800000u, 0xff80}, {0x7fc00001u, 0x7fff}, {0xffc00000u, 0x7fff}, {0x7f800001u, 0x7fff},
           {0x00000000u, 0x0000}, {0x80000000u, 0x8000}, {0x00000001u, 0x0000}, {0x00008000u, 0x0000},
           {0x00018000u, 0x0002}, {0x807fffffu, 0x8080}};
  int bad = 0;
  for (const auto &c : k) {
    unsigned short got = bf16_bits(f_of(c.in));
    if (got != c.out) fprintf(stderr, "bf16(0x%08x) = 0x%04x, want 0x%04x\n", c.in, got, c.out);
    bad += got != c.out;
  }
  EXPECT(bad == 0, "%d listed bf16 roundings wrong", bad);
  /* a million finite bit patterns (every exponent) against the nearest-even search */
  uint32_t u = 12345u;
  bad = 0;
  for (int i = 0; i < 1000000; i++) {
    u = u * 1664525u + 1013904223u;
    uint32_t x = u ^ (u >> 13);
    if ((x & 0x7f800000u) == 0x7f800000u) continue; /* infinities and NaN: listed above */
    bad += bf16_bits(f_of(x)) != bf16_nearest(x);
  }
  EXPECT(bad == 0, "%d of a million bf16 roundings differ from the nearest-even search", bad);
  __nv_bfloat16 h;
  h.__x = 0x3f81;
  EXPECT(__bfloat162float(h) == 1.0078125f, "bf16 0x3f81 reads as %g", (double)__bfloat162float(h));
  /* the same rounding in a kernel, writing bf16 device memory */
  float in[4] = {1.00390625f, 1.01171875f, -3.0e38f, NAN};
  float *din;
  __nv_bfloat16 *dout, out[4];
  cudaMalloc(&din, sizeof in);
  cudaMalloc(&dout, sizeof out);
  cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice);
  k_to_bf16<<<1, 32>>>(dout, din, 4);
  cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
  EXPECT(out[0].__x == 0x3f80 && out[1].__x == 0x3f82 && out[2].__x == 0xff62 && out[3].__x == 0x7fff,
         "kernel bf16: %04x %04x %04x %04x", out[0].__x, out[1].__x, out[2].__x, out[3].__x);
  cudaFree(din);
  cudaFree(dout);
}

/* cublasGemmEx and cublasGemmStridedBatchedEx with bf16 A and B, f32 C: the exact products of the bf16 values
 * summed in double and rounded once; beta 1 adds C; the calls' checks. */
static void gemm_bf16(void) {
  cublasHandle_t hb;
  cublasCreate(&hb);
  const int m = 5, n = 4, k = 7, batch = 3;
  __nv_bfloat16 A[batch * m * k], B[k * n]; /* A: batch products of [m, k] (lda m, column-major); B shared */
  float Af[batch * m * k], Bf[k * n], C[batch * m * n], ref[batch * m * n];
  for (int i = 0; i < batch * m * k; i++) A[i] = __float2bfloat16_rn(sinf(0.7f * (float)i)), Af[i] = __bfloat162float(A[i]);
  for (int i = 0; i < k * n; i++) B[i] = __float2bfloat16_rn(cosf(1.3f * (float)i)), Bf[i] = __bfloat162float(B[i]);
  __nv_bfloat16 *dA, *dB;
  float *dC;
  cudaMalloc(&dA, sizeof A);
  cudaMalloc(&dB, sizeof B);
  cudaMalloc(&dC, sizeof C);
  cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
  float alpha = 1.0f, beta = 1.0f;
  for (int i = 0; i < batch * m * n; i++) C[i] = 0.25f * (float)i; /* beta 1: added */
  cudaMemcpy(dC, C, sizeof C, cudaMemcpyHostToDevice);
  for (int b = 0; b < batch; b++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < m; i++) {
        double acc = 0.0;
        for (int p = 0; p < k; p++) acc += (double)Af[b * m * k + p * m + i] * (double)Bf[j * k + p];
        ref[b * m * n + j * m + i] = (float)(acc + (double)C[b * m * n + j * m + i]);
      }
  cublasStatus_t st = cublasGemmStridedBatchedEx(hb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_16BF, m,
                                                 (long long)m * k, dB, CUDA_R_16BF, k, 0, &beta, dC, CUDA_R_32F, m,
                                                 (long long)m * n, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost);
  EXPECT(st == CUBLAS_STATUS_SUCCESS && memcmp(C, ref, sizeof C) == 0, "strided batched bf16 GEMM, B shared");
  /* one product, transposed operands: C [m, n] = A0^T B^T with A0 read as [k, m] (lda k) and B as [n, k] (ldb n) */
  beta = 0.0f;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double acc = 0.0;
      for (int p = 0; p < k; p++) acc += (double)Af[i * k + p] * (double)Bf[p * n + j];
      ref[j * m + i] = (float)acc;
    }
  st = cublasGemmEx(hb, CUBLAS_OP_T, CUBLAS_OP_T, m, n, k, &alpha, dA, CUDA_R_16BF, k, dB, CUDA_R_16BF, n, &beta, dC,
                    CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost);
  EXPECT(st == CUBLAS_STATUS_SUCCESS && memcmp(C, ref, sizeof(float) * m * n) == 0, "bf16 GEMM, both transposed");
  /* the checks */
  EXPECT(cublasGemmEx(hb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_16BF, m, dB, CUDA_R_32F, k, &beta, dC,
                      CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED,
         "bf16 A with f32 B is not a modelled combination");
  EXPECT(cublasGemmEx(hb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_16BF, m, dB, CUDA_R_16BF, k, &beta, dC,
                      CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED,
         "a bf16 C is not modelled");
  EXPECT(cublasGemmEx(hb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_16BF, m, dB, CUDA_R_16BF, k, &beta, dC,
                      CUDA_R_32F, m, (cublasComputeType_t)12345, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE,
         "an unknown compute type is refused");
  EXPECT(cublasGemmEx(hb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_16BF, m - 1, dB, CUDA_R_16BF, k, &beta,
                      dC, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE,
         "lda < m is refused");
  EXPECT(cublasGemmStridedBatchedEx(hb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_16BF, m, 0, dB,
                                    CUDA_R_16BF, k, 0, &beta, dC, CUDA_R_32F, m, 0, -1, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE,
         "a negative batch count is refused");
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  cublasDestroy(hb);
}

int main(void) {
  int n = 0;
  EXPECT(cudaGetDeviceCount(&n) == cudaSuccess && n == 1, "one device");
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  EXPECT(strcmp(p.name, "tickgrad CUDA emulator") == 0 && p.major == 9 && p.minor == 0, "%s %d.%d", p.name, p.major, p.minor);
  barriers_and_shared();
  warps();
  atomics();
  misuse();
  capture();
  gemm();
  bf16_rounding();
  gemm_bf16();
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
