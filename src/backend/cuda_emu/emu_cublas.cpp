/* Emulated cuBLAS: SGEMM and GemmEx (f32 or bf16 operands, f32 C) as a reference GEMM (column-major, cuBLAS's op/ld/alpha/beta rules, each dot product accumulated in double and rounded once), queued on the handle's stream like any kernel. */
#include <stdio.h>
#include <string>
#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "emu_internal.h"
#include "emu_launch.h"

struct tg_emu_blas {
  cudaStream_t stream;
  cublasMath_t math;
  void *workspace;
  size_t workspace_bytes;
};

namespace {

/* Element e of an operand of type t (CUDA_R_32F or CUDA_R_16BF), exactly, as a double. */
double elem(const void *p, cudaDataType t, long long e) {
  if (t == CUDA_R_16BF) return (double)__bfloat162float(((const __nv_bfloat16 *)p)[e]);
  return (double)((const float *)p)[e];
}

struct gemm_task final : tg_emu_task {
  bool ta, tb;
  int m, n, k, lda, ldb, ldc, batch;
  float alpha, beta; /* read from the host pointers when the call is made, as cuBLAS does */
  const void *A, *B;  /* of type at, bt; strides in elements */
  cudaDataType at, bt;
  float *C;
  long long sa, sb, sc;
  void run() override {
    for (int b = 0; b < batch; b++) {
      long long a0 = (long long)b * sa, b0 = (long long)b * sb; /* this product's first elements of A and B */
      float *c = C + (long long)b * sc;
      for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
          double acc = 0.0; /* the products of f32 or bf16 values are exact in double */
          for (int p = 0; p < k; p++) {
            double x = elem(A, at, a0 + (ta ? (long long)i * lda + p : (long long)p * lda + i)); /* op(A)[i, p] */
            double y = elem(B, bt, b0 + (tb ? (long long)p * ldb + j : (long long)j * ldb + p)); /* op(B)[p, j] */
            acc += x * y;
          }
          float *cij = &c[(long long)j * ldc + i];
          /* beta 0: C is not read (NaN in it does not propagate), as cuBLAS documents */
          double r = (double)alpha * acc + (beta == 0.0f ? 0.0 : (double)beta * (double)*cij);
          *cij = (float)r;
        }
    }
  }
};

/* One GEMM call of any entry point, after its type checks: A of a_type, B of b_type, C f32. */
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const float *alpha, const void *A, cudaDataType a_type, int lda, long long sa, const void *B,
                    cudaDataType b_type, int ldb, long long sb, const float *beta, float *C, int ldc, long long sc,
                    int batch, const char *name) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (ta == CUBLAS_OP_C) ta = CUBLAS_OP_T; /* real matrices */
  if (tb == CUBLAS_OP_C) tb = CUBLAS_OP_T;
  bool at = ta == CUBLAS_OP_T, bt = tb == CUBLAS_OP_T;
  int a_rows = at ? k : m, b_rows = bt ? n : k;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) ||
      ldc < (m > 1 ? m : 1) || !alpha || !beta) {
    fprintf(stderr, "tickgrad CUDA emulator: %s: invalid value (m %d n %d k %d lda %d ldb %d ldc %d batch %d)\n", name, m,
            n, k, lda, ldb, ldc, batch);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  if (k > 0 && (tg_emu_mem_of(A) == TG_EMU_NOT_OURS || tg_emu_mem_of(B) == TG_EMU_NOT_OURS)) {
    fprintf(stderr, "tickgrad CUDA emulator: %s: A (%p) or B (%p) is not device memory\n", name, A, B);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (tg_emu_mem_of(C) == TG_EMU_NOT_OURS) {
    fprintf(stderr, "tickgrad CUDA emulator: %s: C at %p is not device memory\n", name, (void *)C);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  gemm_task *t = new gemm_task;
  t->ta = at, t->tb = bt, t->m = m, t->n = n, t->k = k, t->lda = lda, t->ldb = ldb, t->ldc = ldc, t->batch = batch;
  t->alpha = *alpha, t->beta = *beta, t->A = A, t->B = B, t->C = C, t->sa = sa, t->sb = sb, t->sc = sc;
  t->at = a_type, t->bt = b_type;
  tg_emu_submit(h->stream, t);
  return CUBLAS_STATUS_SUCCESS;
}

/* The typed entry points' own checks, as cuBLAS makes them: a computeType or algo that is no value of its enum is
 * INVALID_VALUE; a combination of types this emulator does not model is NOT_SUPPORTED (cuBLAS supports more, e.g. a
 * bf16 C: a test that needs one extends the reference GEMM first). Then the common GEMM. */
cublasStatus_t gemm_ex(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                       const void *alpha, const void *A, cudaDataType at, int lda, long long sa, const void *B,
                       cudaDataType bt, int ldb, long long sb, const void *beta, void *C, cudaDataType ct, int ldc,
                       long long sc, int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo,
                       const char *name) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  bool known_compute = (compute >= CUBLAS_COMPUTE_16F && compute <= CUBLAS_COMPUTE_32F_FAST_16BF) ||
                       compute == CUBLAS_COMPUTE_32F_FAST_TF32;
  bool known_algo = (algo >= CUBLAS_GEMM_DEFAULT && algo <= CUBLAS_GEMM_ALGO23) ||
                    (algo >= CUBLAS_GEMM_DEFAULT_TENSOR_OP && algo <= CUBLAS_GEMM_ALGO15_TENSOR_OP);
  if (!known_compute || !known_algo) {
    fprintf(stderr, "tickgrad CUDA emulator: %s: invalid value (computeType %d, algo %d)\n", name, (int)compute,
            (int)algo);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  bool modelled = compute == CUBLAS_COMPUTE_32F && ct == CUDA_R_32F && at == bt &&
                  (at == CUDA_R_32F || at == CUDA_R_16BF);
  if (!modelled) {
    fprintf(stderr, "tickgrad CUDA emulator: %s: Atype %d, Btype %d, Ctype %d with computeType %d is not modelled\n",
            name, (int)at, (int)bt, (int)ct, (int)compute);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return gemm(h, ta, tb, m, n, k, (const float *)alpha, A, at, lda, sa, B, bt, ldb, sb, (const float *)beta,
              (float *)C, ldc, sc, batch, name);
}

}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t *h) {
  *h = new tg_emu_blas{nullptr, CUBLAS_DEFAULT_MATH, nullptr, 0};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  h->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t h, void *workspace, size_t bytes) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (bytes && tg_emu_mem_of(workspace) != TG_EMU_DEVICE_MEM) return CUBLAS_STATUS_INVALID_VALUE;
  h->workspace = workspace;
  h->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  h->math = mode; /* the reference GEMM is FP32 in, double accumulation, whatever the mode */
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusName(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  }
  return "unknown cuBLAS status";
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
                           float *C, int ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, beta, C, ldc, 0, 1,
              "cublasSgemm");
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, long long sa,
                                         const float *B, int ldb, long long sb, const float *beta, float *C, int ldc,
                                         long long sc, int batch) {
  return gemm(h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, sa, B, CUDA_R_32F, ldb, sb, beta, C, ldc, sc, batch,
              "cublasSgemmStridedBatched");
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return gemm_ex(h, ta, tb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C, Ctype, ldc, 0, 1,
                 computeType, algo, "cublasGemmEx");
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
                                          long long sa, const void *B, cudaDataType Btype, int ldb, long long sb,
                                          const void *beta, void *C, cudaDataType Ctype, int ldc, long long sc,
                                          int batch, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return gemm_ex(h, ta, tb, m, n, k, alpha, A, Atype, lda, sa, B, Btype, ldb, sb, beta, C, Ctype, ldc, sc, batch,
                 computeType, algo, "cublasGemmStridedBatchedEx");
}
