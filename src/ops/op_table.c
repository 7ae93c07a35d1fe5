/* The one op table: every op's name, arity, flags, what its backward reads, and kernels per backend. */
#include "ops/ops.h"
#include "ops/gate_norm_args.h"
#include "backend/cpu/cpu_kernels.h"
#if TG_HAVE_CUDA
#include "backend/cuda/cuda_kernels.h"
/* Kernels of op stem s on every compiled backend: tg_<backend>_<s>_fwd and _bwd. */
#define K(s) .fwd = {[TG_CPU] = tg_cpu_##s##_fwd, [TG_CUDA] = tg_cuda_##s##_fwd}, \
             .bwd = {[TG_CPU] = tg_cpu_##s##_bwd, [TG_CUDA] = tg_cuda_##s##_bwd}
#define K_FWD(s) .fwd = {[TG_CPU] = tg_cpu_##s##_fwd, [TG_CUDA] = tg_cuda_##s##_fwd}, .bwd = {0}
#else
#define K(s) .fwd = {[TG_CPU] = tg_cpu_##s##_fwd}, .bwd = {[TG_CPU] = tg_cpu_##s##_bwd}
#define K_FWD(s) .fwd = {[TG_CPU] = tg_cpu_##s##_fwd}, .bwd = {0}
#endif
#define IN TG_BWD_NEEDS_INPUTS
#define OUT TG_BWD_NEEDS_OUTPUT

static const tg_op_def k_ops[TG_OP_COUNT] = {
    [TG_OP_PARAM] = {"param", 0, 0, TG_OPF_LEAF, 0, {0}, {0}},
    [TG_OP_INPUT] = {"input", 0, 0, TG_OPF_LEAF, 0, {0}, {0}},
    [TG_OP_MATMUL] = {"matmul", 2, 2, 0, IN, K(matmul)},
    [TG_OP_LINEAR] = {"linear", 2, 3, 0, IN, K(linear)},
    [TG_OP_ADD] = {"add", 2, 2, 0, 0, K(add)},
    [TG_OP_SUB] = {"sub", 2, 2, 0, 0, K(sub)},
    [TG_OP_MUL] = {"mul", 2, 2, 0, IN, K(mul)},
    [TG_OP_DIV] = {"div", 2, 2, 0, IN | OUT, K(div)},
    [TG_OP_SCALE] = {"scale", 1, 1, 0, 0, K(scale)},
    [TG_OP_RELU] = {"relu", 1, 1, 0, OUT, K(relu)},
    [TG_OP_TANH] = {"tanh", 1, 1, 0, OUT, K(tanh)},
    [TG_OP_SIGMOID] = {"sigmoid", 1, 1, 0, OUT, K(sigmoid)},
    [TG_OP_ELU] = {"elu", 1, 1, 0, IN | OUT, K(elu)},
    [TG_OP_SILU] = {"silu", 1, 1, 0, IN, K(silu)},
    [TG_OP_SOFTPLUS] = {"softplus", 1, 1, 0, IN, K(softplus)},
    [TG_OP_EXP] = {"exp", 1, 1, 0, OUT, K(exp)},
    [TG_OP_LOG] = {"log", 1, 1, 0, IN, K(log)},
    [TG_OP_SQRT] = {"sqrt", 1, 1, 0, OUT, K(sqrt)},
    [TG_OP_SOFTMAX] = {"softmax", 1, 1, 0, OUT, K(softmax)},
    [TG_OP_LOG_SOFTMAX] = {"log_softmax", 1, 1, 0, OUT,
                           K(log_softmax)},
    [TG_OP_LAYERNORM] = {"layernorm", 1, 3, 0, IN, K(layernorm)},
    [TG_OP_RMSNORM] = {"rmsnorm", 1, 2, 0, IN, K(rmsnorm)},
    [TG_OP_CONCAT] = {"concat", 1, TG_MAX_INPUTS, 0, 0, K(concat)},
    [TG_OP_SLICE] = {"slice", 1, 1, 0, 0, K(slice)},
    [TG_OP_RESHAPE] = {"reshape", 1, 1, TG_OPF_VIEW, 0, K(reshape)},
    [TG_OP_TRANSPOSE] = {"transpose", 1, 1, 0, 0, K(transpose)},
    [TG_OP_GATHER_ROWS] = {"gather_rows", 2, 2, 0, IN,
                           K(gather_rows)},
    [TG_OP_SUM] = {"sum", 1, 1, 0, 0, K(sum)},
    [TG_OP_MEAN] = {"mean", 1, 1, 0, 0, K(mean)},
    [TG_OP_SUM_LAST] = {"sum_last", 1, 1, 0, 0, K(sum_last)},
    [TG_OP_MEAN_LAST] = {"mean_last", 1, 1, 0, 0, K(mean_last)},
    [TG_OP_MAX_LAST] = {"max_last", 1, 1, 0, IN, K(max_last)},
    [TG_OP_ARGMAX_LAST] = {"argmax_last", 1, 1, TG_OPF_NO_GRAD, 0,
                           K_FWD(argmax_last)},
    [TG_OP_DROPOUT] = {"dropout", 1, 1, 0, 0, K(dropout)},
    [TG_OP_MSE_LOSS] = {"mse_loss", 2, 2, 0, IN, K(mse)},
    [TG_OP_HUBER_LOSS] = {"huber_loss", 2, 2, 0, IN, K(huber)},
    [TG_OP_PINBALL_LOSS] = {"pinball_loss", 2, 2, 0, IN, K(pinball)},
    [TG_OP_SOFTMAX_XENT] = {"softmax_cross_entropy", 2, 2, 0, IN,
                            K(softmax_xent)},
    [TG_OP_SAMPLE_ROWS] = {"sample_rows", 0, 0, TG_OPF_NO_GRAD, 0, K_FWD(sample_rows)},
    [TG_OP_CAUSAL_SOFTMAX] = {"causal_softmax", 1, 1, 0, OUT, K(causal_softmax)},
    [TG_OP_CONV1D_CAUSAL] = {"conv1d_causal", 2, 3, 0, IN, K(conv1d_causal)},
    [TG_OP_LSTM] = {"lstm", 3, 6, 0, IN | OUT, K(lstm), .workspace = tg_lstm_workspace},
    [TG_OP_SSD_SCAN] = {"ssd_scan", 5, 6, 0, IN, K(ssd_scan), .workspace = tg_ssd_workspace},
    [TG_OP_STACKED_LINEAR] = {"stacked_linear", 2, 3, 0, IN, K(stacked_linear)},
    [TG_OP_GATE_ADD_NORM] = {"gate_add_norm", 2, 4, 0, IN, K(gate_add_norm), .workspace = tg_gan_workspace},
    [TG_OP_PPO_LOSS] = {"ppo_loss", 7, 8, 0, IN, K(ppo_loss)},
    [TG_OP_WINDOW_ROWS] = {"window_rows", 1, 1, TG_OPF_NO_GRAD, 0, K_FWD(window_rows)},
};

const tg_op_def *tg_op_get(tg_op op) { return (op >= 0 && op < TG_OP_COUNT) ? &k_ops[op] : NULL; }

int tg_op_count(void) { return TG_OP_COUNT; }
const char *tg_op_name(int op) { return tg_op_get((tg_op)op) ? k_ops[op].name : "?"; }

int tg_op_has_forward(int op, tg_device_kind k) {
  const tg_op_def *d = tg_op_get((tg_op)op);
  if (!d || k < 0 || k >= TG_DEVICE_KIND_COUNT) return 0;
  return (d->flags & TG_OPF_LEAF) || d->fwd[k] != NULL;
}

int tg_op_differentiable(int op) {
  const tg_op_def *d = tg_op_get((tg_op)op);
  return d && !(d->flags & TG_OPF_NO_GRAD);
}

int tg_op_is_leaf(int op) {
  const tg_op_def *d = tg_op_get((tg_op)op);
  return d && (d->flags & TG_OPF_LEAF);
}

int tg_op_has_backward(int op, tg_device_kind k) {
  const tg_op_def *d = tg_op_get((tg_op)op);
  if (!d || k < 0 || k >= TG_DEVICE_KIND_COUNT) return 0;
  return (d->flags & (TG_OPF_LEAF | TG_OPF_NO_GRAD)) || d->bwd[k] != NULL;
}
