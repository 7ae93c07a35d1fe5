/* Emulated cuBLAS: SGEMM as a reference GEMM (column-major, cuBLAS's op/ld/alpha/beta rules, each dot product accumulated in double and rounded once), queued on the handle's stream like any kernel. */
#include <stdio.h>
#include <string>
#include "cublas_v2.h"
#include "emu_internal.h"
#include "emu_launch.h"

struct tg_emu_blas {
  cudaStream_t stream;
  cublasMath_t math;
  void *workspace;
  size_t workspace_bytes;
};

namespace {

struct gemm_task final : tg_emu_task {
  bool ta, tb;
  int m, n, k, lda, ldb, ldc, batch;
  float alpha, beta; /* read from the host pointers when the call is made, as cuBLAS does */
  const float *A, *B;
  float *C;
  long long sa, sb, sc;
  void run() override {
    for (int b = 0; b < batch; b++) {
      const float *a = A + (long long)b * sa, *bm = B + (long long)b * sb;
      float *c = C + (long long)b * sc;
      for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
          double acc = 0.0;
          for (int p = 0; p < k; p++) {
            double x = ta ? a[(long long)i * lda + p] : a[(long long)p * lda + i];  /* op(A)[i, p] */
            double y = tb ? bm[(long long)p * ldb + j] : bm[(long long)j * ldb + p]; /* op(B)[p, j] */
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

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const float *alpha, const float *A, int lda, long long sa, const float *B, int ldb, long long sb,
                    const float *beta, float *C, int ldc, long long sc, int batch, const char *name) {
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
    fprintf(stderr, "tickgrad CUDA emulator: %s: A (%p) or B (%p) is not device memory\n", name, (const void *)A,
            (const void *)B);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (tg_emu_mem_of(C) == TG_EMU_NOT_OURS) {
    fprintf(stderr, "tickgrad CUDA emulator: %s: C at %p is not device memory\n", name, (void *)C);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  gemm_task *t = new gemm_task;
  t->ta = at, t->tb = bt, t->m = m, t->n = n, t->k = k, t->lda = lda, t->ldb = ldb, t->ldc = ldc, t->batch = batch;
  t->alpha = *alpha, t->beta = *beta, t->A = A, t->B = B, t->C = C, t->sa = sa, t->sb = sb, t->sc = sc;
  tg_emu_submit(h->stream, t);
  return CUBLAS_STATUS_SUCCESS;
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
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, "cublasSgemm");
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, long long sa,
                                         const float *B, int ldb, long long sb, const float *beta, float *C, int ldc,
                                         long long sc, int batch) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch, "cublasSgemmStridedBatched");
}
