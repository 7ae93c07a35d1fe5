/* What the CPU backend prepares for a GEMM node at plan time, and which library runs its products. */
#ifndef TG_CPU_GEMM_PLAN_H
#define TG_CPU_GEMM_PLAN_H

#include <stddef.h>
#include "backend/cpu/cpu_gemm_prim.h"
#include "ops/ops.h"

/* Products of at least this many multiply-adds and more than TG_GEMM_FEW_ROWS rows run on a planned oneDNN primitive
 * (TICKGRAD_GEMM=auto); the others (batch-1 inference) stay on OpenBLAS, whose per-call cost is lower there. */
#define TG_GEMM_PRIM_MIN_MACS 32768
/* A product with at most this many rows runs on OpenBLAS as one matrix-vector product per row (k_matmul.c). */
#define TG_GEMM_FEW_ROWS 4

typedef struct tg_cpu_gemm_plan {
  tg_gemm_prim *fwd;       /* the forward product; NULL: OpenBLAS */
  tg_gemm_prim *d_a, *d_b; /* backward: the first and the second input's gradient, added in; NULL: OpenBLAS */
  /* the same products writing the gradient instead (args.grad_fresh: its buffer was not zeroed); each is planned
   * beside its adding twin wherever the backend may start that input's gradient fresh (tg_cpu_bwd_fresh) */
  tg_gemm_prim *d_a_set, *d_b_set;
  int fwd_bias;            /* 1: the forward primitive adds the bias itself */
  int packed_bf16;         /* 1: the primitives take bf16 operands (kernels pack them); 0: f32 (rounded in bf16) */
  /* With packed bf16 operands, input k's bf16 copy [kept_numel[k]] where its backward reads that input again (an
   * activation, not a parameter, whose partner input wants a gradient): the forward packs it here and the backward
   * reads it back instead of rounding it a second time. NULL: the operand is rounded into the workspace per call. */
  uint16_t *kept[2];
  int64_t kept_numel[2];
} tg_cpu_gemm_plan;

/* The backend's prepare/unprepare entries: a tg_cpu_gemm_plan for matmul, linear and stacked_linear. Under
 * TICKGRAD_GEMM=auto on a CPU with native bf16 GEMMs, a bf16 node whose products get no packed bf16 primitive (too
 * small for oneDNN, a few rows, or no bf16 kernel for its layout) is settled to f32 (a->compute = TG_F32): rounding
 * its operands would make it slower than f32, not faster. Elsewhere (openblas, onednn, CPUs without native bf16) a bf16
 * node keeps bf16 operands. */
tg_status tg_cpu_prepare(int op, tg_kernel_args *a, void **state);
void tg_cpu_unprepare(void *state);
/* The bytes of the bf16 copies a prepared state keeps (tg_cpu_gemm_plan.kept). */
size_t tg_cpu_prepared_bytes(const void *state);
/* The primitive for input k's gradient (0: the first input, 1: the second) in plan p, writing it when fresh is set
 * and adding into it otherwise; NULL: OpenBLAS computes it. */
tg_gemm_prim *tg_cpu_grad_prim(const tg_cpu_gemm_plan *p, int k, int fresh);

/* One line on who runs GEMMs here (library, rule, bf16), for `tickgrad devices`. */
void tg_cpu_gemm_policy(char *buf, size_t n);

#endif
