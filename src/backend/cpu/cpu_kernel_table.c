/* The CPU backend's kernels per op and compute dtype: the op kernel list expanded with the tg_cpu_ prefix for f32;
 * for bf16 the GEMM ops, whose kernels read the compute dtype and round their operands. */
#include "graph/backend.h"
#include "backend/cpu/cpu_kernels.h"
#include "ops/op_kernel_list.h"

#define CPU_FB(op, s) TG_OP_KERNEL_CASE_FB_(tg_cpu, op, s)
#define CPU_F(op, s) TG_OP_KERNEL_CASE_F_(tg_cpu, op, s)

const tg_op_kernels *tg_cpu_op_kernels(int op, tg_dtype dt) {
  if (dt == TG_BF16)
    return tg_op_is_gemm((tg_op)op) ? tg_cpu_op_kernels(op, TG_F32) : NULL;
  if (dt != TG_F32) return NULL;
  switch (op) {
    TG_OP_KERNEL_LIST(CPU_FB, CPU_F)
    default:
      return NULL;
  }
}

unsigned tg_cpu_bwd_fresh(int op) {
  switch (op) {
    case TG_OP_ADD:
    case TG_OP_SUB:
    case TG_OP_MUL:
    case TG_OP_DIV:
    case TG_OP_GATE_ADD_NORM: /* a and skip (gamma and beta keep being zeroed) */
    case TG_OP_MATMUL:        /* beta 0 for OpenBLAS, the writing primitive twin for oneDNN (cpu_gemm_plan.h) */
      return 3u;
    case TG_OP_LINEAR: /* x only: the weight is a parameter */
    case TG_OP_STACKED_LINEAR:
      return 1u;
    case TG_OP_SCALE:
    case TG_OP_RELU:
    case TG_OP_TANH:
    case TG_OP_SIGMOID:
    case TG_OP_ELU:
    case TG_OP_SILU:
    case TG_OP_GELU:
    case TG_OP_SOFTPLUS:
    case TG_OP_EXP:
    case TG_OP_LOG:
    case TG_OP_SQRT:
    case TG_OP_DROPOUT:
    case TG_OP_LAYERNORM: /* x only */
    case TG_OP_CAUSAL_SOFTMAX:
    case TG_OP_SLICE:
    case TG_OP_TRANSPOSE:
      return 1u;
    case TG_OP_CONCAT:
      return ~0u;
    case TG_OP_ATTENTION: /* q, k, v */
      return 7u;
    default:
      return 0u;
  }
}
