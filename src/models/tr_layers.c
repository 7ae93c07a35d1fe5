/* The pre-norm transformer layers shared by the causal transformer and PatchTST (tr_layers.h). */
/*
 * Layout of one attention: the parameters are one qkv projection [3d, d] (rows q, k, v), run as three linears on its
 * row slices, each [B, T, d] (a single [B, T, 3d] projection would need its parts sliced apart, and those slices'
 * copies and their gradients' accumulation cost more than two more small GEMMs). From a window of TR_FUSED_MIN_L steps
 * the three go to the attention op in those rows (no head transposes; no [B, H, Tq, T] scores kept, the backward
 * recomputes them; the scores scaled by 1 / sqrt(dh)). Below it they are viewed [B, T, H, dh] and transposed to
 * [B, H, T, dh], q's 1 / sqrt(dh) multiplies its d x d weight and bias slices, the scores [B, H, Tq, T] go through
 * causal_softmax (hidden keys skipped, exactly 0) or softmax, and the heads' outputs are transposed back to
 * [B, Tq, d]. A causal model's last layer (when only the last step feeds the head) projects its query from the last
 * step alone.
 */
#include <math.h>
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/tr_layers.h"

/* The window from which attention runs as one op. On a 2-vCPU Zen 4 (2026-12-08, one thread) the op and the unfused
 * chain cost the same at 64 steps (transformer_step's attention 2.5-2.6 ms against 2.6 ms), the op is about twice as
 * fast at 512 and keeps O(T) activations instead of O(T^2); below 64 the chain's batched GEMMs win (16 steps: 2.1
 * against 1.7 ms a layer; PatchTST's 7 patches: 5.6 against 3.9 ms a step), the per-row softmax recomputed in the op's
 * backward costing more than the products it saves. */
#define TR_FUSED_MIN_L 64

static const tg_init INIT_FAN_IN = {TG_INIT_FAN_IN, 0.0f, 0.0f};
static const tg_init INIT_ZEROS = {TG_INIT_ZEROS, 0.0f, 0.0f};
static const tg_init INIT_ONES = {TG_INIT_ONES, 0.0f, 0.0f};

tg_tensor *tr_param(tr_b *b, const char *prefix, const char *leaf, int ndim, const int64_t *shape, tg_init init) {
  char name[TG_NAME_MAX];
  int n = snprintf(name, sizeof name, "%s.%s%s", b->model, prefix, leaf);
  if (n < 0 || n >= (int)sizeof name)
    return tg_graph_fail(b->g, TG_ERR_INVALID, "%s: parameter name '%s.%s%s' is longer than %d bytes", b->model,
                         b->model, prefix, leaf, TG_NAME_MAX - 1);
  return tg_param(b->g, name, ndim, shape, init);
}

/* Linear "<prefix><leaf>.weight" [n_out, in], ".bias" [n_out]: the parameters only. */
static int tr_linear_params(tr_b *b, const char *prefix, const char *leaf, int64_t n_out, int64_t n_in, tg_tensor **w,
                            tg_tensor **bias) {
  char name[TG_NAME_MAX];
  int64_t ws[2] = {n_out, n_in};
  snprintf(name, sizeof name, "%s.weight", leaf);
  *w = tr_param(b, prefix, name, 2, ws, INIT_FAN_IN);
  snprintf(name, sizeof name, "%s.bias", leaf);
  *bias = tr_param(b, prefix, name, 1, ws, INIT_ZEROS);
  return *w && *bias;
}

tg_tensor *tr_linear(tr_b *b, const char *prefix, const char *leaf, tg_tensor *x, int64_t n_out) {
  tg_tensor *w, *bias;
  if (!x || !tr_linear_params(b, prefix, leaf, n_out, x->shape[x->ndim - 1], &w, &bias)) return NULL;
  return tg_linear(b->g, x, w, bias);
}

tg_tensor *tr_norm(tr_b *b, const char *prefix, const char *leaf, tg_tensor *x) {
  char name[TG_NAME_MAX];
  int64_t ns[1] = {b->d};
  snprintf(name, sizeof name, "%s.weight", leaf);
  tg_tensor *w = tr_param(b, prefix, name, 1, ns, INIT_ONES);
  snprintf(name, sizeof name, "%s.bias", leaf);
  tg_tensor *bias = tr_param(b, prefix, name, 1, ns, INIT_ZEROS);
  if (!x || !w || !bias) return NULL;
  return tg_layernorm(b->g, x, w, bias, TR_LN_EPS);
}

static tg_tensor *tr_drop(tr_b *b, tg_tensor *x) { return b->p > 0.0f ? tg_dropout(b->g, x, b->p) : x; }

/* Heads of a projection y [B, T, d] as [B, H, T, dh] (one transpose). */
static tg_tensor *tr_heads(tr_b *b, tg_tensor *y) {
  if (!y) return NULL;
  int64_t T = y->shape[1], s[4] = {b->B, T, b->H, b->d / b->H};
  return tg_transpose(b->g, tg_reshape(b->g, y, 4, s), 1, 2);
}

/* x [B, T, d] through part `part` (0 q, 1 k, 2 v) of the qkv projection w [3d, d], bias [3d]: the rows
 * [part d, (part + 1) d) of both, sliced and times mul (a d x d scale where mul != 1), -> [B, T, d]. */
static tg_tensor *tr_qkv_part(tr_b *b, tg_tensor *x, tg_tensor *w, tg_tensor *bias, int part, float mul) {
  tg_graph *g = b->g;
  int64_t d = b->d;
  tg_tensor *wp = tg_slice(g, w, 0, part * d, d), *bp = tg_slice(g, bias, 0, part * d, d);
  if (mul != 1.0f) wp = tg_scale(g, wp, mul), bp = tg_scale(g, bp, mul);
  return tg_linear(g, x, wp, bp);
}

/* Multi-head self-attention of layer `prefix` on h [B, L, d]. last_only: the query of the last step alone, -> [B, 1, d];
 * else every step, -> [B, L, d]; causal: step t sees steps <= t, else every step. */
static tg_tensor *tr_attention(tr_b *b, const char *prefix, tg_tensor *h, int last_only) {
  tg_graph *g = b->g;
  int64_t d = b->d, H = b->H, dh = d / H, L = b->L, Tq = last_only ? 1 : L;
  tg_tensor *w, *bias;
  if (!h || !tr_linear_params(b, prefix, "attn.qkv", 3 * d, d, &w, &bias)) return NULL;
  tg_tensor *hq = last_only ? tg_slice(g, h, 1, L - 1, 1) : h; /* [B, Tq, d] */
  float q_mul = 1.0f / sqrtf((float)dh);
  tg_tensor *o;
  /* causal: query row i is step i + (L - Tq), it sees keys j <= i + L - Tq */
  if (L >= TR_FUSED_MIN_L) {
    tg_tensor *q = tr_qkv_part(b, hq, w, bias, 0, 1.0f), *k = tr_qkv_part(b, h, w, bias, 1, 1.0f); /* [B, T, d] */
    o = tg_attention(g, q, k, tr_qkv_part(b, h, w, bias, 2, 1.0f), H, b->causal, L - Tq, q_mul); /* [B, Tq, d] */
  } else {
    /* q_mul scales q's weight and bias (d x d, not the activations; exact when sqrt(dh) is a power of 2) */
    int64_t qs[4] = {b->B, H, 1, dh}, os[3] = {b->B, Tq, d};
    /* [B, H, Tq, dh]; for one query step [B, 1, H, dh] has that layout already */
    tg_tensor *q = last_only ? tg_reshape(g, tr_qkv_part(b, hq, w, bias, 0, q_mul), 4, qs)
                             : tr_heads(b, tr_qkv_part(b, hq, w, bias, 0, q_mul));
    tg_tensor *k = tr_heads(b, tr_qkv_part(b, h, w, bias, 1, 1.0f)); /* [B, H, L, dh] */
    tg_tensor *v = tr_heads(b, tr_qkv_part(b, h, w, bias, 2, 1.0f)); /* [B, H, L, dh] */
    tg_tensor *s = tg_matmul(g, q, k, 0, 1);                          /* [B, H, Tq, L] */
    o = tg_matmul(g, b->causal ? tg_causal_softmax(g, s, L - Tq) : tg_softmax(g, s), v, 0, 0); /* [B, H, Tq, dh] */
    o = last_only ? tg_reshape(g, o, 3, os) : tg_reshape(g, tg_transpose(g, o, 1, 2), 3, os);
  }
  return tr_linear(b, prefix, "attn.out", o, d); /* [B, Tq, d] */
}

tg_tensor *tr_block(tr_b *b, int i, tg_tensor *x, int last_only) {
  tg_graph *g = b->g;
  char pre[48];
  snprintf(pre, sizeof pre, "layers.%d.", i);
  tg_tensor *a = tr_attention(b, pre, tr_norm(b, pre, "norm1", x), last_only);
  if (!a) return NULL;
  if (last_only) x = tg_slice(g, x, 1, b->L - 1, 1);
  x = tg_add(g, x, tr_drop(b, a));
  tg_tensor *f = tg_gelu(g, tr_linear(b, pre, "ff1", tr_norm(b, pre, "norm2", x), 4 * b->d));
  return tg_add(g, x, tr_drop(b, tr_linear(b, pre, "ff2", f, b->d)));
}
