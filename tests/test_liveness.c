/* Arena reuse is invisible: a graph using most ops gives bitwise the same outputs and gradients
 * with liveness-based reuse as with every buffer in its own memory, in training and inference; guard bytes stay
 * intact in both layouts. */
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"

#define B 4
#define L 6
#define D 8
#define H 16
#define V 10

typedef struct net {
  tg_store *store;
  tg_graph *g;
  tg_tensor *loss, *probs;
} net;

/* x [B, L, D], tok [B, L] i32, cls [B*L] i64, y [B, L] -> scalar loss mixing every kind of op */
static tg_tensor *build(tg_graph *g, tg_tensor **probs) {
  int64_t sx[3] = {B, L, D}, st[2] = {B, L}, sc[1] = {B * L}, se[2] = {V, D}, sw1[2] = {H, D}, sw2[2] = {D, H};
  int64_t sd[1] = {D}, sh[1] = {H}, sq[2] = {D, D}, flat[2] = {B * L, D};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0}, one = {TG_INIT_ONES, 0, 0}, zero = {TG_INIT_ZEROS, 0, 0};
  tg_tensor *x = tg_input(g, "x", TG_F32, 3, sx), *tok = tg_input(g, "tok", TG_I32, 2, st);
  tg_tensor *cls = tg_input(g, "cls", TG_I64, 1, sc), *y = tg_input(g, "y", TG_F32, 2, st);
  tg_tensor *h = tg_add(g, x, tg_gather_rows(g, tg_param(g, "emb", 2, se, fan), tok));
  h = tg_layernorm(g, h, tg_param(g, "ln.g", 1, sd, one), tg_param(g, "ln.b", 1, sd, zero), 1e-5f);
  tg_tensor *u = tg_silu(g, tg_linear(g, h, tg_param(g, "w1", 2, sw1, fan), tg_param(g, "b1", 1, sh, fan)));
  u = tg_dropout(g, u, 0.25f);
  u = tg_linear(g, u, tg_param(g, "w2", 2, sw2, fan), NULL);
  h = tg_add(g, h, tg_scale(g, u, 0.5f));                       /* residual [B, L, D] */
  tg_tensor *att = tg_softmax(g, tg_matmul(g, h, h, 0, 1));     /* [B, L, L] */
  tg_tensor *mix = tg_matmul(g, att, h, 0, 0);                  /* [B, L, D] */
  tg_tensor *t = tg_transpose(g, mix, 1, 2);                    /* [B, D, L] */
  tg_tensor *parts[2] = {tg_slice(g, t, 1, 0, D / 2), tg_tanh(g, tg_slice(g, t, 1, D / 2, D / 2))};
  tg_tensor *c = tg_transpose(g, tg_concat(g, 2, parts, 1), 1, 2); /* [B, L, D] */
  c = tg_rmsnorm(g, c, tg_param(g, "rms.w", 1, sd, one), 1e-6f);
  tg_tensor *logits = tg_matmul(g, tg_reshape(g, c, 2, flat), tg_param(g, "proj", 2, sq, fan), 0, 0);
  *probs = tg_exp(g, tg_log_softmax(g, logits));
  tg_tensor *xent = tg_softmax_cross_entropy(g, logits, cls);
  tg_tensor *pred = tg_mean_last(g, tg_sigmoid(g, c));          /* [B, L] */
  tg_tensor *reg = tg_huber_loss(g, pred, y, 0.5f);
  tg_tensor *peak = tg_mean(g, tg_max_last(g, tg_relu(g, logits)));
  return tg_add(g, tg_add(g, xent, reg), tg_scale(g, peak, 0.1f));
}

static int make(net *n, int training, int no_reuse, uint64_t seed, void *const *data) {
  n->store = tg_store_new(tg_cpu(0), seed);
  n->g = tg_graph_new(n->store, "liveness");
  n->loss = build(n->g, &n->probs);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.training = training;
  o.no_reuse = no_reuse;
  o.poison = 1;
  o.guard_bytes = 32; /* also with reuse: no buffer may write into another's guard, at any time */
  if (!n->loss || tg_graph_plan(n->g, &o) != TG_OK) return 0;
  int64_t sx[3] = {B, L, D}, st[2] = {B, L}, sc[1] = {B * L};
  tg_tensor t[4];
  tg_tensor_view(&t[0], "x", tg_cpu(0), TG_F32, 3, sx, data[0]);
  tg_tensor_view(&t[1], "tok", tg_cpu(0), TG_I32, 2, st, data[1]);
  tg_tensor_view(&t[2], "cls", tg_cpu(0), TG_I64, 1, sc, data[2]);
  tg_tensor_view(&t[3], "y", tg_cpu(0), TG_F32, 2, st, data[3]);
  const char *names[4] = {"x", "tok", "cls", "y"};
  for (int i = 0; i < 4; i++)
    if (tg_graph_bind(n->g, names[i], &t[i]) != TG_OK) return 0;
  return 1;
}

static void compare(int training, uint64_t seed, void *const *data) {
  net a, b;
  CHECK_MSG(make(&a, training, 0, seed, data), "%s", tg_last_error());
  CHECK_MSG(make(&b, training, 1, seed, data), "%s", tg_last_error());
  tg_plan_stats sa = tg_graph_stats(a.g), sb = tg_graph_stats(b.g);
  printf("%s: arena %zu bytes with reuse, %zu without\n", training ? "training" : "inference", sa.arena_bytes,
         sb.arena_bytes);
  CHECK_MSG(sa.arena_bytes < sb.arena_bytes / 2, "reuse saved too little for the test to mean anything");
  for (int step = 0; step < 3; step++) { /* three steps: dropout masks change, the arena is reused */
    CHECK_OK(tg_graph_run(a.g));
    CHECK_OK(tg_graph_run(b.g));
    CHECK_MSG(memcmp(a.loss->data, b.loss->data, sizeof(float)) == 0, "loss differs at step %d", step);
    CHECK(memcmp(a.probs->data, b.probs->data, tg_nbytes(a.probs)) == 0);
    if (!training) continue;
    CHECK_OK(tg_graph_backward(a.g, a.loss));
    CHECK_OK(tg_graph_backward(b.g, b.loss));
    CHECK_OK(tg_graph_check_guards(a.g));
    CHECK_OK(tg_graph_check_guards(b.g));
    size_t bytes = tg_store_numel(a.store) * sizeof(float);
    CHECK_MSG(memcmp(tg_store_grads(a.store), tg_store_grads(b.store), bytes) == 0, "gradients differ at step %d", step);
    int nonzero = 0;
    for (int p = 0; p < tg_store_count(a.store); p++) {
      tg_tensor gp = tg_store_tensor(a.store, p, 1);
      int any = 0;
      for (int64_t i = 0; i < tg_numel(&gp); i++) any |= ((float *)gp.data)[i] != 0.0f;
      CHECK_MSG(any, "parameter %s got no gradient", gp.name);
      nonzero += any;
    }
    CHECK(nonzero == tg_store_count(a.store));
  }
  tg_graph_free(a.g);
  tg_graph_free(b.g);
  tg_store_free(a.store);
  tg_store_free(b.store);
}

int main(void) {
  uint64_t seed = tg_test_seed(3);
  static float x[B * L * D], y[B * L];
  static int32_t tok[B * L];
  static int64_t cls[B * L];
  for (int i = 0; i < B * L * D; i++) x[i] = 2.0f * tg_rng_uniform(seed, 1, (uint64_t)i) - 1.0f;
  for (int i = 0; i < B * L; i++) {
    y[i] = tg_rng_uniform(seed, 2, (uint64_t)i);
    tok[i] = (int32_t)(tg_rng_uniform(seed, 3, (uint64_t)i) * V) % V;
    cls[i] = (int64_t)(tg_rng_uniform(seed, 4, (uint64_t)i) * D) % D;
  }
  void *data[4] = {x, tok, cls, y};
  compare(1, seed, data);
  compare(0, seed, data);
  return tg_test_finish();
}
