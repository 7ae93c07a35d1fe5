/* Forecasting models (Temporal Fusion Transformer, Mamba-2, a causal transformer, an MLP baseline, PatchTST) as graph builders
 * behind one interface. */
#ifndef TICKGRAD_MODELS_H
#define TICKGRAD_MODELS_H

#include "tickgrad/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* New kinds go at the end (settings tables list the kind names in this order). */
typedef enum tg_model_kind {
  TG_MODEL_TFT = 0, TG_MODEL_MAMBA2, TG_MODEL_MLP, TG_MODEL_TRANSFORMER, TG_MODEL_PATCHTST
} tg_model_kind;

typedef struct tg_tft_cfg {
  int hidden;      /* d_model (default 64) */
  int heads;       /* attention heads, hidden % heads == 0 (default 4) */
  int enc_len;     /* encoder (past) steps (default 64) */
  int dec_len;     /* decoder (future) steps = horizons predicted (default 8) */
  int vol_scale;   /* 1: each window's quantiles are multiplied by its recent volatility, v = sqrt(softplus(100 m) / 100)
                      with m the mean square over the encoder of past column vol_col (a normalised log return), so the
                      bands widen and narrow with the market (v is about sqrt(m) for m above 0.05, never below 0.083);
                      0 (default here): the outputs as they come. The trainer's default is 1 (tg_train_defaults);
                      a quantile forecaster's only (a classifier's logits stay as they come) */
  int vol_col;     /* with vol_scale: the past column v is read from (tg_tft_vol_col finds "logret") */
} tg_tft_cfg;

typedef struct tg_mamba2_cfg {
  int d_model;     /* default 128 */
  int n_layers;    /* default 2 */
  int d_state;     /* N, default 64 */
  int headdim;     /* P, default 32 */
  int expand;      /* d_inner = expand * d_model, default 2 */
  int d_conv;      /* causal conv width, default 4 */
  int ngroups;     /* G, default 1 */
  int chunk;       /* SSD chunk length Q, default 64 */
  int seq_len;     /* window length L, default 128 */
} tg_mamba2_cfg;

/* The baseline: the last `window` bars of past features flattened -> Linear(hidden) -> ReLU ->
 * dropout -> Linear(horizons * nq), reshaped [B, horizons, nq]. */
typedef struct tg_mlp_cfg {
  int window;      /* past bars seen, the past length L_past (default 16) */
  int hidden;      /* default 64 */
} tg_mlp_cfg;

#define TG_MAX_CAT_INPUTS 16

/* The causal pre-norm transformer (GPT-style, decoder only) over the window past [B, L, n_past]:
 *   x = Linear(n_past -> d_model)(past) + pos                   pos: a LEARNED absolute position embedding [L, d_model]
 *   n_layers times:  x = x + Dropout(MHA(LayerNorm(x)))         causal: step t attends to steps <= t; n_heads heads of
 *                                                               d_model / n_heads, softmax(q k^T / sqrt(d_head)) v
 *                    x = x + Dropout(W2 GELU(W1 LayerNorm(x)))  d_ff = 4 d_model, GELU exact (erf), as nn.GELU()
 *   pred = Linear(d_model -> horizons * nq)(LayerNorm(x[:, L-1])) reshaped [B, horizons, nq]
 * MHA is one Linear(d_model -> 3 d_model) "attn.qkv" (rows q | k | v, each head-major, PyTorch's in_proj layout) and
 * "attn.out" Linear(d_model -> d_model). LayerNorm eps 1e-5 with weight and bias; every Linear has a bias. Only the last
 * step feeds the head, so the last layer computes its query, residual and MLP for that step alone (keys and values for
 * all L). Parameters "transformer.in_proj.*", "transformer.pos_embed" [L, d_model], "transformer.layers.<i>.{norm1,
 * attn.qkv, attn.out, norm2, ff1, ff2}.*", "transformer.norm_f.*", "transformer.head.*"; initialised: Linear weights
 * U(+-1/sqrt(fan_in)), biases 0, LayerNorm weight 1 and bias 0, pos_embed N(0, 0.02^2). Dropout (cfg.dropout) on
 * the attention and MLP outputs before each residual add, in training plans only. reference/transformer.py is the
 * PyTorch twin. */
typedef struct tg_transformer_cfg {
  int d_model;     /* default 64 */
  int n_heads;     /* default 4; d_model % n_heads == 0 */
  int n_layers;    /* default 2 */
  int seq_len;     /* window length L (default 64) */
} tg_transformer_cfg;

/* PatchTST (Nie et al., ICLR 2023, "A Time Series is Worth 64 Words"), channel-independent, over the window past
 * [B, L, C] (C = n_past, a category input counting as its cat_dim embedding channels):
 *   each channel's series over the window is instance-normalised: (x - mean) / sqrt(var + 1e-5), mean and biased var
 *   over the L steps, no affine and no denormalisation (RevIN's first half: the outputs are quantiles of the scaled
 *   target, not the channel's own future);
 *   cut into N = floor((L - P) / S) + 1 patches of P = patch_len steps every S = stride steps, [B, C, N, P];
 *   x = Linear(P -> d_model)(patches) + pos                   pos: a LEARNED position embedding [N, d_model]
 *   n_layers pre-norm encoder blocks over the N patches of each (window, channel) alone, NOT causal: as the causal
 *   transformer's blocks (x + Dropout(MHA(LayerNorm(x))), x + Dropout(W2 GELU(W1 LayerNorm(x))), d_ff = 4 d_model,
 *   exact GELU), every patch attending to every patch of its channel;
 *   pred = Linear(C * N * d_model -> horizons * nq)(flatten_c,n(LayerNorm(x))) reshaped [B, horizons, nq]: the
 *   channels meet only in this head, which reads every channel's flattened patches (concatenated).
 * Parameters "patchtst.embed.*", "patchtst.pos_embed" [N, d_model], "patchtst.layers.<i>.{norm1, attn.qkv, attn.out,
 * norm2, ff1, ff2}.*", "patchtst.norm_f.*", "patchtst.head.*" [horizons * nq, C * N * d_model]; initialised as the
 * transformer's. Dropout (cfg.dropout) on the attention and MLP outputs before each residual add, in training plans
 * only. At most 256 patches. reference/patchtst.py is the PyTorch twin. */
typedef struct tg_patchtst_cfg {
  int d_model;     /* default 64 */
  int n_heads;     /* default 4; d_model % n_heads == 0 */
  int n_layers;    /* default 2 */
  int seq_len;     /* window length L (default 64) */
  int patch_len;   /* P, default 16; <= seq_len */
  int stride;      /* S, default 8 */
} tg_patchtst_cfg;

typedef struct tg_forecast_cfg {
  tg_model_kind kind;
  int n_past;      /* past-observed features per step (with the n_cat category ids) */
  int n_future;    /* known-future features per step (TFT decoder; also part of n_past in the encoder) */
  int n_static;    /* rows of the static (instrument) embedding, >= 1 */
  int horizons;    /* H: forecasts 1..H steps ahead (TFT: == dec_len) */
  int nq;          /* quantiles */
  float q[TG_MAX_QUANTILES];
  int n_cat;       /* category inputs: the last n_cat of past's columns are ids, not numbers (0: none). Input k's
                      column holds its id (0..cat_card[k]-1) plus the sum of cat_card before k, exactly as a float,
                      so that one table [sum cat_card, cat_dim] embeds them all; the embeddings replace the ids */
  int cat_card[TG_MAX_CAT_INPUTS]; /* [n_cat] ids of each (its vocabulary with the reserved id 0) */
  int cat_dim;     /* embedding width of each category input (default 4): the model proper sees
                      n_past - n_cat + n_cat * cat_dim inputs per step */
  int n_classes;   /* 0: quantile forecasts; > 0: a classifier, each horizon step gives n_classes logits instead of nq
                      quantiles (the trainer reads the last step) */
  float dropout;   /* default 0.1 (active only in training plans) */
  int whole;       /* 1: every layer built as one piece at any batch size, so graphs built at two batch sizes have the
                      same nodes (an exported file's dynamic batch axis); 0 (default): a layer may split its work by the
                      batch to fit caches (the TFT's variable selection groups) */
  tg_tft_cfg tft;
  tg_mamba2_cfg mamba;
  tg_mlp_cfg mlp;
  tg_transformer_cfg transformer;
  tg_patchtst_cfg patchtst;
} tg_forecast_cfg;

/* Graph inputs the caller makes (tg_input or ops such as gather_rows) and passes in. */
typedef struct tg_forecast_inputs {
  tg_tensor *past;   /* [B, L_past, n_past] f32 (L_past: the kind's window, tg_forecast_window) */
  tg_tensor *future; /* [B, dec_len, n_future] f32 (TFT; NULL for the others) */
  tg_tensor *inst;   /* [B] i64 instrument index in [0, n_static) (TFT static input; the others ignore it) */
} tg_forecast_inputs;

#define TG_MAX_CLASSES 64

/* Outputs per horizon step: n_classes logits for a classifier, else nq quantiles. */
static inline int tg_forecast_step_width(const tg_forecast_cfg *c) { return c->n_classes > 0 ? c->n_classes : c->nq; }

/* Past steps one forecast reads: tft.enc_len, mamba.seq_len, mlp.window, transformer.seq_len or patchtst.seq_len (0:
 * unknown kind). */
int tg_forecast_window(const tg_forecast_cfg *c);
/* The width of the model's GEMMs: d_model (tft: hidden; mlp: its hidden layer; 0: unknown kind). */
int tg_forecast_width(const tg_forecast_cfg *c);

/* ---- the model table: what each kind is and can do, so that callers ask it instead of naming kinds ---- */
enum {
  TG_CAP_FUTURE = 1u << 0,         /* takes known-future (decoder) inputs [B, horizons, n_future] */
  TG_CAP_STATIC = 1u << 1,         /* takes the static (instrument) input */
  TG_CAP_CLASS_STEPS = 1u << 2,    /* a classifier keeps every horizon step (else only the last: horizons 1) */
  TG_CAP_STEPPER = 1u << 3,        /* a predictor steps it one bar at a time (tg_mamba2_stepper) */
  TG_CAP_SPLIT = 1u << 4,          /* a batch-1 predictor computes each bar's past part once (the TFT's past VSN) */
  TG_CAP_EXPORT_WINDOWS = 1u << 5, /* the trainer exports its windows (tg_train_export_windows) */
};
/* Kinds in the table: 0 .. tg_model_count() - 1. */
int tg_model_count(void);
/* "tft", "mamba2", "mlp", "transformer", "patchtst"; NULL for a kind outside the table. */
const char *tg_model_name(tg_model_kind kind);
/* Every kind's name in the table's order into buf [n] (snprintf's truncation), joined by sep and the last two by last:
 * (", ", " or ") gives "tft, mamba2, mlp or transformer"; returns the length the whole list needs (< 0: an error). */
int tg_model_list(char *buf, size_t n, const char *sep, const char *last);
/* kind's TG_CAP_* bits (0 for a kind outside the table). */
unsigned tg_model_caps(tg_model_kind kind);
/* The kind before a config names one: its defaults are the starting point, and a new run whose --config has no
 * "model" (and no --model) trains it. */
tg_model_kind tg_model_default_kind(void);

/* Defaults from the issue for kind (n_past, n_future, n_static, horizons left 0 for the caller). */
tg_forecast_cfg tg_forecast_defaults(tg_model_kind kind);
/* TG_ERR_INVALID naming the field when a setting is out of range or inconsistent. */
tg_status tg_forecast_check(const tg_forecast_cfg *c);
/* Declares the model's parameters in g's store (names "<kind name>.*", e.g. "tft.*", shared
 * across graphs of the same store) and returns the quantile forecasts [B, horizons, nq] (a classifier: logits
 * [B, horizons, n_classes]); NULL after a build error (tg_graph_status says why). */
tg_tensor *tg_forecast_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in);

/* ---- Mamba-2 recurrent inference: one new bar at a time, O(1) per bar ----
 * Runs on the host in plain C over a host copy of the weights (taken from the store at creation,
 * downloaded if the store lives on a device; later training does not change the copy). Keeps per
 * layer the last d_conv-1 conv inputs [batch, d_conv-1, E+2GN] and the SSM state [batch, H, P, N],
 * starting from zeros, so after t+1 bars the prediction equals tg_forecast_build's for the window of
 * those t+1 bars (seq_len = t+1). No allocation per step. Cost per step and batch row: about
 * 2 x (parameter count) + 5 x n_layers x H x P x N flops (the projections as one GEMM over the
 * batch, then conv, SSM update and gated norm per row), independent of the bars already seen: about
 * 50 us per bar at the default config (batch 1, one core). */
typedef struct tg_mamba2_stepper tg_mamba2_stepper;
/* c must be a valid TG_MODEL_MAMBA2 config; the store must hold every "mamba2.*" parameter of that
 * config with its shape and be allocated (a graph planned). */
tg_status tg_mamba2_stepper_new(tg_store *store, const tg_forecast_cfg *c, int64_t batch, tg_mamba2_stepper **out);
/* Zeroes the conv and SSM states (the next step is bar 0 of a new window). */
tg_status tg_mamba2_stepper_reset(tg_mamba2_stepper *s);
/* x [batch, n_past] host floats (the new bar), pred [batch, horizons, nq] host floats. */
tg_status tg_mamba2_step(tg_mamba2_stepper *s, const float *x, float *pred);
void tg_mamba2_stepper_free(tg_mamba2_stepper *s);

#ifdef __cplusplus
}
#endif
#endif
