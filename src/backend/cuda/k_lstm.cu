/* CUDA LSTM kernels, mirroring k_lstm.c: cuBLAS GEMMs per step, elementwise cell kernels, a deterministic bias-gradient sum. */
#include "backend/cuda/cuda_internal.h"
#include "ops/lstm_args.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* The cell math is the CPU's (ops/lstm_args.h, compiled here with __fmul_rn for products that feed
 * additions); the GEMMs are issued in the same order as on the CPU; the bias gradient adds the rows
 * of each column one after another in row order, as the CPU does. Only the GEMMs' internal
 * summation order and the device's expf/tanhf differ from the CPU. */

/* Where one kernel call's work runs. */
typedef struct lstm_ctx {
  const tg_kernel_args *a;
  cublasHandle_t h;
  cudaStream_t s;
} lstm_ctx;

static tg_status lstm_ctx_of(const tg_kernel_args *a, lstm_ctx *c) {
  int dev = tg_cuda_dev_of(a);
  c->a = a;
  c->s = tg_cuda_stream(dev);
  c->h = tg_cuda_blas(dev);
  return c->h ? TG_OK : TG_ERR_DEVICE; /* tg_cuda_blas has set the message */
}

/* Row-major C[m, n] = op(A) op(B) + beta * C, op(A) [m, k], op(B) [k, n]: column-major
 * C^T = op(B)^T op(A)^T. The builder keeps every size >= 1 and below INT_MAX. */
static tg_status lstm_gemm(const lstm_ctx *c, int ta, int tb, int64_t m, int64_t n, int64_t k,
                           const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                           float *C, int64_t ldc) {
  const float one = 1.0f;
  cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t st =
      tg_cublas.sgemm(c->h, ob, oa, (int)n, (int)m, (int)k, &one, B, (int)ldb, A, (int)lda, &beta, C, (int)ldc);
  return tg_cuda_blas_fail(st, "cublasSgemm", c->a->node_name);
}

/* Step t's cell update for every (b, j) of out [B, T, 6H]: activates the gate slots (which hold
 * the pre-activations without bias), writes c and h. c0 [B, H] or NULL. */
static __global__ void k_lstm_step_fwd(float *out, const float *bias, const float *c0, int64_t B,
                                       int64_t T, int64_t H, int64_t t) {
  int64_t n = B * H;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t b = e / H, j = e - b * H;
    float *row = out + (b * T + t) * 6 * H; /* [6H] */
    float cprev = t > 0 ? row[-6 * H + H + j] : c0 ? c0[e] : 0.0f;
    tg_lstm_cell_fwd(row, bias, cprev, H, j);
  }
}

tg_status tg_cuda_lstm_fwd(const tg_kernel_args *a) {
  tg_lstm_args l = tg_lstm_args_of(a);
  lstm_ctx c;
  tg_status st = lstm_ctx_of(a, &c);
  if (st != TG_OK) return st;
  int64_t B = l.B, T = l.T, In = l.In, H = l.H, R = T * 6 * H; /* R: floats per batch row of out */
  /* gate slots of every step: x W_ih^T, rows (b, t) of out strided 6H */
  st = lstm_gemm(&c, 0, 1, B * T, 4 * H, In, l.x, In, l.w_ih, In, 0.0f, l.out + 2 * H, 6 * H);
  if (st != TG_OK) return st;
  for (int64_t t = 0; t < T; t++) {
    float *gates = l.out + t * 6 * H + 2 * H; /* [B, 4H], rows strided R */
    if (t > 0) /* += h_{t-1} W_hh^T */
      st = lstm_gemm(&c, 0, 1, B, 4 * H, H, l.out + (t - 1) * 6 * H, R, l.w_hh, H, 1.0f, gates, R);
    else if (l.h0)
      st = lstm_gemm(&c, 0, 1, B, 4 * H, H, l.h0, H, l.w_hh, H, 1.0f, gates, R);
    if (st != TG_OK) return st;
    k_lstm_step_fwd<<<tg_cuda_blocks(B * H), TG_CUDA_THREADS, 0, c.s>>>(l.out, l.bias, l.c0, B, T, H, t);
    if ((st = tg_cuda_launched("k_lstm_step_fwd", a->node_name)) != TG_OK) return st;
  }
  return TG_OK;
}

/* Step t's cell backward for every (b, j): dG [B, T, 4H] at step t and the carried dc [B, H];
 * reads the carried dh [B, H] and dc unless t is the last step (where both are zero). */
static __global__ void k_lstm_step_bwd(const float *out, const float *dout, const float *c0, float *dG,
                                       const float *dh, float *dc, int64_t B, int64_t T, int64_t H,
                                       int64_t t) {
  int64_t n = B * H;
  int last = t == T - 1;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t b = e / H, j = e - b * H;
    const float *row = out + (b * T + t) * 6 * H;   /* [6H] */
    const float *grow = dout + (b * T + t) * 6 * H; /* [6H] */
    float *dgrow = dG + (b * T + t) * 4 * H;        /* [4H] */
    float cprev = t > 0 ? row[-6 * H + H + j] : c0 ? c0[e] : 0.0f;
    float dh_rec = last ? 0.0f : dh[e], dc_in = last ? 0.0f : dc[e];
    dc[e] = tg_lstm_cell_bwd(row, grow, cprev, dh_rec, dc_in, dgrow, H, j);
  }
}

/* dst[e] += src[e] for e < n. */
static __global__ void k_lstm_add(float *dst, const float *src, int64_t n) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x)
    dst[e] += src[e];
}

/* db[o] += dG[0, o] + dG[1, o] + ... one row after another (the CPU's order): a thread per column. */
static __global__ void k_lstm_bias_grad(const float *dG, float *db, int64_t rows, int64_t n) {
  for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < n;
       o += (int64_t)gridDim.x * blockDim.x) {
    float s = db[o];
    for (int64_t r = 0; r < rows; r++) s += dG[r * n + o];
    db[o] = s;
  }
}

/* The weight, bias and input gradients from the finished dG [B, T, 4H], in the CPU's order. */
static tg_status lstm_param_grads(const lstm_ctx *c, const tg_lstm_args *l, const float *dG) {
  int64_t B = l->B, T = l->T, In = l->In, H = l->H, R = T * 6 * H;
  tg_status st = TG_OK;
  if (l->dx && /* dx [B*T, I] += dG W_ih */
      (st = lstm_gemm(c, 0, 0, B * T, In, 4 * H, dG, 4 * H, l->w_ih, In, 1.0f, l->dx, In)) != TG_OK)
    return st;
  if (l->dw_ih && /* dW_ih [4H, I] += dG^T x */
      (st = lstm_gemm(c, 1, 0, 4 * H, In, B * T, dG, 4 * H, l->x, In, 1.0f, l->dw_ih, In)) != TG_OK)
    return st;
  if (l->dw_hh) /* dW_hh [4H, H] += sum over t of dG_t^T h_{t-1} */
    for (int64_t t = 0; t < T; t++) {
      if (t > 0)
        st = lstm_gemm(c, 1, 0, 4 * H, H, B, dG + t * 4 * H, T * 4 * H, l->out + (t - 1) * 6 * H, R,
                       1.0f, l->dw_hh, H);
      else if (l->h0)
        st = lstm_gemm(c, 1, 0, 4 * H, H, B, dG, T * 4 * H, l->h0, H, 1.0f, l->dw_hh, H);
      if (st != TG_OK) return st;
    }
  if (!l->dbias) return TG_OK;
  k_lstm_bias_grad<<<tg_cuda_blocks(4 * H), TG_CUDA_THREADS, 0, c->s>>>(dG, l->dbias, B * T, 4 * H);
  return tg_cuda_launched("k_lstm_bias_grad", c->a->node_name);
}

tg_status tg_cuda_lstm_bwd(const tg_kernel_args *a) {
  tg_lstm_args l = tg_lstm_args_of(a);
  if (!l.dx && !l.dh0 && !l.dc0 && !l.dw_ih && !l.dw_hh && !l.dbias) return TG_OK;
  int64_t B = l.B, T = l.T, H = l.H;
  size_t need = sizeof(float) * (size_t)tg_lstm_ws_floats(B, T, H);
  if (!a->ws || a->ws_bytes < need)
    return tg_error(TG_ERR_INVALID, "lstm '%s': backward workspace is %zu bytes, needs %zu", a->node_name,
                    a->ws ? a->ws_bytes : (size_t)0, need);
  lstm_ctx c;
  tg_status st = lstm_ctx_of(a, &c);
  if (st != TG_OK) return st;
  float *dG = (float *)a->ws;     /* [B, T, 4H] */
  float *dh = dG + B * T * 4 * H; /* [B, H]: dG_{t+1} W_hh */
  float *dc = dh + B * H;         /* [B, H]: gradient reaching c_t from step t+1 */
  for (int64_t t = T - 1; t >= 0; t--) {
    k_lstm_step_bwd<<<tg_cuda_blocks(B * H), TG_CUDA_THREADS, 0, c.s>>>(l.out, l.dout, l.c0, dG, dh, dc, B,
                                                                        T, H, t);
    if ((st = tg_cuda_launched("k_lstm_step_bwd", a->node_name)) != TG_OK) return st;
    const float *dGt = dG + t * 4 * H; /* [B, 4H], rows strided T*4H */
    if (t > 0)
      st = lstm_gemm(&c, 0, 0, B, H, 4 * H, dGt, T * 4 * H, l.w_hh, H, 0.0f, dh, H);
    else if (l.dh0)
      st = lstm_gemm(&c, 0, 0, B, H, 4 * H, dGt, T * 4 * H, l.w_hh, H, 1.0f, l.dh0, H);
    if (st != TG_OK) return st;
  }
  if (l.dc0) {
    k_lstm_add<<<tg_cuda_blocks(B * H), TG_CUDA_THREADS, 0, c.s>>>(l.dc0, dc, B * H);
    if ((st = tg_cuda_launched("k_lstm_add", a->node_name)) != TG_OK) return st;
  }
  return lstm_param_grads(&c, &l, dG);
}
