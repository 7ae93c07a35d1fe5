/* DQN: replay ring and sampling, targets and Huber/MSE gradients by hand, PyTorch's twin, CartPole learning, resume, cpu:1, NaN stop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "graph/backend.h"
#include "env/env_internal.h"
#include "agents/dqn_internal.h"
#include "support/check.h"
#include "support/files.h"
#include "support/stop_hook.h"
#include "tickgrad/rl_agents.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256];

/* ---- replay buffer ---- */

/* Transition i: obs (i, -i), next obs (i + 0.5, 0), action i % 3, reward 10 i, terminated when i % 4 == 3. */
static void transition(int i, float *s, float *s2, int32_t *a, float *r, uint8_t *d) {
  s[0] = (float)i, s[1] = (float)-i, s2[0] = (float)i + 0.5f, s2[1] = 0.0f;
  *a = i % 3, *r = 10.0f * (float)i, *d = (uint8_t)(i % 4 == 3);
}

static void add_range(rl_replay *rb, int from, int to) {
  for (int i = from; i < to; i++) {
    float s[2], s2[2], r;
    int32_t a;
    uint8_t d;
    transition(i, s, s2, &a, &r, &d);
    rl_replay_add(rb, 1, s, s2, &a, &r, &d);
  }
}

static void test_replay_ring(void) {
  rl_replay rb;
  CHECK_OK(rl_replay_init(&rb, 5, 2, 7));
  add_range(&rb, 0, 3);
  CHECK(rb.size == 3 && rb.pos == 3);
  add_range(&rb, 3, 7); /* 7 transitions into 5 slots: 5 and 6 overwrite 0 and 1 */
  CHECK(rb.size == 5 && rb.pos == 2);
  int want[5] = {5, 6, 2, 3, 4};
  for (int k = 0; k < 5; k++) {
    float s[2], s2[2], r;
    int32_t a;
    uint8_t d;
    transition(want[k], s, s2, &a, &r, &d);
    CHECK_MSG(rb.obs[2 * k] == s[0] && rb.obs[2 * k + 1] == s[1] && rb.next_obs[2 * k] == s2[0] &&
              rb.action[k] == a && rb.reward[k] == r && rb.term[k] == (float)d,
              "slot %d should hold transition %d", k, want[k]);
  }
  /* a vectorised add of 3 rows is three single adds */
  float s3[6] = {1, 2, 3, 4, 5, 6}, n3[6] = {7, 8, 9, 10, 11, 12}, r3[3] = {1, 2, 3};
  int32_t a3[3] = {0, 1, 2};
  uint8_t d3[3] = {0, 1, 0};
  rl_replay_add(&rb, 3, s3, n3, a3, r3, d3);
  CHECK(rb.pos == 0 && rb.obs[2 * 4] == 5 && rb.next_obs[2 * 3 + 1] == 10 && rb.term[3] == 1.0f && rb.action[4] == 2);
  rl_replay_free(&rb);
}

/* The row each draw took, recovered from the sampled reward (10 * transition). */
static void drawn_rows(const rl_batch *b, int *rows) {
  for (int64_t j = 0; j < b->b; j++) rows[j] = (int)(b->reward[j] / 10.0f);
}

static void test_replay_sampling(void) {
  rl_replay a, b;
  rl_batch x, y, z;
  CHECK_OK(rl_replay_init(&a, 100, 2, 11));
  CHECK_OK(rl_replay_init(&b, 100, 2, 11));
  CHECK_OK(rl_batch_init(&x, 6, 2, 3));
  CHECK_OK(rl_batch_init(&y, 3, 2, 3));
  CHECK_OK(rl_batch_init(&z, 3, 2, 3));
  add_range(&a, 0, 10); /* 10 of 100 slots filled: draws stay in [0, 10) */
  add_range(&b, 0, 10);
  int rx[6], ry[3], rz[3];
  rl_replay_sample(&a, &x);
  rl_replay_sample(&b, &y); /* the same draws in two batches of 3 (crossing a Philox counter) */
  rl_replay_sample(&b, &z);
  drawn_rows(&x, rx);
  drawn_rows(&y, ry);
  drawn_rows(&z, rz);
  int same = 1, in_range = 1, consistent = 1;
  for (int j = 0; j < 6; j++) {
    same &= rx[j] == (j < 3 ? ry[j] : rz[j - 3]);
    in_range &= rx[j] >= 0 && rx[j] < 10;
    float s[2], s2[2], r;
    int32_t act;
    uint8_t d;
    transition(rx[j], s, s2, &act, &r, &d);
    consistent &= x.s[2 * j] == s[0] && x.s2[2 * j] == s2[0] && x.action[j] == act && x.term[j] == (float)d;
    for (int k = 0; k < 3; k++) consistent &= x.onehot[3 * j + k] == (k == act ? 1.0f : 0.0f);
  }
  CHECK_MSG(same, "6 draws at once differ from 3 + 3");
  CHECK(in_range && consistent);
  CHECK(a.draws == 6 && b.draws == 6);
  /* uniform with replacement: 20,000 draws over 10 rows, each count within 10% of 2,000 */
  rl_batch big;
  CHECK_OK(rl_batch_init(&big, 20000, 2, 3));
  rl_replay_sample(&a, &big);
  int count[10] = {0}, ok = 1;
  for (int64_t j = 0; j < big.b; j++) count[(int)(big.reward[j] / 10.0f)]++;
  for (int k = 0; k < 10; k++) ok &= abs(count[k] - 2000) < 200;
  CHECK_MSG(ok, "draw counts are not uniform: %d %d %d ...", count[0], count[1], count[2]);
  /* another seed draws other rows */
  rl_replay c;
  CHECK_OK(rl_replay_init(&c, 100, 2, 12));
  add_range(&c, 0, 10);
  rl_replay_sample(&c, &x);
  int rc[6], differ = 0;
  drawn_rows(&x, rc);
  for (int j = 0; j < 6; j++) differ |= rc[j] != rx[j];
  CHECK(differ);
  rl_batch_free(&big);
  rl_batch_free(&x);
  rl_batch_free(&y);
  rl_batch_free(&z);
  rl_replay_free(&a);
  rl_replay_free(&b);
  rl_replay_free(&c);
}

/* ---- the target and the loss gradients on a linear Q = W s + b (no hidden layer) ---- */

static rl_dqn_net_cfg linear_cfg(int double_q, int huber) {
  rl_dqn_net_cfg c;
  memset(&c, 0, sizeof c);
  c.dev = tg_cpu(0);
  c.obs_dim = 2;
  c.n_actions = 3;
  c.batch = 4;
  c.n_act = 1;
  c.double_q = double_q;
  c.huber = huber;
  c.gamma = 0.9f;
  c.optim = tg_optim_defaults(TG_ADAM);
  c.optim.lr = 0.01f;
  c.seed = 3;
  return c;
}

static void set_linear(tg_store *s, const float w[6], const float b[3]) {
  float *v = tg_store_values(s);
  tg_param_info pw = tg_store_param(s, tg_store_find(s, "q.0.weight")), pb = tg_store_param(s, tg_store_find(s, "q.0.bias"));
  memcpy(v + pw.offset, w, 6 * sizeof(float));
  memcpy(v + pb.offset, b, 3 * sizeof(float));
}

static const float W_ON[6] = {1, 0, 0, 1, 1, 1}, B_ON[3] = {0, 0, -0.5f};
static const float W_TG[6] = {2, 0, 0, -1, 0.5f, 0.5f}, B_TG[3] = {0.1f, 0.2f, 0.3f};

static double lin(const float *w, const float *b, const float *s, int a) { return (double)w[2 * a] * s[0] + (double)w[2 * a + 1] * s[1] + b[a]; }

/* y by hand: the online net picks (first maximum), the target net values; plain DQN takes the target's max. */
static double hand_target(const float *s2, float r, float d, int double_q) {
  int pick = 0;
  for (int a = 1; a < 3; a++) {
    const float *w = double_q ? W_ON : W_TG, *b = double_q ? B_ON : B_TG;
    if (lin(w, b, s2, a) > lin(w, b, s2, pick)) pick = a;
  }
  return (double)r + 0.9 * lin(W_TG, B_TG, s2, pick) * (1.0 - d);
}

static void test_targets(int double_q) {
  rl_dqn_net n;
  rl_dqn_net_cfg c = linear_cfg(double_q, 0);
  CHECK_OK(rl_dqn_net_open(&n, &c));
  set_linear(n.base.store, W_ON, B_ON);
  set_linear(n.target, W_TG, B_TG);
  /* rows chosen so that the online argmax differs from the target's (row 0, 2) and ties pick the first (2, 3) */
  const float s2[8] = {1, 2, 3, -1, -1, -1, 0.5f, 0.5f}, r[4] = {1, -1, 0.5f, 2}, d[4] = {0, 0, 0, 1};
  memcpy(n.hb.s2, s2, sizeof s2);
  memcpy(n.hb.reward, r, sizeof r);
  memcpy(n.hb.term, d, sizeof d);
  CHECK_OK(rl_dqn_net_targets(&n));
  for (int b = 0; b < 4; b++) {
    double want = hand_target(s2 + 2 * b, r[b], d[b], double_q);
    CHECK_MSG(fabs(n.hy[b] - want) < 1e-5, "%s target row %d: %.7g, by hand %.7g", double_q ? "double" : "plain", b,
              (double)n.hy[b], want);
  }
  /* the two rules really differ on row 0 (1.8 vs 2.1) and row 2 */
  CHECK(fabs(hand_target(s2, r[0], 0, 1) - hand_target(s2, r[0], 0, 0)) > 0.2);
  rl_dqn_net_close(&n);
}

/* One step with y = r (every row terminated): loss, mean Q and the gradients of W and b by hand. */
static void test_loss_grads(int huber) {
  rl_dqn_net n;
  rl_dqn_net_cfg c = linear_cfg(1, huber);
  CHECK_OK(rl_dqn_net_open(&n, &c));
  set_linear(n.base.store, W_ON, B_ON);
  const float s[8] = {1, 2, 3, -1, -1, -1, 0.5f, 0.25f}, r[4] = {0.5f, 5, -0.8f, 0.1f}, d[4] = {1, 1, 1, 1};
  const int32_t a[4] = {2, 0, 1, 1};
  memcpy(n.hb.s, s, sizeof s);
  memcpy(n.hb.s2, s, sizeof s);
  memcpy(n.hb.reward, r, sizeof r);
  memcpy(n.hb.term, d, sizeof d);
  memset(n.hb.onehot, 0, 12 * sizeof(float));
  for (int b = 0; b < 4; b++) n.hb.onehot[3 * b + a[b]] = 1.0f;
  double gw[6] = {0}, gb[3] = {0}, loss = 0, meanq = 0;
  for (int b = 0; b < 4; b++) { /* d = Q(s, a) - y: 2.5, -2, 1.8, -1.05: Huber clips all but one */
    double q = lin(W_ON, B_ON, s + 2 * b, a[b]), e = q - r[b], ae = fabs(e);
    double g = huber ? (e < -1 ? -1 : e > 1 ? 1 : e) / 4.0 : 2.0 * e / 4.0;
    loss += (huber ? (ae < 1 ? 0.5 * e * e : ae - 0.5) : e * e) / 4.0;
    meanq += q / 4.0;
    gw[2 * a[b]] += g * s[2 * b], gw[2 * a[b] + 1] += g * s[2 * b + 1], gb[a[b]] += g;
  }
  float l = 0, mq = 0;
  CHECK_OK(rl_dqn_net_learn_batch(&n, &l, &mq));
  CHECK_MSG(fabs(l - loss) < 1e-5 && fabs(mq - meanq) < 1e-5, "%s loss %.7g (hand %.7g), mean Q %.7g (hand %.7g)",
            huber ? "huber" : "mse", (double)l, loss, (double)mq, meanq);
  tg_store *st = n.base.store;
  const float *g = tg_store_grads(st), *v = tg_store_values(st);
  tg_param_info pw = tg_store_param(st, tg_store_find(st, "q.0.weight")), pb = tg_store_param(st, tg_store_find(st, "q.0.bias"));
  int ok = 1, moved = 1;
  for (int k = 0; k < 6; k++) {
    ok &= fabs(g[pw.offset + k] - gw[k]) < 1e-5;
    /* Adam's first step moves every parameter with a gradient by lr against its sign */
    if (fabs(gw[k]) > 1e-6) moved &= fabs((W_ON[k] - v[pw.offset + k]) - 0.01 * (gw[k] > 0 ? 1 : -1)) < 1e-5;
  }
  for (int k = 0; k < 3; k++) ok &= fabs(g[pb.offset + k] - gb[k]) < 1e-5;
  CHECK_MSG(ok, "%s gradients differ from the hand computation", huber ? "huber" : "mse");
  CHECK_MSG(moved, "%s: the Adam step did not move the weights by lr", huber ? "huber" : "mse");
  rl_dqn_net_close(&n);
}

/* Target updates: a copy, and Polyak in float32. */
static void test_target_update(void) {
  rl_dqn_net n;
  rl_dqn_net_cfg c = linear_cfg(0, 0);
  CHECK_OK(rl_dqn_net_open(&n, &c));
  size_t count = tg_store_numel(n.base.store);
  CHECK(memcmp(tg_store_values(n.base.store), tg_store_values(n.target), count * sizeof(float)) == 0); /* starts as a copy */
  set_linear(n.base.store, W_ON, B_ON);
  set_linear(n.target, W_TG, B_TG);
  CHECK_OK(rl_dqn_net_update_target(&n, 0.25f));
  tg_param_info pw = tg_store_param(n.target, tg_store_find(n.target, "q.0.weight"));
  const float *t = tg_store_values(n.target) + pw.offset;
  int ok = 1;
  for (int k = 0; k < 6; k++) ok &= t[k] == 0.25f * W_ON[k] + 0.75f * W_TG[k];
  CHECK(ok);
  CHECK_OK(rl_dqn_net_update_target(&n, 1.0f));
  CHECK(memcmp(tg_store_values(n.base.store), tg_store_values(n.target), count * sizeof(float)) == 0);
  CHECK_STATUS(rl_dqn_net_update_target(&n, 0.0f), TG_ERR_INVALID);
  rl_dqn_net_close(&n);
}

/* Acting and learning allocate nothing once the networks are open. */
static void test_no_alloc(void) {
  rl_dqn_net n;
  rl_replay rb;
  rl_dqn_net_cfg c = linear_cfg(1, 1);
  c.n_hidden = 2, c.hidden[0] = 16, c.hidden[1] = 8;
  CHECK_OK(rl_dqn_net_open(&n, &c));
  CHECK_OK(rl_replay_init(&rb, 50, 2, 1));
  add_range(&rb, 0, 50);
  float obs[2] = {0.1f, 0.2f}, loss;
  const float *q;
  uint64_t before = tg_alloc_count();
  for (int i = 0; i < 20; i++) {
    CHECK_OK(rl_dqn_net_learn(&n, &rb, &loss, NULL));
    CHECK_OK(rl_dqn_net_q(&n, obs, &q));
  }
  CHECK_MSG(tg_alloc_count() == before, "%llu heap allocations in 20 steps", (unsigned long long)(tg_alloc_count() - before));
  rl_replay_free(&rb);
  rl_dqn_net_close(&n);
}

/* ---- PyTorch's twin: three Double DQN + Huber + Adam steps and a Polyak update (reference/dqn_step.py) ---- */

static const tg_tensor *need(const tg_safetensors *f, const char *name) {
  const tg_tensor *t = tg_safetensors_find(f, name);
  CHECK_MSG(t != NULL, "reference tensor '%s' is missing", name);
  return t;
}

/* Every parameter of s against prefix + name in f (values copied from s's device); the largest absolute difference. */
static double max_diff(tg_store *s, const tg_safetensors *f, const char *prefix) {
  double worst = 0;
  size_t count = tg_store_numel(s);
  float *v = malloc(count * sizeof(float));
  const tg_backend *be = tg_backend_for(tg_store_device(s).kind);
  if (!v || be->to_host(tg_store_device(s), v, tg_store_values(s), count * sizeof(float)) != TG_OK) worst = INFINITY;
  for (int i = 0; i < tg_store_count(s) && isfinite(worst); i++) {
    tg_param_info p = tg_store_param(s, i);
    char name[128];
    snprintf(name, sizeof name, "%s%s", prefix, p.name);
    const tg_tensor *t = need(f, name);
    if (!t || (size_t)tg_numel(t) != p.numel) worst = INFINITY;
    for (size_t e = 0; isfinite(worst) && e < p.numel; e++)
      worst = fmax(worst, fabs((double)v[p.offset + e] - ((const float *)t->data)[e]));
  }
  free(v);
  return worst;
}

/* Parameter values of s from prefix + name in f, copied to s's device. */
static void set_from(tg_store *s, const tg_safetensors *f, const char *prefix) {
  const tg_backend *be = tg_backend_for(tg_store_device(s).kind);
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_param_info p = tg_store_param(s, i);
    char name[128];
    snprintf(name, sizeof name, "%s%s", prefix, p.name);
    const tg_tensor *t = need(f, name);
    if (t && (size_t)tg_numel(t) == p.numel)
      CHECK_OK(be->from_host(tg_store_device(s), tg_store_values(s) + p.offset, t->data, p.numel * sizeof(float)));
  }
}

static void test_torch_twin(tg_device dev) {
  char path[1024];
  const char *src = getenv("TG_SOURCE_DIR");
  snprintf(path, sizeof path, "%s/reference/data/dqn_step.safetensors", src ? src : "..");
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(path, &f));
  if (!f) return;
  rl_dqn_net n;
  rl_dqn_net_cfg c = linear_cfg(1, 1);
  c.obs_dim = 4, c.batch = 8, c.n_hidden = 2, c.hidden[0] = c.hidden[1] = 16, c.gamma = 0.99f;
  c.dev = dev;
  char dname[16];
  tg_device_str(dev, dname, sizeof dname);
  CHECK_OK(rl_dqn_net_open(&n, &c));
  set_from(n.base.store, f, "init.");
  set_from(n.target, f, "init.");
  const tg_tensor *losses = need(f, "losses");
  for (int k = 0; k < 3 && losses; k++) {
    char name[32];
    const tg_tensor *t[5];
    const char *parts[5] = {"s", "s2", "a", "r", "d"};
    for (int i = 0; i < 5; i++) {
      snprintf(name, sizeof name, "b%d.%s", k, parts[i]);
      if (!(t[i] = need(f, name))) return;
    }
    memcpy(n.hb.s, t[0]->data, 32 * sizeof(float));
    memcpy(n.hb.s2, t[1]->data, 32 * sizeof(float));
    memset(n.hb.onehot, 0, 24 * sizeof(float));
    for (int b = 0; b < 8; b++) n.hb.onehot[3 * b + ((const int32_t *)t[2]->data)[b]] = 1.0f;
    memcpy(n.hb.reward, t[3]->data, 8 * sizeof(float));
    memcpy(n.hb.term, t[4]->data, 8 * sizeof(float));
    float loss = 0, want = ((const float *)losses->data)[k];
    CHECK_OK(rl_dqn_net_learn_batch(&n, &loss, NULL));
    CHECK_MSG(fabs(loss - want) <= 1e-5 * fmax(1.0, fabs(want)), "%s step %d: loss %.8g, PyTorch %.8g", dname, k,
              (double)loss, (double)want);
    if (k == 1) CHECK_OK(rl_dqn_net_update_target(&n, 0.5f));
  }
  double don = max_diff(n.base.store, f, "final."), dtg = max_diff(n.target, f, "final_target.");
  CHECK_MSG(don < 1e-5 && dtg < 1e-5, "%s: final weights differ from PyTorch's by %.3g (online), %.3g (target)", dname,
            don, dtg);
  printf("  %s matched PyTorch's 3 Double DQN steps: weights within %.2g (online), %.2g (target)\n", dname, don, dtg);
  rl_dqn_net_close(&n);
  tg_safetensors_free(f);
}

/* ---- config ---- */

static void test_config(void) {
  tg_dqn_config c = tg_dqn_defaults();
  CHECK(c.total_timesteps == 500000 && c.batch_size == 128 && c.n_hidden == 2 && c.hidden[0] == 120 && c.hidden[1] == 84);
  CHECK(c.double_q == 0 && c.huber == 0 && c.tau == 1.0f && c.learning_starts == 10000 && c.train_frequency == 10);
  CHECK_OK(tg_dqn_config_check(&c));
  CHECK_OK(tg_dqn_config_set(&c, "hidden", "64,32,16"));
  CHECK(c.n_hidden == 3 && c.hidden[2] == 16);
  CHECK_OK(tg_dqn_config_set(&c, "learning_rate", "1e-3"));
  CHECK(c.learning_rate == 1e-3f);
  CHECK_STATUS(tg_dqn_config_set(&c, "gamma", "1.5"), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "gamma") != NULL);
  CHECK_STATUS(tg_dqn_config_set(&c, "batch_size", "2.5"), TG_ERR_INVALID);
  CHECK_STATUS(tg_dqn_config_set(&c, "hidden", "64,x"), TG_ERR_INVALID);
  CHECK_STATUS(tg_dqn_config_set(&c, "no_such_key", "1"), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "no_such_key") != NULL);
  c = tg_dqn_defaults();
  c.batch_size = 20000;
  CHECK_STATUS(tg_dqn_config_check(&c), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "buffer_size") != NULL);
}

/* ---- training on CartPole ---- */

/* A config that learns CartPole quickly: 64-64, Adam 1e-3, a gradient step every env step from step 1000. */
static tg_dqn_config quick_config(int64_t total) {
  tg_dqn_config c = tg_dqn_defaults();
  c.total_timesteps = total;
  c.learning_starts = 1000;
  c.train_frequency = 1;
  c.batch_size = 64;
  c.learning_rate = 1e-3f;
  c.target_network_frequency = 200;
  c.exploration_fraction = 0.2f;
  c.end_e = 0.02f;
  c.hidden[0] = c.hidden[1] = 64;
  c.log_every = 10000;
  c.seed = 1;
  return c;
}

static void run_dir(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", g_tmp, name); }

/* Field col of data row `row` of a CSV file (NaN when absent or empty). */
static double csv_field(const char *path, int row, int col) {
  size_t len = 0;
  char *csv = (char *)tg_test_read_file(path, &len);
  double v = NAN;
  char *line = csv ? strchr(csv, '\n') : NULL; /* skip the header */
  for (int r = 0; line && r < row; r++) line = strchr(line + 1, '\n');
  if (line) {
    char *p = line + 1;
    for (int k = 0; k < col && p; k++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    if (p && *p && *p != '\n') v = strtod(p, NULL);
  }
  free(csv);
  return v;
}

static void test_cartpole_learns(tg_device dev) {
  tg_env *env;
  char dir[300], dname[16], name[32];
  CHECK_OK(tg_env_cartpole_new(1, 1, 500, &env));
  tg_dqn_config c = quick_config(30000);
  c.device = dev;
  tg_dqn_result r;
  tg_device_str(dev, dname, sizeof dname);
  snprintf(name, sizeof name, "learn_%s", dev.kind == TG_CUDA ? "cuda" : "cpu");
  run_dir(dir, sizeof dir, name);
  CHECK_OK(tg_dqn_train(&c, env, dir, &r));
  printf("  %s cartpole 30k steps: mean return of the last 100 episodes %.1f (%lld episodes, %lld updates, %.0f env steps/s)\n",
         dname, r.mean_return, (long long)r.episodes, (long long)r.grad_steps, r.env_steps_per_s);
  CHECK_MSG(r.mean_return > 100.0, "mean return %.1f; a random policy gets about 22", r.mean_return);
  CHECK(r.steps == 30000 && r.env_steps == 30000 && r.grad_steps == 30000 - 1000 - 1);
  char path[400];
  snprintf(path, sizeof path, "%s/metrics.csv", dir);
  double first = csv_field(path, 0, 3), last = csv_field(path, 2, 3);
  CHECK_MSG(last == r.mean_return && last > first + 50.0, "metrics.csv mean_return %.1f -> %.1f", first, last);
  /* a fresh run refuses a folder that holds one */
  CHECK_STATUS(tg_dqn_train(&c, env, dir, &r), TG_ERR_INVALID);
  /* the greedy policy of the run */
  tg_dqn_policy *p = NULL;
  CHECK_OK(tg_dqn_policy_load(dir, tg_env_spec_of(env), dev, &p));
  float obs[4];
  int32_t a = -1;
  CHECK_OK(tg_env_reset(env, obs));
  CHECK_OK(tg_dqn_policy_act(p, obs, &a));
  CHECK(a == 0 || a == 1);
  tg_dqn_policy_free(p);
  tg_env_free(env);
}

static int same_file(const char *a, const char *b) {
  size_t la = 0, lb = 0;
  unsigned char *x = tg_test_read_file(a, &la), *y = tg_test_read_file(b, &lb);
  int same = x && y && la == lb && memcmp(x, y, la) == 0;
  free(x);
  free(y);
  return same;
}

/* Stop half way (a checkpoint), resume, and end with the files of an uninterrupted run, bit for bit. */
static void test_resume(void) {
  tg_dqn_config c = quick_config(6000);
  c.buffer_size = 1500; /* the ring wraps before the stop */
  c.learning_starts = 500;
  c.train_frequency = 2;
  c.target_network_frequency = 100;
  c.tau = 0.5f;
  c.double_q = 1;
  c.huber = 1;
  c.exploration_fraction = 0.5f;
  c.log_every = 1000;
  c.ckpt_every = 0;
  char full[300], part[300], a[400], b[400];
  run_dir(full, sizeof full, "full");
  run_dir(part, sizeof part, "part");
  tg_env *e1, *e2, *e3;
  tg_dqn_result rf, rp, rr;
  CHECK_OK(tg_env_cartpole_new(2, 9, 500, &e1));
  CHECK_OK(tg_env_cartpole_new(2, 9, 500, &e2));
  CHECK_OK(tg_env_cartpole_new(2, 9, 500, &e3)); /* a fresh env object: its state comes from the checkpoint */
  CHECK_OK(tg_dqn_train(&c, e1, full, &rf));
  tg_dqn_config stop = c;
  stop.stop_after = 3500;
  CHECK_OK(tg_dqn_train(&stop, e2, part, &rp));
  CHECK(rp.steps == 3500 && !rp.interrupted);
  tg_dqn_config again = c;
  again.resume = 1;
  tg_status st = tg_dqn_train(&again, e3, part, &rr);
  CHECK_OK(st);
  CHECK(rr.steps == 6000 && rr.episodes == rf.episodes && rr.grad_steps == rf.grad_steps);
  CHECK(rr.mean_return == rf.mean_return);
  const char *files[4] = {"weights.safetensors", "target.safetensors", "optim.safetensors", "agent.safetensors"};
  for (int i = 0; i < 4; i++) {
    snprintf(a, sizeof a, "%s/%s", full, files[i]);
    snprintf(b, sizeof b, "%s/%s", part, files[i]);
    CHECK_MSG(same_file(a, b), "%s differs after resume", files[i]);
  }
  snprintf(a, sizeof a, "%s/metrics.csv", full);
  snprintf(b, sizeof b, "%s/metrics.csv", part);
  int differ = 0;
  for (int row = 0; row < 6; row++)
    for (int col = 0; col < 10; col++) { /* every column but the wall-clock rate */
      double x = csv_field(a, row, col), y = csv_field(b, row, col);
      if (!(x == y || (isnan(x) && isnan(y)))) differ++;
    }
  CHECK_MSG(differ == 0, "%d fields of metrics.csv differ after resume", differ);
  CHECK(csv_field(b, 5, 0) == 6000 && isnan(csv_field(b, 6, 0))); /* six rows, no more */
  /* a resumed run keeps its settings */
  tg_dqn_config changed = again;
  changed.learning_rate = 0.01f;
  CHECK_STATUS(tg_dqn_train(&changed, e3, part, &rr), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "learning_rate") != NULL);
  /* resuming a finished run does nothing */
  CHECK_OK(tg_dqn_train(&again, e3, part, &rr));
  CHECK(rr.steps == 6000 && rr.grad_steps == rf.grad_steps && rr.episodes == rf.episodes);
  snprintf(a, sizeof a, "%s/weights.safetensors", full);
  snprintf(b, sizeof b, "%s/weights.safetensors", part);
  CHECK(same_file(a, b));
  /* a stop request (raised while step 3000 logs) stops there with a checkpoint; the resume is bitwise too */
  char req[300];
  run_dir(req, sizeof req, "request");
  tg_dqn_config asked = c;
  asked.log = tg_test_stop_stream("step 3000/", 1);
  tg_stop_clear();
  tg_env *e4, *e5;
  CHECK_OK(tg_env_cartpole_new(2, 9, 500, &e4));
  CHECK_OK(tg_env_cartpole_new(2, 9, 500, &e5));
  CHECK_OK(tg_dqn_train(&asked, e4, req, &rp));
  fclose(asked.log);
  CHECK_MSG(rp.interrupted && rp.steps == 3000, "interrupted %d at step %lld", rp.interrupted, (long long)rp.steps);
  tg_stop_clear();
  asked.log = NULL;
  asked.resume = 1;
  CHECK_OK(tg_dqn_train(&asked, e5, req, &rr));
  CHECK(!rr.interrupted && rr.steps == 6000 && rr.episodes == rf.episodes && rr.mean_return == rf.mean_return);
  for (int i = 0; i < 4; i++) {
    snprintf(a, sizeof a, "%s/%s", full, files[i]);
    snprintf(b, sizeof b, "%s/%s", req, files[i]);
    CHECK_MSG(same_file(a, b), "%s differs after a stop request and resume", files[i]);
  }
  tg_env_free(e4);
  tg_env_free(e5);
  tg_env_free(e1);
  tg_env_free(e2);
  tg_env_free(e3);
}

/* cpu:1 takes the device path (inputs copied in, Q values and Polyak weights copied out): the same
 * run as on cpu:0, bit for bit, and its policy acts the same. */
static void test_device_path(void) {
  tg_dqn_config c = quick_config(3000);
  c.learning_starts = 300;
  c.target_network_frequency = 50;
  c.tau = 0.5f;
  c.double_q = 1;
  c.log_every = 1000;
  char d0[300], d1[300], a[400], b[400];
  run_dir(d0, sizeof d0, "cpu0");
  run_dir(d1, sizeof d1, "cpu1");
  tg_env *e0, *e1;
  tg_dqn_result r0, r1;
  CHECK_OK(tg_env_cartpole_new(3, 4, 500, &e0));
  CHECK_OK(tg_env_cartpole_new(3, 4, 500, &e1));
  CHECK_OK(tg_dqn_train(&c, e0, d0, &r0));
  c.device = tg_cpu(1);
  CHECK_OK(tg_dqn_train(&c, e1, d1, &r1));
  CHECK(r0.grad_steps == r1.grad_steps && r0.episodes == r1.episodes && r0.grad_steps > 2000);
  const char *files[3] = {"weights.safetensors", "target.safetensors", "optim.safetensors"};
  for (int i = 0; i < 3; i++) {
    snprintf(a, sizeof a, "%s/%s", d0, files[i]);
    snprintf(b, sizeof b, "%s/%s", d1, files[i]);
    CHECK_MSG(same_file(a, b), "%s differs between cpu:0 and cpu:1", files[i]);
  }
  tg_dqn_policy *p0 = NULL, *p1 = NULL;
  CHECK_OK(tg_dqn_policy_load(d0, tg_env_spec_of(e0), tg_cpu(0), &p0));
  CHECK_OK(tg_dqn_policy_load(d0, tg_env_spec_of(e0), tg_cpu(1), &p1));
  float obs[12];
  int32_t a0[3] = {-1, -1, -1}, a1[3] = {-2, -2, -2};
  CHECK_OK(tg_env_reset(e0, obs));
  CHECK_OK(tg_dqn_policy_act(p0, obs, a0));
  CHECK_OK(tg_dqn_policy_act(p1, obs, a1));
  CHECK(memcmp(a0, a1, sizeof a0) == 0 && a0[0] >= 0 && a0[0] < 2);
  tg_env_spec wrong = tg_env_spec_of(e0);
  wrong.obs_dim = 5;
  tg_dqn_policy *p2 = NULL;
  CHECK_STATUS(tg_dqn_policy_load(d0, wrong, tg_cpu(0), &p2), TG_ERR_INVALID);
  CHECK(p2 == NULL);
  tg_dqn_policy_free(p0);
  tg_dqn_policy_free(p1);
  tg_env_free(e0);
  tg_env_free(e1);
}

/* ---- a non-finite reward stops the run with TG_ERR_NUMERIC and keeps the last checkpoint ---- */

typedef struct nan_env {
  int64_t t;
} nan_env;

static tg_status nan_reset(tg_env *e, float *obs) {
  ((nan_env *)e->impl)->t = 0;
  obs[0] = obs[1] = 0.0f;
  return TG_OK;
}

/* Reward 1 until step 300, then NaN; episodes of 10 steps (truncated). */
static tg_status nan_step(tg_env *e, const void *actions, const tg_env_out *out) {
  nan_env *ne = e->impl;
  (void)actions;
  ne->t++;
  out->obs[0] = (float)(ne->t % 10) / 10.0f, out->obs[1] = 1.0f;
  if (out->final_obs) out->final_obs[0] = out->final_obs[1] = 0.5f;
  out->reward[0] = ne->t > 300 ? NAN : 1.0f;
  out->terminated[0] = 0;
  out->truncated[0] = ne->t % 10 == 0;
  if (out->ep_return) out->ep_return[0] = 10.0;
  if (out->ep_length) out->ep_length[0] = 10;
  return TG_OK;
}

static void nan_destroy(tg_env *e) { free(e->impl); }

static const tg_env_kind NAN_KIND = {.name = "nan_test", .reset = nan_reset, .step = nan_step, .destroy = nan_destroy};

static void test_nan_stop(void) {
  tg_env *e;
  tg_env_spec sp = {.n = 1, .obs_dim = 2, .n_actions = 2};
  CHECK_OK(tg_env_alloc(&NAN_KIND, sp, &e));
  e->impl = calloc(1, sizeof(nan_env));
  tg_dqn_config c = quick_config(2000);
  c.learning_starts = 50;
  c.buffer_size = 100;
  c.batch_size = 32;
  c.ckpt_every = 100;
  char dir[300], path[400];
  run_dir(dir, sizeof dir, "nan");
  tg_dqn_result r;
  CHECK_STATUS(tg_dqn_train(&c, e, dir, &r), TG_ERR_NUMERIC);
  CHECK_MSG(strstr(tg_last_error(), "step 3") && strstr(tg_last_error(), "checkpoint (step 300)"), "message: %s",
            tg_last_error());
  snprintf(path, sizeof path, "%s/agent.safetensors", dir);
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(path, &f));
  const char *step = f ? tg_safetensors_meta(f, "step") : NULL;
  CHECK(step && strcmp(step, "300") == 0);
  tg_safetensors_free(f);
  tg_env_free(e);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_dqn_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  tg_set_threads(1);
  test_replay_ring();
  test_replay_sampling();
  test_targets(1);
  test_targets(0);
  test_loss_grads(0);
  test_loss_grads(1);
  test_target_update();
  test_torch_twin(tg_cpu(0));
  test_torch_twin(tg_cpu(1)); /* the device path: inputs copied in, outputs copied out */
  test_no_alloc();
  test_config();
  test_cartpole_learns(tg_cpu(0));
  test_resume();
  test_device_path();
  test_nan_stop();
  if (tg_cuda_count() > 0) { /* only where a GPU works: the twin and a short CartPole run on cuda:0 */
    test_torch_twin(tg_cuda(0));
    test_cartpole_learns(tg_cuda(0));
  } else {
    printf("  cuda:0 cases skipped: %s\n", tg_cuda_why_none()[0] ? tg_cuda_why_none() : "no CUDA device");
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
