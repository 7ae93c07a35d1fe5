/* The Vulkan backend's op kernels (tg_vk_<stem>_fwd/_bwd, named as ops/op_kernel_list.h names them), each one dispatch
 * on the device of the tensors it is given; the ops with kernels so far, for the backend's table. */
#ifndef TG_VK_KERNELS_H
#define TG_VK_KERNELS_H

#include "graph/backend.h"

/* The ops that have Vulkan kernels today: FB(op, stem) for a forward and backward, F(op, stem) for a forward only (an
 * op without a gradient), as ops/op_kernel_list.h lists them. */
#define TG_VK_KERNEL_LIST(FB, F)                                                                                       \
  FB(TG_OP_ADD, add) FB(TG_OP_SUB, sub) FB(TG_OP_MUL, mul) FB(TG_OP_DIV, div) FB(TG_OP_SCALE, scale)                   \
  FB(TG_OP_RELU, relu) FB(TG_OP_TANH, tanh) FB(TG_OP_SIGMOID, sigmoid) FB(TG_OP_ELU, elu) FB(TG_OP_SILU, silu)         \
  FB(TG_OP_SOFTPLUS, softplus) FB(TG_OP_EXP, exp) FB(TG_OP_LOG, log) FB(TG_OP_SQRT, sqrt) FB(TG_OP_GELU, gelu)         \
  FB(TG_OP_MATMUL, matmul) FB(TG_OP_LINEAR, linear) FB(TG_OP_STACKED_LINEAR, stacked_linear) FB(TG_OP_SUM, sum)        \
  FB(TG_OP_MEAN, mean) FB(TG_OP_SUM_LAST, sum_last) FB(TG_OP_MEAN_LAST, mean_last) FB(TG_OP_MSE_LOSS, mse)             \
  FB(TG_OP_HUBER_LOSS, huber) FB(TG_OP_SOFTMAX, softmax) FB(TG_OP_LOG_SOFTMAX, log_softmax) FB(TG_OP_CONCAT, concat)   \
  FB(TG_OP_SLICE, slice) FB(TG_OP_RESHAPE, reshape) FB(TG_OP_TRANSPOSE, transpose) FB(TG_OP_LAYERNORM, layernorm)      \
  FB(TG_OP_PINBALL_LOSS, pinball) FB(TG_OP_CAUSAL_SOFTMAX, causal_softmax) FB(TG_OP_RMSNORM, rmsnorm)                  \
  FB(TG_OP_GATE_ADD_NORM, gate_add_norm) FB(TG_OP_GATHER_ROWS, gather_rows)                                            \
  FB(TG_OP_MAX_LAST, max_last) F(TG_OP_ARGMAX_LAST, argmax_last) FB(TG_OP_SOFTMAX_XENT, softmax_xent)                  \
  FB(TG_OP_DROPOUT, dropout) F(TG_OP_SAMPLE_ROWS, sample_rows) F(TG_OP_WINDOW_ROWS, window_rows)                       \
  FB(TG_OP_CONV1D_CAUSAL, conv1d_causal) FB(TG_OP_PPO_LOSS, ppo_loss) FB(TG_OP_SSD_SCAN, ssd_scan) FB(TG_OP_LSTM, lstm)

#define TG_VK_KERNEL_DECL(op, s)                                                                                       \
  tg_status tg_vk_##s##_fwd(const tg_kernel_args *a);                                                                  \
  tg_status tg_vk_##s##_bwd(const tg_kernel_args *a);
#define TG_VK_KERNEL_DECL_F(op, s) tg_status tg_vk_##s##_fwd(const tg_kernel_args *a);
TG_VK_KERNEL_LIST(TG_VK_KERNEL_DECL, TG_VK_KERNEL_DECL_F)
#undef TG_VK_KERNEL_DECL
#undef TG_VK_KERNEL_DECL_F

/* out [1] = the mean of x [n] on vulkan:dev (NaN when n is 0), summed as the mean op sums; node names errors. */
tg_status tg_vk_mean_of(int dev, const char *node, const float *x, int64_t n, float *out);

/* The op's kernel pair on Vulkan, NULL when it has none yet. */
const tg_op_kernels *tg_vk_op_kernels(int op);

#endif
