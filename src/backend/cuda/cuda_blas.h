/* cuBLAS's entry points the backend calls, loaded with dlopen when the first device starts (cuda_blas.cu), so a
 * process that never starts a GPU never maps libcublas (linking it cost every command 200 MB and 0.4 s). */
#ifndef TG_CUDA_BLAS_H
#define TG_CUDA_BLAS_H

#include <cublas_v2.h>
#include "tickgrad/status.h"

/* X(member, function): every cuBLAS function the backend calls. A call made directly instead of through tg_cublas
 * is a link error, since the library does not link cuBLAS. */
#define TG_CUBLAS_FUNCS(X)                                                                                        \
  X(create, cublasCreate) X(set_stream, cublasSetStream) X(set_workspace, cublasSetWorkspace)                     \
  X(set_math_mode, cublasSetMathMode) X(status_name, cublasGetStatusName) X(status_string, cublasGetStatusString) \
  X(sgemm, cublasSgemm) X(sgemm_strided_batched, cublasSgemmStridedBatched) X(gemm_ex, cublasGemmEx)              \
  X(gemm_strided_batched_ex, cublasGemmStridedBatchedEx)

typedef struct tg_cublas_api {
  decltype(&cublasCreate) create;
  decltype(&cublasSetStream) set_stream;
  decltype(&cublasSetWorkspace) set_workspace;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
  decltype(&cublasSgemm) sgemm;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
  /* the exported GemmEx functions (C++ also sees inline overloads taking a cudaDataType compute type) */
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType, int lda, const void *B, cudaDataType,
                            int ldb, const void *beta, void *C, cudaDataType, int ldc, cublasComputeType_t,
                            cublasGemmAlgo_t);
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k,
                                            const void *alpha, const void *A, cudaDataType, int lda, long long sa,
                                            const void *B, cudaDataType, int ldb, long long sb, const void *beta,
                                            void *C, cudaDataType, int ldc, long long sc, int batch,
                                            cublasComputeType_t, cublasGemmAlgo_t);
} tg_cublas_api;

/* Loads cuBLAS once per process (thread-safe; later calls return the first outcome): TG_OK, or TG_ERR_DEVICE
 * naming each library file tried and why it did not load. Every device start calls it before cublasCreate. */
tg_status tg_cublas_load(void);
/* The entry points, valid once tg_cublas_load has succeeded (so wherever a device's cuBLAS handle exists). */
extern tg_cublas_api tg_cublas;

#endif
