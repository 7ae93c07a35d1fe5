/* Every op that has kernels, with the stem of their names: a backend B defines tg_B_<stem>_fwd, and tg_B_<stem>_bwd
 * for the ops listed with FB (F: forward only), and expands this list into its kernel table. */
#ifndef TG_OPS_OP_KERNEL_LIST_H
#define TG_OPS_OP_KERNEL_LIST_H

#define TG_OP_KERNEL_LIST(FB, F)                                                                                       \
  FB(TG_OP_MATMUL, matmul) FB(TG_OP_LINEAR, linear) FB(TG_OP_ADD, add) FB(TG_OP_SUB, sub) FB(TG_OP_MUL, mul)            \
  FB(TG_OP_DIV, div) FB(TG_OP_SCALE, scale) FB(TG_OP_RELU, relu) FB(TG_OP_TANH, tanh) FB(TG_OP_SIGMOID, sigmoid)        \
  FB(TG_OP_ELU, elu) FB(TG_OP_SILU, silu) FB(TG_OP_SOFTPLUS, softplus) FB(TG_OP_EXP, exp) FB(TG_OP_LOG, log)            \
  FB(TG_OP_SQRT, sqrt) FB(TG_OP_SOFTMAX, softmax) FB(TG_OP_LOG_SOFTMAX, log_softmax) FB(TG_OP_LAYERNORM, layernorm)     \
  FB(TG_OP_RMSNORM, rmsnorm) FB(TG_OP_CONCAT, concat) FB(TG_OP_SLICE, slice) FB(TG_OP_RESHAPE, reshape)                 \
  FB(TG_OP_TRANSPOSE, transpose) FB(TG_OP_GATHER_ROWS, gather_rows) FB(TG_OP_SUM, sum) FB(TG_OP_MEAN, mean)            \
  FB(TG_OP_SUM_LAST, sum_last) FB(TG_OP_MEAN_LAST, mean_last) FB(TG_OP_MAX_LAST, max_last)                             \
  F(TG_OP_ARGMAX_LAST, argmax_last) FB(TG_OP_DROPOUT, dropout) FB(TG_OP_MSE_LOSS, mse) FB(TG_OP_HUBER_LOSS, huber)      \
  FB(TG_OP_PINBALL_LOSS, pinball) FB(TG_OP_SOFTMAX_XENT, softmax_xent) F(TG_OP_SAMPLE_ROWS, sample_rows)                \
  FB(TG_OP_CAUSAL_SOFTMAX, causal_softmax) FB(TG_OP_CONV1D_CAUSAL, conv1d_causal) FB(TG_OP_LSTM, lstm)                  \
  FB(TG_OP_SSD_SCAN, ssd_scan) FB(TG_OP_STACKED_LINEAR, stacked_linear) FB(TG_OP_GATE_ADD_NORM, gate_add_norm)          \
  FB(TG_OP_PPO_LOSS, ppo_loss) F(TG_OP_WINDOW_ROWS, window_rows) FB(TG_OP_GELU, gelu)                                   \
  FB(TG_OP_ATTENTION, attention)

/* The body of a backend's kernel lookup for prefix P: a switch over the list returning a static pair per op. */
#define TG_OP_KERNEL_CASE_FB_(P, op, s)                                                                                \
  case op: {                                                                                                           \
    static const tg_op_kernels k = {P##_##s##_fwd, P##_##s##_bwd};                                                     \
    return &k;                                                                                                         \
  }
#define TG_OP_KERNEL_CASE_F_(P, op, s)                                                                                 \
  case op: {                                                                                                           \
    static const tg_op_kernels k = {P##_##s##_fwd, NULL};                                                              \
    return &k;                                                                                                         \
  }

#endif
