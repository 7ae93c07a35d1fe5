/* Op tests for lstm: float64 reference forward and backward, finite-difference gradients, threaded sizes, repeatability, build errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/device.h"
#include "tickgrad/graph.h"
#include "tickgrad/rng.h"

/* ---- float64 reference ---- */

typedef struct ref_dims {
  int64_t B, T, I, H;
} ref_dims;

/* Operands of one reference call (h0, c0, bias may be NULL). */
typedef struct ref_in {
  const double *x;         /* [B, T, I] */
  const double *h0, *c0;   /* [B, H] */
  const double *w_ih;      /* [4H, I] */
  const double *w_hh;      /* [4H, H] */
  const double *bias;      /* [4H] */
} ref_in;

/* Gradients of every operand (all [numel] of their operand, zeroed by the caller). */
typedef struct ref_grads {
  double *x, *h0, *c0, *w_ih, *w_hh, *bias;
} ref_grads;

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

/* Gate pre-activations of batch b at step t: pre[4H] = bias + W_ih x_t + W_hh hprev. */
static void ref_pre(const ref_dims *d, const ref_in *in, int64_t b, int64_t t, const double *hprev,
                    double *pre) {
  int64_t I = d->I, H = d->H;
  const double *xt = in->x + (b * d->T + t) * I; /* [I] */
  for (int64_t r = 0; r < 4 * H; r++) {
    double s = in->bias ? in->bias[r] : 0.0;
    for (int64_t k = 0; k < I; k++) s += in->w_ih[r * I + k] * xt[k];
    for (int64_t k = 0; k < H; k++) s += in->w_hh[r * H + k] * hprev[k];
    pre[r] = s;
  }
}

/* out [B, T, 6H]: per step h | c | i | f | g | o. */
static void ref_forward(const ref_dims *d, const ref_in *in, double *out) {
  int64_t T = d->T, H = d->H;
  double *pre = malloc(sizeof(double) * (size_t)(4 * H));
  double *zero = calloc((size_t)H, sizeof(double));
  for (int64_t b = 0; b < d->B; b++)
    for (int64_t t = 0; t < T; t++) {
      double *row = out + (b * T + t) * 6 * H; /* [6H] */
      const double *hprev = t > 0 ? row - 6 * H : in->h0 ? in->h0 + b * H : zero;
      const double *cprev = t > 0 ? row - 5 * H : in->c0 ? in->c0 + b * H : zero;
      ref_pre(d, in, b, t, hprev, pre);
      for (int64_t j = 0; j < H; j++) {
        double i = sigm(pre[j]), f = sigm(pre[H + j]), g = tanh(pre[2 * H + j]), o = sigm(pre[3 * H + j]);
        double c = f * cprev[j] + i * g;
        row[j] = o * tanh(c);
        row[H + j] = c;
        row[2 * H + j] = i;
        row[3 * H + j] = f;
        row[4 * H + j] = g;
        row[5 * H + j] = o;
      }
    }
  free(pre);
  free(zero);
}

/* Backpropagation through time of ref_forward's out (given) with output gradient dout. */
static void ref_backward(const ref_dims *d, const ref_in *in, const double *out, const double *dout,
                         ref_grads *gr) {
  int64_t B = d->B, T = d->T, I = d->I, H = d->H;
  double *dh_next = calloc((size_t)(B * H), sizeof(double)); /* [B, H] */
  double *dc_next = calloc((size_t)(B * H), sizeof(double)); /* [B, H] */
  double *dpre = malloc(sizeof(double) * (size_t)(4 * H)), *zero = calloc((size_t)H, sizeof(double));
  for (int64_t t = T - 1; t >= 0; t--)
    for (int64_t b = 0; b < B; b++) {
      const double *row = out + (b * T + t) * 6 * H, *grow = dout + (b * T + t) * 6 * H;
      const double *hprev = t > 0 ? row - 6 * H : in->h0 ? in->h0 + b * H : zero;
      const double *cprev = t > 0 ? row - 5 * H : in->c0 ? in->c0 + b * H : zero;
      for (int64_t j = 0; j < H; j++) {
        double c = row[H + j], i = row[2 * H + j], f = row[3 * H + j];
        double g = row[4 * H + j], o = row[5 * H + j];
        double tc = tanh(c);
        double dh = grow[j] + dh_next[b * H + j];
        double dc = grow[H + j] + dc_next[b * H + j] + dh * o * (1.0 - tc * tc);
        double di = grow[2 * H + j] + dc * g, df = grow[3 * H + j] + dc * cprev[j];
        double dg = grow[4 * H + j] + dc * i, dox = grow[5 * H + j] + dh * tc;
        dpre[j] = di * i * (1.0 - i);
        dpre[H + j] = df * f * (1.0 - f);
        dpre[2 * H + j] = dg * (1.0 - g * g);
        dpre[3 * H + j] = dox * o * (1.0 - o);
        dc_next[b * H + j] = dc * f;
      }
      const double *xt = in->x + (b * T + t) * I;
      for (int64_t k = 0; k < H; k++) {
        double s = 0.0;
        for (int64_t r = 0; r < 4 * H; r++) s += dpre[r] * in->w_hh[r * H + k];
        dh_next[b * H + k] = s;
      }
      for (int64_t r = 0; r < 4 * H; r++) {
        for (int64_t k = 0; k < I; k++) {
          gr->w_ih[r * I + k] += dpre[r] * xt[k];
          gr->x[(b * T + t) * I + k] += dpre[r] * in->w_ih[r * I + k];
        }
        for (int64_t k = 0; k < H; k++) gr->w_hh[r * H + k] += dpre[r] * hprev[k];
        if (gr->bias) gr->bias[r] += dpre[r];
      }
    }
  for (int64_t e = 0; e < B * H; e++) {
    if (gr->h0) gr->h0[e] += dh_next[e];
    if (gr->c0) gr->c0[e] += dc_next[e];
  }
  free(dh_next);
  free(dc_next);
  free(dpre);
  free(zero);
}

/* ---- op_check cases ---- */

/* Inputs in node order: x, [h0, c0,] w_ih, w_hh, [bias]. slot >= 0: the output is only that
 * slot of every step (0 h, 1 c, 2..5 gates i f g o); twice: two lstm nodes on the same operands,
 * added (every operand gradient is accumulated by two backward calls). */
typedef struct lstm_ctx {
  int has_state, has_bias, slot, twice;
} lstm_ctx;

static tg_tensor *lstm_of(tg_graph *g, tg_tensor **in, const lstm_ctx *c) {
  int k = 1;
  tg_tensor *h0 = c->has_state ? in[k++] : NULL;
  tg_tensor *c0 = c->has_state ? in[k++] : NULL;
  tg_tensor *w_ih = in[k++], *w_hh = in[k++];
  tg_tensor *bias = c->has_bias ? in[k] : NULL;
  return tg_lstm(g, in[0], h0, c0, w_ih, w_hh, bias);
}

static tg_tensor *build_lstm(tg_graph *g, tg_tensor **in, const void *ctx) {
  const lstm_ctx *c = ctx;
  tg_tensor *y = lstm_of(g, in, c);
  if (c->twice) {
    tg_tensor *y2 = lstm_of(g, in, c);
    y = tg_add(g, y, y2);
  }
  if (c->slot >= 0) {
    int64_t H = in[c->has_state ? 4 : 2]->shape[1]; /* from w_hh [4H, H] */
    y = tg_slice(g, y, 2, c->slot * H, H);
  }
  return y;
}

static void ref_lstm(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const lstm_ctx *c = ctx;
  int k = 1;
  ref_in r = {.x = in[0]};
  r.h0 = c->has_state ? in[k++] : NULL;
  r.c0 = c->has_state ? in[k++] : NULL;
  int k_hh = k + 1;
  r.w_ih = in[k++];
  r.w_hh = in[k++];
  r.bias = c->has_bias ? in[k] : NULL;
  ref_dims d = {spec[0].shape[0], spec[0].shape[1], spec[0].shape[2], spec[k_hh].shape[1]};
  int64_t rows = d.B * d.T, W = 6 * d.H;
  double *full = malloc(sizeof(double) * (size_t)(rows * W)); /* [B, T, 6H] */
  ref_forward(&d, &r, full);
  double scale = c->twice ? 2.0 : 1.0;
  for (int64_t q = 0; q < rows; q++) {
    if (c->slot < 0)
      for (int64_t e = 0; e < W; e++) out[q * W + e] = scale * full[q * W + e];
    else
      for (int64_t e = 0; e < d.H; e++) out[q * d.H + e] = scale * full[q * W + c->slot * d.H + e];
  }
  free(full);
}

/* One lstm case: x [B, T, I] (differentiable unless x_fixed), hidden size H. */
static void run_case(const char *name, const lstm_ctx *c, int64_t B, int64_t T, int64_t I, int64_t H,
                     int x_fixed, unsigned long long seed) {
  const int64_t sx[3] = {B, T, I}, ss[2] = {B, H}, sih[2] = {4 * H, I}, shh[2] = {4 * H, H};
  const int64_t sb[1] = {4 * H};
  oc_case oc = {.name = name, .build = build_lstm, .ref = ref_lstm, .ctx = c};
  oc.in[oc.n_in++] = oc_f32_input("x", 3, sx, !x_fixed, -1.0, 1.0);
  if (c->has_state) {
    oc.in[oc.n_in++] = oc_f32_input("h0", 2, ss, 1, -1.0, 1.0);
    oc.in[oc.n_in++] = oc_f32_input("c0", 2, ss, 1, -1.5, 1.5);
  }
  oc.in[oc.n_in++] = oc_f32_input("w_ih", 2, sih, 1, -0.6, 0.6);
  oc.in[oc.n_in++] = oc_f32_input("w_hh", 2, shh, 1, -0.6, 0.6);
  if (c->has_bias) oc.in[oc.n_in++] = oc_f32_input("bias", 1, sb, 1, -0.5, 0.5);
  oc_run(&oc, seed);
}

static void run_op_cases(unsigned long long seed) {
  static const lstm_ctx full = {1, 1, -1, 0}, no_state = {0, 1, -1, 0}, no_bias = {1, 0, -1, 0},
                        bare = {0, 0, -1, 0}, c_slot = {1, 1, 1, 0}, f_slot = {1, 1, 3, 0},
                        g_slot = {0, 1, 4, 0}, h_slot = {1, 1, 0, 0}, twice = {1, 1, -1, 1};
  run_case("lstm [2,3,3] H4, h0/c0 and bias, every slot", &full, 2, 3, 3, 4, 0, seed);
  run_case("lstm [2,3,3] H4, zero initial state", &no_state, 2, 3, 3, 4, 0, seed);
  run_case("lstm [2,3,3] H4, no bias", &no_bias, 2, 3, 3, 4, 0, seed);
  run_case("lstm [2,3,3] H4, no state, no bias", &bare, 2, 3, 3, 4, 0, seed);
  run_case("lstm T=1 [3,1,2] H3, h0/c0 and bias", &full, 3, 1, 2, 3, 0, seed);
  run_case("lstm T=1 [2,1,3] H2, no state, no bias", &bare, 2, 1, 3, 2, 0, seed);
  run_case("lstm [1,5,1] H1", &full, 1, 5, 1, 1, 0, seed);
  run_case("lstm [2,4,3] H3, gradient only through the c slot", &c_slot, 2, 4, 3, 3, 0, seed);
  run_case("lstm [2,4,3] H3, gradient only through the f gate slot", &f_slot, 2, 4, 3, 3, 0, seed);
  run_case("lstm [2,4,3] H3, gradient only through the g gate slot, no state", &g_slot, 2, 4, 3, 3, 0,
           seed);
  run_case("lstm [2,4,3] H3, gradient only through the h slot", &h_slot, 2, 4, 3, 3, 0, seed);
  run_case("lstm [2,3,3] H4, x a bound input (no dx)", &full, 2, 3, 3, 4, 1, seed);
  run_case("lstm twice on the same operands, added (gradients accumulate)", &twice, 2, 3, 2, 3, 0, seed);
}

/* ---- a threaded size against the float64 forward and backward; repeatability ---- */

enum { P_X, P_H0, P_C0, P_IH, P_HH, P_B, P_N };

typedef struct big_run {
  float *out;              /* [numel(out)] */
  float *grads;            /* [store numel] */
  size_t n_out, n_grads, ws_bytes;
  size_t offset[P_N];      /* where each parameter's gradient starts in grads */
  double *vals[P_N];       /* the parameter values as doubles */
} big_run;

/* Builds lstm(x, h0, c0, w_ih, w_hh, bias) with every operand a parameter (store seed 7), plans it
 * (no_reuse as given), runs forward and a seeded backward. Returns 0 on any failure. */
static int big_forward_backward(int64_t B, int64_t T, int64_t I, int64_t H, int no_reuse, big_run *r) {
  static const char *names[P_N] = {"x", "h0", "c0", "w_ih", "w_hh", "bias"};
  const int64_t shapes[P_N][3] = {{B, T, I}, {B, H}, {B, H}, {4 * H, I}, {4 * H, H}, {4 * H}};
  const int ndims[P_N] = {3, 2, 2, 2, 2, 1};
  const float lim[P_N] = {1.0f, 1.0f, 1.5f, 0.3f, 0.3f, 0.5f};
  memset(r, 0, sizeof *r);
  tg_store *s = tg_store_new(tg_cpu(0), 7);
  tg_graph *g = tg_graph_new(s, "lstm_big");
  tg_tensor *p[P_N];
  for (int k = 0; k < P_N; k++)
    p[k] = tg_param(g, names[k], ndims[k], shapes[k], (tg_init){TG_INIT_UNIFORM, -lim[k], lim[k]});
  tg_tensor *y = tg_lstm(g, p[P_X], p[P_H0], p[P_C0], p[P_IH], p[P_HH], p[P_B]);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.training = 1;
  o.poison = 1;
  o.no_reuse = no_reuse;
  int ok = y && tg_graph_plan(g, &o) == TG_OK && tg_graph_run(g) == TG_OK;
  if (ok) {
    r->n_out = (size_t)tg_numel(y);
    r->ws_bytes = tg_graph_stats(g).workspace_bytes;
    float *seed = malloc(sizeof(float) * r->n_out);
    for (size_t i = 0; i < r->n_out; i++) seed[i] = 2.0f * tg_rng_uniform(31, 2, i) - 1.0f;
    ok = tg_store_zero_grads(s) == TG_OK && tg_graph_backward_seeded(g, y, seed) == TG_OK;
    free(seed);
  }
  if (ok) {
    r->out = malloc(sizeof(float) * r->n_out);
    memcpy(r->out, y->data, sizeof(float) * r->n_out);
    r->n_grads = tg_store_numel(s);
    r->grads = malloc(sizeof(float) * r->n_grads);
    memcpy(r->grads, tg_store_grads(s), sizeof(float) * r->n_grads);
    for (int k = 0; k < P_N; k++) {
      int idx = tg_store_find(s, names[k]);
      tg_tensor v = tg_store_tensor(s, idx, 0);
      r->offset[k] = tg_store_param(s, idx).offset;
      int64_t n = tg_numel(&v);
      r->vals[k] = malloc(sizeof(double) * (size_t)n);
      for (int64_t e = 0; e < n; e++) r->vals[k][e] = ((const float *)v.data)[e];
    }
  }
  if (!ok) fprintf(stderr, "lstm big run failed: %s\n", tg_last_error());
  tg_graph_free(g);
  tg_store_free(s);
  return ok;
}

static void big_free(big_run *r) {
  free(r->out);
  free(r->grads);
  for (int k = 0; k < P_N; k++) free(r->vals[k]);
}

/* The worst |got - want| / (1 + |want|) over n values, its index in *at. */
static double worst_rel(const float *got, const double *want, int64_t n, int64_t *at) {
  double worst = 0.0;
  *at = -1;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - want[i]) / (1.0 + fabs(want[i]));
    if (!(e <= worst)) {
      worst = e;
      *at = i;
    }
  }
  return worst;
}

/* B*H above the kernels' threading threshold, on `threads` threads (more than one: the batch goes to the threads in
 * parts of contiguous rows, here of uneven sizes): the forward and every gradient against the float64 reference, the
 * workspace size, and two more runs (one without buffer reuse) bitwise equal. */
static void run_threaded_case(int threads) {
  const int64_t B = 301, T = 3, I = 6, H = 128;
  big_run a, b, c;
  int before = tg_threads();
  CHECK_OK(tg_set_threads(threads));
  int ok = big_forward_backward(B, T, I, H, 0, &a);
  CHECK(ok);
  if (!ok) {
    CHECK_OK(tg_set_threads(before));
    return;
  }
  const int64_t n_in[P_N] = {B * T * I, B * H, B * H, 4 * H * I, 4 * H * H, 4 * H};
  ref_dims d = {B, T, I, H};
  ref_in in = {a.vals[P_X], a.vals[P_H0], a.vals[P_C0], a.vals[P_IH], a.vals[P_HH], a.vals[P_B]};
  double *want = malloc(sizeof(double) * a.n_out), *dout = malloc(sizeof(double) * a.n_out);
  ref_forward(&d, &in, want);
  int64_t at;
  double e = worst_rel(a.out, want, (int64_t)a.n_out, &at);
  CHECK_MSG(e <= 1e-5, "threaded forward: worst relative error %.3g at %lld", e, (long long)at);
  for (size_t i = 0; i < a.n_out; i++) dout[i] = 2.0f * tg_rng_uniform(31, 2, i) - 1.0f;
  double *g[P_N];
  for (int k = 0; k < P_N; k++) g[k] = calloc((size_t)n_in[k], sizeof(double));
  ref_grads gr = {g[P_X], g[P_H0], g[P_C0], g[P_IH], g[P_HH], g[P_B]};
  ref_backward(&d, &in, want, dout, &gr);
  for (int k = 0; k < P_N; k++) {
    e = worst_rel(a.grads + a.offset[k], g[k], n_in[k], &at);
    CHECK_MSG(e <= 1e-4, "threaded gradient of operand %d: worst relative error %.3g at %lld", k, e,
              (long long)at);
  }
  CHECK_MSG(a.ws_bytes >= sizeof(float) * (size_t)(B * T * 4 * H + 2 * B * H) &&
                a.ws_bytes < sizeof(float) * (size_t)(B * T * 4 * H + 2 * B * H) + 4096,
            "workspace %zu bytes for dG [B,T,4H] and dh, dc [B,H]", a.ws_bytes);
  /* repeatability: the same plan's results again, and with every buffer in its own memory */
  int ok_b = big_forward_backward(B, T, I, H, 0, &b), ok_c = big_forward_backward(B, T, I, H, 1, &c);
  CHECK(ok_b && ok_c);
  if (ok_b && ok_c) {
    CHECK_MSG(memcmp(a.out, b.out, sizeof(float) * a.n_out) == 0, "second forward differs bitwise");
    CHECK_MSG(memcmp(a.grads, b.grads, sizeof(float) * a.n_grads) == 0, "second backward differs bitwise");
    CHECK_MSG(memcmp(a.out, c.out, sizeof(float) * a.n_out) == 0, "no_reuse forward differs bitwise");
    CHECK_MSG(memcmp(a.grads, c.grads, sizeof(float) * a.n_grads) == 0,
              "no_reuse backward differs bitwise");
  }
  for (int k = 0; k < P_N; k++) free(g[k]);
  free(want);
  free(dout);
  big_free(&a);
  if (ok_b) big_free(&b);
  if (ok_c) big_free(&c);
  CHECK_OK(tg_set_threads(before));
}

/* One graph, two forward+backward passes: bitwise identical outputs and gradients. A small size
 * (serial kernels) and an inference plan, which needs no workspace. */
static void run_repeat_case(void) {
  const int64_t sx[3] = {3, 5, 4}, ss[2] = {3, 6}, sih[2] = {24, 4}, shh[2] = {24, 6}, sb[1] = {24};
  tg_init u = {TG_INIT_UNIFORM, -0.5f, 0.5f};
  tg_store *s = tg_store_new(tg_cpu(0), 3);
  tg_graph *g = tg_graph_new(s, "lstm_repeat");
  tg_tensor *x = tg_param(g, "x", 3, sx, u);
  tg_tensor *h0 = tg_param(g, "h0", 2, ss, u), *c0 = tg_param(g, "c0", 2, ss, u);
  tg_tensor *w_ih = tg_param(g, "w_ih", 2, sih, u), *w_hh = tg_param(g, "w_hh", 2, shh, u);
  tg_tensor *y = tg_lstm(g, x, h0, c0, w_ih, w_hh, tg_param(g, "b", 1, sb, u));
  tg_tensor *loss = tg_mean(g, tg_slice(g, y, 2, 0, 6)); /* mean of every h */
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.training = 1;
  CHECK_OK(loss ? tg_graph_plan(g, &o) : tg_graph_status(g));
  size_t n = tg_store_numel(s), ny = (size_t)tg_numel(y);
  float *g1 = malloc(n * sizeof(float)), *y1 = malloc(ny * sizeof(float));
  CHECK_OK(tg_graph_run(g));
  CHECK_OK(tg_graph_backward(g, loss));
  memcpy(g1, tg_store_grads(s), n * sizeof(float));
  memcpy(y1, y->data, ny * sizeof(float));
  float loss1 = *(const float *)loss->data;
  CHECK_OK(tg_graph_run(g));
  CHECK_OK(tg_graph_backward(g, loss));
  CHECK_MSG(memcmp(y1, y->data, ny * sizeof(float)) == 0, "second forward differs bitwise");
  CHECK_MSG(memcmp(g1, tg_store_grads(s), n * sizeof(float)) == 0, "second backward differs bitwise");
  double gsum = 0.0;
  for (size_t i = 0; i < n; i++) gsum += fabs(g1[i]);
  CHECK_MSG(gsum > 0.0, "the gradients are all zero");
  CHECK(tg_graph_stats(g).workspace_bytes >= sizeof(float) * (3 * 5 * 24 + 2 * 3 * 6));
  o.training = 0;
  CHECK_OK(tg_graph_plan(g, &o));
  CHECK_MSG(tg_graph_stats(g).workspace_bytes == 0, "inference plan has a %zu-byte workspace",
            tg_graph_stats(g).workspace_bytes);
  CHECK_OK(tg_graph_run(g)); /* y is not an output here, so compare the loss */
  CHECK_MSG(memcmp(&loss1, loss->data, sizeof loss1) == 0,
            "inference loss %.9g differs from the training one %.9g", (double)*(const float *)loss->data,
            (double)loss1);
  free(g1);
  free(y1);
  tg_graph_free(g);
  tg_store_free(s);
}

/* ---- build errors ---- */

/* Inputs: x [2, 3, 4] f32, xi [2, 3, 4] i32, x2 [6, 4] f32, w_ih [24, 4], w_ih_bad [20, 4] and
 * w_ih_i [24, 5], w_hh [24, 6], w_hh_bad [20, 6], h0/c0 [2, 6], h0_bad [3, 6], bias [24], bias_bad [20]. */
typedef struct err_env {
  tg_graph *g;
  tg_tensor *x, *xi, *x2, *w_ih, *w_ih_bad, *w_ih_i, *w_hh, *w_hh_bad, *h0, *c0, *h0_bad, *bias, *bias_bad;
} err_env;

static err_env err_env_new(void) {
  const int64_t sx[3] = {2, 3, 4}, sx2[2] = {6, 4}, sih[2] = {24, 4}, sihb[2] = {20, 4}, sihi[2] = {24, 5},
                shh[2] = {24, 6}, shhb[2] = {20, 6}, ss[2] = {2, 6}, ssb[2] = {3, 6}, sb[1] = {24},
                sbb[1] = {20};
  err_env e;
  e.g = tg_graph_new(NULL, "lstm_errors");
  e.x = tg_input(e.g, "x", TG_F32, 3, sx);
  e.xi = tg_input(e.g, "xi", TG_I32, 3, sx);
  e.x2 = tg_input(e.g, "x2", TG_F32, 2, sx2);
  e.w_ih = tg_input(e.g, "w_ih", TG_F32, 2, sih);
  e.w_ih_bad = tg_input(e.g, "w_ih_bad", TG_F32, 2, sihb);
  e.w_ih_i = tg_input(e.g, "w_ih_i", TG_F32, 2, sihi);
  e.w_hh = tg_input(e.g, "w_hh", TG_F32, 2, shh);
  e.w_hh_bad = tg_input(e.g, "w_hh_bad", TG_F32, 2, shhb);
  e.h0 = tg_input(e.g, "h0", TG_F32, 2, ss);
  e.c0 = tg_input(e.g, "c0", TG_F32, 2, ss);
  e.h0_bad = tg_input(e.g, "h0_bad", TG_F32, 2, ssb);
  e.bias = tg_input(e.g, "bias", TG_F32, 1, sb);
  e.bias_bad = tg_input(e.g, "bias_bad", TG_F32, 1, sbb);
  return e;
}

static void test_build_errors(void) {
  err_env e;
  tg_tensor *t;

  e = err_env_new(); /* the valid call, so the failures below are the operands' fault */
  t = tg_lstm(e.g, e.x, e.h0, e.c0, e.w_ih, e.w_hh, e.bias);
  CHECK_MSG(t && t->ndim == 3 && t->shape[0] == 2 && t->shape[1] == 3 && t->shape[2] == 36,
            "valid lstm: %s", tg_last_error());
  tg_graph_free(e.g);

  e = err_env_new();
  t = tg_lstm(e.g, e.x, NULL, NULL, e.w_ih_bad, e.w_hh, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "w_ih [20, 4] with Hd 6",
                        (const char *const[]){"lstm", "w_ih", "'w_ih_bad'", "[20, 4]", "[24, 4]", "Hd=6",
                                              NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x, NULL, NULL, e.w_ih_i, e.w_hh, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "w_ih [24, 5] with I 4",
                        (const char *const[]){"lstm", "'w_ih_i'", "[24, 5]", "[24, 4]", "I=4", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x, e.h0, NULL, e.w_ih, e.w_hh, e.bias);
  oc_expect_build_error(e.g, t, TG_ERR_INVALID, "h0 without c0",
                        (const char *const[]){"lstm", "h0", "'h0'", "without c0", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x, NULL, e.c0, e.w_ih, e.w_hh, e.bias);
  oc_expect_build_error(e.g, t, TG_ERR_INVALID, "c0 without h0",
                        (const char *const[]){"lstm", "'c0'", "without h0", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.xi, NULL, NULL, e.w_ih, e.w_hh, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "i32 x",
                        (const char *const[]){"lstm", "x", "'xi'", "i32", "f32", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x2, NULL, NULL, e.w_ih, e.w_hh, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "2-D x",
                        (const char *const[]){"lstm", "'x2'", "[6, 4]", "[B, T, I]", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x, NULL, NULL, e.w_ih, e.w_hh_bad, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "w_hh [20, 6]",
                        (const char *const[]){"lstm", "w_hh", "'w_hh_bad'", "[20, 6]", "[4*Hd, Hd]", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x, e.h0_bad, e.c0, e.w_ih, e.w_hh, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "h0 batch 3 vs x batch 2",
                        (const char *const[]){"lstm", "h0", "'h0_bad'", "[3, 6]", "[2, 6]", "B=2", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x, e.h0, e.h0_bad, e.w_ih, e.w_hh, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "c0 batch 3",
                        (const char *const[]){"lstm", "c0", "'h0_bad'", "[3, 6]", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x, NULL, NULL, e.w_ih, e.w_hh, e.bias_bad);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "bias [20]",
                        (const char *const[]){"lstm", "bias", "'bias_bad'", "[20]", "[24]", NULL});

  e = err_env_new();
  t = tg_lstm(e.g, e.x, NULL, NULL, NULL, e.w_hh, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_INVALID, "NULL w_ih", (const char *const[]){"lstm", NULL});

  /* the first error sticks */
  e = err_env_new();
  t = tg_lstm(e.g, e.xi, NULL, NULL, e.w_ih, e.w_hh, NULL);
  t = tg_lstm(e.g, e.x, NULL, NULL, e.w_ih, e.w_hh, NULL);
  oc_expect_build_error(e.g, t, TG_ERR_SHAPE, "sticky error", (const char *const[]){"'xi'", NULL});
}

int main(void) {
  unsigned long long seed = tg_test_seed(20240612ull);
  run_op_cases(seed);
  run_threaded_case(1);
  run_threaded_case(3);
  run_repeat_case();
  test_build_errors();
  return tg_test_finish();
}
