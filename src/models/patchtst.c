/* PatchTST (Nie et al., ICLR 2023) as a graph: channel-independent patches through a transformer encoder (models.h). */
/*
 * models.h documents the architecture; reference/patchtst.py builds exactly this in PyTorch with the same names. The
 * channels are the model's inputs after tg_forecast_embed (a category input's embedding widths are channels too). The
 * encoder is tr_layers.c's pre-norm block, non-causal, over the N patches of every (window, channel) pair as one batch
 * of B * C sequences.
 */
#include <stdio.h>
#include "graph/graph_internal.h"
#include "models/models_internal.h"
#include "models/tr_layers.h"
#include "ops/ops.h"

/* The number of patches of a window: floor((seq_len - patch_len) / stride) + 1. */
int tg_patchtst_patches(const tg_patchtst_cfg *p) { return (p->seq_len - p->patch_len) / p->stride + 1; }

/* xs [n] joined along dim 2, TG_MAX_INPUTS at a time (a tree of concats); xs is overwritten. */
static tg_tensor *ps_concat(tg_graph *g, tg_tensor **xs, int n) {
  while (n > 1) {
    int m = 0;
    for (int i = 0; i < n; i += TG_MAX_INPUTS) {
      int k = n - i < TG_MAX_INPUTS ? n - i : TG_MAX_INPUTS;
      xs[m++] = k == 1 ? xs[i] : tg_concat(g, k, xs + i, 2);
    }
    n = m;
  }
  return xs[0];
}

/* past [B, L, C] -> the patches of each channel's instance-normalised series, [B, C, N, P]. */
static tg_tensor *ps_patches(tg_graph *g, const tg_patchtst_cfg *p, tg_tensor *past) {
  int64_t B = past->shape[0], C = past->shape[2], N = tg_patchtst_patches(p), s1[4] = {B, C, 1, p->patch_len};
  tg_tensor *x = tg_layernorm(g, tg_transpose(g, past, 1, 2), NULL, NULL, TR_LN_EPS); /* [B, C, L], per channel */
  tg_tensor *parts[TG_PATCHTST_MAX_PATCHES];
  for (int64_t n = 0; n < N; n++) parts[n] = tg_reshape(g, tg_slice(g, x, 2, n * p->stride, p->patch_len), 4, s1);
  return ps_concat(g, parts, (int)N);
}

tg_tensor *tg_patchtst_build(tg_graph *g, const tg_forecast_cfg *c, const tg_forecast_inputs *in) {
  if (tg_graph_status(g) != TG_OK || !tg_forecast_check_past(g, c, "patchtst", in->past)) return NULL;
  const tg_patchtst_cfg *p = &c->patchtst;
  int64_t B = in->past->shape[0], C = c->n_past, N = tg_patchtst_patches(p), W = tg_forecast_step_width(c);
  tr_b b = {g, "patchtst", B * C, N, p->d_model, p->n_heads, c->dropout, 0};
  int64_t ps[2] = {N, b.d}, s_seq[3] = {B * C, N, b.d}, s_flat[2] = {B, C * N * b.d}, s_out[3] = {B, c->horizons, W};
  tg_tensor *pos = tr_param(&b, "", "pos_embed", 2, ps, (tg_init){TG_INIT_NORMAL, 0.0f, 0.02f});
  tg_tensor *x = tg_add(g, tr_linear(&b, "", "embed", ps_patches(g, p, in->past), b.d), pos); /* [B, C, N, d] */
  x = tg_reshape(g, x, 3, s_seq);
  for (int i = 0; i < p->n_layers && x; i++) {
    char block[48];
    snprintf(block, sizeof block, "patchtst.layers.%d", i);
    tg_graph_block_begin(g, block); /* a recomputation block: the layer keeps only its input x */
    x = tr_block(&b, i, x, 0);
    tg_graph_block_end(g);
  }
  x = tg_reshape(g, tr_norm(&b, "", "norm_f", x), 2, s_flat); /* [B, C * N * d]: every channel's patches */
  return tg_reshape(g, tr_linear(&b, "", "head", x, c->horizons * W), 3, s_out);
}
