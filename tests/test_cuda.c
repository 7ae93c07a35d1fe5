/* CUDA: the documented errors without a device (always), and with one: every op forward and backward
 * against the CPU, the GEMM ops in bf16 against the CPU's bf16, a captured MLP training step against the CPU (f32 and
 * bf16, and with its block recomputed), kernel faults, device mismatch. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "graph/backend.h"
#include "ops/ops.h"
#include "support/check.h"
#include "support/mlp_step.h"
#include "tickgrad/tickgrad.h"

#define PC_MAX_LEAVES 4
#define PC_TOL 1e-5 /* |cuda - cpu| <= PC_TOL * (1 + |cpu|): FP32 everywhere, no TF32 */

/* ---- without a device: the errors a user sees ---- */

static void check_missing_device(void) {
  tg_device d;
  char notice[512];
  CHECK_STATUS(tg_device_choose("cuda", &d, notice, sizeof notice), TG_ERR_DEVICE);
  CHECK_MSG(strstr(tg_last_error(), "cuda:0 is not available") != NULL, "message: %s", tg_last_error());
  CHECK_STATUS(tg_device_choose("cuda:3", &d, notice, sizeof notice), TG_ERR_DEVICE);
  CHECK_OK(tg_device_choose("auto", &d, notice, sizeof notice));
  CHECK(d.kind == TG_CPU && d.index == 0);
  CHECK_MSG(strstr(notice, "device auto: cpu:0 (no GPU") != NULL && !strstr(notice, "driver"), "notice: %s", notice);
  CHECK_STATUS(tg_device_choose("gpu", &d, notice, sizeof notice), TG_ERR_INVALID);
  /* a graph planned for cuda:0 fails at plan, naming the device, and nothing runs */
  tg_store *s = tg_store_new(tg_cuda(0), 1);
  tg_graph *g = tg_graph_new(s, "no-gpu");
  const int64_t sh[2] = {2, 3};
  tg_init u = {TG_INIT_UNIFORM, -1, 1};
  tg_tensor *y = tg_relu(g, tg_param(g, "w", 2, sh, u));
  CHECK(y != NULL);
  tg_plan_opts o = tg_plan_defaults(tg_cuda(0));
  tg_status st = tg_graph_plan(g, &o);
  CHECK_MSG(st == TG_ERR_DEVICE && strstr(tg_last_error(), "cuda:0") != NULL, "plan on cuda:0 -> %s: %s",
            tg_status_name(st), tg_last_error());
  CHECK_STATUS(tg_graph_run(g), TG_ERR_INVALID);
  tg_mem_stats ms;
  CHECK(tg_device_mem_stats(tg_cpu(0), &ms) == TG_OK && ms.reserved == 0);
  CHECK_OK(tg_device_sync(tg_cpu(0)));
  tg_graph_free(g);
  tg_store_free(s);
}

/* Out of memory at plan: an error with the plan's numbers, never a crash (4 TiB of activations). */
static void check_plan_out_of_memory(void) {
  tg_graph *g = tg_graph_new(NULL, "huge");
  const int64_t sh[2] = {1 << 20, 1 << 20};
  tg_tensor *y = tg_relu(g, tg_input(g, "x", TG_F32, 2, sh));
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  CHECK(y != NULL);
  CHECK_STATUS(tg_graph_plan(g, &o), TG_ERR_NOMEM);
  CHECK_MSG(strstr(tg_last_error(), "out of memory on cpu:0") && strstr(tg_last_error(), "4194304.0 MiB activation arena"),
            "message: %s", tg_last_error());
  tg_graph_free(g);
}

/* ---- parity: one case per op ---- */

typedef struct pc_leaf {
  const char *name;
  tg_dtype dtype;
  int ndim;
  int64_t shape[4];
  int param;    /* 1: a store parameter (f32, gradient compared); 0: a bound input */
  double lo, hi; /* values uniform in [lo, hi) (integers for index dtypes) */
} pc_leaf;

typedef tg_tensor *(*pc_build_fn)(tg_graph *g, tg_tensor **x);

typedef struct pc_case {
  const char *op; /* the op under test, as tg_op_name spells it */
  int n;
  pc_leaf leaf[PC_MAX_LEAVES];
  pc_build_fn build;
} pc_case;

#define F32P(nm, nd, ...) {nm, TG_F32, nd, {__VA_ARGS__}, 1, -1.0, 1.0}
#define POS(nm, nd, ...) {nm, TG_F32, nd, {__VA_ARGS__}, 1, 0.5, 3.0}
#define IN_F32(nm, nd, ...) {nm, TG_F32, nd, {__VA_ARGS__}, 0, -1.0, 1.0}
#define IN_IDX(nm, dt, hi, nd, ...) {nm, dt, nd, {__VA_ARGS__}, 0, 0.0, hi}

static tg_tensor *b_matmul(tg_graph *g, tg_tensor **x) { return tg_matmul(g, x[0], x[1], 0, 0); }
static tg_tensor *b_matmul_tt(tg_graph *g, tg_tensor **x) { return tg_matmul(g, x[0], x[1], 1, 1); }
static tg_tensor *b_linear(tg_graph *g, tg_tensor **x) { return tg_linear(g, x[0], x[1], x[2]); }
static tg_tensor *b_stacked_linear(tg_graph *g, tg_tensor **x) { return tg_stacked_linear(g, x[0], x[1], x[2]); }
static tg_tensor *b_gate_add_norm(tg_graph *g, tg_tensor **x) { return tg_gate_add_norm(g, x[0], x[1], x[2], x[3], 1e-5f); }
static tg_tensor *b_add(tg_graph *g, tg_tensor **x) { return tg_add(g, x[0], x[1]); }
static tg_tensor *b_sub(tg_graph *g, tg_tensor **x) { return tg_sub(g, x[0], x[1]); }
static tg_tensor *b_mul(tg_graph *g, tg_tensor **x) { return tg_mul(g, x[0], x[1]); }
static tg_tensor *b_div(tg_graph *g, tg_tensor **x) { return tg_div(g, x[0], x[1]); }
static tg_tensor *b_scale(tg_graph *g, tg_tensor **x) { return tg_scale(g, x[0], 0.7f); }
static tg_tensor *b_relu(tg_graph *g, tg_tensor **x) { return tg_relu(g, x[0]); }
static tg_tensor *b_tanh(tg_graph *g, tg_tensor **x) { return tg_tanh(g, x[0]); }
static tg_tensor *b_sigmoid(tg_graph *g, tg_tensor **x) { return tg_sigmoid(g, x[0]); }
static tg_tensor *b_elu(tg_graph *g, tg_tensor **x) { return tg_elu(g, x[0], 1.0f); }
static tg_tensor *b_silu(tg_graph *g, tg_tensor **x) { return tg_silu(g, x[0]); }
static tg_tensor *b_gelu(tg_graph *g, tg_tensor **x) { return tg_gelu(g, x[0]); }
static tg_tensor *b_softplus(tg_graph *g, tg_tensor **x) { return tg_softplus(g, x[0]); }
static tg_tensor *b_exp(tg_graph *g, tg_tensor **x) { return tg_exp(g, x[0]); }
static tg_tensor *b_log(tg_graph *g, tg_tensor **x) { return tg_log(g, x[0]); }
static tg_tensor *b_sqrt(tg_graph *g, tg_tensor **x) { return tg_sqrt(g, x[0]); }
static tg_tensor *b_softmax(tg_graph *g, tg_tensor **x) { return tg_softmax(g, x[0]); }
static tg_tensor *b_log_softmax(tg_graph *g, tg_tensor **x) { return tg_log_softmax(g, x[0]); }
static tg_tensor *b_layernorm(tg_graph *g, tg_tensor **x) { return tg_layernorm(g, x[0], x[1], x[2], 1e-5f); }
static tg_tensor *b_rmsnorm(tg_graph *g, tg_tensor **x) { return tg_rmsnorm(g, x[0], x[1], 1e-6f); }
static tg_tensor *b_concat(tg_graph *g, tg_tensor **x) { return tg_concat(g, 2, x, 1); }
static tg_tensor *b_slice(tg_graph *g, tg_tensor **x) { return tg_slice(g, x[0], 1, 2, 4); }
static tg_tensor *b_reshape(tg_graph *g, tg_tensor **x) {
  const int64_t s[2] = {2, 12};
  return tg_scale(g, tg_reshape(g, x[0], 2, s), 1.0f); /* a view: scale gives it its own output */
}
static tg_tensor *b_transpose(tg_graph *g, tg_tensor **x) { return tg_transpose(g, x[0], 0, 2); }
static tg_tensor *b_gather(tg_graph *g, tg_tensor **x) { return tg_gather_rows(g, x[0], x[1]); }
static tg_tensor *b_sum(tg_graph *g, tg_tensor **x) { return tg_sum(g, x[0]); }
static tg_tensor *b_mean(tg_graph *g, tg_tensor **x) { return tg_mean(g, x[0]); }
static tg_tensor *b_sum_last(tg_graph *g, tg_tensor **x) { return tg_sum_last(g, x[0]); }
static tg_tensor *b_mean_last(tg_graph *g, tg_tensor **x) { return tg_mean_last(g, x[0]); }
static tg_tensor *b_max_last(tg_graph *g, tg_tensor **x) { return tg_max_last(g, x[0]); }
static tg_tensor *b_argmax_last(tg_graph *g, tg_tensor **x) { return tg_argmax_last(g, x[0]); }
static tg_tensor *b_window_rows(tg_graph *g, tg_tensor **x) { return tg_window_rows(g, x[0], 8, 50); }
static tg_tensor *b_dropout(tg_graph *g, tg_tensor **x) { return tg_dropout(g, x[0], 0.3f); }
static tg_tensor *b_mse(tg_graph *g, tg_tensor **x) { return tg_mse_loss(g, x[0], x[1]); }
static tg_tensor *b_huber(tg_graph *g, tg_tensor **x) { return tg_huber_loss(g, x[0], x[1], 0.5f); }
static tg_tensor *b_pinball(tg_graph *g, tg_tensor **x) {
  const float q[3] = {0.1f, 0.5f, 0.9f};
  return tg_pinball_loss(g, x[0], x[1], 3, q);
}
static tg_tensor *b_xent(tg_graph *g, tg_tensor **x) { return tg_softmax_cross_entropy(g, x[0], x[1]); }
static tg_tensor *b_sample(tg_graph *g, tg_tensor **x) {
  (void)x;
  return tg_sample_rows(g, 1000003, 300);
}
static tg_tensor *b_causal_softmax(tg_graph *g, tg_tensor **x) { return tg_causal_softmax(g, x[0], -1); }
static tg_tensor *b_causal_softmax_wide(tg_graph *g, tg_tensor **x) { return tg_causal_softmax(g, x[0], 40); }
/* attention: x = q, k, v; heads, causal, offset and scale per case */
static tg_tensor *b_attn_causal(tg_graph *g, tg_tensor **x) { return tg_attention(g, x[0], x[1], x[2], 2, 1, 0, 1.0f); }
static tg_tensor *b_attn_last(tg_graph *g, tg_tensor **x) { /* Tq = 1, the last step of Tk = 9 */
  return tg_attention(g, x[0], x[1], x[2], 3, 1, 8, 0.5f);
}
static tg_tensor *b_attn_neg(tg_graph *g, tg_tensor **x) { /* rows 0 and 1 see nothing */
  return tg_attention(g, x[0], x[1], x[2], 2, 1, -2, 0.6f);
}
static tg_tensor *b_attn_full(tg_graph *g, tg_tensor **x) { return tg_attention(g, x[0], x[1], x[2], 2, 0, 0, 0.45f); }
static tg_tensor *b_attn_dh1(tg_graph *g, tg_tensor **x) { return tg_attention(g, x[0], x[1], x[2], 3, 1, 1, 1.5f); }
static tg_tensor *b_attn_big(tg_graph *g, tg_tensor **x) { /* dh 20 */
  return tg_attention(g, x[0], x[1], x[2], 3, 1, 0, 0.2236068f);
}
static tg_tensor *b_attn_wide(tg_graph *g, tg_tensor **x) { return tg_attention(g, x[0], x[1], x[2], 2, 1, 3, 0.15f); }
static tg_tensor *b_attn_none(tg_graph *g, tg_tensor **x) { /* no row sees a key */
  return tg_attention(g, x[0], x[1], x[2], 2, 1, INT64_MIN, 1.0f);
}
static tg_tensor *b_attn_max(tg_graph *g, tg_tensor **x) { /* every row sees every key */
  return tg_attention(g, x[0], x[1], x[2], 1, 1, INT64_MAX, 0.3f);
}
static tg_tensor *b_conv1d(tg_graph *g, tg_tensor **x) { return tg_conv1d_causal(g, x[0], x[1], x[2]); }
static tg_tensor *b_conv1d_nobias(tg_graph *g, tg_tensor **x) { return tg_conv1d_causal(g, x[0], x[1], NULL); }
static tg_tensor *b_lstm(tg_graph *g, tg_tensor **x) { return tg_lstm(g, x[0], NULL, NULL, x[1], x[2], x[3]); }
/* lstm with h0 and c0 (declared here: a case has at most PC_MAX_LEAVES leaves), no bias */
static tg_tensor *b_lstm_state(tg_graph *g, tg_tensor **x) {
  const int64_t ss[2] = {2, 4};
  tg_init u = {TG_INIT_UNIFORM, -1.0f, 1.0f};
  return tg_lstm(g, x[0], tg_param(g, "h0", 2, ss, u), tg_param(g, "c0", 2, ss, u), x[1], x[2], NULL);
}
/* ssd_scan: leaves x, dt, Bm, Cm; A (< 0) and D [H] declared here (a case has at most PC_MAX_LEAVES leaves) */
static tg_tensor *ssd_case(tg_graph *g, tg_tensor **x, int with_d, int chunk) {
  const int64_t h[1] = {x[0]->shape[2]};
  tg_tensor *A = tg_param(g, "A", 1, h, (tg_init){TG_INIT_UNIFORM, -1.5f, -0.5f});
  tg_tensor *D = with_d ? tg_param(g, "D", 1, h, (tg_init){TG_INIT_UNIFORM, -1.0f, 1.0f}) : NULL;
  return tg_ssd_scan(g, x[0], x[1], A, x[2], x[3], D, chunk);
}
static tg_tensor *b_ssd(tg_graph *g, tg_tensor **x) { return ssd_case(g, x, 1, 160); }
static tg_tensor *b_ssd_nod(tg_graph *g, tg_tensor **x) { return ssd_case(g, x, 0, 8); }

/* ppo_loss: x = logits [B, A], value [B], actions [B], d [4, B] = old_logp | adv | returns | old_value. */
static tg_tensor *b_ppo(tg_graph *g, tg_tensor **x) {
  int64_t B = x[0]->shape[0];
  tg_tensor *d[4];
  for (int k = 0; k < 4; k++) d[k] = tg_reshape(g, tg_slice(g, x[3], 0, k, 1), 1, &B);
  tg_ppo_coefs c = {0.2f, 0.5f, 0.01f, 1, 1};
  return tg_ppo_loss(g, x[0], x[1], x[2], d[0], d[1], d[2], d[3], &c);
}

/* ppo_loss, Gaussian: x = mean [B, 1], log_std [1], value [B], d [5, B] = old_logp | adv | returns |
 * old_value | actions. */
static tg_tensor *b_ppo_gauss(tg_graph *g, tg_tensor **x) {
  int64_t B = x[0]->shape[0], sa[2] = {B, 1};
  tg_tensor *d[5];
  for (int k = 0; k < 5; k++) d[k] = tg_reshape(g, tg_slice(g, x[3], 0, k, 1), k < 4 ? 1 : 2, k < 4 ? &B : sa);
  tg_ppo_coefs c = {0.2f, 0.5f, 0.01f, 1, 1};
  return tg_ppo_loss_gaussian(g, x[0], x[1], x[2], d[4], d[0], d[1], d[2], d[3], &c);
}

static const pc_case k_cases[] = {
    {"matmul", 2, {F32P("a", 3, 3, 4, 33), F32P("b", 2, 33, 6)}, b_matmul},
    {"matmul", 2, {F32P("a", 3, 2, 33, 4), F32P("b", 3, 2, 6, 33)}, b_matmul_tt},
    {"linear", 3, {F32P("x", 2, 7, 40), F32P("w", 2, 6, 40), F32P("b", 1, 6)}, b_linear},
    {"stacked_linear", 3, {F32P("x", 4, 2, 5, 3, 40), F32P("w", 3, 3, 6, 40), F32P("b", 2, 3, 6)}, b_stacked_linear},
    {"add", 2, {F32P("a", 3, 2, 4, 6), F32P("b", 1, 6)}, b_add},
    {"sub", 2, {F32P("a", 2, 4, 6), F32P("b", 2, 4, 6)}, b_sub},
    {"mul", 2, {F32P("a", 2, 4, 6), F32P("b", 1, 6)}, b_mul},
    {"div", 2, {F32P("a", 2, 4, 6), POS("b", 2, 4, 6)}, b_div},
    {"scale", 1, {F32P("x", 2, 5, 7)}, b_scale},
    {"relu", 1, {F32P("x", 2, 5, 7)}, b_relu},
    {"tanh", 1, {F32P("x", 2, 5, 7)}, b_tanh},
    {"sigmoid", 1, {F32P("x", 2, 5, 7)}, b_sigmoid},
    {"elu", 1, {F32P("x", 2, 5, 7)}, b_elu},
    {"silu", 1, {F32P("x", 2, 5, 7)}, b_silu},
    {"gelu", 1, {{"x", TG_F32, 2, {5, 70}, 1, -6.0, 6.0}}, b_gelu},
    {"softplus", 1, {F32P("x", 2, 5, 7)}, b_softplus},
    {"exp", 1, {F32P("x", 2, 5, 7)}, b_exp},
    {"log", 1, {POS("x", 2, 5, 7)}, b_log},
    {"sqrt", 1, {POS("x", 2, 5, 7)}, b_sqrt},
    {"softmax", 1, {F32P("x", 2, 6, 9)}, b_softmax},
    {"log_softmax", 1, {F32P("x", 2, 6, 9)}, b_log_softmax},
    {"layernorm", 3, {F32P("x", 2, 6, 48), POS("g", 1, 48), F32P("b", 1, 48)}, b_layernorm},
    /* gate_add_norm: per-slot affine [3, 8] (warp per row); then rows of 1100 (block per row) */
    {"gate_add_norm", 4, {F32P("a", 3, 5, 3, 16), F32P("s", 3, 5, 3, 8), POS("g", 2, 3, 8), F32P("b", 2, 3, 8)},
     b_gate_add_norm},
    {"gate_add_norm", 4, {F32P("a", 2, 3, 2200), F32P("s", 2, 3, 1100), POS("g", 1, 1100), F32P("b", 1, 1100)},
     b_gate_add_norm},
    {"rmsnorm", 2, {F32P("x", 2, 6, 48), POS("w", 1, 48)}, b_rmsnorm},
    {"concat", 2, {F32P("a", 2, 3, 4), F32P("b", 2, 3, 2)}, b_concat},
    {"slice", 1, {F32P("x", 2, 5, 8)}, b_slice},
    {"reshape", 1, {F32P("x", 2, 4, 6)}, b_reshape},
    {"transpose", 1, {F32P("x", 3, 2, 3, 4)}, b_transpose},
    {"gather_rows", 2, {F32P("t", 2, 10, 6), IN_IDX("i", TG_I64, 10, 2, 4, 3)}, b_gather},
    {"gather_rows", 2, {F32P("t", 2, 10, 6), IN_IDX("i", TG_I32, 10, 1, 12)}, b_gather},
    {"sum", 1, {F32P("x", 2, 50, 70)}, b_sum},
    {"mean", 1, {F32P("x", 2, 5, 7)}, b_mean},
    {"sum_last", 1, {F32P("x", 2, 5, 70)}, b_sum_last},
    {"mean_last", 1, {F32P("x", 2, 5, 7)}, b_mean_last},
    {"max_last", 1, {F32P("x", 2, 5, 7)}, b_max_last},
    {"argmax_last", 1, {F32P("x", 2, 5, 7)}, b_argmax_last},
    {"dropout", 1, {F32P("x", 2, 8, 100)}, b_dropout},
    {"mse_loss", 2, {F32P("p", 2, 6, 3), IN_F32("t", 2, 6, 3)}, b_mse},
    {"huber_loss", 2, {F32P("p", 2, 6, 3), IN_F32("t", 2, 6, 3)}, b_huber},
    {"pinball_loss", 2, {F32P("p", 2, 6, 3), IN_F32("t", 1, 6)}, b_pinball},
    {"softmax_cross_entropy", 2, {F32P("z", 2, 6, 5), IN_IDX("y", TG_I32, 5, 1, 6)}, b_xent},
    {"sample_rows", 0, {{0}}, b_sample},
    {"causal_softmax", 1, {F32P("x", 3, 2, 5, 7)}, b_causal_softmax},          /* row 0 sees nothing */
    {"causal_softmax", 1, {F32P("x", 3, 2, 6, 1500)}, b_causal_softmax_wide}, /* block-per-row path */
    {"conv1d_causal", 3, {F32P("x", 3, 3, 40, 6), F32P("w", 2, 6, 4), F32P("b", 1, 6)}, b_conv1d},
    {"conv1d_causal", 2, {F32P("x", 3, 2, 3, 5), F32P("w", 2, 5, 6)}, b_conv1d_nobias}, /* K > L */
    {"lstm", 4, {F32P("x", 3, 3, 5, 4), F32P("wi", 2, 20, 4), F32P("wh", 2, 20, 5), F32P("b", 1, 20)}, b_lstm},
    {"lstm", 3, {F32P("x", 3, 2, 4, 3), F32P("wi", 2, 16, 3), F32P("wh", 2, 16, 4)}, b_lstm_state},
    /* ssd_scan: 2 chunks (160 + 140 steps, rows over 128 steps), G = 2; then N > threads per block, no D */
    {"ssd_scan", 4, {F32P("x", 4, 2, 300, 4, 8), {"dt", TG_F32, 3, {2, 300, 4}, 1, 0.05, 0.5},
                     F32P("Bm", 4, 2, 300, 2, 6), F32P("Cm", 4, 2, 300, 2, 6)}, b_ssd},
    {"ssd_scan", 4, {F32P("x", 4, 1, 37, 2, 3), {"dt", TG_F32, 3, {1, 37, 2}, 1, 0.05, 0.5},
                     F32P("Bm", 4, 1, 37, 1, 300), F32P("Cm", 4, 1, 37, 1, 300)}, b_ssd_nod},
    /* ppo_loss: 300 samples (more than the kernel's one block of threads); ratios straddle the clip range */
    {"ppo_loss", 4, {F32P("z", 2, 300, 3), F32P("v", 1, 300), IN_IDX("a", TG_I32, 3, 1, 300),
                     {"d", TG_F32, 2, {4, 300}, 0, -1.5, 0.5}}, b_ppo},
    /* ppo_loss, Gaussian policy: log_std's gradient is a sum over the 300 samples */
    {"ppo_loss", 4, {F32P("mu", 2, 300, 1), {"ls", TG_F32, 1, {1}, 1, -0.5, -0.2}, F32P("v", 1, 300),
                     {"d", TG_F32, 2, {5, 300}, 0, -1.5, 0.5}}, b_ppo_gauss},
    /* attention: causal offset 0 with Tq == Tk (dh 4); Tq = 1 at offset Tk - 1 (dh 4); a negative offset (rows 0 and
     * 1 see nothing, dh 3); non-causal with Tq != Tk (dh 5); dh 1; B 2, T 70, H 3, dh 20 (420 rows: several blocks);
     * dh 40 and dh 100 (the register and the generic paths past 32 and 64 columns), dh 100 with q an input (no dq);
     * offsets INT64_MIN (no row sees a key: all 0) and INT64_MAX (every row sees every key) */
    {"attention", 3, {F32P("q", 3, 2, 6, 8), F32P("k", 3, 2, 6, 8), F32P("v", 3, 2, 6, 8)}, b_attn_causal},
    {"attention", 3, {F32P("q", 3, 2, 1, 12), F32P("k", 3, 2, 9, 12), F32P("v", 3, 2, 9, 12)}, b_attn_last},
    {"attention", 3, {F32P("q", 3, 2, 7, 6), F32P("k", 3, 2, 7, 6), F32P("v", 3, 2, 7, 6)}, b_attn_neg},
    {"attention", 3, {F32P("q", 3, 2, 4, 10), F32P("k", 3, 2, 9, 10), F32P("v", 3, 2, 9, 10)}, b_attn_full},
    {"attention", 3, {F32P("q", 3, 1, 5, 3), F32P("k", 3, 1, 6, 3), F32P("v", 3, 1, 6, 3)}, b_attn_dh1},
    {"attention", 3, {F32P("q", 3, 2, 70, 60), F32P("k", 3, 2, 70, 60), F32P("v", 3, 2, 70, 60)}, b_attn_big},
    {"attention", 3, {F32P("q", 3, 2, 9, 80), F32P("k", 3, 2, 11, 80), F32P("v", 3, 2, 11, 80)}, b_attn_wide},
    {"attention", 3, {F32P("q", 3, 1, 9, 200), F32P("k", 3, 1, 12, 200), F32P("v", 3, 1, 12, 200)}, b_attn_wide},
    {"attention", 3, {IN_F32("q", 3, 1, 5, 200), F32P("k", 3, 1, 7, 200), F32P("v", 3, 1, 7, 200)}, b_attn_wide},
    {"attention", 3, {F32P("q", 3, 2, 3, 4), F32P("k", 3, 2, 5, 4), F32P("v", 3, 2, 5, 4)}, b_attn_none},
    {"attention", 3, {F32P("q", 3, 1, 4, 5), F32P("k", 3, 1, 6, 5), F32P("v", 3, 1, 6, 5)}, b_attn_max},
    /* window_rows (window 8, 50 rows): i64 rows drawn from [7, 50); f32 rows all 9 (integers as floats) */
    {"window_rows", 1, {{"t", TG_I64, 2, {300, 1}, 0, 7.0, 50.0}}, b_window_rows},
    {"window_rows", 1, {{"t", TG_F32, 1, {300}, 0, 9.0, 9.0}}, b_window_rows},
};
#define N_CASES ((int)(sizeof k_cases / sizeof k_cases[0]))

/* Every non-leaf op has a parity case (checked without a device too). */
static void check_cases_cover_ops(void) {
  for (int op = 0; op < tg_op_count(); op++) {
    if (tg_op_is_leaf(op)) continue;
    int found = 0;
    for (int c = 0; c < N_CASES; c++) found |= strcmp(k_cases[c].op, tg_op_name(op)) == 0;
    CHECK_MSG(found, "op '%s' has no CPU/CUDA parity case", tg_op_name(op));
  }
}

static int64_t leaf_numel(const pc_leaf *l) {
  int64_t n = 1;
  for (int d = 0; d < l->ndim; d++) n *= l->shape[d];
  return n;
}

/* Deterministic host values for an input leaf. */
static void fill_leaf(const pc_leaf *l, void *dst, uint64_t stream) {
  int64_t n = leaf_numel(l);
  for (int64_t i = 0; i < n; i++) {
    double u = l->lo + (l->hi - l->lo) * (double)tg_rng_uniform(77, stream, (uint64_t)i);
    if (l->dtype == TG_F32) ((float *)dst)[i] = (float)u;
    else if (l->dtype == TG_I32) ((int32_t *)dst)[i] = (int32_t)floor(u);
    else ((int64_t *)dst)[i] = (int64_t)floor(u);
  }
}

typedef struct pc_result {
  void *out;      /* [numel(out)] host copy of the output */
  tg_dtype dtype;
  int64_t n_out;
  float *grads;   /* [store numel] host copy of the parameter gradients (NULL: none) */
  size_t n_grads;
  size_t g_off[PC_MAX_LEAVES], g_n[PC_MAX_LEAVES]; /* leaf k's gradient: grads[g_off[k] ..) (g_n 0: not a param) */
} pc_result;

/* Builds, plans (training, poisoned, precision f32 or bf16), runs and back-propagates a random seed on dev.
 * magnitudes (host-memory devices only): every parameter, input and the seed replaced by its absolute value, so a
 * bilinear op's output and gradients are the sums of |terms| behind each element (the bf16 bounds below). */
static int pc_run_as(const pc_case *c, tg_device dev, tg_dtype precision, int magnitudes, pc_result *r) {
  const tg_backend *be = tg_backend_for(dev.kind);
  memset(r, 0, sizeof *r);
  tg_store *s = tg_store_new(dev, 5);
  tg_graph *g = tg_graph_new(s, c->op);
  tg_graph_set_seed(g, 11, 3);
  tg_tensor *x[PC_MAX_LEAVES];
  for (int k = 0; k < c->n; k++) {
    const pc_leaf *l = &c->leaf[k];
    tg_init u = {TG_INIT_UNIFORM, (float)l->lo, (float)l->hi};
    x[k] = l->param ? tg_param(g, l->name, l->ndim, l->shape, u) : tg_input(g, l->name, l->dtype, l->ndim, l->shape);
  }
  tg_tensor *y = c->build(g, x);
  tg_plan_opts o = tg_plan_defaults(dev);
  o.training = 1;
  o.poison = 1;
  o.precision = precision;
  int ok = y != NULL && (!magnitudes || be->host_memory) && tg_graph_plan(g, &o) == TG_OK;
  if (ok && magnitudes)
    for (size_t i = 0; i < tg_store_numel(s); i++) tg_store_values(s)[i] = fabsf(tg_store_values(s)[i]);
  void *dev_in[PC_MAX_LEAVES] = {0};
  for (int k = 0; ok && k < c->n; k++) {
    const pc_leaf *l = &c->leaf[k];
    int at = tg_store_find(s, l->name);
    if (l->param && at >= 0) {
      tg_param_info pi = tg_store_param(s, at);
      r->g_off[k] = pi.offset;
      r->g_n[k] = pi.numel;
    }
    if (l->param) continue;
    size_t bytes = (size_t)leaf_numel(l) * tg_dtype_size(l->dtype);
    void *host = malloc(bytes);
    fill_leaf(l, host, 100 + (uint64_t)k);
    for (int64_t i = 0; magnitudes && l->dtype == TG_F32 && i < leaf_numel(l); i++)
      ((float *)host)[i] = fabsf(((float *)host)[i]);
    ok = be->alloc(dev, bytes, &dev_in[k]) == TG_OK && be->from_host(dev, dev_in[k], host, bytes) == TG_OK;
    free(host);
    tg_tensor t;
    ok = ok && tg_tensor_view(&t, l->name, dev, l->dtype, l->ndim, l->shape, dev_in[k]) == TG_OK &&
         tg_graph_bind(g, l->name, &t) == TG_OK;
  }
  ok = ok && tg_graph_run(g) == TG_OK;
  if (ok) {
    r->dtype = y->dtype;
    r->n_out = tg_numel(y);
    r->out = malloc((size_t)r->n_out * tg_dtype_size(y->dtype) + 1);
    ok = be->to_host(dev, r->out, y->data, (size_t)r->n_out * tg_dtype_size(y->dtype)) == TG_OK;
  }
  if (ok && y->dtype == TG_F32) {
    size_t nb = (size_t)r->n_out * sizeof(float);
    float *seed = malloc(nb);
    for (int64_t i = 0; i < r->n_out; i++) seed[i] = 2.0f * tg_rng_uniform(78, 1, (uint64_t)i) - 1.0f;
    for (int64_t i = 0; magnitudes && i < r->n_out; i++) seed[i] = fabsf(seed[i]);
    void *dseed = NULL;
    ok = be->alloc(dev, nb, &dseed) == TG_OK && be->from_host(dev, dseed, seed, nb) == TG_OK &&
         tg_store_zero_grads(s) == TG_OK && tg_graph_backward_seeded(g, y, dseed) == TG_OK;
    r->n_grads = tg_store_numel(s);
    r->grads = malloc(r->n_grads * sizeof(float) + 1);
    ok = ok && be->to_host(dev, r->grads, tg_store_grads(s), r->n_grads * sizeof(float)) == TG_OK;
    if (dseed) be->free(dev, dseed);
    free(seed);
  }
  if (!ok)
    fprintf(stderr, "parity case '%s' on %s (%s%s) failed: %s\n", c->op, dev.kind == TG_CPU ? "cpu" : "cuda",
            tg_dtype_name(precision), magnitudes ? ", magnitudes" : "", tg_last_error());
  for (int k = 0; k < c->n; k++)
    if (dev_in[k]) be->free(dev, dev_in[k]);
  tg_graph_free(g);
  tg_store_free(s);
  return ok;
}

static int pc_run(const pc_case *c, tg_device dev, pc_result *r) { return pc_run_as(c, dev, TG_F32, 0, r); }

/* The worst |got - want| / (1 + |want|) over n floats; NaN anywhere gives NaN. */
static double worst_err(const float *got, const float *want, int64_t n, int64_t *at) {
  double worst = 0.0;
  *at = -1;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - (double)want[i]) / (1.0 + fabs((double)want[i]));
    if (!(e <= worst)) {
      worst = e;
      *at = i;
      if (isnan(e)) return e;
    }
  }
  return worst;
}

static void pc_free(pc_result *r) {
  free(r->out);
  free(r->grads);
}

static void check_parity(void) {
  int fwd = 0, bwd = 0, ops = 0, by_dtype[3] = {0, 0, 0}; /* cases compared; by output dtype f32, i32, i64 */
  double worst_f = 0.0, worst_b = 0.0;
  int worst_fc = -1, worst_bc = -1;
  for (int c = 0; c < N_CASES; c++) {
    int first = 1;
    for (int p = 0; p < c; p++) first &= strcmp(k_cases[p].op, k_cases[c].op) != 0;
    ops += first;
    pc_result want, got;
    int ok_cpu = pc_run(&k_cases[c], tg_cpu(0), &want), ok_gpu = pc_run(&k_cases[c], tg_cuda(0), &got);
    CHECK_MSG(ok_cpu && ok_gpu, "case %d '%s' did not run on both devices", c, k_cases[c].op);
    if (ok_cpu && ok_gpu) {
      int64_t at;
      fwd++;
      by_dtype[want.dtype == TG_F32 ? 0 : want.dtype == TG_I32 ? 1 : 2]++;
      bwd += want.dtype == TG_F32 && want.n_grads > 0;
      if (want.dtype == TG_F32) {
        double e = worst_err(got.out, want.out, want.n_out, &at);
        CHECK_MSG(e <= PC_TOL, "case %d '%s' forward: worst error %.3g at %lld", c, k_cases[c].op, e, (long long)at);
        if (!(e <= worst_f)) worst_f = e, worst_fc = c;
        e = worst_err(got.grads, want.grads, (int64_t)want.n_grads, &at);
        if (!(e <= worst_b)) worst_b = e, worst_bc = c;
        CHECK_MSG(e <= PC_TOL, "case %d '%s' backward: worst error %.3g at %lld", c, k_cases[c].op, e, (long long)at);
      } else {
        CHECK_MSG(memcmp(got.out, want.out, (size_t)want.n_out * tg_dtype_size(want.dtype)) == 0,
                  "case %d '%s': integer outputs differ", c, k_cases[c].op);
      }
    }
    pc_free(&want);
    pc_free(&got);
  }
  tg_device_info info;
  if (tg_device_info_get(tg_cuda(0), &info) != TG_OK) snprintf(info.name, sizeof info.name, "?");
  printf("cuda parity on %s: %d cases over %d ops (outputs: %d f32, %d i32, %d i64): %d forward, %d backward cases "
         "compared with the CPU\n",
         info.name, N_CASES, ops, by_dtype[0], by_dtype[1], by_dtype[2], fwd, bwd);
  printf("cuda parity: worst forward error %.2g (case %d '%s'), worst backward error %.2g (case %d '%s'); tolerance %g\n",
         worst_f, worst_fc, worst_fc >= 0 ? k_cases[worst_fc].op : "-", worst_b, worst_bc,
         worst_bc >= 0 ? k_cases[worst_bc].op : "-", PC_TOL);
}

/* ---- bf16 compute: the GEMM ops planned with precision bf16 on cuda:0 against the same plan on the CPU ----
 *
 * Both backends round every GEMM operand (both inputs; in backward the output's gradient and the inputs the wanted
 * gradients read) to bf16, to nearest even, and accumulate in f32 or wider; the bias and its gradient stay f32 on the
 * unrounded values. So they compute the same sums s = t_1 + ... + t_T of the same terms: each t_p a product of two
 * bf16 values, exact in f32 (8-bit significands give a 16-bit product), or a bias, or (beta 1) the zero a gradient
 * starts from. They differ only in how they add them:
 *   - the CPU (OpenBLAS on f32 copies of the bf16 values, or oneDNN's bf16 matmul) adds in f32 in some order, with or
 *     without FMA: |cpu - s| <= (T - 1) 2^-24 sum|t_p| (to first order; every partial sum is rounded once);
 *   - cuBLAS's 32F compute type adds in f32 too, in another order; tensor cores are reported to truncate rather
 *     than round inside their adders, which doubles the unit: |gpu - s| <= T 2^-23 sum|t_p|; the emulator's
 *     reference GEMM sums in double and rounds once, well inside that.
 * Hence |cuda - cpu| <= 1.5 T 2^-23 sum|t_p|. Rounding to bf16 moves each operand by at most 2^-9 of itself, so the
 * sum |t_p| of the rounded terms is at most (1 + 2^-8)^2 < 1.01 times M, the same op on the absolute values of the
 * unrounded leaves and seed (computed in f32 on the CPU: pc_run_as with magnitudes). The test asserts, per element,
 *   |cuda_bf16 - cpu_bf16| <= T 2^-22 M        (BF16_BOUND; 2^-22 = 2 * 2^-23 covers 1.5 * 1.01 with room),
 * with T per case the longest sum behind any output or gradient element (counting the bias and beta terms). It also
 * asserts that rounding happened: the bf16 results differ from the f32 plan's by more than that bound on most
 * elements of the output and of every GEMM-fed gradient (bf16 rounding moves a term by ~2^-9 of itself, and a sum by
 * ~2^-9 sqrt(T) of its typical term, far above T 2^-22 M for these T). The bias gradient sums the unrounded gradient
 * in f32 in the plan's fixed order, so on CUDA it equals the f32 plan's bitwise. */
#define BF16_BOUND(terms, mag) ((double)(terms) * 0x1p-22 * (double)(mag))

typedef struct bf_case {
  pc_case c;
  int terms; /* T: the longest sum behind any output or gradient element */
} bf_case;

static tg_tensor *b_matmul_tn(tg_graph *g, tg_tensor **x) { return tg_matmul(g, x[0], x[1], 1, 0); }
static tg_tensor *b_matmul_nt(tg_graph *g, tg_tensor **x) { return tg_matmul(g, x[0], x[1], 0, 1); }
static tg_tensor *b_linear_nobias(tg_graph *g, tg_tensor **x) { return tg_linear(g, x[0], x[1], NULL); }
static tg_tensor *b_stacked_nobias(tg_graph *g, tg_tensor **x) { return tg_stacked_linear(g, x[0], x[1], NULL); }

static const bf_case k_bf_cases[] = {
    /* matmul, every ta/tb: a [batch, M, K] or [batch, K, M], b [batch, K, N] or [batch, N, K], or shared [K, N] */
    /* shared b, untransposed: one GEMM over batch*M rows (41472 multiply-adds: the CPU's oneDNN path);
     * sums: K = 72 (out), N = 24 (da), batch*M = 24 (db) */
    {{"matmul", 2, {F32P("a", 3, 3, 8, 72), F32P("b", 2, 72, 24)}, b_matmul}, 73},
    /* batched, neither transposed: K = 40, N = 5, M = 6 */
    {{"matmul", 2, {F32P("a", 3, 2, 6, 40), F32P("b", 3, 2, 40, 5)}, b_matmul}, 41},
    /* batched, both transposed */
    {{"matmul", 2, {F32P("a", 3, 2, 40, 6), F32P("b", 3, 2, 5, 40)}, b_matmul_tt}, 41},
    /* shared b, transposed a: db sums the batches' products one GEMM after another (3 * 6 terms) */
    {{"matmul", 2, {F32P("a", 3, 3, 40, 6), F32P("b", 2, 40, 5)}, b_matmul_tn}, 41},
    /* batched, transposed b */
    {{"matmul", 2, {F32P("a", 3, 2, 6, 40), F32P("b", 3, 2, 5, 40)}, b_matmul_nt}, 41},
    /* linear with bias (294912 multiply-adds: oneDNN on the CPU): in 96 + bias (out), out 48 (dx), rows 64 (dw, db) */
    {{"linear", 3, {F32P("x", 2, 64, 96), F32P("w", 2, 48, 96), F32P("bias", 1, 48)}, b_linear}, 97},
    /* linear without bias, 3-d x: in 40, out 6, rows 14 */
    {{"linear", 2, {F32P("x", 3, 2, 7, 40), F32P("w", 2, 6, 40)}, b_linear_nobias}, 41},
    /* stacked_linear with bias: rows 10, G 3, in 40 + bias, out 6 */
    {{"stacked_linear", 3, {F32P("x", 4, 2, 5, 3, 40), F32P("w", 3, 3, 6, 40), F32P("bias", 2, 3, 6)},
      b_stacked_linear}, 41},
    /* stacked_linear without bias: rows 64, G 2, in 48, out 32 (196608 multiply-adds: oneDNN on the CPU) */
    {{"stacked_linear", 2, {F32P("x", 4, 4, 16, 2, 48), F32P("w", 3, 2, 32, 48)}, b_stacked_nobias}, 65},
};
#define N_BF_CASES ((int)(sizeof k_bf_cases / sizeof k_bf_cases[0]))

/* Over n elements: the worst |got - want| / BF16_BOUND(terms, mag) (NaN anywhere gives NaN), and into *above the
 * number of elements where |got - f32| exceeds that bound. */
static double bf_worst(const float *got, const float *want, const float *f32, const float *mag, int64_t n, int terms,
                       int64_t *above) {
  double worst = 0.0;
  *above = 0;
  for (int64_t i = 0; i < n; i++) {
    double bound = BF16_BOUND(terms, mag[i]);
    double e = fabs((double)got[i] - (double)want[i]) / bound;
    if (!(e <= worst)) worst = e;
    *above += fabs((double)got[i] - (double)f32[i]) > bound;
  }
  return worst;
}

/* The GEMM ops have bf16 kernels on CUDA (forward and backward) and no other op has (checked without a device too). */
static void check_bf16_kernels_listed(void) {
  if (!tg_backend_compiled(TG_CUDA)) return;
  for (int op = 0; op < tg_op_count(); op++) {
    if (tg_op_is_leaf(op)) continue;
    int want = tg_op_is_gemm((tg_op)op);
    CHECK_MSG(tg_op_has_kernel(op, TG_CUDA, TG_BF16, 0) == want && tg_op_has_kernel(op, TG_CUDA, TG_BF16, 1) == want,
              "op '%s': CUDA bf16 kernels %s expected", tg_op_name(op), want ? "are" : "are not");
  }
}

/* The CPU's bf16 runs below are the reference for CUDA's, so they keep bf16 operands on every GEMM node: by default a
 * CPU with native bf16 GEMMs runs the products too small for them in f32 (cpu_gemm_plan.h), which TICKGRAD_GEMM=openblas
 * does not. on 1: set it (the previous value kept), 0: put the previous value back. */
static void cpu_bf16_reference(int on) {
  static char prev[32];
  static int had;
  if (on) {
    const char *v = getenv("TICKGRAD_GEMM");
    had = v != NULL;
    snprintf(prev, sizeof prev, "%s", v ? v : "");
    setenv("TICKGRAD_GEMM", "openblas", 1);
  } else if (had) {
    setenv("TICKGRAD_GEMM", prev, 1);
  } else {
    unsetenv("TICKGRAD_GEMM");
  }
}

static void check_bf16_parity(void) {
  double worst_all = 0.0;
  int compared = 0;
  for (int ci = 0; ci < N_BF_CASES; ci++) {
    const pc_case *c = &k_bf_cases[ci].c;
    int T = k_bf_cases[ci].terms;
    pc_result f32c, bfc, bfg, f32g, mag;
    cpu_bf16_reference(1);
    int ok = pc_run_as(c, tg_cpu(0), TG_BF16, 0, &bfc);
    cpu_bf16_reference(0);
    ok = ok & pc_run_as(c, tg_cpu(0), TG_F32, 0, &f32c) & pc_run_as(c, tg_cuda(0), TG_BF16, 0, &bfg) &
             pc_run_as(c, tg_cuda(0), TG_F32, 0, &f32g) &
             pc_run_as(c, tg_cpu(0), TG_F32, 1, &mag);
    CHECK_MSG(ok, "bf16 case %d '%s' did not run everywhere", ci, c->op);
    if (ok) {
      int64_t above, n = bfc.n_out;
      double e = bf_worst(bfg.out, bfc.out, f32c.out, mag.out, n, T, &above);
      CHECK_MSG(e <= 1.0, "bf16 case %d '%s' forward: |cuda - cpu| reaches %.3g of the bound", ci, c->op, e);
      CHECK_MSG(2 * above > n, "bf16 case %d '%s' forward: only %lld of %lld elements differ from f32 by more than "
                "the bound: were the operands rounded?", ci, c->op, (long long)above, (long long)n);
      if (!(e <= worst_all)) worst_all = e;
      compared++;
      for (int k = 0; k < c->n; k++) {
        int64_t gn = (int64_t)bfc.g_n[k];
        if (gn == 0) continue; /* an input, not a parameter: no gradient kept */
        const float *got = bfg.grads + bfg.g_off[k], *want = bfc.grads + bfc.g_off[k];
        e = bf_worst(got, want, f32c.grads + f32c.g_off[k], mag.grads + mag.g_off[k], gn, T, &above);
        CHECK_MSG(e <= 1.0, "bf16 case %d '%s' gradient of %s: |cuda - cpu| reaches %.3g of the bound", ci, c->op,
                  c->leaf[k].name, e);
        if (!(e <= worst_all)) worst_all = e;
        compared++;
        if (strcmp(c->leaf[k].name, "bias") == 0) /* f32 on the unrounded gradient: as the f32 plan, bitwise */
          CHECK_MSG(memcmp(got, f32g.grads + f32g.g_off[k], sizeof(float) * (size_t)gn) == 0,
                    "bf16 case %d '%s': the CUDA bias gradient differs from the f32 plan's", ci, c->op);
        else
          CHECK_MSG(2 * above > gn, "bf16 case %d '%s' gradient of %s: only %lld of %lld elements differ from f32 by "
                    "more than the bound", ci, c->op, c->leaf[k].name, (long long)above, (long long)gn);
      }
    }
    pc_free(&f32c);
    pc_free(&bfc);
    pc_free(&bfg);
    pc_free(&f32g);
    pc_free(&mag);
  }
  printf("cuda bf16 parity: %d cases, %d outputs and gradients within T 2^-22 sum|terms| of the CPU's bf16 (worst "
         "%.2g of the bound), each rounded (differs from f32 by more than the bound)\n",
         N_BF_CASES, compared, worst_all);
}

/* ---- a whole MLP training step, captured on CUDA, against the CPU ---- */

#define MLP_STEPS 12
/* bf16 losses, CUDA against the CPU (relative): f32's 1e-4. Where the backends' f32 activations differ in the last
 * bit (another summation order), rounding to bf16 can turn that into a whole bf16 step (2^-8) of one operand of the
 * next GEMM; one such element among the 64 x 32 hidden activations moves the loss by about 2^-8 / 2048 ~ 2e-6 of
 * itself, so even a few of them stay well inside (the emulator matches the CPU exactly here) */
#define MLP_BF16_TOL 1e-4

/* Losses of MLP_STEPS AdamW steps of the support's MLP on dev; 0 on failure. */
static int mlp_losses(tg_device dev, tg_dtype precision, int capture, int recompute, float *loss, int *captured) {
  return tg_test_mlp_losses(dev, precision, capture, recompute, MLP_STEPS, loss, captured, NULL, NULL);
}

static void check_mlp_steps(void) {
  float cpu[MLP_STEPS], eager[MLP_STEPS], graph[MLP_STEPS], eager_rc[MLP_STEPS], graph_rc[MLP_STEPS];
  int cap_cpu = 0, cap_eager = 0, cap_graph = 0, cap_eager_rc = 0, cap_graph_rc = 0;
  CHECK(mlp_losses(tg_cpu(0), TG_F32, 1, TG_RECOMPUTE_NONE, cpu, &cap_cpu));
  CHECK(mlp_losses(tg_cuda(0), TG_F32, 0, TG_RECOMPUTE_NONE, eager, &cap_eager));
  CHECK(mlp_losses(tg_cuda(0), TG_F32, 1, TG_RECOMPUTE_NONE, graph, &cap_graph));
  CHECK(mlp_losses(tg_cuda(0), TG_F32, 0, TG_RECOMPUTE_BLOCKS, eager_rc, &cap_eager_rc));
  CHECK(mlp_losses(tg_cuda(0), TG_F32, 1, TG_RECOMPUTE_BLOCKS, graph_rc, &cap_graph_rc));
  CHECK(!cap_cpu && !cap_eager && !cap_eager_rc);
  CHECK_MSG(cap_graph && cap_graph_rc, "the CUDA training step was not captured");
  /* capture changes nothing: the same kernels in the same order */
  CHECK_MSG(memcmp(eager, graph, sizeof eager) == 0, "captured and eager CUDA losses differ");
  /* nor does recomputing the block (its dropout reads the run counter from device memory, eager and replayed) */
  CHECK_MSG(memcmp(eager, eager_rc, sizeof eager) == 0, "eager CUDA losses differ with recompute");
  CHECK_MSG(memcmp(graph, graph_rc, sizeof graph) == 0, "captured CUDA losses differ with recompute");
  for (int t = 0; t < MLP_STEPS; t++) {
    double e = fabs((double)graph[t] - (double)cpu[t]) / (1e-6 + fabs((double)cpu[t]));
    CHECK_MSG(e <= 1e-4, "step %d: cuda loss %.9g, cpu %.9g (rel %.2e)", t, (double)graph[t], (double)cpu[t], e);
  }
  printf("mlp: %d AdamW steps, cpu loss %.6f -> %.6f, cuda (captured) %.6f -> %.6f\n", MLP_STEPS, (double)cpu[0],
         (double)cpu[MLP_STEPS - 1], (double)graph[0], (double)graph[MLP_STEPS - 1]);
}

/* The same steps planned in bf16: the rounding kernels and typed GEMMs stay on the stream without synchronising or
 * allocating, so the step is captured and its replays equal eager steps bitwise; the losses follow the CPU's bf16
 * plan and differ from the f32 plan's. */
static void check_mlp_steps_bf16(void) {
  float cpu[MLP_STEPS], eager[MLP_STEPS], graph[MLP_STEPS], f32[MLP_STEPS];
  int cap_cpu = 0, cap_eager = 0, cap_graph = 0, cap_f32 = 0;
  cpu_bf16_reference(1);
  CHECK(mlp_losses(tg_cpu(0), TG_BF16, 1, TG_RECOMPUTE_NONE, cpu, &cap_cpu));
  cpu_bf16_reference(0);
  CHECK(mlp_losses(tg_cuda(0), TG_BF16, 0, TG_RECOMPUTE_NONE, eager, &cap_eager));
  CHECK(mlp_losses(tg_cuda(0), TG_BF16, 1, TG_RECOMPUTE_NONE, graph, &cap_graph));
  CHECK(mlp_losses(tg_cuda(0), TG_F32, 1, TG_RECOMPUTE_NONE, f32, &cap_f32));
  CHECK_MSG(cap_graph, "the CUDA bf16 training step was not captured");
  CHECK_MSG(memcmp(eager, graph, sizeof eager) == 0, "captured and eager CUDA bf16 losses differ");
  int differ = 0;
  double worst = 0.0;
  for (int t = 0; t < MLP_STEPS; t++) {
    double e = fabs((double)graph[t] - (double)cpu[t]) / (1e-6 + fabs((double)cpu[t]));
    CHECK_MSG(e <= MLP_BF16_TOL, "bf16 step %d: cuda loss %.9g, cpu %.9g (rel %.2e)", t, (double)graph[t], (double)cpu[t],
              e);
    if (!(e <= worst)) worst = e;
    differ += graph[t] != f32[t];
  }
  CHECK_MSG(differ == MLP_STEPS, "only %d of %d bf16 losses differ from the f32 plan's", differ, MLP_STEPS);
  printf("mlp bf16: %d AdamW steps, cpu loss %.6f -> %.6f, cuda (captured) %.6f -> %.6f (worst relative difference "
         "%.2g, tolerance %g); f32 plan %.6f -> %.6f\n", MLP_STEPS, (double)cpu[0], (double)cpu[MLP_STEPS - 1],
         (double)graph[0], (double)graph[MLP_STEPS - 1], worst, MLP_BF16_TOL, (double)f32[0], (double)f32[MLP_STEPS - 1]);
}

/* ---- errors on a device ---- */

static void check_device_errors(void) {
  const tg_backend *be = tg_backend_for(TG_CUDA);
  const int64_t ts[2] = {10, 4}, is[1] = {3};
  tg_init u = {TG_INIT_UNIFORM, -1, 1};
  tg_store *s = tg_store_new(tg_cuda(0), 1);
  tg_graph *g = tg_graph_new(s, "faults");
  tg_tensor *y = tg_gather_rows(g, tg_param(g, "t", 2, ts, u), tg_input(g, "i", TG_I64, 1, is));
  tg_plan_opts o = tg_plan_defaults(tg_cuda(0));
  CHECK_OK(tg_graph_plan(g, &o));
  /* a host tensor bound to a CUDA graph: named, never copied */
  int64_t host_idx[3] = {1, 2, 3};
  tg_tensor t;
  tg_tensor_view(&t, "host_idx", tg_cpu(0), TG_I64, 1, is, host_idx);
  CHECK_STATUS(tg_graph_bind(g, "i", &t), TG_ERR_DEVICE);
  CHECK_MSG(strstr(tg_last_error(), "cpu:0") && strstr(tg_last_error(), "cuda:0") && strstr(tg_last_error(), "host_idx"),
            "mismatch message: %s", tg_last_error());
  /* an index out of range: raised at the next synchronisation, naming the op and the value */
  int64_t bad[3] = {1, 12, 3};
  void *d = NULL;
  CHECK_OK(be->alloc(tg_cuda(0), sizeof bad, &d));
  CHECK_OK(be->from_host(tg_cuda(0), d, bad, sizeof bad));
  tg_tensor_view(&t, "dev_idx", tg_cuda(0), TG_I64, 1, is, d);
  CHECK_OK(tg_graph_bind(g, "i", &t));
  CHECK_OK(tg_graph_run(g));
  CHECK_STATUS(tg_device_sync(tg_cuda(0)), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "gather_rows") && strstr(tg_last_error(), "12"), "fault message: %s", tg_last_error());
  CHECK_OK(tg_device_sync(tg_cuda(0))); /* raised once, then clear */
  tg_mem_stats ms;
  CHECK_OK(tg_device_mem_stats(tg_cuda(0), &ms));
  CHECK(ms.allocated > 0 && ms.reserved >= ms.allocated && ms.peak >= ms.allocated && ms.device_mallocs > 0);
  be->free(tg_cuda(0), d);
  (void)y;
  tg_graph_free(g);
  tg_store_free(s);
  char report[512];
  CHECK_OK(tg_device_self_test(tg_cuda(0), report, sizeof report));
  printf("self-test: %s\n", report);
}

/* Weights saved from a CUDA store load into a CPU store unchanged, and back. */
static void check_checkpoint_across_devices(void) {
  const int64_t sh[2] = {17, 5};
  tg_init u = {TG_INIT_UNIFORM, -1, 1};
  tg_store *gpu = tg_store_new(tg_cuda(0), 3), *cpu = tg_store_new(tg_cpu(0), 4);
  tg_graph *gg = tg_graph_new(gpu, "save"), *gc = tg_graph_new(cpu, "load");
  tg_tensor *a = tg_relu(gg, tg_param(gg, "w", 2, sh, u)), *b = tg_relu(gc, tg_param(gc, "w", 2, sh, u));
  tg_plan_opts og = tg_plan_defaults(tg_cuda(0)), oc = tg_plan_defaults(tg_cpu(0));
  CHECK(a && b);
  CHECK_OK(tg_graph_plan(gg, &og));
  CHECK_OK(tg_graph_plan(gc, &oc));
  char path[] = "/tmp/tickgrad_cuda_ckptXXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  CHECK_OK(tg_store_save(gpu, path));
  CHECK_OK(tg_store_load(cpu, path));
  float on_gpu[17 * 5];
  CHECK_OK(tg_device_download(tg_cuda(0), on_gpu, tg_store_values(gpu), sizeof on_gpu));
  CHECK(memcmp(on_gpu, tg_store_values(cpu), sizeof on_gpu) == 0);
  unlink(path);
  tg_graph_free(gg);
  tg_graph_free(gc);
  tg_store_free(gpu);
  tg_store_free(cpu);
}

int main(void) {
  check_cases_cover_ops();
  check_bf16_kernels_listed();
  check_plan_out_of_memory();
  if (tg_cuda_count() == 0) {
    const char *want = getenv("TG_EXPECT_CUDA_DEVICE"); /* set for the emulated-CUDA build, which has one */
    CHECK_MSG(!(want && want[0] == '1'), "TG_EXPECT_CUDA_DEVICE=1 but no CUDA device: %s", tg_cuda_why_none());
    check_missing_device();
    int rc = tg_test_finish();
    if (rc != 0) return rc;
    printf("skipped: no CUDA device (%s); checked only the no-device errors, that every op has a parity case and "
           "which ops have CUDA bf16 kernels\n", tg_cuda_why_none());
    return 77;
  }
  check_parity();
  check_bf16_parity();
  check_mlp_steps();
  check_mlp_steps_bf16();
  check_device_errors();
  check_checkpoint_across_devices();
  return tg_test_finish();
}
