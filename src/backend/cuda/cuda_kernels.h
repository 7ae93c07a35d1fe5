/* CUDA kernels (all on the device's compute stream, never synchronising): one forward and one backward per op (see ops.h for the calling convention). */
#ifndef TG_CUDA_KERNELS_H
#define TG_CUDA_KERNELS_H

#include "graph/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* k_matmul.cu */
tg_status tg_cuda_matmul_fwd(const tg_kernel_args *a);
tg_status tg_cuda_matmul_bwd(const tg_kernel_args *a);
tg_status tg_cuda_linear_fwd(const tg_kernel_args *a);
tg_status tg_cuda_linear_bwd(const tg_kernel_args *a);
tg_status tg_cuda_stacked_linear_fwd(const tg_kernel_args *a);
tg_status tg_cuda_stacked_linear_bwd(const tg_kernel_args *a);

/* k_elementwise.cu */
tg_status tg_cuda_add_fwd(const tg_kernel_args *a);
tg_status tg_cuda_add_bwd(const tg_kernel_args *a);
tg_status tg_cuda_sub_fwd(const tg_kernel_args *a);
tg_status tg_cuda_sub_bwd(const tg_kernel_args *a);
tg_status tg_cuda_mul_fwd(const tg_kernel_args *a);
tg_status tg_cuda_mul_bwd(const tg_kernel_args *a);
tg_status tg_cuda_div_fwd(const tg_kernel_args *a);
tg_status tg_cuda_div_bwd(const tg_kernel_args *a);
tg_status tg_cuda_scale_fwd(const tg_kernel_args *a);
tg_status tg_cuda_scale_bwd(const tg_kernel_args *a);
tg_status tg_cuda_relu_fwd(const tg_kernel_args *a);
tg_status tg_cuda_relu_bwd(const tg_kernel_args *a);
tg_status tg_cuda_tanh_fwd(const tg_kernel_args *a);
tg_status tg_cuda_tanh_bwd(const tg_kernel_args *a);
tg_status tg_cuda_sigmoid_fwd(const tg_kernel_args *a);
tg_status tg_cuda_sigmoid_bwd(const tg_kernel_args *a);
tg_status tg_cuda_elu_fwd(const tg_kernel_args *a);
tg_status tg_cuda_elu_bwd(const tg_kernel_args *a);
tg_status tg_cuda_silu_fwd(const tg_kernel_args *a);
tg_status tg_cuda_silu_bwd(const tg_kernel_args *a);
tg_status tg_cuda_gelu_fwd(const tg_kernel_args *a);
tg_status tg_cuda_gelu_bwd(const tg_kernel_args *a);
tg_status tg_cuda_softplus_fwd(const tg_kernel_args *a);
tg_status tg_cuda_softplus_bwd(const tg_kernel_args *a);
tg_status tg_cuda_exp_fwd(const tg_kernel_args *a);
tg_status tg_cuda_exp_bwd(const tg_kernel_args *a);
tg_status tg_cuda_log_fwd(const tg_kernel_args *a);
tg_status tg_cuda_log_bwd(const tg_kernel_args *a);
tg_status tg_cuda_sqrt_fwd(const tg_kernel_args *a);
tg_status tg_cuda_sqrt_bwd(const tg_kernel_args *a);

/* k_shape.cu */
tg_status tg_cuda_concat_fwd(const tg_kernel_args *a);
tg_status tg_cuda_concat_bwd(const tg_kernel_args *a);
tg_status tg_cuda_slice_fwd(const tg_kernel_args *a);
tg_status tg_cuda_slice_bwd(const tg_kernel_args *a);
tg_status tg_cuda_reshape_fwd(const tg_kernel_args *a);
tg_status tg_cuda_reshape_bwd(const tg_kernel_args *a);
tg_status tg_cuda_transpose_fwd(const tg_kernel_args *a);
tg_status tg_cuda_transpose_bwd(const tg_kernel_args *a);
tg_status tg_cuda_gather_rows_fwd(const tg_kernel_args *a);
tg_status tg_cuda_gather_rows_bwd(const tg_kernel_args *a);
tg_status tg_cuda_window_rows_fwd(const tg_kernel_args *a);

/* k_reduce.cu */
tg_status tg_cuda_sum_fwd(const tg_kernel_args *a);
tg_status tg_cuda_sum_bwd(const tg_kernel_args *a);
tg_status tg_cuda_mean_fwd(const tg_kernel_args *a);
tg_status tg_cuda_mean_bwd(const tg_kernel_args *a);
tg_status tg_cuda_sum_last_fwd(const tg_kernel_args *a);
tg_status tg_cuda_sum_last_bwd(const tg_kernel_args *a);
tg_status tg_cuda_mean_last_fwd(const tg_kernel_args *a);
tg_status tg_cuda_mean_last_bwd(const tg_kernel_args *a);
tg_status tg_cuda_max_last_fwd(const tg_kernel_args *a);
tg_status tg_cuda_max_last_bwd(const tg_kernel_args *a);
tg_status tg_cuda_argmax_last_fwd(const tg_kernel_args *a);
tg_status tg_cuda_dropout_fwd(const tg_kernel_args *a);
tg_status tg_cuda_dropout_bwd(const tg_kernel_args *a);

/* k_norm.cu */
tg_status tg_cuda_softmax_fwd(const tg_kernel_args *a);
tg_status tg_cuda_softmax_bwd(const tg_kernel_args *a);
tg_status tg_cuda_log_softmax_fwd(const tg_kernel_args *a);
tg_status tg_cuda_log_softmax_bwd(const tg_kernel_args *a);
tg_status tg_cuda_layernorm_fwd(const tg_kernel_args *a);
tg_status tg_cuda_layernorm_bwd(const tg_kernel_args *a);

/* k_gate_norm.cu */
tg_status tg_cuda_gate_add_norm_fwd(const tg_kernel_args *a);
tg_status tg_cuda_gate_add_norm_bwd(const tg_kernel_args *a);
tg_status tg_cuda_rmsnorm_fwd(const tg_kernel_args *a);
tg_status tg_cuda_rmsnorm_bwd(const tg_kernel_args *a);

/* k_loss.cu */
tg_status tg_cuda_mse_fwd(const tg_kernel_args *a);
tg_status tg_cuda_mse_bwd(const tg_kernel_args *a);
tg_status tg_cuda_huber_fwd(const tg_kernel_args *a);
tg_status tg_cuda_huber_bwd(const tg_kernel_args *a);
tg_status tg_cuda_pinball_fwd(const tg_kernel_args *a);
tg_status tg_cuda_pinball_bwd(const tg_kernel_args *a);
tg_status tg_cuda_softmax_xent_fwd(const tg_kernel_args *a);
tg_status tg_cuda_softmax_xent_bwd(const tg_kernel_args *a);

/* k_random.cu */
tg_status tg_cuda_sample_rows_fwd(const tg_kernel_args *a);

/* k_sequence.cu: causal softmax, causal depthwise conv */
tg_status tg_cuda_causal_softmax_fwd(const tg_kernel_args *a);
tg_status tg_cuda_causal_softmax_bwd(const tg_kernel_args *a);
tg_status tg_cuda_conv1d_causal_fwd(const tg_kernel_args *a);
tg_status tg_cuda_conv1d_causal_bwd(const tg_kernel_args *a);

/* k_lstm.cu: one LSTM layer over a sequence, forward and backpropagation through time */
tg_status tg_cuda_lstm_fwd(const tg_kernel_args *a);
tg_status tg_cuda_lstm_bwd(const tg_kernel_args *a);

/* k_ssd.cu: the chunked SSD scan */
tg_status tg_cuda_ssd_scan_fwd(const tg_kernel_args *a);
tg_status tg_cuda_ssd_scan_bwd(const tg_kernel_args *a);

/* k_ppo.cu: PPO's clipped loss, its parts and diagnostics */
tg_status tg_cuda_ppo_loss_fwd(const tg_kernel_args *a);
tg_status tg_cuda_ppo_loss_bwd(const tg_kernel_args *a);

/* k_attention.cu: fused multi-head scaled dot-product attention (ops/attention_args.h) */
tg_status tg_cuda_attention_fwd(const tg_kernel_args *a);
tg_status tg_cuda_attention_bwd(const tg_kernel_args *a);

/* The kernel pair of op for dtype dt (cuda_kernel_table.cu), NULL when there is none. */
const tg_op_kernels *tg_cuda_op_kernels(int op, tg_dtype dt);

#ifdef __cplusplus
}
#endif
#endif
