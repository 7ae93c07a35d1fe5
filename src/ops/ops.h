/* The op list, the kernel calling convention and the one op table (name, arity, flags, what backward reads). */
#ifndef TG_OPS_H
#define TG_OPS_H

#include "tickgrad/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_MAX_INPUTS 16

typedef enum tg_op {
  TG_OP_PARAM = 0, /* leaf: a store parameter */
  TG_OP_INPUT,     /* leaf: bound caller memory */
  TG_OP_MATMUL,
  TG_OP_LINEAR,
  TG_OP_ADD,
  TG_OP_SUB,
  TG_OP_MUL,
  TG_OP_DIV,
  TG_OP_SCALE,
  TG_OP_RELU,
  TG_OP_TANH,
  TG_OP_SIGMOID,
  TG_OP_ELU,
  TG_OP_SILU,
  TG_OP_SOFTPLUS,
  TG_OP_EXP,
  TG_OP_LOG,
  TG_OP_SQRT,
  TG_OP_SOFTMAX,
  TG_OP_LOG_SOFTMAX,
  TG_OP_LAYERNORM,
  TG_OP_RMSNORM,
  TG_OP_CONCAT,
  TG_OP_SLICE,
  TG_OP_RESHAPE,
  TG_OP_TRANSPOSE,
  TG_OP_GATHER_ROWS,
  TG_OP_SUM,
  TG_OP_MEAN,
  TG_OP_SUM_LAST,
  TG_OP_MEAN_LAST,
  TG_OP_MAX_LAST,
  TG_OP_ARGMAX_LAST,
  TG_OP_DROPOUT,
  TG_OP_MSE_LOSS,
  TG_OP_HUBER_LOSS,
  TG_OP_PINBALL_LOSS,
  TG_OP_SOFTMAX_XENT,
  TG_OP_SAMPLE_ROWS,
  TG_OP_CAUSAL_SOFTMAX,
  TG_OP_CONV1D_CAUSAL,
  TG_OP_LSTM,
  TG_OP_SSD_SCAN,
  TG_OP_STACKED_LINEAR,
  TG_OP_GATE_ADD_NORM,
  TG_OP_PPO_LOSS,
  TG_OP_WINDOW_ROWS,
  TG_OP_GELU, /* exact (erf) GELU: x Phi(x) */
  TG_OP_ATTENTION, /* multi-head scaled dot-product attention on [B, T, H*dh] rows (attention_args.h) */
  TG_OP_COUNT
} tg_op;

/* Op attributes. Meaning per op (unused fields are zero):
 *   matmul: i[0]=trans_a i[1]=trans_b      scale: f[0]=s          elu: f[0]=alpha
 *   layernorm/rmsnorm: f[0]=eps, i[0]=has gamma/weight, i[1]=has beta
 *   linear: i[0]=has bias                  concat: i[0]=dim       slice: i[0]=dim i[1]=start i[2]=len
 *   transpose: i[0]=dim0 i[1]=dim1         dropout: f[0]=p, i[0]=active (training plan)
 *   huber: f[0]=delta                      pinball: i[0]=Q, f[0..Q-1]=quantiles
 *   sample_rows: i[0]=rows to draw from
 *   causal_softmax: i[0]=offset (key j is visible to query row i when j <= i + offset)
 *   conv1d_causal: i[0]=has bias          lstm: i[0]=has h0/c0, i[1]=has bias
 *   ssd_scan: i[0]=chunk length Q, i[1]=has D
 *   stacked_linear: i[0]=has bias         gate_add_norm: f[0]=eps, i[0]=has gamma and beta
 *   ppo_loss: f[0]=clip, f[1]=vf_coef, f[2]=ent_coef, i[0]=clip_vloss, i[1]=norm_adv, i[2]=Gaussian
 *   window_rows: i[0]=window W, i[1]=rows of the table (t must be an integer in [W-1, rows))
 *   attention: i[0]=heads H, i[1]=causal, i[2]=offset (causal: key j is visible to query row i when j <= i + offset),
 *              f[0]=scale of the scores */
typedef struct tg_attr {
  int64_t i[8];
  float f[TG_MAX_QUANTILES];
} tg_attr;

/* What one kernel call sees. Forward writes out (overwrite). Backward adds (+=) into every
 * non-NULL in_grad[k] (NULL: that input needs no gradient); out_grad is d objective / d out.
 * All float tensors are contiguous f32. Exception: bit k of grad_fresh (set only for the inputs the backend's
 * bwd_fresh names for the op) says in_grad[k] has not been zeroed and holds garbage; the kernel then adds into +0
 * in its place for every element (so the bits are those of the zeroed buffer) without reading what is there. */
typedef struct tg_kernel_args {
  int n_in;
  const tg_tensor *in[TG_MAX_INPUTS];
  const tg_tensor *out;
  float *in_grad[TG_MAX_INPUTS];
  const float *out_grad;
  const tg_attr *attr;
  uint64_t seed;       /* dropout: counter RNG key */
  uint64_t rng_stream; /* dropout: node id */
  uint64_t rng_offset; /* dropout: the run counter at the forward */
  const uint64_t *rng_offset_dev; /* CUDA: device copy of rng_offset, read by kernels so captured steps replay fresh masks */
  const char *node_name; /* for error messages */
  void *ws;              /* scratch on the graph's device for this call only (ops with a workspace) */
  size_t ws_bytes;
  /* The dtype the op computes in: TG_F32, or TG_BF16 for a GEMM op whose operands (inputs, and in backward the
   * output's gradient) are rounded to bf16 before a product accumulated in f32 (tensors stay f32 either way). */
  tg_dtype compute;
  /* compute TG_BF16: input k's bf16 mirror when it is a parameter (the store's mirror of its values, at the input's
   * offset; fresh whenever a kernel runs), NULL otherwise; the kernels read it instead of rounding the input */
  const uint16_t *in_bf16[TG_MAX_INPUTS];
  void *prepared; /* what the backend prepared for this node at plan time (a GEMM primitive); NULL: nothing */
  unsigned grad_fresh; /* backward: bit k set, in_grad[k] is not zeroed (see above); set per call by the graph */
} tg_kernel_args;

typedef tg_status (*tg_kernel_fn)(const tg_kernel_args *a);

/* What backward reads, so plan can free forward buffers nothing later needs. */
#define TG_BWD_NEEDS_INPUTS 1u /* all inputs' data */
#define TG_BWD_NEEDS_OUTPUT 2u /* the op's output data */

/* Op flags. */
#define TG_OPF_VIEW 1u       /* output aliases input 0's storage (reshape) */
#define TG_OPF_NO_GRAD 2u    /* output is never differentiable (argmax) */
#define TG_OPF_LEAF 4u       /* param / input */

typedef struct tg_op_def {
  const char *name;
  int min_in, max_in;
  unsigned flags;
  unsigned bwd_needs;
  /* Bytes of scratch a forward or backward call may use (NULL: none). Plan gives every such node
   * the same region, sized for the largest, since kernels of one graph never run concurrently. */
  size_t (*workspace)(const tg_kernel_args *a);
} tg_op_def;

const tg_op_def *tg_op_get(tg_op op);

/* 1 for the GEMM ops (matmul, linear, stacked_linear): their work is one or more GEMMs and nothing else worth
 * counting, and they are the ops that compute in bf16 in a bf16 plan (operands rounded, f32 accumulation). */
int tg_op_is_gemm(tg_op op);
/* Workspace bytes of a GEMM op computing in bf16 (its rounded operands), 0 in f32. */
size_t tg_gemm_bf16_workspace(const tg_kernel_args *a);

/* Workspace sizes (bytes) of the sequence ops, the same for every backend (build_lstm.c, build_ssd.c). */
size_t tg_lstm_workspace(const tg_kernel_args *a);
size_t tg_ssd_workspace(const tg_kernel_args *a);
size_t tg_attention_workspace(const tg_kernel_args *a); /* build_attention.c */

#ifdef __cplusplus
}
#endif
#endif
