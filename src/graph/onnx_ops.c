/* Each op of an inference graph as ONNX (opset 17) nodes: fused ops become a few nodes, constants initializers. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "graph/onnx_internal.h"

#define IN(k) ((const char *)n->in[k]->out.name)
#define OUT ((const char *)n->out.name)

static tg_status no_form(const ox_ctx *c, const tg_node *n, const char *why) {
  return tg_error(TG_ERR_UNSUPPORTED, "op %s (node %s) of model %s has no ONNX form%s%s", tg_op_get(n->op)->name,
                  n->out.name, c->spec->model, why ? ": " : "", why ? why : "");
}

/* op_type(x) -> out, and the same with two inputs. */
static Onnx__NodeProto *un(ox_ctx *c, const char *op, const char *x, const char *out) {
  return ox_node(c, op, 1, &x, out);
}
static Onnx__NodeProto *bin(ox_ctx *c, const char *op, const char *a, const char *b, const char *out) {
  const char *in[2] = {a, b};
  return ox_node(c, op, 2, in, out);
}

/* x with its last two dims swapped (rank r). */
static const char *swap_last2(ox_ctx *c, const tg_node *n, const char *x, int r, const char *what) {
  int64_t perm[TG_MAX_DIMS];
  for (int k = 0; k < r; k++) perm[k] = k;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  const char *t = ox_tmp(c, n, what);
  ox_attr_ints(c, un(c, "Transpose", x, t), "perm", r, perm);
  return t;
}

/* [out, in] weight w: x @ w^T (+ bias) -> out. */
static void linear(ox_ctx *c, const tg_node *n) {
  const char *wt = swap_last2(c, n, IN(1), 2, "wT");
  if (n->attr.i[0]) {
    const char *mm = ox_tmp(c, n, "matmul");
    bin(c, "MatMul", IN(0), wt, mm);
    bin(c, "Add", mm, IN(2), OUT);
  } else {
    bin(c, "MatMul", IN(0), wt, OUT);
  }
}

/* x [..., G, in], w [G, out, in]: x as [..., G, 1, in] times w^T [G, in, out], back to [..., G, out] (+ bias [G, out]). */
static void stacked_linear(ox_ctx *c, const tg_node *n) {
  int64_t axis = -2;
  const char *ax = ox_ints(c, n, "axis", 1, &axis), *x1 = ox_tmp(c, n, "x1"), *mm = ox_tmp(c, n, "matmul");
  bin(c, "Unsqueeze", IN(0), ax, x1);
  bin(c, "MatMul", x1, swap_last2(c, n, IN(1), 3, "wT"), mm);
  if (n->attr.i[0]) {
    const char *sq = ox_tmp(c, n, "squeeze");
    bin(c, "Squeeze", mm, ax, sq);
    bin(c, "Add", sq, IN(2), OUT);
  } else {
    bin(c, "Squeeze", mm, ax, OUT);
  }
}

static void matmul(ox_ctx *c, const tg_node *n) {
  const char *a = IN(0), *b = IN(1);
  if (n->attr.i[0]) a = swap_last2(c, n, a, n->in[0]->out.ndim, "aT");
  if (n->attr.i[1]) b = swap_last2(c, n, b, n->in[1]->out.ndim, "bT");
  bin(c, "MatMul", a, b, OUT);
}

/* A reduction over the last dim, the dim dropped (opset 17: ReduceSum takes axes as an input, the others an attribute). */
static void reduce_last(ox_ctx *c, const tg_node *n, const char *op) {
  int64_t axis = -1;
  Onnx__NodeProto *r = strcmp(op, "ReduceSum") == 0 ? bin(c, op, IN(0), ox_ints(c, n, "axes", 1, &axis), OUT)
                                                     : un(c, op, IN(0), OUT);
  if (strcmp(op, "ReduceSum") != 0) ox_attr_ints(c, r, "axes", 1, &axis);
  ox_attr_int(c, r, "keepdims", 0);
}

/* A reduction over every element, reshaped to the node's shape. */
static void reduce_all(ox_ctx *c, const tg_node *n, const char *op) {
  const char *r = ox_tmp(c, n, "all");
  ox_attr_int(c, un(c, op, IN(0), r), "keepdims", 0);
  bin(c, "Reshape", r, ox_ints(c, n, "shape", n->out.ndim, n->out.shape), OUT);
}

/* ONNX's LayerNormalization over the last dim of x (scale and bias: initializer names, bias may be NULL). */
static void layer_norm(ox_ctx *c, const char *x, const char *scale, const char *bias, float eps,
                       const char *out) {
  const char *in[3] = {x, scale, bias};
  Onnx__NodeProto *ln = ox_node(c, "LayerNormalization", bias ? 3 : 2, in, out);
  ox_attr_int(c, ln, "axis", -1);
  ox_attr_float(c, ln, "epsilon", eps);
}

/* [D] ones (or zeros) named after n. */
static const char *filled(ox_ctx *c, const tg_node *n, const char *what, int64_t D, float v) {
  float *f = ox_alloc(c, (size_t)(D > 0 ? D : 1) * sizeof *f);
  if (!f) return NULL;
  for (int64_t j = 0; j < D; j++) f[j] = v;
  return ox_init_f32(c, ox_tmp(c, n, what), 1, &D, f);
}

static void layernorm(ox_ctx *c, const tg_node *n) {
  int64_t D = n->out.shape[n->out.ndim - 1];
  int k = 1;
  const char *gamma = n->attr.i[0] ? IN(k++) : filled(c, n, "ones", D, 1.0f);
  const char *beta = n->attr.i[1] ? IN(k) : NULL;
  layer_norm(c, IN(0), gamma, beta, n->attr.f[0], OUT);
}

/* x / sqrt(mean(x^2) + eps) (* w). */
static void rmsnorm(ox_ctx *c, const tg_node *n) {
  int64_t axis = -1;
  const char *sq = ox_tmp(c, n, "sq"), *ms = ox_tmp(c, n, "ms"), *mse = ox_tmp(c, n, "ms_eps"),
             *rms = ox_tmp(c, n, "rms"), *inv = ox_tmp(c, n, "inv");
  bin(c, "Mul", IN(0), IN(0), sq);
  Onnx__NodeProto *r = un(c, "ReduceMean", sq, ms);
  ox_attr_ints(c, r, "axes", 1, &axis);
  ox_attr_int(c, r, "keepdims", 1);
  bin(c, "Add", ms, ox_scalar(c, n, "eps", n->attr.f[0]), mse);
  un(c, "Sqrt", mse, rms);
  un(c, "Reciprocal", rms, inv);
  if (n->attr.i[0]) {
    const char *y = ox_tmp(c, n, "normed");
    bin(c, "Mul", IN(0), inv, y);
    bin(c, "Mul", y, IN(1), OUT);
  } else {
    bin(c, "Mul", IN(0), inv, OUT);
  }
}

/* a [..., 2D] = value | gate, skip [..., D]: layernorm(skip + value * sigmoid(gate)) (* gamma + beta). */
static void gate_add_norm(ox_ctx *c, const tg_node *n) {
  int64_t D = n->out.shape[n->out.ndim - 1], axis = -1, zero = 0, twoD = 2 * D;
  const char *ax = ox_ints(c, n, "axis", 1, &axis), *d = ox_ints(c, n, "D", 1, &D);
  const char *v = ox_tmp(c, n, "value"), *gt = ox_tmp(c, n, "gate"), *sg = ox_tmp(c, n, "sigmoid"),
             *gv = ox_tmp(c, n, "gated"), *z = ox_tmp(c, n, "z");
  const char *sv[4] = {IN(0), ox_ints(c, n, "zero", 1, &zero), d, ax};
  ox_node(c, "Slice", 4, sv, v);
  const char *sgate[4] = {IN(0), d, ox_ints(c, n, "twoD", 1, &twoD), ax};
  ox_node(c, "Slice", 4, sgate, gt);
  un(c, "Sigmoid", gt, sg);
  bin(c, "Mul", v, sg, gv);
  bin(c, "Add", IN(1), gv, z);
  if (!n->attr.i[0]) {
    layer_norm(c, z, filled(c, n, "ones", D, 1.0f), NULL, n->attr.f[0], OUT);
    return;
  }
  const char *ln = ox_tmp(c, n, "ln"), *sc = ox_tmp(c, n, "scaled");
  layer_norm(c, z, filled(c, n, "ones", D, 1.0f), NULL, n->attr.f[0], ln);
  bin(c, "Mul", ln, IN(2), sc);
  bin(c, "Add", sc, IN(3), OUT);
}

/* Softmax over the last axis of x [..., Tq, Tk] -> out where key j of query row i is seen only when j <= i + off;
 * hidden entries and rows seeing none are 0. */
static tg_status masked_softmax(ox_ctx *c, const tg_node *n, const char *x, int64_t Tq, int64_t Tk, int64_t off,
                                const char *out) {
  uint8_t *m = ox_alloc(c, (size_t)(Tq * Tk > 0 ? Tq * Tk : 1));
  if (!m) return tg_error(TG_ERR_NOMEM, "onnx export: out of memory");
  for (int64_t i = 0; i < Tq; i++)
    for (int64_t j = 0; j < Tk; j++) m[i * Tk + j] = j - i <= off; /* no overflow for any off */
  int64_t dims[2] = {Tq, Tk};
  const char *mask = ox_init_bool(c, ox_tmp(c, n, "mask"), 2, dims, m);
  const char *masked = ox_tmp(c, n, "masked"), *sm = ox_tmp(c, n, "softmax");
  const char *w1[3] = {mask, x, ox_scalar(c, n, "minus_inf", -INFINITY)};
  ox_node(c, "Where", 3, w1, masked);
  ox_attr_int(c, un(c, "Softmax", masked, sm), "axis", -1);
  const char *w2[3] = {mask, sm, ox_scalar(c, n, "zero", 0.0f)}; /* a row that sees no key: 0, not NaN */
  ox_node(c, "Where", 3, w2, out);
  return TG_OK;
}

static tg_status causal_softmax(ox_ctx *c, const tg_node *n) {
  return masked_softmax(c, n, IN(0), n->out.shape[n->out.ndim - 2], n->out.shape[n->out.ndim - 1], n->attr.i[0], OUT);
}

/* x [B, T, H dh] as heads [B, H, T, dh] (perm 0 2 1 3), or with the last two swapped, [B, H, dh, T] (0 2 3 1). */
static const char *heads(ox_ctx *c, const tg_node *n, const char *x, int64_t T, int64_t H, int64_t dh, int keys_t,
                         const char *what) {
  int64_t s4[4] = {0, T, H, dh}, p[4] = {0, 2, keys_t ? 3 : 1, keys_t ? 1 : 3}; /* 0: the batch as it comes */
  const char *r = ox_tmp(c, n, ox_str(c, "%s_rows", what)), *t = ox_tmp(c, n, what);
  bin(c, "Reshape", x, ox_ints(c, n, ox_str(c, "%s_shape", what), 4, s4), r);
  ox_attr_ints(c, un(c, "Transpose", r, t), "perm", 4, p);
  return t;
}

/* q [B, Tq, d], k and v [B, Tk, d]: the heads split, scaled scores q k^T, the causal mask as causal_softmax's (or a
 * plain softmax), times v, the heads merged back to [B, Tq, d]. */
static tg_status attention(ox_ctx *c, const tg_node *n) {
  int64_t H = n->attr.i[0], Tq = n->in[0]->out.shape[1], Tk = n->in[1]->out.shape[1], d = n->out.shape[2], dh = d / H;
  const char *q = heads(c, n, IN(0), Tq, H, dh, 0, "q"), *kt = heads(c, n, IN(1), Tk, H, dh, 1, "kT");
  const char *v = heads(c, n, IN(2), Tk, H, dh, 0, "v"), *s = ox_tmp(c, n, "scores"), *p = ox_tmp(c, n, "probs");
  bin(c, "MatMul", q, kt, s);
  if (n->attr.f[0] != 1.0f) {
    const char *scaled = ox_tmp(c, n, "scaled");
    bin(c, "Mul", s, ox_scalar(c, n, "scale", n->attr.f[0]), scaled);
    s = scaled;
  }
  if (n->attr.i[1]) {
    tg_status st = masked_softmax(c, n, s, Tq, Tk, n->attr.i[2], p);
    if (st != TG_OK) return st;
  } else {
    ox_attr_int(c, un(c, "Softmax", s, p), "axis", -1);
  }
  int64_t perm[4] = {0, 2, 1, 3}, s3[3] = {0, Tq, d};
  const char *o = ox_tmp(c, n, "heads_out"), *ot = ox_tmp(c, n, "rows_out");
  bin(c, "MatMul", p, v, o);
  ox_attr_ints(c, un(c, "Transpose", o, ot), "perm", 4, perm);
  bin(c, "Reshape", ot, ox_ints(c, n, "out_shape", 3, s3), OUT);
  return TG_OK;
}

/* x [B, L, C], w [C, K]: a depthwise Conv over [B, C, L] with K-1 zeros padded before t = 0. */
static void conv1d_causal(ox_ctx *c, const tg_node *n) {
  int64_t C = n->in[1]->out.shape[0], K = n->in[1]->out.shape[1], w3[3] = {C, 1, K}, perm[3] = {0, 2, 1};
  int64_t pads[2] = {K - 1, 0}, ks[1] = {K};
  const char *xt = ox_tmp(c, n, "x_ncl"), *w = ox_tmp(c, n, "w_c1k"), *y = ox_tmp(c, n, "y_ncl");
  ox_attr_ints(c, un(c, "Transpose", IN(0), xt), "perm", 3, perm);
  bin(c, "Reshape", IN(1), ox_ints(c, n, "w_shape", 3, w3), w);
  const char *in[3] = {xt, w, n->attr.i[0] ? IN(2) : NULL};
  Onnx__NodeProto *conv = ox_node(c, "Conv", n->attr.i[0] ? 3 : 2, in, y);
  ox_attr_int(c, conv, "group", C);
  ox_attr_ints(c, conv, "kernel_shape", 1, ks);
  ox_attr_ints(c, conv, "pads", 2, pads);
  ox_attr_ints(c, un(c, "Transpose", y, OUT), "perm", 3, perm);
}

/* A slice [lo, lo + len) of x along axis, named after n and what. */
static const char *slice_of(ox_ctx *c, const tg_node *n, const char *x, int64_t axis, int64_t lo, int64_t len,
                            const char *what) {
  int64_t hi = lo + len;
  const char *out = ox_tmp(c, n, what);
  const char *in[4] = {x, ox_ints(c, n, ox_str(c, "%s_lo", what), 1, &lo), ox_ints(c, n, ox_str(c, "%s_hi", what), 1, &hi),
                       ox_ints(c, n, ox_str(c, "%s_axis", what), 1, &axis)};
  ox_node(c, "Slice", 4, in, out);
  return out;
}

/* The LSTM unrolled over its T steps (T is fixed by the model; the batch stays dynamic), as the kernel computes it:
 * gates = x_t W_ih^T + bias + h_{t-1} W_hh^T in PyTorch's order i, f, g, o; c_t = f c_{t-1} + i g; h_t = o tanh(c_t);
 * out [B, T, 6 Hd] holds h | c | i | f | g | o of every step (gates after their sigmoid or tanh), which ONNX's LSTM
 * op does not give (only h of every step and the last c). */
static void lstm(ox_ctx *c, const tg_node *n) {
  int64_t T = n->out.shape[1], Hd = n->out.shape[2] / 6, one = 1;
  int k = 1;
  const char *h0 = n->attr.i[0] ? IN(k++) : NULL, *c0 = n->attr.i[0] ? IN(k++) : NULL;
  const char *w_ih = IN(k), *w_hh = IN(k + 1), *bias = n->attr.i[1] ? IN(k + 2) : NULL;
  const char *ax1 = ox_ints(c, n, "axis1", 1, &one), *xw = ox_tmp(c, n, "xw");
  bin(c, "MatMul", IN(0), swap_last2(c, n, w_ih, 2, "w_ihT"), bias ? ox_tmp(c, n, "xw_nobias") : xw); /* [B, T, 4Hd] */
  if (bias) bin(c, "Add", ox_tmp(c, n, "xw_nobias"), bias, xw);
  const char *whT = swap_last2(c, n, w_hh, 2, "w_hhT"), *h = NULL, *cs = NULL;
  if (h0) bin(c, "Unsqueeze", h0, ax1, h = ox_tmp(c, n, "h_init")), bin(c, "Unsqueeze", c0, ax1, cs = ox_tmp(c, n, "c_init"));
  const char *steps[TG_MAX_INPUTS];
  const char **all = ox_alloc(c, (size_t)(T > 0 ? T : 1) * sizeof *all);
  if (!all) return;
  for (int64_t t = 0; t < T; t++) {
    const char *g = slice_of(c, n, xw, 1, t, 1, ox_str(c, "x%lld", (long long)t)); /* [B, 1, 4Hd] */
    if (h) {
      const char *hw = ox_tmp(c, n, ox_str(c, "hw%lld", (long long)t)), *sum = ox_tmp(c, n, ox_str(c, "pre%lld", (long long)t));
      bin(c, "MatMul", h, whT, hw);
      bin(c, "Add", g, hw, sum);
      g = sum;
    }
    const char *act[4], *names[4] = {"i", "f", "g", "o"};
    for (int q = 0; q < 4; q++) {
      const char *pre = slice_of(c, n, g, 2, q * Hd, Hd, ox_str(c, "%s_pre%lld", names[q], (long long)t));
      act[q] = ox_tmp(c, n, ox_str(c, "%s%lld", names[q], (long long)t));
      un(c, q == 2 ? "Tanh" : "Sigmoid", pre, act[q]);
    }
    const char *ig = ox_tmp(c, n, ox_str(c, "ig%lld", (long long)t)), *cn = ox_tmp(c, n, ox_str(c, "c%lld", (long long)t));
    bin(c, "Mul", act[0], act[2], ig);
    if (cs) {
      const char *fc = ox_tmp(c, n, ox_str(c, "fc%lld", (long long)t));
      bin(c, "Mul", act[1], cs, fc);
      bin(c, "Add", fc, ig, cn);
    } else {
      un(c, "Identity", ig, cn);
    }
    const char *tc = ox_tmp(c, n, ox_str(c, "tanh_c%lld", (long long)t)), *hn = ox_tmp(c, n, ox_str(c, "h%lld", (long long)t));
    un(c, "Tanh", cn, tc);
    bin(c, "Mul", act[3], tc, hn);
    steps[0] = hn, steps[1] = cn, steps[2] = act[0], steps[3] = act[1], steps[4] = act[2], steps[5] = act[3];
    all[t] = ox_tmp(c, n, ox_str(c, "out%lld", (long long)t));
    ox_attr_int(c, ox_node(c, "Concat", 6, steps, all[t]), "axis", 2); /* [B, 1, 6Hd] */
    h = hn, cs = cn;
  }
  ox_attr_int(c, ox_node(c, "Concat", (int)T, all, OUT), "axis", 1);
}

/* The SSD scan in its quadratic (attention-like) form over the whole window of L steps, which the chunked kernel computes
 * chunk by chunk: with a_t = dt_t A and S_t = sum_{r <= t} a_r (CumSum),
 *   y_t = sum_{s <= t} exp(S_t - S_s) (C_t . B_s) dt_s x_s + D x_t,
 * the decay exp(S_t - S_s) taken only where s <= t (a Where with -inf before the Exp, so no entry overflows). Exact up to
 * float rounding; the difference S_t - S_s of two long sums is where it loses most (docs/EXPORT.md). */
static void ssd_scan(ox_ctx *c, const tg_node *n) {
  const int64_t *xs = n->in[0]->out.shape, L = xs[1], H = xs[2], G = n->in[3]->out.shape[2];
  const char *x = IN(0), *dt = IN(1), *A = IN(2), *Bm = IN(3), *Cm = IN(4);
  int64_t p021[3] = {0, 2, 1}, p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1}, one = 1, m1 = -1, m2 = -2;
  const char *a = ox_tmp(c, n, "a"), *S = ox_tmp(c, n, "S"), *St = ox_tmp(c, n, "S_bhl"), *Si = ox_tmp(c, n, "S_t"),
             *Sj = ox_tmp(c, n, "S_s"), *diff = ox_tmp(c, n, "S_t_minus_S_s"), *md = ox_tmp(c, n, "masked"),
             *decay = ox_tmp(c, n, "decay");
  bin(c, "Mul", dt, A, a);                                                        /* [B, L, H] */
  bin(c, "CumSum", a, ox_init_i64(c, ox_tmp(c, n, "axis_l"), 0, NULL, &one), S);
  ox_attr_ints(c, un(c, "Transpose", S, St), "perm", 3, p021);                    /* [B, H, L] */
  bin(c, "Unsqueeze", St, ox_ints(c, n, "axis_m1", 1, &m1), Si);                  /* [B, H, L, 1]: t */
  bin(c, "Unsqueeze", St, ox_ints(c, n, "axis_m2", 1, &m2), Sj);                  /* [B, H, 1, L]: s */
  bin(c, "Sub", Si, Sj, diff);                                                    /* [B, H, L, L] */
  uint8_t *m = ox_alloc(c, (size_t)(L * L));
  if (!m) return;
  for (int64_t t = 0; t < L; t++)
    for (int64_t u = 0; u < L; u++) m[t * L + u] = u <= t;
  int64_t md2[2] = {L, L};
  const char *w1[3] = {ox_init_bool(c, ox_tmp(c, n, "mask"), 2, md2, m), diff, ox_scalar(c, n, "minus_inf", -INFINITY)};
  ox_node(c, "Where", 3, w1, md);
  un(c, "Exp", md, decay);
  /* C_t . B_s per group [B, G, L, L], then per head (head h reads group h / (H / G)) */
  const char *Cg = ox_tmp(c, n, "C_bgln"), *Bg = ox_tmp(c, n, "B_bgnl"), *cb = ox_tmp(c, n, "CB");
  ox_attr_ints(c, un(c, "Transpose", Cm, Cg), "perm", 4, p0213);
  ox_attr_ints(c, un(c, "Transpose", Bm, Bg), "perm", 4, p0231);
  bin(c, "MatMul", Cg, Bg, cb);
  const char *cbh = cb;
  if (G != H) {
    int64_t two = 2, ex[5] = {1, G, H / G, L, L}, rs[4] = {0, H, L, L};
    const char *u = ox_tmp(c, n, "CB_g1"), *e = ox_tmp(c, n, "CB_gh");
    bin(c, "Unsqueeze", cb, ox_ints(c, n, "axis_2", 1, &two), u);
    bin(c, "Expand", u, ox_ints(c, n, "expand", 5, ex), e);
    bin(c, "Reshape", e, ox_ints(c, n, "heads", 4, rs), cbh = ox_tmp(c, n, "CB_h"));
  }
  const char *dts = ox_tmp(c, n, "dt_bhl"), *dts1 = ox_tmp(c, n, "dt_s"), *w = ox_tmp(c, n, "weights"),
             *wd = ox_tmp(c, n, "weights_dt"), *xh = ox_tmp(c, n, "x_bhlp"), *yh = ox_tmp(c, n, "y_bhlp");
  ox_attr_ints(c, un(c, "Transpose", dt, dts), "perm", 3, p021);                  /* [B, H, L] */
  bin(c, "Unsqueeze", dts, ox_ints(c, n, "axis_m2b", 1, &m2), dts1);              /* [B, H, 1, L] */
  bin(c, "Mul", decay, cbh, w);
  bin(c, "Mul", w, dts1, wd);                                                     /* [B, H, L(t), L(s)] */
  ox_attr_ints(c, un(c, "Transpose", x, xh), "perm", 4, p0213);                   /* [B, H, L, P] */
  bin(c, "MatMul", wd, xh, yh);
  if (!n->attr.i[1]) {
    ox_attr_ints(c, un(c, "Transpose", yh, OUT), "perm", 4, p0213);
    return;
  }
  int64_t dshape[2] = {H, 1};
  const char *y = ox_tmp(c, n, "y"), *Dc = ox_tmp(c, n, "D_h1"), *dx = ox_tmp(c, n, "Dx");
  ox_attr_ints(c, un(c, "Transpose", yh, y), "perm", 4, p0213);                   /* [B, L, H, P] */
  bin(c, "Reshape", IN(5), ox_ints(c, n, "D_shape", 2, dshape), Dc);
  bin(c, "Mul", x, Dc, dx);
  bin(c, "Add", y, dx, OUT);
}

/* t [...] (f32 holding whole numbers, or i64) -> [..., W] i64 rows t - W + 1 .. t (an index out of range is the runtime's
 * Gather error, as it is the kernel's at run). */
static void window_rows(ox_ctx *c, const tg_node *n) {
  int64_t W = n->attr.i[0], m1 = -1;
  int64_t *steps = ox_alloc(c, (size_t)(W > 0 ? W : 1) * sizeof *steps);
  if (!steps) return;
  for (int64_t k = 0; k < W; k++) steps[k] = k - W + 1;
  const char *t = IN(0), *u = ox_tmp(c, n, "t_last");
  if (n->in[0]->out.dtype != TG_I64) {
    t = ox_tmp(c, n, "t_i64");
    ox_attr_int(c, un(c, "Cast", IN(0), t), "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
  }
  bin(c, "Unsqueeze", t, ox_ints(c, n, "axis", 1, &m1), u);
  bin(c, "Add", u, ox_ints(c, n, "steps", (int)W, steps), OUT);
}

/* The target shape with the one dim that differs at the other batch size as -1. */
static tg_status reshape(ox_ctx *c, const tg_node *n, const tg_node *n2) {
  int64_t shape[TG_MAX_DIMS];
  int moving = 0;
  for (int k = 0; k < n->out.ndim; k++) {
    shape[k] = n->out.shape[k];
    if (n->out.shape[k] != n2->out.shape[k]) shape[k] = -1, moving++;
  }
  if (moving > 1) return no_form(c, n, "more than one of its dims grows with the batch");
  bin(c, "Reshape", IN(0), ox_ints(c, n, "shape", n->out.ndim, shape), OUT);
  return TG_OK;
}

static void slice(ox_ctx *c, const tg_node *n) {
  int64_t start = n->attr.i[1], end = n->attr.i[1] + n->attr.i[2], axis = n->attr.i[0];
  const char *in[4] = {IN(0), ox_ints(c, n, "start", 1, &start), ox_ints(c, n, "end", 1, &end),
                       ox_ints(c, n, "axis", 1, &axis)};
  ox_node(c, "Slice", 4, in, OUT);
}

static void transpose(ox_ctx *c, const tg_node *n) {
  int64_t perm[TG_MAX_DIMS];
  for (int k = 0; k < n->out.ndim; k++) perm[k] = k;
  perm[n->attr.i[0]] = n->attr.i[1];
  perm[n->attr.i[1]] = n->attr.i[0];
  ox_attr_ints(c, un(c, "Transpose", IN(0), OUT), "perm", n->out.ndim, perm);
}

/* x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)). */
static void gelu(ox_ctx *c, const tg_node *n) {
  const char *s = ox_tmp(c, n, "scaled"), *e = ox_tmp(c, n, "erf"), *e1 = ox_tmp(c, n, "erf1"), *xe = ox_tmp(c, n, "xe");
  bin(c, "Mul", IN(0), ox_scalar(c, n, "rsqrt2", (float)(1.0 / sqrt(2.0))), s);
  un(c, "Erf", s, e);
  bin(c, "Add", e, ox_scalar(c, n, "one", 1.0f), e1);
  bin(c, "Mul", IN(0), e1, xe);
  bin(c, "Mul", xe, ox_scalar(c, n, "half", 0.5f), OUT);
}

/* The attributes that may not differ between the two batch sizes (a slice along the batch axis has no fixed form). */
static int attrs_differ(const tg_node *n, const tg_node *n2) { return memcmp(&n->attr, &n2->attr, sizeof n->attr) != 0; }

tg_status ox_map_node(ox_ctx *c, const tg_node *n, const tg_node *n2) {
  if (n->op != TG_OP_RESHAPE && attrs_differ(n, n2)) return no_form(c, n, "its attributes change with the batch size");
  switch (n->op) {
    case TG_OP_MATMUL: matmul(c, n); break;
    case TG_OP_LINEAR: linear(c, n); break;
    case TG_OP_STACKED_LINEAR: stacked_linear(c, n); break;
    case TG_OP_ADD: bin(c, "Add", IN(0), IN(1), OUT); break;
    case TG_OP_SUB: bin(c, "Sub", IN(0), IN(1), OUT); break;
    case TG_OP_MUL: bin(c, "Mul", IN(0), IN(1), OUT); break;
    case TG_OP_DIV: bin(c, "Div", IN(0), IN(1), OUT); break;
    case TG_OP_SCALE: bin(c, "Mul", IN(0), ox_scalar(c, n, "s", n->attr.f[0]), OUT); break;
    case TG_OP_RELU: un(c, "Relu", IN(0), OUT); break;
    case TG_OP_TANH: un(c, "Tanh", IN(0), OUT); break;
    case TG_OP_SIGMOID: un(c, "Sigmoid", IN(0), OUT); break;
    case TG_OP_ELU: ox_attr_float(c, un(c, "Elu", IN(0), OUT), "alpha", n->attr.f[0]); break;
    case TG_OP_SILU: {
      const char *s = ox_tmp(c, n, "sigmoid");
      un(c, "Sigmoid", IN(0), s);
      bin(c, "Mul", IN(0), s, OUT);
      break;
    }
    case TG_OP_GELU: gelu(c, n); break;
    case TG_OP_SOFTPLUS: un(c, "Softplus", IN(0), OUT); break;
    case TG_OP_EXP: un(c, "Exp", IN(0), OUT); break;
    case TG_OP_LOG: un(c, "Log", IN(0), OUT); break;
    case TG_OP_SQRT: un(c, "Sqrt", IN(0), OUT); break;
    case TG_OP_SOFTMAX: ox_attr_int(c, un(c, "Softmax", IN(0), OUT), "axis", -1); break;
    case TG_OP_LOG_SOFTMAX: ox_attr_int(c, un(c, "LogSoftmax", IN(0), OUT), "axis", -1); break;
    case TG_OP_LAYERNORM: layernorm(c, n); break;
    case TG_OP_RMSNORM: rmsnorm(c, n); break;
    case TG_OP_GATE_ADD_NORM: gate_add_norm(c, n); break;
    case TG_OP_CONCAT: {
      const char *in[TG_MAX_INPUTS];
      for (int k = 0; k < n->n_in; k++) in[k] = IN(k);
      ox_attr_int(c, ox_node(c, "Concat", n->n_in, in, OUT), "axis", n->attr.i[0]);
      break;
    }
    case TG_OP_SLICE: slice(c, n); break;
    case TG_OP_RESHAPE: return reshape(c, n, n2);
    case TG_OP_TRANSPOSE: transpose(c, n); break;
    case TG_OP_GATHER_ROWS: ox_attr_int(c, bin(c, "Gather", IN(0), IN(1), OUT), "axis", 0); break;
    case TG_OP_SUM: reduce_all(c, n, "ReduceSum"); break;
    case TG_OP_MEAN: reduce_all(c, n, "ReduceMean"); break;
    case TG_OP_SUM_LAST: reduce_last(c, n, "ReduceSum"); break;
    case TG_OP_MEAN_LAST: reduce_last(c, n, "ReduceMean"); break;
    case TG_OP_MAX_LAST: reduce_last(c, n, "ReduceMax"); break;
    case TG_OP_ARGMAX_LAST: {
      Onnx__NodeProto *a = un(c, "ArgMax", IN(0), OUT);
      ox_attr_int(c, a, "axis", -1);
      ox_attr_int(c, a, "keepdims", 0);
      break;
    }
    case TG_OP_DROPOUT: un(c, "Identity", IN(0), OUT); break; /* inference: dropout is the identity */
    case TG_OP_CAUSAL_SOFTMAX: return causal_softmax(c, n);
    case TG_OP_ATTENTION: return attention(c, n);
    case TG_OP_CONV1D_CAUSAL: conv1d_causal(c, n); break;
    case TG_OP_LSTM: lstm(c, n); break;
    case TG_OP_SSD_SCAN: ssd_scan(c, n); break;
    case TG_OP_WINDOW_ROWS: window_rows(c, n); break;
    default: return no_form(c, n, NULL); /* training-only ops: losses, the batch sampler */
  }
  return TG_OK;
}
