/* The pre-norm transformer layers (attention, GELU MLP, LayerNorm, Linear) that the transformer and PatchTST build. */
#ifndef TG_TR_LAYERS_H
#define TG_TR_LAYERS_H

#include "tickgrad/graph.h"

#define TR_LN_EPS 1e-5f

/* What the layer builders share. */
typedef struct tr_b {
  tg_graph *g;
  const char *model;  /* parameter names "<model>.<prefix><leaf>" */
  int64_t B, L, d, H; /* batch (sequences), steps, d_model, heads */
  float p;            /* dropout (0: no dropout nodes) */
  int causal;         /* 1: step t attends to steps <= t; 0: to every step */
} tr_b;

/* "<model>.<prefix><leaf>" (prefix "" or "layers.<i>."), declared in g's store. */
tg_tensor *tr_param(tr_b *b, const char *prefix, const char *leaf, int ndim, const int64_t *shape, tg_init init);
/* x [..., in] -> [..., n_out] through Linear "<prefix><leaf>" (weight U(+-1/sqrt(in)), bias 0). */
tg_tensor *tr_linear(tr_b *b, const char *prefix, const char *leaf, tg_tensor *x, int64_t n_out);
/* LayerNorm "<prefix><leaf>" (weight 1, bias 0, [d]) over x's last dim. */
tg_tensor *tr_norm(tr_b *b, const char *prefix, const char *leaf, tg_tensor *x);
/* Pre-norm block i on x [B, L, d]: x + Dropout(MHA(norm1(x))), then x + Dropout(ff2(GELU(ff1(norm2(x))))), d_ff 4d;
 * -> [B, L, d], or with last_only (causal only) the last step's [B, 1, d]. */
tg_tensor *tr_block(tr_b *b, int i, tg_tensor *x, int last_only);

#endif
