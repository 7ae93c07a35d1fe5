/* CUDA kernels for matmul, linear and stacked_linear: cuBLAS GEMMs on row-major f32 (or, when the node computes in
 * bf16, on bf16 copies of the operands in the workspace or the parameters' bf16 mirror, accumulated in f32), a
 * deterministic bias-gradient sum; the backend's bf16 rounding. */
#include <cuda_bf16.h>
#include "backend/cuda/cuda_internal.h"
#include "ops/matmul_dims.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* Bias gradient: COLSUM_W columns by COLSUM_H threads per block, over at most COLSUM_MAX_CHUNKS
 * row chunks of at least COLSUM_MIN_ROWS rows each. */
#define COLSUM_W 32
#define COLSUM_H 8
#define COLSUM_MIN_ROWS 256
#define COLSUM_MAX_CHUNKS 128

/* Where one kernel call's GEMMs run, and what their operands are: f32 tensors, or (bf16: the node computes in bf16)
 * __nv_bfloat16 copies rounded into the workspace, with the same shapes, leading dimensions and strides. */
typedef struct mm_ctx {
  const tg_kernel_args *a;
  cublasHandle_t h;
  cudaStream_t s;
  int bf16;
  size_t ws_used; /* bytes of a->ws taken by the rounded operands so far */
} mm_ctx;

static tg_status mm_ctx_of(const tg_kernel_args *a, mm_ctx *c) {
  int dev = tg_cuda_dev_of(a);
  c->a = a;
  c->s = tg_cuda_stream(dev);
  c->h = tg_cuda_blas(dev);
  c->bf16 = a->compute == TG_BF16;
  c->ws_used = 0;
  return c->h ? TG_OK : TG_ERR_DEVICE; /* tg_cuda_blas has set the message */
}

/* dst[e] = src[e] rounded to bf16: to nearest, ties to even; NaN stays NaN. */
static __global__ void k_round_bf16(__nv_bfloat16 *dst, const float *src, int64_t n) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x)
    dst[e] = __float2bfloat16_rn(src[e]);
}

/* src [n] as the GEMMs read it: src itself in f32 (or when NULL); in bf16 its mirror when it has one (src is a
 * parameter: the store's bf16 mirror of it, which the optimizer update writes), else a rounded copy placed at the next
 * 64-byte step of the workspace (tg_gemm_bf16_workspace sized it for both inputs and the output's gradient at 4 bytes
 * per element, so their 2-byte copies always fit), written by a kernel on the stream. */
static tg_status mm_operand(mm_ctx *c, const float *src, const uint16_t *mirror, int64_t n, const void **out) {
  *out = src;
  if (!c->bf16 || !src) return TG_OK;
  if (mirror) {
    *out = mirror;
    return TG_OK;
  }
  size_t bytes = sizeof(__nv_bfloat16) * (size_t)n;
  if (!c->a->ws || c->ws_used + bytes > c->a->ws_bytes)
    return tg_error(TG_ERR_INVALID, "%s: the bf16 GEMM operands need %zu bytes of workspace past %zu, the plan "
                    "gave %zu", c->a->node_name, bytes, c->ws_used, c->a->ws ? c->a->ws_bytes : (size_t)0);
  __nv_bfloat16 *dst = (__nv_bfloat16 *)((char *)c->a->ws + c->ws_used); /* [n] */
  c->ws_used += (bytes + 63) & ~(size_t)63;
  *out = dst;
  if (n == 0) return TG_OK;
  k_round_bf16<<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, c->s>>>(dst, src, n);
  return tg_cuda_launched("k_round_bf16", c->a->node_name);
}

/* Input k as the GEMMs read it when wanted (NULL otherwise), as mm_operand gives it. */
static tg_status mm_input(mm_ctx *c, int k, int wanted, int64_t n, const void **out) {
  return mm_operand(c, wanted ? (const float *)c->a->in[k]->data : NULL, c->a->in_bf16[k], n, out);
}

tg_status tg_cuda_round_bf16(tg_device d, uint16_t *dst, const float *src, size_t n) {
  cudaStream_t s = tg_cuda_stream(d.index);
  if (!s) return TG_ERR_DEVICE;
  if (n == 0) return TG_OK;
  k_round_bf16<<<tg_cuda_blocks((int64_t)n), TG_CUDA_THREADS, 0, s>>>((__nv_bfloat16 *)dst, src, (int64_t)n);
  return tg_cuda_launched("k_round_bf16", "the store's bf16 mirror of the parameters");
}

/* p advanced by n elements of the GEMM operand type (f32 or bf16). */
static const void *mm_at(const mm_ctx *c, const void *p, int64_t n) {
  return (const char *)p + n * (int64_t)(c->bf16 ? sizeof(__nv_bfloat16) : sizeof(float));
}

/* C[m, n] = op(A) op(B) + beta * C, op(A) [m, k], op(B) [k, n], for batch products strided by
 * sa, sb, sc elements (sb = 0: B shared). A and B are f32, or bf16 when the node computes in bf16 (then the product
 * is accumulated in f32: cuBLAS's 32F compute type, tensor cores on the GPU); C is f32 either way. Empty sizes as on
 * the CPU: nothing for m, n or batch 0; for k 0, zeros when beta is 0 (every beta-0 C here is a contiguous forward
 * output, ldc = n). */
static tg_status mm_gemm(const mm_ctx *c, int ta, int tb, int64_t m, int64_t n, int64_t k,
                         const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb,
                         int64_t sb, float beta, float *C, int64_t ldc, int64_t sc, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return TG_OK;
  if (k == 0) {
    if (beta != 0.0f) return TG_OK;
    return tg_cuda_fail(cudaMemsetAsync(C, 0, sizeof(float) * (size_t)(batch * m * n), c->s),
                        "cudaMemsetAsync", c->a->node_name);
  }
  /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T */
  const float one = 1.0f;
  cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t st;
  const char *what;
  if (c->bf16 && batch == 1) {
    what = "cublasGemmEx";
    st = tg_cublas.gemm_ex(c->h, ob, oa, (int)n, (int)m, (int)k, &one, B, CUDA_R_16BF, (int)ldb, A, CUDA_R_16BF,
                           (int)lda, &beta, C, CUDA_R_32F, (int)ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else if (c->bf16) {
    what = "cublasGemmStridedBatchedEx";
    st = tg_cublas.gemm_strided_batched_ex(c->h, ob, oa, (int)n, (int)m, (int)k, &one, B, CUDA_R_16BF, (int)ldb, sb,
                                           A, CUDA_R_16BF, (int)lda, sa, &beta, C, CUDA_R_32F, (int)ldc, sc,
                                           (int)batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else if (batch == 1) {
    what = "cublasSgemm";
    st = tg_cublas.sgemm(c->h, ob, oa, (int)n, (int)m, (int)k, &one, (const float *)B, (int)ldb, (const float *)A,
                         (int)lda, &beta, C, (int)ldc);
  } else {
    what = "cublasSgemmStridedBatched";
    st = tg_cublas.sgemm_strided_batched(c->h, ob, oa, (int)n, (int)m, (int)k, &one, (const float *)B, (int)ldb, sb,
                                         (const float *)A, (int)lda, sa, &beta, C, (int)ldc, sc, (int)batch);
  }
  return tg_cuda_blas_fail(st, what, c->a->node_name);
}

tg_status tg_cuda_matmul_fwd(const tg_kernel_args *a) {
  tg_mm_dims d;
  tg_status st = tg_mm_dims_of(a, &d);
  if (st != TG_OK) return st;
  mm_ctx c;
  if ((st = mm_ctx_of(a, &c)) != TG_OK) return st;
  /* as the GEMMs read them (f32, or bf16 copies): A [batch, M, K] or [batch, K, M], B [batch or 1, K, N] or
   * [.., N, K] */
  const void *A, *B;
  float *C = (float *)a->out->data; /* [batch, M, N] */
  if ((st = mm_input(&c, 0, 1, tg_numel(a->in[0]), &A)) != TG_OK ||
      (st = mm_input(&c, 1, 1, tg_numel(a->in[1]), &B)) != TG_OK)
    return st;
  if (d.sb == 0 && !d.ta) /* shared b: one GEMM over all batch*M rows */
    return mm_gemm(&c, 0, d.tb, d.batch * d.m, d.n, d.k, A, d.a1, 0, B, d.b1, 0, 0.0f, C, d.n, 0, 1);
  return mm_gemm(&c, d.ta, d.tb, d.m, d.n, d.k, A, d.a1, d.sa, B, d.b1, d.sb, 0.0f, C, d.n, d.sc,
                 d.batch);
}

/* dA += gradient of C = op(A) op(B) for batch products of m rows each (strides from d). */
static tg_status mm_grad_a(const mm_ctx *c, const tg_mm_dims *d, int64_t m, int64_t batch,
                           const void *B, const void *dC, float *dA) {
  if (!d->ta) /* dA [m, k] = dC op(B)^T */
    return mm_gemm(c, 0, !d->tb, m, d->k, d->n, dC, d->n, d->sc, B, d->b1, d->sb, 1.0f, dA, d->k,
                   d->sa, batch);
  /* dA [k, m] = op(B) dC^T */
  return mm_gemm(c, d->tb, 1, d->k, m, d->n, B, d->b1, d->sb, dC, d->n, d->sc, 1.0f, dA, m, d->sa,
                 batch);
}

/* dB += gradient of C = op(A) op(B) for batch products of m rows each (strides from d; dB is
 * strided like B, so with batch > 1 b must not be shared). */
static tg_status mm_grad_b(const mm_ctx *c, const tg_mm_dims *d, int64_t m, int64_t batch,
                           const void *A, const void *dC, float *dB) {
  if (!d->tb) /* dB [k, n] = op(A)^T dC */
    return mm_gemm(c, !d->ta, 0, d->k, d->n, m, A, d->a1, d->sa, dC, d->n, d->sc, 1.0f, dB, d->n,
                   d->sb, batch);
  /* dB [n, k] = dC^T op(A) */
  return mm_gemm(c, 1, d->ta, d->n, d->k, m, dC, d->n, d->sc, A, d->a1, d->sa, 1.0f, dB, d->k, d->sb,
                 batch);
}

tg_status tg_cuda_matmul_bwd(const tg_kernel_args *a) {
  tg_mm_dims d;
  tg_status st = tg_mm_dims_of(a, &d);
  if (st != TG_OK) return st;
  float *dA = a->in_grad[0]; /* like A, or NULL */
  float *dB = a->in_grad[1]; /* like B, or NULL */
  if (!dA && !dB) return TG_OK;
  mm_ctx c;
  if ((st = mm_ctx_of(a, &c)) != TG_OK) return st;
  /* as the GEMMs read them (f32, or bf16 copies of what the wanted gradients read): dC [batch, M, N],
   * A [batch, M, K] or [batch, K, M] (for dB), B [batch or 1, K, N] or [.., N, K] (for dA) */
  const void *dC, *A, *B;
  if ((st = mm_operand(&c, a->out_grad, NULL, tg_numel(a->out), &dC)) != TG_OK ||
      (st = mm_input(&c, 0, dB != NULL, tg_numel(a->in[0]), &A)) != TG_OK ||
      (st = mm_input(&c, 1, dA != NULL, tg_numel(a->in[1]), &B)) != TG_OK)
    return st;
  if (d.sb == 0 && !d.ta) {
    /* shared b, untransposed a: the batches are just more rows, and dB sums over them */
    if (dA && (st = mm_grad_a(&c, &d, d.batch * d.m, 1, B, dC, dA)) != TG_OK) return st;
    return dB ? mm_grad_b(&c, &d, d.batch * d.m, 1, A, dC, dB) : TG_OK;
  }
  if (dA && (st = mm_grad_a(&c, &d, d.m, d.batch, B, dC, dA)) != TG_OK) return st;
  if (!dB) return TG_OK;
  if (d.sb != 0) return mm_grad_b(&c, &d, d.m, d.batch, A, dC, dB);
  /* shared b, transposed a: dB sums the batches' products, one GEMM after another in order */
  for (int64_t i = 0; i < d.batch; i++)
    if ((st = mm_grad_b(&c, &d, d.m, 1, mm_at(&c, A, i * d.sa), mm_at(&c, dC, i * d.sc), dB)) != TG_OK) return st;
  return TG_OK;
}

/* y[r, o] = bias[o] for every row. */
static __global__ void k_bias_rows(float *y, const float *bias, int64_t rows, int64_t nout) {
  int64_t n = rows * nout;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x)
    y[e] = bias[e % nout];
}

tg_status tg_cuda_linear_fwd(const tg_kernel_args *a) {
  int64_t rows, nin, nout;
  tg_status st = tg_linear_dims(a, &rows, &nin, &nout);
  if (st != TG_OK) return st;
  mm_ctx c;
  if ((st = mm_ctx_of(a, &c)) != TG_OK) return st;
  const void *x, *w;                /* as the GEMM reads them (f32, or bf16 copies) */
  float *y = (float *)a->out->data; /* [rows, out] */
  if ((st = mm_input(&c, 0, 1, rows * nin, &x)) != TG_OK || /* [rows, in] */
      (st = mm_input(&c, 1, 1, nout * nin, &w)) != TG_OK)   /* [out, in] */
    return st;
  float beta = 0.0f;
  if (a->attr->i[0] && a->n_in > 2) { /* the bias stays f32: y starts as it, and the GEMM adds to it */
    const float *bias = (const float *)a->in[2]->data; /* [out] */
    if (rows * nout > 0) {
      k_bias_rows<<<tg_cuda_blocks(rows * nout), TG_CUDA_THREADS, 0, c.s>>>(y, bias, rows, nout);
      if ((st = tg_cuda_launched("k_bias_rows", a->node_name)) != TG_OK) return st;
    }
    beta = 1.0f;
  }
  return mm_gemm(&c, 0, 1, rows, nout, nin, x, nin, 0, w, nin, 0, beta, y, nout, 0, 1);
}

/* part[chunk, o] = sum of dy[r, o] over the chunk's rows [chunk * chunk_rows, ..): per block
 * COLSUM_W columns, its COLSUM_H thread rows striding the chunk, then added in thread-row order. */
static __global__ void k_col_partials(const float *dy, float *part, int64_t rows, int64_t nout,
                                      int64_t chunk_rows) {
  __shared__ float acc[COLSUM_H][COLSUM_W + 1];
  int64_t o = blockIdx.x * (int64_t)COLSUM_W + threadIdx.x;
  int64_t r0 = blockIdx.y * chunk_rows;
  int64_t r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  float s = 0.0f;
  if (o < nout)
    for (int64_t r = r0 + threadIdx.y; r < r1; r += COLSUM_H) s += dy[r * nout + o];
  acc[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || o >= nout) return;
  float t = acc[0][threadIdx.x];
  for (int h = 1; h < COLSUM_H; h++) t += acc[h][threadIdx.x];
  part[blockIdx.y * nout + o] = t;
}

/* db[o] += part[0, o] + part[1, o] + ... in chunk order. */
static __global__ void k_col_finish(const float *part, float *db, int64_t chunks, int64_t nout) {
  for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < nout;
       o += (int64_t)gridDim.x * blockDim.x) {
    float s = db[o];
    for (int64_t ch = 0; ch < chunks; ch++) s += part[ch * nout + o];
    db[o] = s;
  }
}

/* db[o] += sum over rows of dy[r, o], in a fixed order that depends only on the sizes. */
static tg_status mm_bias_grad(const mm_ctx *c, const float *dy, float *db, int64_t rows,
                              int64_t nout) {
  if (rows == 0 || nout == 0) return TG_OK;
  int64_t chunks = (rows + COLSUM_MIN_ROWS - 1) / COLSUM_MIN_ROWS;
  if (chunks > COLSUM_MAX_CHUNKS) chunks = COLSUM_MAX_CHUNKS;
  int64_t chunk_rows = (rows + chunks - 1) / chunks;
  /* [chunks, out] */
  float *part = (float *)tg_cuda_scratch(tg_cuda_dev_of(c->a), sizeof(float) * (size_t)(chunks * nout));
  if (!part) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
  dim3 grid((unsigned)((nout + COLSUM_W - 1) / COLSUM_W), (unsigned)chunks), block(COLSUM_W, COLSUM_H);
  k_col_partials<<<grid, block, 0, c->s>>>(dy, part, rows, nout, chunk_rows);
  tg_status st = tg_cuda_launched("k_col_partials", c->a->node_name);
  if (st != TG_OK) return st;
  k_col_finish<<<tg_cuda_blocks(nout), TG_CUDA_THREADS, 0, c->s>>>(part, db, chunks, nout);
  return tg_cuda_launched("k_col_finish", c->a->node_name);
}

tg_status tg_cuda_linear_bwd(const tg_kernel_args *a) {
  int64_t rows, nin, nout;
  tg_status st = tg_linear_dims(a, &rows, &nin, &nout);
  if (st != TG_OK) return st;
  float *dx = a->in_grad[0];                      /* [rows, in] or NULL */
  float *dw = a->in_grad[1];                      /* [out, in] or NULL */
  float *db = a->n_in > 2 ? a->in_grad[2] : NULL; /* [out] or NULL */
  if (!dx && !dw && !db) return TG_OK;
  mm_ctx c;
  if ((st = mm_ctx_of(a, &c)) != TG_OK) return st;
  /* as the GEMMs read them (f32, or bf16 copies of what the wanted gradients read) */
  const void *dy, *x, *w;
  if ((st = mm_operand(&c, dx || dw ? a->out_grad : NULL, NULL, rows * nout, &dy)) != TG_OK || /* [rows, out] */
      (st = mm_input(&c, 0, dw != NULL, rows * nin, &x)) != TG_OK ||                           /* [rows, in] */
      (st = mm_input(&c, 1, dx != NULL, nout * nin, &w)) != TG_OK)                             /* [out, in] */
    return st;
  if (dx && (st = mm_gemm(&c, 0, 0, rows, nin, nout, dy, nout, 0, w, nin, 0, 1.0f, dx, nin, 0, 1)) != TG_OK)
    return st;
  if (dw && (st = mm_gemm(&c, 1, 0, nout, nin, rows, dy, nout, 0, x, nin, 0, 1.0f, dw, nin, 0, 1)) != TG_OK)
    return st;
  /* the bias gradient sums the unrounded gradient, in f32 */
  return db ? mm_bias_grad(&c, a->out_grad, db, rows, nout) : TG_OK;
}

/* ---- stacked_linear: x [rows, G, in], w [G, out, in], bias [G, out] -> y [rows, G, out] ----
 * Group j is one GEMM of a strided batch: its x starts j * in floats in (row stride G * in), its y
 * and dy j * out floats in (row stride G * out), its weight j * out * in floats in. */

tg_status tg_cuda_stacked_linear_fwd(const tg_kernel_args *a) {
  int64_t rows, G, nin, nout;
  tg_status st = tg_stacked_dims(a, &rows, &G, &nin, &nout);
  if (st != TG_OK) return st;
  mm_ctx c;
  if ((st = mm_ctx_of(a, &c)) != TG_OK) return st;
  const void *x, *w;                /* as the GEMM reads them (f32, or bf16 copies) */
  float *y = (float *)a->out->data; /* [rows, G, out] */
  if ((st = mm_input(&c, 0, 1, rows * G * nin, &x)) != TG_OK || /* [rows, G, in] */
      (st = mm_input(&c, 1, 1, G * nout * nin, &w)) != TG_OK)   /* [G, out, in] */
    return st;
  float beta = 0.0f;
  if (a->attr->i[0] && a->n_in > 2) { /* the bias stays f32: y starts as it, and the GEMMs add to it */
    const float *bias = (const float *)a->in[2]->data; /* [G, out]: one row of y */
    if (rows * G * nout > 0) {
      k_bias_rows<<<tg_cuda_blocks(rows * G * nout), TG_CUDA_THREADS, 0, c.s>>>(y, bias, rows, G * nout);
      if ((st = tg_cuda_launched("k_bias_rows", a->node_name)) != TG_OK) return st;
    }
    beta = 1.0f;
  }
  /* with k = 0 and beta = 0 mm_gemm zeroes batch * rows * nout floats from y: all of y */
  return mm_gemm(&c, 0, 1, rows, nout, nin, x, G * nin, nin, w, nin, nout * nin, beta, y, G * nout, nout, G);
}

tg_status tg_cuda_stacked_linear_bwd(const tg_kernel_args *a) {
  int64_t rows, G, nin, nout;
  tg_status st = tg_stacked_dims(a, &rows, &G, &nin, &nout);
  if (st != TG_OK) return st;
  float *dx = a->in_grad[0];                      /* [rows, G, in] or NULL */
  float *dw = a->in_grad[1];                      /* [G, out, in] or NULL */
  float *db = a->n_in > 2 ? a->in_grad[2] : NULL; /* [G, out] or NULL */
  if (!dx && !dw && !db) return TG_OK;
  mm_ctx c;
  if ((st = mm_ctx_of(a, &c)) != TG_OK) return st;
  /* as the GEMMs read them (f32, or bf16 copies of what the wanted gradients read) */
  const void *dy, *x, *w;
  if ((st = mm_operand(&c, dx || dw ? a->out_grad : NULL, NULL, rows * G * nout, &dy)) != TG_OK || /* [rows, G, out] */
      (st = mm_input(&c, 0, dw != NULL, rows * G * nin, &x)) != TG_OK ||                           /* [rows, G, in] */
      (st = mm_input(&c, 1, dx != NULL, G * nout * nin, &w)) != TG_OK)                             /* [G, out, in] */
    return st;
  /* dx[:, j] [rows, in] += dy[:, j] w[j] */
  if (dx && (st = mm_gemm(&c, 0, 0, rows, nin, nout, dy, G * nout, nout, w, nin, nout * nin, 1.0f, dx, G * nin,
                          nin, G)) != TG_OK)
    return st;
  /* dw[j] [out, in] += dy[:, j]^T x[:, j] */
  if (dw && (st = mm_gemm(&c, 1, 0, nout, nin, rows, dy, G * nout, nout, x, G * nin, nin, 1.0f, dw, nin,
                          nout * nin, G)) != TG_OK)
    return st;
  /* db as [G out] += column sums of dy as [rows, G out]: the unrounded gradient, in f32 */
  return db ? mm_bias_grad(&c, a->out_grad, db, rows, G * nout) : TG_OK;
}
