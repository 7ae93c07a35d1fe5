/* Builder for lstm (operand checks, output shape, attributes) and the size of its kernel workspace. */
#include <limits.h>
#include <string.h>
#include "graph/graph_internal.h"
#include "ops/lstm_args.h"

#define SHAPE_BUF 160

/* t must be f32 with exactly the dims want[0..nd); what says what those dims mean, e.g.
 * "[4*Hd, I] (Hd from w_hh, I from x)". Fails naming the operand, its dtype and shape. */
static int lstm_check_operand(tg_graph *g, const char *role, const tg_tensor *t, int nd,
                              const int64_t *want, const char *what) {
  int ok = t->dtype == TG_F32 && t->ndim == nd;
  for (int d = 0; ok && d < nd; d++) ok = t->shape[d] == want[d];
  if (ok) return 1;
  char st[SHAPE_BUF], sw[SHAPE_BUF];
  int len = snprintf(sw, sizeof sw, "[");
  for (int d = 0; d < nd && len > 0 && (size_t)len < sizeof sw; d++)
    len += snprintf(sw + len, sizeof sw - (size_t)len, d ? ", %lld" : "%lld", (long long)want[d]);
  if (len > 0 && (size_t)len < sizeof sw) snprintf(sw + len, sizeof sw - (size_t)len, "]");
  tg_graph_fail(g, TG_ERR_SHAPE, "lstm: %s '%s' is %s %s; it must be f32 %s = %s", role, t->name,
                tg_dtype_name(t->dtype), tg_shape_str(t, st, sizeof st), sw, what);
  return 0;
}

/* x must be f32 [B, T, I] with every dim at least 1. */
static int lstm_check_x(tg_graph *g, const tg_tensor *x) {
  char sx[SHAPE_BUF];
  tg_shape_str(x, sx, sizeof sx);
  if (x->dtype != TG_F32) {
    tg_graph_fail(g, TG_ERR_SHAPE, "lstm: x '%s' %s is %s; it must be f32 [B, T, I]", x->name, sx,
                  tg_dtype_name(x->dtype));
    return 0;
  }
  if (x->ndim != 3 || x->shape[0] < 1 || x->shape[1] < 1 || x->shape[2] < 1) {
    tg_graph_fail(g, TG_ERR_SHAPE,
                  "lstm: x '%s' is %s; it must be [B, T, I] (batch, steps, features) with every dim >= 1",
                  x->name, sx);
    return 0;
  }
  return 1;
}

/* w_hh must be f32 [4*Hd, Hd] with Hd >= 1; it fixes the hidden size. */
static int lstm_check_w_hh(tg_graph *g, const tg_tensor *w_hh) {
  if (w_hh->dtype == TG_F32 && w_hh->ndim == 2 && w_hh->shape[1] >= 1 &&
      w_hh->shape[0] == 4 * w_hh->shape[1])
    return 1;
  char sw[SHAPE_BUF];
  tg_graph_fail(g, TG_ERR_SHAPE,
                "lstm: w_hh '%s' is %s %s; it must be f32 [4*Hd, Hd] (gates i, f, g, o stacked), Hd >= 1",
                w_hh->name, tg_dtype_name(w_hh->dtype), tg_shape_str(w_hh, sw, sizeof sw));
  return 0;
}

/* Every GEMM dimension and leading dimension of the kernels must fit an int (BLAS). */
static int lstm_check_size(tg_graph *g, const tg_tensor *x, int64_t B, int64_t T, int64_t I, int64_t H) {
  if (H <= INT_MAX / 6 && T <= INT_MAX / (6 * H) && B <= INT_MAX / T && I <= INT_MAX) return 1;
  char sx[SHAPE_BUF];
  tg_graph_fail(g, TG_ERR_UNSUPPORTED,
                "lstm: x '%s' %s with Hd=%lld is too large: B*T and T*6*Hd must stay below %d (BLAS sizes)",
                x->name, tg_shape_str(x, sx, sizeof sx), (long long)H, INT_MAX);
  return 0;
}

/* h0 and c0: both or neither. */
static int lstm_check_state_pair(tg_graph *g, const tg_tensor *h0, const tg_tensor *c0) {
  if ((h0 == NULL) == (c0 == NULL)) return 1;
  const tg_tensor *given = h0 ? h0 : c0;
  tg_graph_fail(g, TG_ERR_INVALID,
                "lstm: %s '%s' is given without %s; pass h0 and c0 together, or both NULL for a zero "
                "initial state",
                h0 ? "h0" : "c0", given->name, h0 ? "c0" : "h0");
  return 0;
}

tg_tensor *tg_lstm(tg_graph *g, tg_tensor *x, tg_tensor *h0, tg_tensor *c0, tg_tensor *w_ih, tg_tensor *w_hh,
                   tg_tensor *bias) {
  if (!g || g->status != TG_OK) return NULL;
  if (!lstm_check_state_pair(g, h0, c0)) return NULL;
  tg_tensor *ins[6];
  int n = 0;
  ins[n++] = x;
  if (h0) {
    ins[n++] = h0;
    ins[n++] = c0;
  }
  ins[n++] = w_ih;
  ins[n++] = w_hh;
  if (bias) ins[n++] = bias;
  if (!tg_graph_check_inputs(g, "lstm", n, ins)) return NULL;
  if (!lstm_check_x(g, x) || !lstm_check_w_hh(g, w_hh)) return NULL;
  int64_t B = x->shape[0], T = x->shape[1], I = x->shape[2], H = w_hh->shape[1];
  char what[2 * SHAPE_BUF + 128], sx[SHAPE_BUF], sw[SHAPE_BUF];
  tg_shape_str(x, sx, sizeof sx);
  tg_shape_str(w_hh, sw, sizeof sw);
  snprintf(what, sizeof what, "[4*Hd, I] (Hd=%lld from w_hh %s, I=%lld from x %s)", (long long)H, sw,
           (long long)I, sx);
  const int64_t want_ih[2] = {4 * H, I}, want_state[2] = {B, H}, want_bias[1] = {4 * H};
  if (!lstm_check_operand(g, "w_ih", w_ih, 2, want_ih, what)) return NULL;
  if (h0) {
    snprintf(what, sizeof what, "[B, Hd] (B=%lld from x %s, Hd=%lld from w_hh %s)", (long long)B, sx,
             (long long)H, sw);
    if (!lstm_check_operand(g, "h0", h0, 2, want_state, what) ||
        !lstm_check_operand(g, "c0", c0, 2, want_state, what))
      return NULL;
  }
  snprintf(what, sizeof what, "[4*Hd] (Hd=%lld from w_hh %s)", (long long)H, sw);
  if (bias && !lstm_check_operand(g, "bias", bias, 1, want_bias, what)) return NULL;
  if (!lstm_check_size(g, x, B, T, I, H)) return NULL;
  const int64_t shape[3] = {B, T, 6 * H}; /* per step h | c | i | f | g | o */
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = h0 != NULL;
  attr.i[1] = bias != NULL;
  return tg_graph_add(g, TG_OP_LSTM, n, ins, TG_F32, 3, shape, &attr);
}

/* The forward writes straight into its output; the backward needs dG [B, T, 4H] and the carried
 * dh, dc [B, H] (see tg_lstm_ws_floats). Nothing when the op takes no gradient. */
size_t tg_lstm_workspace(const tg_kernel_args *a) {
  if (!a->out_grad) return 0;
  tg_lstm_args l = tg_lstm_args_of(a);
  return sizeof(float) * (size_t)tg_lstm_ws_floats(l.B, l.T, l.H);
}
