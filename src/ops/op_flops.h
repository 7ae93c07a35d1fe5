/* FLOP counts of one kernel call for the ops that have a formula (the GEMM ops, the LSTM's internal GEMMs). */
#ifndef TG_OP_FLOPS_H
#define TG_OP_FLOPS_H

#include "ops/ops.h"

/* Floating-point operations (2 per multiply-add) of one forward (backward = 0) or backward (backward = 1) call of op
 * with the plan's args a, as its kernels compute them:
 *   matmul          2 batch m n k forward; backward the same for each input whose gradient it computes
 *                   (a->in_grad[i] non-NULL)
 *   linear          2 rows out in forward; backward likewise per wanted gradient of x and w (the bias's sums not
 *                   counted)
 *   stacked_linear  2 rows G out in, the same rules
 *   lstm            its internal GEMMs: x W_ih^T over all steps and h_{t-1} W_hh^T per step forward; backward the
 *                   per-step dh products and the dx, dW_ih, dW_hh products it computes (gate math not counted)
 * and 0 for every other op (including ssd_scan, whose small products are not counted). */
double tg_op_flops(int op, const tg_kernel_args *a, int backward);

#endif
