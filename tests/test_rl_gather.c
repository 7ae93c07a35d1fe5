/* Trading windows gathered on the agent's device: window_rows by hand, and DQN / PPO runs identical to the copying env's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/rl.h"
#include "tickgrad/rl_agents.h"
#include "tickgrad/synth.h"
#include "tickgrad/tickgrad.h"

#define WINDOW 6
#define BARS 3000

static char g_tmp[64];

/* ---- (a) window_rows ---- */

/* A graph t [4] f32 -> window_rows (W 4, 10 rows) -> gather_rows of table [10, 2]. */
typedef struct wr_graph {
  tg_store *s;
  tg_graph *g;
  tg_tensor *idx, *rows;
  float table[20]; /* [10, 2]: row r is (r, -r) */
} wr_graph;

static void wr_open(wr_graph *w) {
  memset(w, 0, sizeof *w);
  for (int r = 0; r < 10; r++) w->table[2 * r] = (float)r, w->table[2 * r + 1] = (float)-r;
  w->s = tg_store_new(tg_cpu(0), 1);
  w->g = tg_graph_new(w->s, "window_rows_test");
  int64_t ts[1] = {4}, tab[2] = {10, 2};
  w->idx = tg_window_rows(w->g, tg_input(w->g, "t", TG_F32, 1, ts), 4, 10);  /* [4, 4] i64 */
  w->rows = tg_gather_rows(w->g, tg_input(w->g, "table", TG_F32, 2, tab), w->idx); /* [4, 4, 2] */
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  CHECK_OK(tg_graph_status(w->g));
  CHECK_OK(tg_graph_plan(w->g, &po));
  tg_tensor t;
  CHECK_OK(tg_tensor_view(&t, "table", tg_cpu(0), TG_F32, 2, tab, w->table));
  CHECK_OK(tg_graph_bind(w->g, "table", &t));
}

static tg_status wr_run(wr_graph *w, float *t4) {
  int64_t ts[1] = {4};
  tg_tensor t;
  tg_status st = tg_tensor_view(&t, "t", tg_cpu(0), TG_F32, 1, ts, t4);
  if (st == TG_OK) st = tg_graph_bind(w->g, "t", &t);
  return st == TG_OK ? tg_graph_run(w->g) : st;
}

static void test_window_rows(void) {
  wr_graph w;
  wr_open(&w);
  CHECK(w.idx && w.idx->dtype == TG_I64 && w.idx->ndim == 2 && w.idx->shape[0] == 4 && w.idx->shape[1] == 4);
  float t[4] = {3, 9, 5, 3};
  CHECK_OK(wr_run(&w, t));
  const int64_t *idx = w.idx->data; /* [4, 4] */
  const float *rows = w.rows->data; /* [4, 4, 2] */
  int bad = 0;
  for (int b = 0; b < 4; b++)
    for (int k = 0; k < 4; k++) {
      int64_t want = (int64_t)t[b] - 3 + k; /* t - W + 1 + k */
      bad += idx[b * 4 + k] != want || rows[(b * 4 + k) * 2] != (float)want || rows[(b * 4 + k) * 2 + 1] != (float)-want;
    }
  CHECK_MSG(bad == 0, "%d window rows differ from t - W + 1 + k", bad);
  /* run-time errors name the node, the value and the valid range */
  float early[4] = {3, 2, 5, 3}, late[4] = {3, 9, 10, 3}, frac[4] = {4.5f, 9, 5, 3}, nan_t[4] = {3, 9, 5, NAN};
  CHECK_STATUS(wr_run(&w, early), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), w.idx->name) && strstr(tg_last_error(), "t 2 ") &&
                strstr(tg_last_error(), "[3, 10)") && strstr(tg_last_error(), "position 1"), "%s", tg_last_error());
  CHECK_STATUS(wr_run(&w, late), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "t 10 ") && strstr(tg_last_error(), "position 2"), "%s", tg_last_error());
  CHECK_STATUS(wr_run(&w, frac), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "t 4.5 ") && strstr(tg_last_error(), "position 0"), "%s", tg_last_error());
  CHECK_STATUS(wr_run(&w, nan_t), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "position 3"), "%s", tg_last_error());
  CHECK_OK(wr_run(&w, t)); /* a good run after the failures */
  CHECK(idx[4] == 6 && idx[7] == 9);
  tg_graph_free(w.g);
  tg_store_free(w.s);
  /* build-time errors: window, rows and dtype */
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  int64_t ts[1] = {4};
  struct { int64_t w, rows; tg_dtype dt; tg_status want; const char *says; } bad_cases[4] = {
      {0, 10, TG_F32, TG_ERR_INVALID, "window 0"},
      {11, 10, TG_F32, TG_ERR_INVALID, "rows 10"},
      {4, ((int64_t)1 << 24) + 1, TG_F32, TG_ERR_INVALID, "2^24"},
      {4, 10, TG_I32, TG_ERR_SHAPE, "i32"}};
  for (int k = 0; k < 4; k++) {
    tg_graph *g = tg_graph_new(s, "window_rows_bad");
    tg_tensor *o = tg_window_rows(g, tg_input(g, "t", bad_cases[k].dt, 1, ts), bad_cases[k].w, bad_cases[k].rows);
    CHECK_MSG(o == NULL && tg_graph_status(g) == bad_cases[k].want, "case %d built", k);
    CHECK_MSG(strstr(tg_last_error(), "window_rows") && strstr(tg_last_error(), bad_cases[k].says), "case %d: %s", k,
              tg_last_error());
    tg_graph_free(g);
  }
  tg_store_free(s);
}

/* ---- the env's gathered observations ---- */

static tg_status market(tg_bars *b) {
  tg_synth_config s = tg_synth_defaults();
  s.bars = BARS;
  s.interval_ns = 3600LL * 1000000000LL;
  s.seed = 7;
  s.signal = 0.3;
  return tg_synth_generate(&s, b);
}

static tg_status trading_env(const tg_bars *b, int n, int split, int omit, int continuous, tg_env **out) {
  tg_trading_cfg c = tg_trading_defaults();
  c.window = WINDOW;
  c.split = split;
  c.seed = 3;
  c.episode_len = 40;
  c.omit_window = omit;
  c.continuous = continuous;
  return tg_env_trading_new(n, b, &c, out);
}

/* ---- (b) the same training on both envs, (c) the same evaluation actions ---- */

static int same_file(const char *a, const char *b) {
  size_t la = 0, lb = 0;
  unsigned char *x = tg_test_read_file(a, &la), *y = tg_test_read_file(b, &lb);
  int same = x && y && la == lb && la > 0 && memcmp(x, y, la) == 0;
  free(x);
  free(y);
  return same;
}

static void check_same(const char *d0, const char *d1, const char *file) {
  char a[300], b[300];
  snprintf(a, sizeof a, "%s/%s", d0, file);
  snprintf(b, sizeof b, "%s/%s", d1, file);
  CHECK_MSG(same_file(a, b), "%s differs between %s and %s", file, d0, d1);
}

static tg_dqn_config dqn_config(tg_device dev) {
  tg_dqn_config c = tg_dqn_defaults();
  c.total_timesteps = 1500; /* 4 instances: 6000 transitions */
  c.learning_rate = 1e-3f;
  c.buffer_size = 4000;
  c.batch_size = 32;
  c.learning_starts = 200;
  c.train_frequency = 1;
  c.target_network_frequency = 100;
  c.exploration_fraction = 0.5f;
  c.n_hidden = 2;
  c.hidden[0] = c.hidden[1] = 32;
  c.double_q = 1;
  c.huber = 1;
  c.seed = 2;
  c.log_every = 100000;
  c.device = dev;
  return c;
}

static tg_ppo_config ppo_config(tg_device dev) {
  tg_ppo_config c = tg_ppo_defaults();
  c.num_envs = 4;
  c.num_steps = 32;
  c.total_timesteps = 4 * 32 * 4; /* 4 iterations */
  c.num_minibatches = 4;
  c.update_epochs = 2;
  c.learning_rate = 1e-3f;
  c.hidden[0] = c.hidden[1] = 32;
  c.seed = 2;
  c.log_every = 100000;
  c.device = dev;
  return c;
}

/* Trains algo (0 DQN, 1 PPO) on a copying (omit 0) or gathering (omit 1) env into dir. */
static void train(int algo, int continuous, const tg_bars *b, int omit, tg_device dev, const char *dir) {
  tg_env *e = NULL;
  CHECK_OK(trading_env(b, 4, TG_TRAIN, omit, continuous, &e));
  if (!e) return;
  CHECK(tg_env_spec_of(e).obs_dim == (omit ? 3 : WINDOW * 16 + 2));
  if (algo == 0) {
    tg_dqn_config c = dqn_config(dev);
    tg_dqn_result r;
    CHECK_OK(tg_dqn_train(&c, e, dir, &r));
    CHECK(r.grad_steps > 1000);
  } else {
    tg_ppo_config c = ppo_config(dev); /* continuous: the env's actions decide */
    tg_ppo_result r;
    CHECK_OK(tg_ppo_train(&c, e, dir, &r));
    CHECK(r.updates == 4 * 2 * 4);
  }
  tg_env_free(e);
}

/* The greedy policies of the copying run d0 and the gathering run d1, each on its own kind of env over
 * the test split in order, act the same at every step (on dev0 and dev1). */
static void check_policies(int algo, int continuous, const tg_bars *b, const char *d0, const char *d1, tg_device dev0,
                           tg_device dev1) {
  tg_env *e0 = NULL, *e1 = NULL;
  CHECK_OK(trading_env(b, 1, TG_TEST, 0, continuous, &e0));
  CHECK_OK(trading_env(b, 1, TG_TEST, 1, continuous, &e1));
  if (!e0 || !e1) goto done;
  tg_dqn_policy *q0 = NULL, *q1 = NULL;
  tg_ppo_policy *p0 = NULL, *p1 = NULL;
  if (algo == 0) {
    CHECK_OK(tg_dqn_policy_load_env(d0, e0, dev0, &q0));
    CHECK_OK(tg_dqn_policy_load_env(d1, e1, dev1, &q1));
  } else {
    CHECK_OK(tg_ppo_policy_load_env(d0, e0, dev0, &p0));
    CHECK_OK(tg_ppo_policy_load_env(d1, e1, dev1, &p1));
  }
  if (!(algo == 0 ? q0 && q1 : p0 && p1)) goto done;
  int O0 = tg_env_spec_of(e0).obs_dim;
  float *o0 = calloc((size_t)O0, sizeof(float)), o1[3], r0, r1;
  uint8_t te0, tr0, te1, tr1;
  tg_env_out out0 = {.obs = o0, .reward = &r0, .terminated = &te0, .truncated = &tr0};
  tg_env_out out1 = {.obs = o1, .reward = &r1, .terminated = &te1, .truncated = &tr1};
  CHECK_OK(tg_env_reset(e0, o0));
  CHECK_OK(tg_env_reset(e1, o1));
  int steps = 0, differ = 0, moves = 0, rdiff = 0;
  union { int32_t i; float f; } a0 = {0}, a1 = {0}, prev = {0};
  for (int done = 0; !done && steps < 100000; steps++) {
    if (algo == 0) {
      CHECK_OK(tg_dqn_policy_act(q0, o0, &a0.i));
      CHECK_OK(tg_dqn_policy_act(q1, o1, &a1.i));
    } else {
      CHECK_OK(tg_ppo_policy_act(p0, o0, &a0));
      CHECK_OK(tg_ppo_policy_act(p1, o1, &a1));
    }
    differ += memcmp(&a0, &a1, sizeof a0) != 0;
    moves += memcmp(&a0, &prev, sizeof a0) != 0;
    prev = a0;
    CHECK_OK(tg_env_step(e0, &a0, &out0));
    CHECK_OK(tg_env_step(e1, &a0, &out1));
    rdiff += r0 != r1;
    done = tr0 || tr1;
    if (tr0 != tr1) differ++;
  }
  tg_trading_info info;
  CHECK_OK(tg_env_trading_info(e1, &info));
  CHECK_MSG(steps == (int)info.steps, "%d steps of %lld", steps, (long long)info.steps);
  CHECK_MSG(differ == 0 && rdiff == 0, "%s: %d of %d actions (and %d rewards) differ between the copying and "
            "gathering policies", algo == 0 ? "dqn" : "ppo", differ, steps, rdiff);
  printf("  %s%s: %d test-split actions the same (%d changes of action)\n", algo == 0 ? "dqn" : "ppo",
         continuous ? " continuous" : "", steps, moves);
  free(o0);
done:
  tg_dqn_policy_free(q0);
  tg_dqn_policy_free(q1);
  tg_ppo_policy_free(p0);
  tg_ppo_policy_free(p1);
  tg_env_free(e0);
  tg_env_free(e1);
}

static void test_same_training(int algo, int continuous, const tg_bars *b) {
  const char *name = algo == 0 ? "dqn" : continuous ? "ppoc" : "ppo";
  char d0[200], d1[200], d2[200];
  snprintf(d0, sizeof d0, "%s/%s_copy", g_tmp, name);
  snprintf(d1, sizeof d1, "%s/%s_gather", g_tmp, name);
  snprintf(d2, sizeof d2, "%s/%s_gather_cpu1", g_tmp, name);
  train(algo, continuous, b, 0, tg_cpu(0), d0);
  train(algo, continuous, b, 1, tg_cpu(0), d1);
  train(algo, continuous, b, 1, tg_cpu(1), d2); /* the device path: the table uploaded, obs copied in */
  check_same(d0, d1, "weights.safetensors");
  check_same(d0, d2, "weights.safetensors");
  check_same(d0, d1, "optim.safetensors");
  if (algo == 0) check_same(d0, d1, "target.safetensors");
  check_policies(algo, continuous, b, d0, d1, tg_cpu(0), tg_cpu(0));
  check_policies(algo, continuous, b, d0, d2, tg_cpu(0), tg_cpu(1));
}

/* On a GPU: copying and gathering runs on cuda:0 give the same weights (the inputs are the same
 * values, the kernels deterministic) and the same actions. */
static void test_same_training_cuda(int algo, int continuous, const tg_bars *b) {
  const char *name = algo == 0 ? "dqn" : continuous ? "ppoc" : "ppo";
  char d0[200], d1[200];
  snprintf(d0, sizeof d0, "%s/%s_copy_cuda", g_tmp, name);
  snprintf(d1, sizeof d1, "%s/%s_gather_cuda", g_tmp, name);
  train(algo, continuous, b, 0, tg_cuda(0), d0);
  train(algo, continuous, b, 1, tg_cuda(0), d1);
  check_same(d0, d1, "weights.safetensors");
  check_policies(algo, continuous, b, d0, d1, tg_cuda(0), tg_cuda(0));
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_rl_gather_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  tg_set_threads(1);
  test_window_rows();
  tg_bars b;
  CHECK_OK(market(&b));
  test_same_training(0, 0, &b);
  test_same_training(1, 0, &b);
  test_same_training(1, 1, &b);
  if (tg_cuda_count() > 0) {
    test_same_training_cuda(0, 0, &b);
    test_same_training_cuda(1, 0, &b);
  } else {
    printf("  cuda:0 cases skipped: %s\n", tg_cuda_why_none()[0] ? tg_cuda_why_none() : "no CUDA device");
  }
  tg_bars_free(&b);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
