/* The CUDA backend's kernels per op and compute dtype: the op kernel list expanded with the tg_cuda_ prefix for f32;
 * for bf16 the GEMM ops, whose kernels read the compute dtype and round their operands (k_matmul.cu). */
#include "graph/backend.h"
#include "backend/cuda/cuda_kernels.h"
#include "ops/op_kernel_list.h"

#define CUDA_FB(op, s) TG_OP_KERNEL_CASE_FB_(tg_cuda, op, s)
#define CUDA_F(op, s) TG_OP_KERNEL_CASE_F_(tg_cuda, op, s)

extern "C" const tg_op_kernels *tg_cuda_op_kernels(int op, tg_dtype dt) {
  if (dt == TG_BF16) return tg_op_is_gemm((tg_op)op) ? tg_cuda_op_kernels(op, TG_F32) : NULL;
  if (dt != TG_F32) return NULL;
  switch (op) {
    TG_OP_KERNEL_LIST(CUDA_FB, CUDA_F)
    default:
      return NULL;
  }
}
