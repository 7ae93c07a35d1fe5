/* CPU kernels: one forward and one backward per op (see ops.h for the calling convention). */
#ifndef TG_CPU_KERNELS_H
#define TG_CPU_KERNELS_H

#include "graph/backend.h"

/* k_matmul.c */
/* C[m, n] = op(A) op(B) + beta * C, row-major, op(A) [m, k], op(B) [k, n] (any size, 0 included).
 * When OpenBLAS is single-threaded (tg_set_threads makes it so), a large product is split here into
 * slabs of C's rows or columns across the OpenMP threads (not inside a parallel region). */
void tg_cpu_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
tg_status tg_cpu_matmul_fwd(const tg_kernel_args *a);
tg_status tg_cpu_matmul_bwd(const tg_kernel_args *a);
tg_status tg_cpu_linear_fwd(const tg_kernel_args *a);
tg_status tg_cpu_linear_bwd(const tg_kernel_args *a);
tg_status tg_cpu_stacked_linear_fwd(const tg_kernel_args *a);
tg_status tg_cpu_stacked_linear_bwd(const tg_kernel_args *a);

/* k_stacked_in1.c: stacked_linear with in = 1, x [rows, G], w [G, out], bias [G, out] or NULL, y and dy [rows, G, out];
 * dx (written instead when dx_fresh: args.grad_fresh) and dw accumulate (NULL: not wanted; the bias gradient is the
 * caller's). */
void tg_cpu_stacked_in1_fwd(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t G,
                            int64_t nout);
void tg_cpu_stacked_in1_bwd(const float *x, const float *w, const float *dy, float *dx, int dx_fresh, float *dw,
                            int64_t rows, int64_t G, int64_t nout);

/* k_elementwise.c */
tg_status tg_cpu_add_fwd(const tg_kernel_args *a);
tg_status tg_cpu_add_bwd(const tg_kernel_args *a);
tg_status tg_cpu_sub_fwd(const tg_kernel_args *a);
tg_status tg_cpu_sub_bwd(const tg_kernel_args *a);
tg_status tg_cpu_mul_fwd(const tg_kernel_args *a);
tg_status tg_cpu_mul_bwd(const tg_kernel_args *a);
tg_status tg_cpu_div_fwd(const tg_kernel_args *a);
tg_status tg_cpu_div_bwd(const tg_kernel_args *a);
tg_status tg_cpu_scale_fwd(const tg_kernel_args *a);
tg_status tg_cpu_scale_bwd(const tg_kernel_args *a);
tg_status tg_cpu_relu_fwd(const tg_kernel_args *a);
tg_status tg_cpu_relu_bwd(const tg_kernel_args *a);
tg_status tg_cpu_tanh_fwd(const tg_kernel_args *a);
tg_status tg_cpu_tanh_bwd(const tg_kernel_args *a);
tg_status tg_cpu_sigmoid_fwd(const tg_kernel_args *a);
tg_status tg_cpu_sigmoid_bwd(const tg_kernel_args *a);
tg_status tg_cpu_elu_fwd(const tg_kernel_args *a);
tg_status tg_cpu_elu_bwd(const tg_kernel_args *a);
tg_status tg_cpu_silu_fwd(const tg_kernel_args *a);
tg_status tg_cpu_silu_bwd(const tg_kernel_args *a);
tg_status tg_cpu_gelu_fwd(const tg_kernel_args *a);
tg_status tg_cpu_gelu_bwd(const tg_kernel_args *a);
tg_status tg_cpu_softplus_fwd(const tg_kernel_args *a);
tg_status tg_cpu_softplus_bwd(const tg_kernel_args *a);
tg_status tg_cpu_exp_fwd(const tg_kernel_args *a);
tg_status tg_cpu_exp_bwd(const tg_kernel_args *a);
tg_status tg_cpu_log_fwd(const tg_kernel_args *a);
tg_status tg_cpu_log_bwd(const tg_kernel_args *a);
tg_status tg_cpu_sqrt_fwd(const tg_kernel_args *a);
tg_status tg_cpu_sqrt_bwd(const tg_kernel_args *a);

/* k_shape.c */
tg_status tg_cpu_concat_fwd(const tg_kernel_args *a);
tg_status tg_cpu_concat_bwd(const tg_kernel_args *a);
tg_status tg_cpu_slice_fwd(const tg_kernel_args *a);
tg_status tg_cpu_slice_bwd(const tg_kernel_args *a);
tg_status tg_cpu_reshape_fwd(const tg_kernel_args *a);
tg_status tg_cpu_reshape_bwd(const tg_kernel_args *a);
tg_status tg_cpu_transpose_fwd(const tg_kernel_args *a);
tg_status tg_cpu_transpose_bwd(const tg_kernel_args *a);
tg_status tg_cpu_gather_rows_fwd(const tg_kernel_args *a);
tg_status tg_cpu_gather_rows_bwd(const tg_kernel_args *a);
tg_status tg_cpu_window_rows_fwd(const tg_kernel_args *a);

/* k_reduce.c */
tg_status tg_cpu_sum_fwd(const tg_kernel_args *a);
tg_status tg_cpu_sum_bwd(const tg_kernel_args *a);
tg_status tg_cpu_mean_fwd(const tg_kernel_args *a);
tg_status tg_cpu_mean_bwd(const tg_kernel_args *a);
tg_status tg_cpu_sum_last_fwd(const tg_kernel_args *a);
tg_status tg_cpu_sum_last_bwd(const tg_kernel_args *a);
tg_status tg_cpu_mean_last_fwd(const tg_kernel_args *a);
tg_status tg_cpu_mean_last_bwd(const tg_kernel_args *a);
tg_status tg_cpu_max_last_fwd(const tg_kernel_args *a);
tg_status tg_cpu_max_last_bwd(const tg_kernel_args *a);
tg_status tg_cpu_argmax_last_fwd(const tg_kernel_args *a);
tg_status tg_cpu_dropout_fwd(const tg_kernel_args *a);
tg_status tg_cpu_dropout_bwd(const tg_kernel_args *a);

/* k_norm.c */
tg_status tg_cpu_softmax_fwd(const tg_kernel_args *a);
tg_status tg_cpu_softmax_bwd(const tg_kernel_args *a);
tg_status tg_cpu_log_softmax_fwd(const tg_kernel_args *a);
tg_status tg_cpu_log_softmax_bwd(const tg_kernel_args *a);
tg_status tg_cpu_layernorm_fwd(const tg_kernel_args *a);
tg_status tg_cpu_layernorm_bwd(const tg_kernel_args *a);

/* k_gate_norm.c */
tg_status tg_cpu_gate_add_norm_fwd(const tg_kernel_args *a);
tg_status tg_cpu_gate_add_norm_bwd(const tg_kernel_args *a);
tg_status tg_cpu_rmsnorm_fwd(const tg_kernel_args *a);
tg_status tg_cpu_rmsnorm_bwd(const tg_kernel_args *a);

/* k_loss.c */
tg_status tg_cpu_mse_fwd(const tg_kernel_args *a);
tg_status tg_cpu_mse_bwd(const tg_kernel_args *a);
tg_status tg_cpu_huber_fwd(const tg_kernel_args *a);
tg_status tg_cpu_huber_bwd(const tg_kernel_args *a);
tg_status tg_cpu_pinball_fwd(const tg_kernel_args *a);
tg_status tg_cpu_pinball_bwd(const tg_kernel_args *a);
tg_status tg_cpu_softmax_xent_fwd(const tg_kernel_args *a);
tg_status tg_cpu_softmax_xent_bwd(const tg_kernel_args *a);

/* k_random.c */
tg_status tg_cpu_sample_rows_fwd(const tg_kernel_args *a);

/* k_sequence.c: causal softmax, causal depthwise conv */
tg_status tg_cpu_causal_softmax_fwd(const tg_kernel_args *a);
tg_status tg_cpu_causal_softmax_bwd(const tg_kernel_args *a);
tg_status tg_cpu_attention_fwd(const tg_kernel_args *a);
tg_status tg_cpu_attention_bwd(const tg_kernel_args *a);
tg_status tg_cpu_conv1d_causal_fwd(const tg_kernel_args *a);
tg_status tg_cpu_conv1d_causal_bwd(const tg_kernel_args *a);

/* k_lstm.c: one LSTM layer over a sequence, forward and backpropagation through time */
tg_status tg_cpu_lstm_fwd(const tg_kernel_args *a);
tg_status tg_cpu_lstm_bwd(const tg_kernel_args *a);

/* k_ssd.c: the chunked SSD scan */
tg_status tg_cpu_ssd_scan_fwd(const tg_kernel_args *a);
tg_status tg_cpu_ssd_scan_bwd(const tg_kernel_args *a);

/* k_ppo.c: PPO's clipped loss, its parts and diagnostics */
tg_status tg_cpu_ppo_loss_fwd(const tg_kernel_args *a);
tg_status tg_cpu_ppo_loss_bwd(const tg_kernel_args *a);

/* The kernel pair of op for dtype dt (cpu_kernel_table.c), NULL when there is none. */
const tg_op_kernels *tg_cpu_op_kernels(int op, tg_dtype dt);
/* The inputs whose gradient op's backward kernel can start unzeroed (tg_backend.bwd_fresh; cpu_kernel_table.c). */
unsigned tg_cpu_bwd_fresh(int op);

#endif
