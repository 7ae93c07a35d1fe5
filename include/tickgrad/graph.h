/* Graphs: parameter stores, leaves, op builders, plan, run and backward. */
#ifndef TICKGRAD_GRAPH_H
#define TICKGRAD_GRAPH_H

#include <stdio.h>
#include "tickgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- parameter store: one flat parameter buffer and one flat gradient buffer on one device ---- */

typedef struct tg_store tg_store;

typedef enum tg_init_kind {
  TG_INIT_ZEROS = 0,
  TG_INIT_ONES,
  TG_INIT_CONST,     /* a */
  TG_INIT_UNIFORM,   /* U(a, b) */
  TG_INIT_NORMAL,    /* N(a, b^2) */
  TG_INIT_FAN_IN,    /* U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = last dim (PyTorch Linear) */
  TG_INIT_XAVIER,    /* U(-sqrt(6/(fan_in+fan_out)), +...) over the last two dims */
  TG_INIT_LOG_UNIFORM, /* log(U(a, b)), 0 < a <= b (Mamba-2's A_log: a = 1, b = 16) */
  TG_INIT_DT_BIAS,     /* softplus^-1(dt), dt = max(exp(U(log a, log b)), 1e-4), 0 < a <= b
                          (Mamba-2's dt_bias: a = 1e-3, b = 0.1) */
  TG_INIT_ORTHOGONAL,  /* torch.nn.init.orthogonal_ with gain a: W viewed as [rows = shape[0],
                          cols = numel / rows] is a times the Q of a Gaussian's QR with R's diagonal
                          made positive (computed in float64); W W^T = a^2 I when rows <= cols, else
                          W^T W = a^2 I. Needs ndim >= 2. */
} tg_init_kind;

typedef struct tg_init {
  tg_init_kind kind;
  float a, b;
} tg_init;

typedef struct tg_param_info {
  const char *name;
  int ndim;
  const int64_t *shape;
  size_t offset; /* in floats, into the flat buffers */
  size_t numel;
} tg_param_info;

/* seed drives initialisation: parameter i uses stream i of the counter RNG. */
tg_store *tg_store_new(tg_device dev, uint64_t seed);
void tg_store_free(tg_store *s);
tg_device tg_store_device(const tg_store *s);
/* Allocates the flat buffers and initialises values. Called by the first plan; after it no new
 * parameters may be declared. Idempotent. */
tg_status tg_store_finalize(tg_store *s);
int tg_store_count(const tg_store *s);
size_t tg_store_numel(const tg_store *s);
tg_param_info tg_store_param(const tg_store *s, int i);
int tg_store_find(const tg_store *s, const char *name); /* -1 if absent */
/* [numel] on the store's device, to write: each call marks the bf16 mirror that bf16 plans read stale, so it is made
 * again before the next bf16 run or step (ask again for writes after that run; do not keep the pointer for them) */
float *tg_store_values(tg_store *s);
const float *tg_store_values_read(const tg_store *s);   /* the same, only to read */
float *tg_store_grads(tg_store *s);                     /* [numel] on the store's device */
tg_status tg_store_zero_grads(tg_store *s);
/* The tensor view of parameter i (values or gradients); a values view counts as a write (tg_store_values). */
tg_tensor tg_store_tensor(tg_store *s, int i, int grads);

/* ---- graph building ---- */

typedef struct tg_graph tg_graph;

/* A graph takes its parameters from store (may be NULL for graphs with no parameters). */
tg_graph *tg_graph_new(tg_store *store, const char *name);
void tg_graph_free(tg_graph *g);
/* First build error (sticky): after it every builder returns NULL and plan fails with it. */
tg_status tg_graph_status(const tg_graph *g);
/* Seed for dropout; each run advances the RNG offset by one. */
tg_status tg_graph_set_seed(tg_graph *g, uint64_t seed, uint64_t offset);
uint64_t tg_graph_rng_seed(const tg_graph *g);
uint64_t tg_graph_rng_offset(const tg_graph *g);

/* Recomputation blocks (activation checkpointing). Nodes built between begin and end belong to one block; a
 * plan with recompute = TG_RECOMPUTE_BLOCKS keeps of each block only what enters it until backward, frees what
 * the block computes after its last forward use and runs the block's forward kernels again just before its
 * backward (same results, bitwise; dropout draws the same masks). Blocks do not nest. Misuse (begin while a
 * block is open, end with none open, either after plan, a block still open at plan) is a sticky graph error.
 * Both return the graph's status. */
tg_status tg_graph_block_begin(tg_graph *g, const char *name);
tg_status tg_graph_block_end(tg_graph *g);

/* A parameter from the graph's store: declared on first use, shared by name afterwards (a second
 * declaration must have the same shape). */
tg_tensor *tg_param(tg_graph *g, const char *name, int ndim, const int64_t *shape, tg_init init);
/* A placeholder bound to caller memory with tg_graph_bind before each run. */
tg_tensor *tg_input(tg_graph *g, const char *name, tg_dtype dtype, int ndim, const int64_t *shape);

/* Builders record one node and return its output, or NULL after a build error.
 * Unless stated, ops work on f32 and on the last dimension. */
tg_tensor *tg_matmul(tg_graph *g, tg_tensor *a, tg_tensor *b, int trans_a, int trans_b);
/* a [..., M, K] (or [..., K, M] with trans_a), b [..., K, N] (or [..., N, K] with trans_b); b's batch
 * dims equal a's or are absent (broadcast). out [..., M, N] */
tg_tensor *tg_linear(tg_graph *g, tg_tensor *x, tg_tensor *w, tg_tensor *bias);
/* x [..., in], w [out, in], bias [out] or NULL. out [..., out] */
tg_tensor *tg_stacked_linear(tg_graph *g, tg_tensor *x, tg_tensor *w, tg_tensor *bias);
/* G separate linears, one per slot of x's second-to-last dim: x [..., G, in], w [G, out, in],
 * bias [G, out] or NULL; out[..., j, :] = w[j] x[..., j, :] + bias[j]. out [..., G, out] */

/* Binary ops: shapes equal, or one shape is a suffix of the other (broadcast over leading dims). */
tg_tensor *tg_add(tg_graph *g, tg_tensor *a, tg_tensor *b);
tg_tensor *tg_sub(tg_graph *g, tg_tensor *a, tg_tensor *b);
tg_tensor *tg_mul(tg_graph *g, tg_tensor *a, tg_tensor *b);
tg_tensor *tg_div(tg_graph *g, tg_tensor *a, tg_tensor *b);
tg_tensor *tg_scale(tg_graph *g, tg_tensor *x, float s);

tg_tensor *tg_relu(tg_graph *g, tg_tensor *x);
tg_tensor *tg_tanh(tg_graph *g, tg_tensor *x);
tg_tensor *tg_sigmoid(tg_graph *g, tg_tensor *x);
tg_tensor *tg_elu(tg_graph *g, tg_tensor *x, float alpha);
tg_tensor *tg_silu(tg_graph *g, tg_tensor *x);
/* Exact GELU, x Phi(x) with Phi the standard normal CDF (erf form, PyTorch's nn.GELU() default, not the tanh
 * approximation). */
tg_tensor *tg_gelu(tg_graph *g, tg_tensor *x);
tg_tensor *tg_softplus(tg_graph *g, tg_tensor *x);
tg_tensor *tg_exp(tg_graph *g, tg_tensor *x);
tg_tensor *tg_log(tg_graph *g, tg_tensor *x);
tg_tensor *tg_sqrt(tg_graph *g, tg_tensor *x);

tg_tensor *tg_softmax(tg_graph *g, tg_tensor *x);
tg_tensor *tg_log_softmax(tg_graph *g, tg_tensor *x);
/* gamma, beta [D] or NULL; x [..., D] */
tg_tensor *tg_layernorm(tg_graph *g, tg_tensor *x, tg_tensor *gamma, tg_tensor *beta, float eps);
/* GLU gate, residual add and layernorm in one op (the TFT's gate-add-norm): a [..., 2D] holds
 * value | gate, skip [..., D]; z = skip + a[..., :D] * sigmoid(a[..., D:]) and
 * out = layernorm(z) * gamma + beta over the last dim. gamma and beta are both NULL (no affine)
 * or both [S..., D] with [S..., D] a suffix of skip's shape: [D], or one affine per slot of the
 * trailing dims (e.g. [G, D] for x [N, G, D]). out [..., D] */
tg_tensor *tg_gate_add_norm(tg_graph *g, tg_tensor *a, tg_tensor *skip, tg_tensor *gamma, tg_tensor *beta,
                            float eps);
tg_tensor *tg_rmsnorm(tg_graph *g, tg_tensor *x, tg_tensor *weight, float eps);

/* Shape ops (any dtype for concat/slice/reshape/transpose; gradients only for f32). */
tg_tensor *tg_concat(tg_graph *g, int n, tg_tensor *const *xs, int dim);
tg_tensor *tg_slice(tg_graph *g, tg_tensor *x, int dim, int64_t start, int64_t len);
/* A view: no copy. One entry may be -1 (inferred). */
tg_tensor *tg_reshape(tg_graph *g, tg_tensor *x, int ndim, const int64_t *shape);
tg_tensor *tg_transpose(tg_graph *g, tg_tensor *x, int dim0, int dim1);
/* table [V, D] f32, idx [...] i32 or i64 -> out [..., D]. An index outside [0, V) is an error at run. */
tg_tensor *tg_gather_rows(tg_graph *g, tg_tensor *table, tg_tensor *idx);
/* t [...] f32 or i64 (each window's last row) -> idx [..., window] i64 with idx[.., k] = t - window + 1 + k,
 * the rows of the window ending at t, for tg_gather_rows over a table of `rows` rows. A t that is not an
 * integer in [window - 1, rows) is an error at run. Needs 1 <= window <= rows <= TG_WINDOW_ROWS_MAX (a
 * float holds every row exactly). Not differentiable. */
#define TG_WINDOW_ROWS_MAX ((int64_t)1 << 24)
tg_tensor *tg_window_rows(tg_graph *g, tg_tensor *t, int64_t window, int64_t rows);

/* Reductions: over all elements (scalar out) or the last dim (last dim dropped). */
tg_tensor *tg_sum(tg_graph *g, tg_tensor *x);
tg_tensor *tg_mean(tg_graph *g, tg_tensor *x);
tg_tensor *tg_sum_last(tg_graph *g, tg_tensor *x);
tg_tensor *tg_mean_last(tg_graph *g, tg_tensor *x);
tg_tensor *tg_max_last(tg_graph *g, tg_tensor *x);    /* gradient flows to the first maximum */
tg_tensor *tg_argmax_last(tg_graph *g, tg_tensor *x); /* i64 out; not differentiable */

/* Inverted dropout with keep probability 1-p; identity in graphs planned without training. */
tg_tensor *tg_dropout(tg_graph *g, tg_tensor *x, float p);

/* b row numbers drawn uniformly from [0, rows) with replacement, fresh on every run (the graph's
 * seed and run counter, like dropout), computed where the graph runs: a batch sampler with no
 * host-to-device traffic. i64 [b], not differentiable. */
tg_tensor *tg_sample_rows(tg_graph *g, int64_t rows, int64_t b);

/* ---- sequence ops ---- */

/* Softmax over the last dim of x [..., Tq, Tk] where query row i sees key j only when
 * j <= i + offset; hidden entries are exactly 0 (no additive -1e9, safe in any precision). A row
 * that sees no key is all 0. */
tg_tensor *tg_causal_softmax(tg_graph *g, tg_tensor *x, int64_t offset);
/* Multi-head scaled dot-product attention in one op, on rows as linears produce them: q [B, Tq, heads*dh], k and v
 * [B, Tk, heads*dh], head h in columns [h dh, (h+1) dh). Per batch and head, out_i = sum_j p_ij v_j with
 * p_i = softmax_j(scale q_i . k_j) over the keys query row i sees: every key, or when causal the j <= i + offset (as
 * tg_causal_softmax: hidden keys weigh exactly 0, a row that sees no key gives 0). out [B, Tq, heads*dh]. No
 * [B, heads, Tq, Tk] scores and no head transposes are kept: the backward recomputes the probabilities. */
tg_tensor *tg_attention(tg_graph *g, tg_tensor *q, tg_tensor *k, tg_tensor *v, int64_t heads, int causal,
                        int64_t offset, float scale);
/* Causal depthwise convolution along time: x [B, L, C], w [C, K], bias [C] or NULL;
 * out[b,t,c] = bias[c] + sum_k w[c,k] * x[b, t-K+1+k, c], with x = 0 before t = 0. */
tg_tensor *tg_conv1d_causal(tg_graph *g, tg_tensor *x, tg_tensor *w, tg_tensor *bias);
/* One LSTM layer over a whole sequence (forward, and backpropagation through time, in one op).
 * x [B, T, I], h0 and c0 [B, Hd] (both NULL: zeros), w_ih [4Hd, I], w_hh [4Hd, Hd], bias [4Hd] or
 * NULL; gates in PyTorch's order i, f, g, o. out [B, T, 6*Hd]: for each step h | c | i | f | g | o
 * (gates after their sigmoid/tanh). Gradients flow from every slot; take h with
 * tg_slice(out, 2, 0, Hd) and the final c with slices at step T-1, offset Hd. */
tg_tensor *tg_lstm(tg_graph *g, tg_tensor *x, tg_tensor *h0, tg_tensor *c0, tg_tensor *w_ih,
                   tg_tensor *w_hh, tg_tensor *bias);
/* The Mamba-2 SSD scan with D skip, computed in chunks of `chunk` steps:
 * x [B, L, H, P], dt [B, L, H] (> 0), A [H] (< 0), Bm and Cm [B, L, G, N] (head h uses group
 * h / (H/G)), D [H] or NULL. With h_{-1} = 0:
 *   h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T      (per batch and head, [P, N])
 *   y_t = h_t C_t + D x_t                            -> out [B, L, H, P]
 * The result does not depend on the chunk length beyond float rounding. */
tg_tensor *tg_ssd_scan(tg_graph *g, tg_tensor *x, tg_tensor *dt, tg_tensor *A, tg_tensor *Bm,
                       tg_tensor *Cm, tg_tensor *D, int chunk);

/* Losses: scalar means. */
tg_tensor *tg_mse_loss(tg_graph *g, tg_tensor *pred, tg_tensor *target);
tg_tensor *tg_huber_loss(tg_graph *g, tg_tensor *pred, tg_tensor *target, float delta);
/* pred [..., Q], target [...]; quantiles q[Q] in (0,1), Q <= TG_MAX_QUANTILES. */
#define TG_MAX_QUANTILES 16
tg_tensor *tg_pinball_loss(tg_graph *g, tg_tensor *pred, tg_tensor *target, int nq, const float *q);
/* logits [N, C] f32, labels [N] i32 or i64 in [0, C). */
tg_tensor *tg_softmax_cross_entropy(tg_graph *g, tg_tensor *logits, tg_tensor *labels);

/* PPO's clipped loss for a categorical policy (CleanRL's ppo.py), fused, over a minibatch of B:
 *   logits [B, A] f32, value [B] or [B, 1] f32 (the critic), actions [B] i32/i64 in [0, A),
 *   old_logp, adv, returns, old_value [B] f32 from the rollout (data: they may not depend on
 *   parameters). With ratio = exp(logp(action) - old_logp) and adv normalised inside the op when
 *   norm_adv ((adv - mean) / (std + 1e-8), std unbiased; needs B >= 2):
 *     pg_loss = mean(max(-adv ratio, -adv clamp(ratio, 1 - clip, 1 + clip)))
 *     v_loss  = 0.5 mean(max((v - R)^2, (v_old + clamp(v - v_old, -clip, clip) - R)^2))
 *               (0.5 mean((v - R)^2) without clip_vloss)
 *     loss    = pg_loss - ent_coef mean(entropy) + vf_coef v_loss
 * out f32 [TG_PPO_NSTATS], indexed by TG_PPO_*: the loss, pg_loss, v_loss, mean entropy,
 * approx_kl = mean((ratio - 1) - log ratio) and clipfrac = mean(|ratio - 1| > clip). Every element
 * but clipfrac is differentiable (PyTorch's rules at the max and clamp kinks). Train on
 * tg_slice(g, out, 0, TG_PPO_LOSS, 1); the whole vector stays readable after the step when the
 * graph also keeps it as an output (e.g. a tg_reshape of it that nothing consumes). */
typedef struct tg_ppo_coefs {
  float clip, vf_coef, ent_coef;
  int clip_vloss, norm_adv;
} tg_ppo_coefs;
enum { TG_PPO_LOSS = 0, TG_PPO_PG, TG_PPO_V, TG_PPO_ENTROPY, TG_PPO_KL, TG_PPO_CLIPFRAC, TG_PPO_NSTATS };
tg_tensor *tg_ppo_loss(tg_graph *g, tg_tensor *logits, tg_tensor *value, tg_tensor *actions, tg_tensor *old_logp,
                       tg_tensor *adv, tg_tensor *returns, tg_tensor *old_value, const tg_ppo_coefs *c);
/* The same loss for a diagonal Gaussian policy with a state-independent log_std (CleanRL's
 * ppo_continuous_action.py): mean [B, D] f32 (the actor's output), log_std [D] f32, actions [B, D]
 * f32 (the sampled, unclipped actions; data). logp = sum_d -0.5 z_d^2 - log_std_d - 0.5 log(2 pi)
 * with z_d = (a_d - mean_d) / exp(log_std_d); entropy = sum_d 0.5 + 0.5 log(2 pi) + log_std_d.
 * Gradients flow to mean, log_std and value. */
tg_tensor *tg_ppo_loss_gaussian(tg_graph *g, tg_tensor *mean, tg_tensor *log_std, tg_tensor *value,
                                tg_tensor *actions, tg_tensor *old_logp, tg_tensor *adv, tg_tensor *returns,
                                tg_tensor *old_value, const tg_ppo_coefs *c);

/* ---- plan, run, backward ---- */

/* A run's precision setting ("fp32", "bf16", "auto"): bf16 is mixed precision, tg_plan_opts.precision TG_BF16; auto is
 * bf16 where the device runs it natively and the model is wide enough for it to be faster, else fp32
 * (tg_precision_resolve, device.h, decides it once when a run starts, and the run records the choice). */
typedef enum tg_precision { TG_PRECISION_FP32 = 0, TG_PRECISION_BF16, TG_PRECISION_AUTO } tg_precision;
static inline tg_dtype tg_precision_dtype(tg_precision p) { return p == TG_PRECISION_BF16 ? TG_BF16 : TG_F32; }
static inline const char *tg_precision_name(tg_precision p) {
  return p == TG_PRECISION_BF16 ? "bf16" : p == TG_PRECISION_AUTO ? "auto" : "fp32";
}
/* {"fp32", "bf16", "auto", NULL}: the names in tg_precision order, for settings tables. */
extern const char *const tg_precision_names[4];

/* What a training plan recomputes in backward instead of keeping from the forward (tg_plan_opts.recompute). */
typedef enum tg_recompute {
  TG_RECOMPUTE_NONE = 0, /* keep every activation backward reads */
  TG_RECOMPUTE_BLOCKS,   /* the marked blocks (tg_graph_block_begin/end) */
  TG_RECOMPUTE_ALL,      /* the marked blocks, and every run of unmarked nodes before a marked block as a segment of
                            its own; the run after the last marked block (the head and the loss, which backward
                            needs first) is kept. Without marked blocks the same as NONE. */
  TG_RECOMPUTE_COUNT
} tg_recompute;

/* "none", "blocks", "all"; NULL outside the enum. */
const char *tg_recompute_name(int mode);

typedef struct tg_plan_opts {
  tg_device device;
  int training;        /* keep what backward needs, allocate gradients; dropout active */
  int recompute;       /* tg_recompute (training plans only; inference plans never recompute) */
  int poison;          /* debug: fill activations with NaN before each run */
  size_t guard_bytes;  /* debug: guard bytes after every arena buffer, checked by tg_graph_check_guards */
  int no_reuse;        /* debug: give every buffer its own memory (to test that reuse changes nothing) */
  FILE *log;           /* where the memory plan is printed; NULL: silent */
  /* TG_F32 (the default) or TG_BF16: mixed precision, where the GEMM ops (matmul, linear, stacked_linear) round their
   * operands to bf16 and accumulate in f32, and every other op (norms, softmax, losses, scans, elementwise) computes in
   * f32; activations, parameters and gradients stay f32. The printed plan counts the nodes of each. */
  tg_dtype precision;
} tg_plan_opts;

tg_plan_opts tg_plan_defaults(tg_device dev);

typedef struct tg_plan_stats {
  size_t arena_bytes;     /* activations and their gradients, after liveness reuse */
  size_t unshared_bytes;  /* the same buffers laid out without reuse */
  size_t param_bytes;     /* the store's values (gradients: the same again when training) */
  size_t workspace_bytes; /* one scratch region shared by the ops that need one (LSTM, SSD scan) */
  int nodes;
  int buffers;
  int recompute;          /* the plan's tg_recompute (TG_RECOMPUTE_NONE for inference plans) */
  int segments;           /* segments with something to recompute */
  int recomputed;         /* ops whose forward kernel runs again in backward */
  size_t arena_bytes_no_recompute; /* arena_bytes of the same plan without recomputation (= arena_bytes with none) */
  size_t prepared_bytes;  /* kept by the kernels beside the arena: bf16 copies of GEMM inputs for their backward */
} tg_plan_stats;

/* Binds the graph to one device: checks every operand's device, that every op has a kernel (and a
 * backward when training) on that device, lays out the arena. */
tg_status tg_graph_plan(tg_graph *g, const tg_plan_opts *opts);
tg_plan_stats tg_graph_stats(const tg_graph *g);
void tg_graph_print_plan(const tg_graph *g, FILE *f);
/* Points input `name` at t's data. Checks shape, dtype and device. */
tg_status tg_graph_bind(tg_graph *g, const char *name, const tg_tensor *t);
tg_status tg_graph_run(tg_graph *g);
/* Zeroes the store's gradients, then accumulates d loss / d params. loss must be a scalar. */
tg_status tg_graph_backward(tg_graph *g, const tg_tensor *loss);
/* Accumulates into the store's gradients with seed = d objective / d out ([numel(out)] floats on
 * the graph's device). Does not zero parameter gradients first. */
tg_status tg_graph_backward_seeded(tg_graph *g, const tg_tensor *out, const float *seed);
/* Gradient of a graph value after backward (NULL if it has none). */
const float *tg_graph_grad(const tg_graph *g, const tg_tensor *t);
/* Debug plans only: TG_ERR_INVALID naming the first buffer whose guard bytes changed. */
tg_status tg_graph_check_guards(const tg_graph *g);

/* ---- profiling: wall time and FLOPs per op kind, summed over runs and backwards (opt-in) ---- */

/* One op kind's totals since profiling was turned on or reset. flops count 2 per multiply-add where the op has a
 * formula: matmul 2 batch m n k forward and as much again per input gradient its backward computes; linear and
 * stacked_linear likewise; lstm its internal GEMMs (its gate math not counted); 0 for every other op (ssd_scan's small
 * matrix products included). */
typedef struct tg_op_profile {
  const char *op;              /* the op's name */
  int gemm;                    /* 1: matmul, linear, stacked_linear (ops whose work is GEMMs) */
  int64_t fwd_calls, bwd_calls;
  double fwd_s, bwd_s;         /* wall seconds in the op's forward and backward kernels */
  double fwd_flops, bwd_flops;
} tg_op_profile;

/* on = 1: from now on run and backward time every kernel call and count its FLOPs per op kind (totals zeroed);
 * on = 0: stop and drop the totals. Off by default, and then run and backward pay one branch per node; on, they read
 * the host clock twice per kernel call and allocate nothing (the totals are allocated here). The time is host-side
 * wall time around each kernel call, which is the kernel's time only where kernels finish before they return: a
 * planned graph on a device whose memory is the host's (the CPU). Elsewhere (CUDA queues kernels) it is refused with
 * TG_ERR_UNSUPPORTED, and a later plan on such a device turns profiling off. Needs a planned graph. */
tg_status tg_graph_profile_enable(tg_graph *g, int on);
/* Zeroes the totals (profiling stays on). */
void tg_graph_profile_reset(tg_graph *g);
/* The op kinds that ran a kernel since the totals were zeroed, in op table order: writes min(count, max) of them to
 * out and returns the count (0 when profiling is off). */
int tg_graph_profile_get(const tg_graph *g, tg_op_profile *out, int max);

/* Ops by name and availability (for the op-coverage test and `tickgrad ops`). */
int tg_op_count(void);
const char *tg_op_name(int op);
int tg_op_has_forward(int op, tg_device_kind k);
/* 1 if the op has a backward kernel on k, or is declared non-differentiable. */
int tg_op_has_backward(int op, tg_device_kind k);
int tg_op_differentiable(int op);
/* 1 for the leaf kinds (param, input), which have no kernels. */
int tg_op_is_leaf(int op);
/* Backends compiled into this build. */
int tg_backend_compiled(tg_device_kind k);
/* The compiled backends in registry order (the CPU first): how many, and the i-th one's name and device kind. */
int tg_backend_count(void);
const char *tg_backend_name(int i);
tg_device_kind tg_backend_kind(int i);
/* NULL when backend i runs graphs; else what it still lacks (a backend being built: its devices are listed only). */
const char *tg_backend_incomplete(int i);
/* Backend i's devices as `tickgrad devices` lists them into buf; 0 when the backend leaves its listing to the command. */
int tg_backend_describe(int i, char *buf, size_t n);
/* 1 when backend kind k has op's forward (backward = 0) or backward (backward = 1) kernel for compute dtype dt. */
int tg_op_has_kernel(int op, tg_device_kind k, tg_dtype dt, int backward);

#ifdef __cplusplus
}
#endif
#endif
