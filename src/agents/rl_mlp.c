/* The agents' MLP builder: linear layers with ReLU or tanh between them, named like torch's nn.Sequential. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "graph/graph_internal.h"
#include "agents/rl_internal.h"

/* The layers' widths; ReLU and zero inits until the caller says otherwise. */
static rl_mlp_spec layers(const char *prefix, int n_hidden, const int *hidden, int out) {
  rl_mlp_spec s;
  memset(&s, 0, sizeof s);
  s.prefix = prefix;
  s.n_hidden = n_hidden;
  for (int k = 0; k < n_hidden && k < RL_MAX_HIDDEN; k++) s.hidden[k] = hidden[k];
  s.out = out;
  return s;
}

rl_mlp_spec rl_mlp_torch(const char *prefix, int n_hidden, const int *hidden, int out) {
  rl_mlp_spec s = layers(prefix, n_hidden, hidden, out);
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  s.hidden_w = s.hidden_b = s.out_w = s.out_b = fan;
  return s;
}

rl_mlp_spec rl_mlp_orthogonal(const char *prefix, int n_hidden, const int *hidden, int out, float head_gain) {
  rl_mlp_spec s = layers(prefix, n_hidden, hidden, out);
  s.tanh = 1;
  s.hidden_w = (tg_init){TG_INIT_ORTHOGONAL, (float)sqrt(2.0), 0};
  s.out_w = (tg_init){TG_INIT_ORTHOGONAL, head_gain, 0};
  s.hidden_b = s.out_b = (tg_init){TG_INIT_ZEROS, 0, 0};
  return s;
}

/* A bias's FAN_IN means its layer's fan-in (torch.nn.Linear), which the store cannot see. */
static tg_init bias_init(tg_init b, int64_t in) {
  if (b.kind != TG_INIT_FAN_IN) return b;
  float bound = 1.0f / sqrtf((float)in);
  return (tg_init){TG_INIT_UNIFORM, -bound, bound};
}

static int mlp_check(tg_graph *g, const tg_tensor *x, const rl_mlp_spec *s) {
  char sp[96];
  if (!s || !s->prefix || s->n_hidden < 0 || s->n_hidden > RL_MAX_HIDDEN || s->out < 1) {
    tg_graph_fail(g, TG_ERR_INVALID, "rl_mlp: spec needs a prefix, 0..%d hidden layers and out >= 1 (got %d, %d)",
                  RL_MAX_HIDDEN, s ? s->n_hidden : -1, s ? s->out : -1);
    return 0;
  }
  for (int k = 0; k < s->n_hidden; k++)
    if (s->hidden[k] < 1) {
      tg_graph_fail(g, TG_ERR_INVALID, "rl_mlp '%s': hidden layer %d has width %d; need >= 1", s->prefix, k,
                    s->hidden[k]);
      return 0;
    }
  if (!x || x->dtype != TG_F32 || x->ndim != 2) {
    tg_graph_fail(g, TG_ERR_SHAPE, "rl_mlp '%s': x '%s' is %s %s; need f32 [B, in]", s->prefix, x ? x->name : "NULL",
                  x ? tg_dtype_name(x->dtype) : "-", x ? tg_shape_str(x, sp, sizeof sp) : "-");
    return 0;
  }
  return 1;
}

tg_tensor *rl_mlp(tg_graph *g, tg_tensor *x, const rl_mlp_spec *s) {
  if (tg_graph_status(g) != TG_OK) return NULL;
  if (!mlp_check(g, x, s)) return NULL;
  tg_tensor *h = x; /* [B, width of layer k's input] */
  for (int k = 0; k <= s->n_hidden; k++) {
    int last = k == s->n_hidden;
    int64_t in = h->shape[1], out = last ? s->out : s->hidden[k];
    int64_t ws[2] = {out, in}, bs[1] = {out};
    char wn[TG_NAME_MAX], bn[TG_NAME_MAX];
    snprintf(wn, sizeof wn, "%s.%d.weight", s->prefix, 2 * k);
    snprintf(bn, sizeof bn, "%s.%d.bias", s->prefix, 2 * k);
    tg_tensor *w = tg_param(g, wn, 2, ws, last ? s->out_w : s->hidden_w);                 /* [out, in] */
    tg_tensor *b = tg_param(g, bn, 1, bs, bias_init(last ? s->out_b : s->hidden_b, in)); /* [out] */
    h = tg_linear(g, h, w, b);                                                            /* [B, out] */
    if (h && !last) h = s->tanh ? tg_tanh(g, h) : tg_relu(g, h);
    if (!h) return NULL; /* the graph's sticky error says why */
  }
  return h;
}
