/* The one op table: every op's name, arity, flags, what its backward reads, and kernels per backend. */
#include "ops/ops.h"
#include "backend/cpu/cpu_kernels.h"

#define CPU_ONLY(f, b) .fwd = {[TG_CPU] = (f)}, .bwd = {[TG_CPU] = (b)}
#define IN TG_BWD_NEEDS_INPUTS
#define OUT TG_BWD_NEEDS_OUTPUT

static const tg_op_def k_ops[TG_OP_COUNT] = {
    [TG_OP_PARAM] = {"param", 0, 0, TG_OPF_LEAF, 0, {0}, {0}},
    [TG_OP_INPUT] = {"input", 0, 0, TG_OPF_LEAF, 0, {0}, {0}},
    [TG_OP_MATMUL] = {"matmul", 2, 2, 0, IN, CPU_ONLY(tg_cpu_matmul_fwd, tg_cpu_matmul_bwd)},
    [TG_OP_LINEAR] = {"linear", 2, 3, 0, IN, CPU_ONLY(tg_cpu_linear_fwd, tg_cpu_linear_bwd)},
    [TG_OP_ADD] = {"add", 2, 2, 0, 0, CPU_ONLY(tg_cpu_add_fwd, tg_cpu_add_bwd)},
    [TG_OP_SUB] = {"sub", 2, 2, 0, 0, CPU_ONLY(tg_cpu_sub_fwd, tg_cpu_sub_bwd)},
    [TG_OP_MUL] = {"mul", 2, 2, 0, IN, CPU_ONLY(tg_cpu_mul_fwd, tg_cpu_mul_bwd)},
    [TG_OP_DIV] = {"div", 2, 2, 0, IN | OUT, CPU_ONLY(tg_cpu_div_fwd, tg_cpu_div_bwd)},
    [TG_OP_SCALE] = {"scale", 1, 1, 0, 0, CPU_ONLY(tg_cpu_scale_fwd, tg_cpu_scale_bwd)},
    [TG_OP_RELU] = {"relu", 1, 1, 0, OUT, CPU_ONLY(tg_cpu_relu_fwd, tg_cpu_relu_bwd)},
    [TG_OP_TANH] = {"tanh", 1, 1, 0, OUT, CPU_ONLY(tg_cpu_tanh_fwd, tg_cpu_tanh_bwd)},
    [TG_OP_SIGMOID] = {"sigmoid", 1, 1, 0, OUT, CPU_ONLY(tg_cpu_sigmoid_fwd, tg_cpu_sigmoid_bwd)},
    [TG_OP_ELU] = {"elu", 1, 1, 0, IN | OUT, CPU_ONLY(tg_cpu_elu_fwd, tg_cpu_elu_bwd)},
    [TG_OP_SILU] = {"silu", 1, 1, 0, IN, CPU_ONLY(tg_cpu_silu_fwd, tg_cpu_silu_bwd)},
    [TG_OP_SOFTPLUS] = {"softplus", 1, 1, 0, IN, CPU_ONLY(tg_cpu_softplus_fwd, tg_cpu_softplus_bwd)},
    [TG_OP_EXP] = {"exp", 1, 1, 0, OUT, CPU_ONLY(tg_cpu_exp_fwd, tg_cpu_exp_bwd)},
    [TG_OP_LOG] = {"log", 1, 1, 0, IN, CPU_ONLY(tg_cpu_log_fwd, tg_cpu_log_bwd)},
    [TG_OP_SQRT] = {"sqrt", 1, 1, 0, OUT, CPU_ONLY(tg_cpu_sqrt_fwd, tg_cpu_sqrt_bwd)},
    [TG_OP_SOFTMAX] = {"softmax", 1, 1, 0, OUT, CPU_ONLY(tg_cpu_softmax_fwd, tg_cpu_softmax_bwd)},
    [TG_OP_LOG_SOFTMAX] = {"log_softmax", 1, 1, 0, OUT,
                           CPU_ONLY(tg_cpu_log_softmax_fwd, tg_cpu_log_softmax_bwd)},
    [TG_OP_LAYERNORM] = {"layernorm", 1, 3, 0, IN, CPU_ONLY(tg_cpu_layernorm_fwd, tg_cpu_layernorm_bwd)},
    [TG_OP_RMSNORM] = {"rmsnorm", 1, 2, 0, IN, CPU_ONLY(tg_cpu_rmsnorm_fwd, tg_cpu_rmsnorm_bwd)},
    [TG_OP_CONCAT] = {"concat", 1, TG_MAX_INPUTS, 0, 0, CPU_ONLY(tg_cpu_concat_fwd, tg_cpu_concat_bwd)},
    [TG_OP_SLICE] = {"slice", 1, 1, 0, 0, CPU_ONLY(tg_cpu_slice_fwd, tg_cpu_slice_bwd)},
    [TG_OP_RESHAPE] = {"reshape", 1, 1, TG_OPF_VIEW, 0, CPU_ONLY(tg_cpu_reshape_fwd, tg_cpu_reshape_bwd)},
    [TG_OP_TRANSPOSE] = {"transpose", 1, 1, 0, 0, CPU_ONLY(tg_cpu_transpose_fwd, tg_cpu_transpose_bwd)},
    [TG_OP_GATHER_ROWS] = {"gather_rows", 2, 2, 0, IN,
                           CPU_ONLY(tg_cpu_gather_rows_fwd, tg_cpu_gather_rows_bwd)},
    [TG_OP_SUM] = {"sum", 1, 1, 0, 0, CPU_ONLY(tg_cpu_sum_fwd, tg_cpu_sum_bwd)},
    [TG_OP_MEAN] = {"mean", 1, 1, 0, 0, CPU_ONLY(tg_cpu_mean_fwd, tg_cpu_mean_bwd)},
    [TG_OP_SUM_LAST] = {"sum_last", 1, 1, 0, 0, CPU_ONLY(tg_cpu_sum_last_fwd, tg_cpu_sum_last_bwd)},
    [TG_OP_MEAN_LAST] = {"mean_last", 1, 1, 0, 0, CPU_ONLY(tg_cpu_mean_last_fwd, tg_cpu_mean_last_bwd)},
    [TG_OP_MAX_LAST] = {"max_last", 1, 1, 0, IN, CPU_ONLY(tg_cpu_max_last_fwd, tg_cpu_max_last_bwd)},
    [TG_OP_ARGMAX_LAST] = {"argmax_last", 1, 1, TG_OPF_NO_GRAD, 0,
                           .fwd = {[TG_CPU] = tg_cpu_argmax_last_fwd}, .bwd = {0}},
    [TG_OP_DROPOUT] = {"dropout", 1, 1, 0, 0, CPU_ONLY(tg_cpu_dropout_fwd, tg_cpu_dropout_bwd)},
    [TG_OP_MSE_LOSS] = {"mse_loss", 2, 2, 0, IN, CPU_ONLY(tg_cpu_mse_fwd, tg_cpu_mse_bwd)},
    [TG_OP_HUBER_LOSS] = {"huber_loss", 2, 2, 0, IN, CPU_ONLY(tg_cpu_huber_fwd, tg_cpu_huber_bwd)},
    [TG_OP_PINBALL_LOSS] = {"pinball_loss", 2, 2, 0, IN, CPU_ONLY(tg_cpu_pinball_fwd, tg_cpu_pinball_bwd)},
    [TG_OP_SOFTMAX_XENT] = {"softmax_cross_entropy", 2, 2, 0, IN,
                            CPU_ONLY(tg_cpu_softmax_xent_fwd, tg_cpu_softmax_xent_bwd)},
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
