/* The pre-norm transformer layers shared by the causal transformer and PatchTST (tr_layers.h). */
/*
 * Layout of one attention: the parameters are one qkv projection [3d, d] (rows q, k, v), run as three linears on its
 * row slices, each [B, T, d] (a single [B, T, 3d] projection would need its parts sliced apart, and those slices'
 * copies and their gradients' accumulation cost more than two more small GEMMs). The three go to the attention op in
 * those rows, head h in columns [h dh, (h + 1) dh): no head transposes and no [B, H, Tq, T] scores are kept (the op's
 * backward recomputes them), hidden keys are skipped and weigh exactly 0, the scores scaled by 1 / sqrt(dh). A causal
 * model's last layer (when only the last step feeds the head) projects its query from the last step alone.
 */
#include <math.h>
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/tr_layers.h"

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

/* x [B, T, d] through part `part` (0 q, 1 k, 2 v) of the qkv projection w [3d, d], bias [3d]: the rows
 * [part d, (part + 1) d) of both, sliced, -> [B, T, d]. */
static tg_tensor *tr_qkv_part(tr_b *b, tg_tensor *x, tg_tensor *w, tg_tensor *bias, int part) {
  tg_graph *g = b->g;
  int64_t d = b->d;
  return tg_linear(g, x, tg_slice(g, w, 0, part * d, d), tg_slice(g, bias, 0, part * d, d));
}

/* Multi-head self-attention of layer `prefix` on h [B, L, d]. last_only: the query of the last step alone, -> [B, 1, d];
 * else every step, -> [B, L, d]; causal: step t sees steps <= t, else every step. */
static tg_tensor *tr_attention(tr_b *b, const char *prefix, tg_tensor *h, int last_only) {
  tg_graph *g = b->g;
  int64_t d = b->d, L = b->L, Tq = last_only ? 1 : L;
  tg_tensor *w, *bias;
  if (!h || !tr_linear_params(b, prefix, "attn.qkv", 3 * d, d, &w, &bias)) return NULL;
  tg_tensor *q = tr_qkv_part(b, last_only ? tg_slice(g, h, 1, L - 1, 1) : h, w, bias, 0); /* [B, Tq, d] */
  tg_tensor *k = tr_qkv_part(b, h, w, bias, 1);                                          /* [B, L, d] */
  tg_tensor *v = tr_qkv_part(b, h, w, bias, 2);                                          /* [B, L, d] */
  /* causal: query row i is step i + (L - Tq), it sees keys j <= i + L - Tq */
  tg_tensor *o = tg_attention(g, q, k, v, b->H, b->causal, L - Tq, 1.0f / sqrtf((float)(d / b->H))); /* [B, Tq, d] */
  return tr_linear(b, prefix, "attn.out", o, d);
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
