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
