/* The one op table: every op's name, arity, flags and what its backward reads (the kernels are the backends'). */
#include "graph/backend.h"
#include "ops/ops.h"
#include "ops/gate_norm_args.h"
#define IN TG_BWD_NEEDS_INPUTS
#define OUT TG_BWD_NEEDS_OUTPUT

static const tg_op_def k_ops[TG_OP_COUNT] = {
    [TG_OP_PARAM] = {"param", 0, 0, TG_OPF_LEAF, 0},
    [TG_OP_INPUT] = {"input", 0, 0, TG_OPF_LEAF, 0},
    [TG_OP_MATMUL] = {"matmul", 2, 2, 0, IN, .workspace = tg_gemm_bf16_workspace},
    [TG_OP_LINEAR] = {"linear", 2, 3, 0, IN, .workspace = tg_gemm_bf16_workspace},
    [TG_OP_ADD] = {"add", 2, 2, 0, 0},
    [TG_OP_SUB] = {"sub", 2, 2, 0, 0},
    [TG_OP_MUL] = {"mul", 2, 2, 0, IN},
    [TG_OP_DIV] = {"div", 2, 2, 0, IN | OUT},
    [TG_OP_SCALE] = {"scale", 1, 1, 0, 0},
    [TG_OP_RELU] = {"relu", 1, 1, 0, OUT},
    [TG_OP_TANH] = {"tanh", 1, 1, 0, OUT},
    [TG_OP_SIGMOID] = {"sigmoid", 1, 1, 0, OUT},
    [TG_OP_ELU] = {"elu", 1, 1, 0, IN | OUT},
    [TG_OP_SILU] = {"silu", 1, 1, 0, IN},
    [TG_OP_SOFTPLUS] = {"softplus", 1, 1, 0, IN},
    [TG_OP_EXP] = {"exp", 1, 1, 0, OUT},
    [TG_OP_LOG] = {"log", 1, 1, 0, IN},
    [TG_OP_SQRT] = {"sqrt", 1, 1, 0, OUT},
    [TG_OP_SOFTMAX] = {"softmax", 1, 1, 0, OUT},
    [TG_OP_LOG_SOFTMAX] = {"log_softmax", 1, 1, 0, OUT},
    [TG_OP_LAYERNORM] = {"layernorm", 1, 3, 0, IN},
    [TG_OP_RMSNORM] = {"rmsnorm", 1, 2, 0, IN},
    [TG_OP_CONCAT] = {"concat", 1, TG_MAX_INPUTS, 0, 0},
    [TG_OP_SLICE] = {"slice", 1, 1, 0, 0},
    [TG_OP_RESHAPE] = {"reshape", 1, 1, TG_OPF_VIEW, 0},
    [TG_OP_TRANSPOSE] = {"transpose", 1, 1, 0, 0},
    [TG_OP_GATHER_ROWS] = {"gather_rows", 2, 2, 0, IN},
    [TG_OP_SUM] = {"sum", 1, 1, 0, 0},
    [TG_OP_MEAN] = {"mean", 1, 1, 0, 0},
    [TG_OP_SUM_LAST] = {"sum_last", 1, 1, 0, 0},
    [TG_OP_MEAN_LAST] = {"mean_last", 1, 1, 0, 0},
    [TG_OP_MAX_LAST] = {"max_last", 1, 1, 0, IN},
    [TG_OP_ARGMAX_LAST] = {"argmax_last", 1, 1, TG_OPF_NO_GRAD, 0},
    [TG_OP_DROPOUT] = {"dropout", 1, 1, 0, 0},
    [TG_OP_MSE_LOSS] = {"mse_loss", 2, 2, 0, IN},
    [TG_OP_HUBER_LOSS] = {"huber_loss", 2, 2, 0, IN},
    [TG_OP_PINBALL_LOSS] = {"pinball_loss", 2, 2, 0, IN},
    [TG_OP_SOFTMAX_XENT] = {"softmax_cross_entropy", 2, 2, 0, IN},
    [TG_OP_SAMPLE_ROWS] = {"sample_rows", 0, 0, TG_OPF_NO_GRAD, 0},
    [TG_OP_CAUSAL_SOFTMAX] = {"causal_softmax", 1, 1, 0, OUT},
    [TG_OP_CONV1D_CAUSAL] = {"conv1d_causal", 2, 3, 0, IN},
    [TG_OP_LSTM] = {"lstm", 3, 6, 0, IN | OUT, .workspace = tg_lstm_workspace},
    [TG_OP_SSD_SCAN] = {"ssd_scan", 5, 6, 0, IN, .workspace = tg_ssd_workspace},
    [TG_OP_STACKED_LINEAR] = {"stacked_linear", 2, 3, 0, IN, .workspace = tg_gemm_bf16_workspace},
    [TG_OP_GATE_ADD_NORM] = {"gate_add_norm", 2, 4, 0, IN, .workspace = tg_gan_workspace},
    [TG_OP_PPO_LOSS] = {"ppo_loss", 7, 8, 0, IN},
    [TG_OP_WINDOW_ROWS] = {"window_rows", 1, 1, TG_OPF_NO_GRAD, 0},
    [TG_OP_GELU] = {"gelu", 1, 1, 0, IN},
    [TG_OP_ATTENTION] = {"attention", 3, 3, 0, IN | OUT, .workspace = tg_attention_workspace},
};

const tg_op_def *tg_op_get(tg_op op) { return (op >= 0 && op < TG_OP_COUNT) ? &k_ops[op] : NULL; }

int tg_op_count(void) { return TG_OP_COUNT; }

int tg_op_is_gemm(tg_op op) { return op == TG_OP_MATMUL || op == TG_OP_LINEAR || op == TG_OP_STACKED_LINEAR; }

size_t tg_gemm_bf16_workspace(const tg_kernel_args *a) {
  if (a->compute != TG_BF16) return 0;
  /* the rounded copies of the two operands and, in backward, of the output's gradient (as f32: the widest form),
   * each starting on a 64-byte boundary */
  return sizeof(float) * (size_t)(tg_numel(a->in[0]) + tg_numel(a->in[1]) + tg_numel(a->out)) + 3 * 64;
}
const char *tg_op_name(int op) { return tg_op_get((tg_op)op) ? k_ops[op].name : "?"; }

/* The kernel pair of op on backend k for dtype dt, NULL when the backend is not compiled in or lacks the op. */
static const tg_op_kernels *kernels_of(int op, tg_device_kind k, tg_dtype dt) {
  const tg_backend *be = tg_backend_for(k);
  return be ? be->kernels(op, dt) : NULL;
}

int tg_op_has_kernel(int op, tg_device_kind k, tg_dtype dt, int backward) {
  const tg_op_kernels *kk = tg_op_get((tg_op)op) ? kernels_of(op, k, dt) : NULL;
  return kk && (backward ? kk->bwd : kk->fwd) != NULL;
}

int tg_op_has_forward(int op, tg_device_kind k) {
  const tg_op_def *d = tg_op_get((tg_op)op);
  if (!d) return 0;
  const tg_op_kernels *kk = kernels_of(op, k, TG_F32);
  return (d->flags & TG_OPF_LEAF) || (kk && kk->fwd);
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
  if (!d) return 0;
  const tg_op_kernels *kk = kernels_of(op, k, TG_F32);
  return (d->flags & (TG_OPF_LEAF | TG_OPF_NO_GRAD)) || (kk && kk->bwd);
}
