/* PPO: GAE by hand, orthogonal init, the update against float64 and PyTorch, CartPole and a continuous task that learn, bitwise resume, NaN stop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "env/env_internal.h"
#include "agents/ppo_internal.h"
#include "support/check.h"
#include "support/stop_hook.h"
#include "tickgrad/checkpoint.h"
#include "tickgrad/rl_agents.h"
#include "tickgrad/tickgrad.h"

/* ---- GAE ---- */

/* gamma 0.9, lambda 0.8 (gamma lambda 0.72), T = 4, two instances, next_value 0.1 and 5:
 * instance 0: rewards 1..4, values 0.5 0.4 0.3 0.2; its step 1 terminates an episode, so the
 *   observation of step 2 starts a new one (done[2] = 1) and nothing flows back across it:
 *   A3 = 4 + 0.9 * 0.1 - 0.2 = 3.89;  A2 = 3 + 0.9 * 0.2 - 0.3 + 0.72 * 3.89 = 5.6808;
 *   A1 = 2 - 0.4 = 1.6 (no bootstrap);  A0 = 1 + 0.9 * 0.4 - 0.5 + 0.72 * 1.6 = 2.012.
 * instance 1: rewards and values 1; its last step is truncated (next_done = 1): CleanRL does not
 *   bootstrap, so next_value 5 is ignored: A3 = 0; A2 = 0.9; A1 = 0.9 + 0.72 * 0.9 = 1.548;
 *   A0 = 0.9 + 0.72 * 1.548 = 2.01456. Returns = A + V. */
static void test_gae(void) {
  const float reward[8] = {1, 1, 2, 1, 3, 1, 4, 1};           /* [T, N] */
  const float value[8] = {0.5f, 1, 0.4f, 1, 0.3f, 1, 0.2f, 1}; /* [T, N] */
  const uint8_t done[8] = {0, 0, 0, 0, 1, 0, 0, 0};            /* [T, N] */
  const float next_value[2] = {0.1f, 5.0f};
  const uint8_t next_done[2] = {0, 1};
  float adv[8], ret[8];
  rl_gae(reward, value, done, next_value, next_done, 4, 2, 0.9f, 0.8f, adv, ret);
  const double want0[4] = {2.012, 1.6, 5.6808, 3.89}, want1[4] = {2.01456, 1.548, 0.9, 0.0};
  for (int t = 0; t < 4; t++) {
    CHECK_MSG(fabs(adv[2 * t] - want0[t]) < 1e-5, "instance 0 step %d: adv %.7g want %.7g", t, (double)adv[2 * t], want0[t]);
    CHECK_MSG(fabs(adv[2 * t + 1] - want1[t]) < 1e-5, "instance 1 step %d: adv %.7g want %.7g", t, (double)adv[2 * t + 1],
              want1[t]);
    CHECK_MSG(fabs(ret[2 * t] - (want0[t] + value[2 * t])) < 1e-5, "instance 0 step %d: return %.7g", t, (double)ret[2 * t]);
    CHECK_MSG(fabs(ret[2 * t + 1] - (want1[t] + 1.0)) < 1e-5, "instance 1 step %d: return %.7g", t, (double)ret[2 * t + 1]);
  }
}

/* ---- orthogonal initialisation ---- */

/* max |G - gain^2 I| of the Gram matrix of W [rows, cols] over its smaller side. */
static double gram_error(const float *w, int64_t rows, int64_t cols, double gain) {
  int tall = rows >= cols;
  int64_t n = tall ? cols : rows, m = tall ? rows : cols;
  double worst = 0.0;
  for (int64_t a = 0; a < n; a++)
    for (int64_t b = 0; b < n; b++) {
      double s = 0.0;
      for (int64_t k = 0; k < m; k++)
        s += tall ? (double)w[k * cols + a] * w[k * cols + b] : (double)w[a * cols + k] * w[b * cols + k];
      double e = fabs(s - (a == b ? gain * gain : 0.0));
      if (e > worst) worst = e;
    }
  return worst;
}

static float *ortho_values(uint64_t seed, int64_t rows, int64_t cols, float gain, tg_store **keep) {
  tg_store *s = tg_store_new(tg_cpu(0), seed);
  tg_graph *g = tg_graph_new(s, "ortho");
  int64_t sh[2] = {rows, cols}, sb[1] = {rows};
  tg_param(g, "bias", 1, sb, (tg_init){TG_INIT_ZEROS, 0, 0}); /* parameter 0, so the matrix uses stream 1 */
  tg_param(g, "w", 2, sh, (tg_init){TG_INIT_ORTHOGONAL, gain, 0});
  CHECK_OK(tg_store_finalize(s));
  tg_graph_free(g);
  *keep = s;
  return tg_store_tensor(s, tg_store_find(s, "w"), 0).data;
}

static void test_orthogonal(void) {
  const int64_t shapes[4][2] = {{64, 4}, {2, 64}, {64, 64}, {3, 5}};
  const float gains[4] = {1.4142135f, 0.01f, 1.0f, 2.0f};
  for (int i = 0; i < 4; i++) {
    tg_store *a, *b, *c;
    int64_t R = shapes[i][0], C = shapes[i][1];
    float *wa = ortho_values(7, R, C, gains[i], &a), *wb = ortho_values(7, R, C, gains[i], &b);
    float *wc = ortho_values(8, R, C, gains[i], &c);
    double err = gram_error(wa, R, C, gains[i]);
    CHECK_MSG(err < 1e-5 * (1.0 + (double)gains[i] * gains[i]), "[%lld, %lld] gain %g: Gram matrix off by %g", (long long)R,
              (long long)C, (double)gains[i], err);
    CHECK_MSG(memcmp(wa, wb, (size_t)(R * C) * sizeof(float)) == 0, "[%lld, %lld]: same seed, different values",
              (long long)R, (long long)C);
    CHECK_MSG(memcmp(wa, wc, (size_t)(R * C) * sizeof(float)) != 0, "[%lld, %lld]: another seed, same values",
              (long long)R, (long long)C);
    double norm = 0.0; /* not degenerate: Frobenius norm^2 = gain^2 min(R, C) */
    for (int64_t k = 0; k < R * C; k++) norm += (double)wa[k] * wa[k];
    CHECK_MSG(fabs(norm - (double)gains[i] * gains[i] * (double)(R < C ? R : C)) < 1e-3 * norm, "norm^2 %g", norm);
    tg_store_free(a);
    tg_store_free(b);
    tg_store_free(c);
  }
  /* a vector cannot be orthogonal: the error says why and gives its shape */
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "ortho_1d");
  int64_t sv[1] = {5};
  tg_tensor *v = tg_param(g, "vec", 1, sv, (tg_init){TG_INIT_ORTHOGONAL, 1, 0});
  CHECK(v == NULL && tg_graph_status(g) == TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "2 or more dims") && strstr(tg_last_error(), "[5]"),
            "message: %s", tg_last_error());
  tg_graph_free(g);
  tg_store_free(s);
}

/* ---- the update's loss against float64 ---- */

/* The training graph's stats on a minibatch equal a float64 evaluation of CleanRL's loss on the
 * logits and values the acting graph gives for the same observations (the same parameters). */
static void test_net_loss(void) {
  const int M = 16, O = 3, A = 3;
  tg_ppo_config pc = tg_ppo_defaults();
  rl_ppo_net_cfg c = pp_net_cfg(&pc, O, A, M, M, 0);
  rl_ppo_net n;
  CHECK_OK(rl_ppo_net_open(&n, &c));
  if (!n.base.store) return;
  for (int i = 0; i < M; i++) {
    for (int k = 0; k < O; k++) n.hb.obs[i * O + k] = 2.0f * tg_rng_uniform(3, 0, (uint64_t)(i * O + k)) - 1.0f;
    n.hb.action[i] = i % A;
    n.hb.logp[i] = -1.1f + 0.3f * (tg_rng_uniform(3, 1, (uint64_t)i) - 0.5f);
    n.hb.adv[i] = 2.0f * tg_rng_uniform(3, 2, (uint64_t)i) - 0.7f;
    n.hb.ret[i] = tg_rng_uniform(3, 3, (uint64_t)i);
    n.hb.value[i] = 0.5f * tg_rng_uniform(3, 4, (uint64_t)i);
  }
  const float *logits, *value, *stats;
  CHECK_OK(rl_ppo_net_eval(&n, n.hb.obs, &logits, &value));
  double mean = 0, q = 0, pg = 0, vl = 0, ent = 0, eps = 0.2;
  for (int i = 0; i < M; i++) mean += n.hb.adv[i] / (double)M;
  for (int i = 0; i < M; i++) q += (n.hb.adv[i] - mean) * (n.hb.adv[i] - mean);
  double sd = sqrt(q / (M - 1)) + 1e-8;
  for (int i = 0; i < M; i++) {
    const float *l = logits + i * A;
    double z = 0;
    for (int k = 0; k < A; k++) z += exp(l[k]);
    double r = exp(l[n.hb.action[i]] - log(z) - n.hb.logp[i]), a = (n.hb.adv[i] - mean) / sd;
    double rc = r < 1 - eps ? 1 - eps : (r > 1 + eps ? 1 + eps : r);
    pg += fmax(-a * r, -a * rc) / M;
    double v = value[i], d = v - n.hb.value[i], dc = d < -eps ? -eps : (d > eps ? eps : d);
    double vc = n.hb.value[i] + dc - n.hb.ret[i];
    vl += 0.5 * fmax((v - n.hb.ret[i]) * (v - n.hb.ret[i]), vc * vc) / M;
    for (int k = 0; k < A; k++) ent -= exp(l[k]) / z * (l[k] - log(z)) / M;
  }
  double want = pg - 0.01 * ent + 0.5 * vl;
  CHECK_OK(rl_ppo_net_learn(&n, &stats));
  CHECK_MSG(fabs(stats[TG_PPO_LOSS] - want) < 1e-5, "loss %.8g want %.8g", (double)stats[TG_PPO_LOSS], want);
  CHECK_MSG(fabs(stats[TG_PPO_PG] - pg) < 1e-5 && fabs(stats[TG_PPO_V] - vl) < 1e-5 && fabs(stats[TG_PPO_ENTROPY] - ent) < 1e-5,
            "pg %g/%g v %g/%g ent %g/%g", (double)stats[TG_PPO_PG], pg, (double)stats[TG_PPO_V], vl,
            (double)stats[TG_PPO_ENTROPY], ent);
  CHECK(tg_optim_steps(n.base.opt) == 1 && tg_optim_last_grad_norm(n.base.opt) > 0.0f);
  /* the actor head starts near zero (gain 0.01): the policy is close to uniform */
  CHECK_MSG(fabs(stats[TG_PPO_ENTROPY] - log(3.0)) < 1e-3, "initial entropy %g, log 3 = %g", (double)stats[TG_PPO_ENTROPY],
            log(3.0));
  rl_ppo_net_close(&n);
}

/* ---- the update against PyTorch (reference/ppo_update.py write) ---- */

/* max |got - want| relative to max |want| over the tensor */
static double rel_err(const float *got, const tg_tensor *want) {
  const float *w = want->data;
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < tg_numel(want); i++) {
    diff = fmax(diff, fabs((double)got[i] - w[i]));
    scale = fmax(scale, fabs((double)w[i]));
  }
  return diff / (scale > 0 ? scale : 1);
}

/* Three updates of a small actor-critic (obs 5, hidden 16-16, 3 actions, minibatch 32, Adam lr 1e-2,
 * clip 0.5 active on each) from PyTorch's initial weights: the loss parts, the gradient norm and
 * the unclipped gradients of the first update, and the weights after the third, match CleanRL's
 * update in PyTorch. */
static void test_torch_reference(void) {
  const char *src = getenv("TG_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/reference/data/ppo_update.safetensors", src ? src : "..");
  tg_safetensors *ref = NULL;
  CHECK_OK(tg_safetensors_load(path, &ref));
  if (!ref) return;
  const tg_tensor *in[6], *stats = tg_safetensors_find(ref, "stats");
  const char *names[6] = {"obs", "actions", "old_logp", "adv", "returns", "old_values"};
  for (int k = 0; k < 6; k++) in[k] = tg_safetensors_find(ref, names[k]);
  CHECK(in[0] && in[1] && in[5] && stats && in[0]->shape[0] == 32 && in[0]->shape[1] == 5 && stats->shape[0] == 3);
  if (!in[0] || !in[1] || !in[5] || !stats) goto done;
  tg_ppo_config pc = tg_ppo_defaults();
  pc.hidden[0] = pc.hidden[1] = 16;
  pc.learning_rate = 1e-2f;
  pc.anneal_lr = 0;
  rl_ppo_net_cfg c = pp_net_cfg(&pc, 5, 3, 1, 32, 0);
  rl_ppo_net n;
  CHECK_OK(rl_ppo_net_open(&n, &c));
  if (!n.base.store) goto done;
  for (int i = 0; i < tg_store_count(n.base.store); i++) {
    tg_tensor dst = tg_store_tensor(n.base.store, i, 0);
    char name[96];
    snprintf(name, sizeof name, "init.%s", dst.name);
    const tg_tensor *init = tg_safetensors_find(ref, name);
    CHECK_MSG(init && tg_shape_eq(init, &dst), "reference lacks '%s' of the network's shape", name);
    if (init && tg_shape_eq(init, &dst)) memcpy(dst.data, init->data, tg_nbytes(&dst));
  }
  memcpy(n.hb.obs, in[0]->data, tg_nbytes(in[0]));
  for (int i = 0; i < 32; i++) {
    n.hb.action[i] = (int32_t)((const int64_t *)in[1]->data)[i];
    n.hb.logp[i] = ((const float *)in[2]->data)[i];
    n.hb.adv[i] = ((const float *)in[3]->data)[i];
    n.hb.ret[i] = ((const float *)in[4]->data)[i];
    n.hb.value[i] = ((const float *)in[5]->data)[i];
  }
  for (int step = 0; step < 3; step++) {
    const float *got, *want = (const float *)stats->data + step * 7;
    CHECK_OK(rl_ppo_net_learn(&n, &got));
    for (int k = 0; k < TG_PPO_NSTATS; k++)
      CHECK_MSG(fabs(got[k] - want[k]) <= 2e-5 * (1 + fabs(want[k])), "step %d stat %d: %.8g, torch %.8g", step, k,
                (double)got[k], (double)want[k]);
    float gn = tg_optim_last_grad_norm(n.base.opt);
    CHECK_MSG(fabs(gn - want[6]) <= 2e-5 * want[6] && gn > 0.5f, "step %d grad norm %.8g, torch %.8g", step, (double)gn,
              (double)want[6]);
    for (int i = 0; step == 0 && i < tg_store_count(n.base.store); i++) {
      tg_tensor gr = tg_store_tensor(n.base.store, i, 1);
      char name[96];
      snprintf(name, sizeof name, "step0.grad.%s", gr.name);
      const tg_tensor *w = tg_safetensors_find(ref, name);
      double e = w ? rel_err(gr.data, w) : INFINITY;
      CHECK_MSG(e < 1e-4, "gradient of %s: relative error %g", gr.name, e);
    }
  }
  for (int i = 0; i < tg_store_count(n.base.store); i++) {
    tg_tensor v = tg_store_tensor(n.base.store, i, 0);
    char name[96];
    snprintf(name, sizeof name, "final.%s", v.name);
    const tg_tensor *w = tg_safetensors_find(ref, name);
    double e = w ? rel_err(v.data, w) : INFINITY;
    CHECK_MSG(e < 1e-4, "weights %s after 3 updates: relative error %g", v.name, e);
  }
  rl_ppo_net_close(&n);
done:
  tg_safetensors_free(ref);
}

/* ---- training runs ---- */

static char g_dir[256];

static void rm_run(const char *run) {
  const char *files[] = {"config.json", "metrics.csv", "weights.safetensors", "optim.safetensors", "agent.safetensors"};
  char p[512];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", run, files[i]);
    unlink(p);
  }
  rmdir(run);
}

static void run_path(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", g_dir, name); }

/* A short CartPole run (40,960 steps, CleanRL's settings otherwise) learns: the mean return of the
 * last 100 episodes clearly beats a random policy's (about 22). */
static void test_cartpole_learns(void) {
  char run[512];
  run_path(run, sizeof run, "learn");
  tg_env *env = NULL;
  CHECK_OK(tg_env_cartpole_new(4, 11, 500, &env));
  tg_ppo_config c = tg_ppo_defaults();
  c.total_timesteps = 40960;
  c.seed = 3;
  tg_ppo_result res;
  double t0 = (double)clock() / CLOCKS_PER_SEC;
  tg_status st = tg_ppo_train(&c, env, run, &res);
  CHECK_MSG(st == TG_OK, "train: %s", tg_last_error());
  printf("cartpole %lld steps: %lld episodes, mean return %.1f (length %.1f), %lld updates, %.0f env steps/s, %.1f s cpu\n",
         (long long)res.env_steps, (long long)res.episodes, res.mean_return, res.mean_length, (long long)res.updates,
         res.env_steps_per_s, (double)clock() / CLOCKS_PER_SEC - t0);
  CHECK(res.iterations == 80 && res.env_steps == 40960 && res.updates == 80 * 16);
  CHECK_MSG(res.mean_return > 150.0, "mean return %.1f after %lld steps; want > 150", res.mean_return,
            (long long)res.env_steps);
  CHECK(isfinite(res.loss) && res.entropy > 0.0f && res.entropy < (float)log(2.0) && res.grad_norm > 0.0f);
  /* metrics.csv: the header and one row per 10,000 steps plus the last */
  char p[600], line[512];
  snprintf(p, sizeof p, "%s/metrics.csv", run);
  FILE *f = fopen(p, "r");
  int rows = 0;
  CHECK(f != NULL);
  while (f && fgets(line, sizeof line, f)) rows++;
  if (f) fclose(f);
  CHECK_MSG(rows == 1 + 5, "metrics.csv has %d lines; want a header and 5 rows", rows);
  tg_env_free(env);
  rm_run(run);
}

/* The weights a run ends with, as the bytes of its weights file. */
static char *read_all(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)*len + 1);
  if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) {
    free(b);
    b = NULL;
  }
  fclose(f);
  return b;
}

/* Stopping half way and resuming ends with the same weights, optimizer state and metrics rows
 * (bar the timing column) as one uninterrupted run. */
static void test_resume_bitwise(void) {
  char run_a[512], run_b[512];
  run_path(run_a, sizeof run_a, "whole");
  run_path(run_b, sizeof run_b, "halves");
  tg_ppo_config c = tg_ppo_defaults();
  c.total_timesteps = 12 * 512;
  c.log_every = 1024;
  c.seed = 5;
  tg_env *ea = NULL, *eb = NULL, *ec = NULL;
  CHECK_OK(tg_env_cartpole_new(4, 21, 500, &ea));
  CHECK_OK(tg_env_cartpole_new(4, 21, 500, &eb));
  CHECK_OK(tg_env_cartpole_new(4, 21, 500, &ec));
  tg_ppo_result ra, rb;
  CHECK_OK(tg_ppo_train(&c, ea, run_a, &ra));
  c.stop_after = 5;
  CHECK_OK(tg_ppo_train(&c, eb, run_b, &rb));
  CHECK(rb.iterations == 5);
  c.stop_after = 0;
  c.resume = 1;
  CHECK_OK(tg_ppo_train(&c, ec, run_b, &rb)); /* a fresh env object: its state comes from the checkpoint */
  CHECK(rb.iterations == 12 && rb.episodes == ra.episodes && rb.updates == ra.updates);
  CHECK_MSG(rb.mean_return == ra.mean_return, "mean return %.17g resumed, %.17g whole", rb.mean_return, ra.mean_return);
  const char *files[2] = {"weights.safetensors", "optim.safetensors"};
  for (int i = 0; i < 2; i++) {
    char pa[600], pb[600];
    long la = 0, lb = 0;
    snprintf(pa, sizeof pa, "%s/%s", run_a, files[i]);
    snprintf(pb, sizeof pb, "%s/%s", run_b, files[i]);
    char *a = read_all(pa, &la), *b = read_all(pb, &lb);
    CHECK_MSG(a && b && la == lb && memcmp(a, b, (size_t)la) == 0, "%s differs between the whole and the resumed run",
              files[i]);
    free(a);
    free(b);
  }
  /* a stop request (raised while iteration 4 logs) stops there with a checkpoint; the resume is bitwise too */
  char run_c[512];
  run_path(run_c, sizeof run_c, "asked");
  tg_ppo_config asked = c;
  asked.resume = 0;
  asked.log = tg_test_stop_stream("iter 4/", 1);
  tg_stop_clear();
  tg_env *ed = NULL, *ee = NULL;
  CHECK_OK(tg_env_cartpole_new(4, 21, 500, &ed));
  CHECK_OK(tg_env_cartpole_new(4, 21, 500, &ee));
  CHECK_OK(tg_ppo_train(&asked, ed, run_c, &rb));
  fclose(asked.log);
  CHECK(rb.interrupted && rb.iterations == 4);
  tg_stop_clear();
  asked.log = NULL;
  asked.resume = 1;
  CHECK_OK(tg_ppo_train(&asked, ee, run_c, &rb));
  CHECK(!rb.interrupted && rb.iterations == 12 && rb.episodes == ra.episodes && rb.mean_return == ra.mean_return);
  for (int i = 0; i < 2; i++) {
    char pa[600], pb[600];
    long la = 0, lb = 0;
    snprintf(pa, sizeof pa, "%s/%s", run_a, files[i]);
    snprintf(pb, sizeof pb, "%s/%s", run_c, files[i]);
    char *a = read_all(pa, &la), *b = read_all(pb, &lb);
    CHECK_MSG(a && b && la == lb && memcmp(a, b, (size_t)la) == 0, "%s differs after a stop request and resume",
              files[i]);
    free(a);
    free(b);
  }
  tg_env_free(ed);
  tg_env_free(ee);
  rm_run(run_c);
  /* a resume with another setting is refused, naming it */
  c.learning_rate = 1e-3f;
  CHECK_STATUS(tg_ppo_train(&c, ec, run_b, &rb), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "learning_rate") != NULL, "message: %s", tg_last_error());
  /* a fresh run refuses a folder that holds one */
  c = tg_ppo_defaults();
  c.total_timesteps = 512;
  CHECK_STATUS(tg_ppo_train(&c, ec, run_b, &rb), TG_ERR_INVALID);
  tg_env_free(ea);
  tg_env_free(eb);
  tg_env_free(ec);
  rm_run(run_a);
  rm_run(run_b);
}

/* ---- a non-finite loss ---- */

/* A 2-instance env whose rewards turn NaN after 300 environment steps. */
typedef struct nan_env {
  int64_t steps;
} nan_env;

static tg_status nan_reset(tg_env *e, float *obs) {
  for (int i = 0; i < 2 * e->spec.n; i++) obs[i] = 0.1f * (float)i;
  return TG_OK;
}

static tg_status nan_step(tg_env *e, const void *actions, const tg_env_out *out) {
  nan_env *s = e->impl;
  (void)actions;
  for (int i = 0; i < e->spec.n; i++) {
    s->steps++;
    out->obs[2 * i] = (float)(s->steps % 7) * 0.1f;
    out->obs[2 * i + 1] = -0.2f;
    out->reward[i] = s->steps > 300 ? NAN : 1.0f;
    out->terminated[i] = out->truncated[i] = 0;
  }
  return TG_OK;
}

static void nan_destroy(tg_env *e) { free(e->impl); }

static const tg_env_kind NAN_KIND = {.name = "nan_test", .reset = nan_reset, .step = nan_step, .destroy = nan_destroy};

static void test_nan_stop(void) {
  char run[512];
  run_path(run, sizeof run, "nan");
  tg_env_spec sp = {.n = 2, .obs_dim = 2, .n_actions = 2, .action_lo = 0, .action_hi = 1};
  tg_env *e = NULL;
  CHECK_OK(tg_env_alloc(&NAN_KIND, sp, &e));
  if (!e) return;
  e->impl = calloc(1, sizeof(nan_env));
  tg_ppo_config c = tg_ppo_defaults();
  c.num_envs = 2;
  c.total_timesteps = 10 * 256;
  c.ckpt_every = 1;
  tg_ppo_result res;
  tg_status st = tg_ppo_train(&c, e, run, &res);
  CHECK_MSG(st == TG_ERR_NUMERIC, "status %s: %s", tg_status_name(st), tg_last_error());
  CHECK_MSG(strstr(tg_last_error(), "iteration 2") && strstr(tg_last_error(), "checkpoint (iteration 1)"), "message: %s",
            tg_last_error());
  CHECK(res.iterations == 1);
  char p[600];
  snprintf(p, sizeof p, "%s/agent.safetensors", run);
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(p, &f));
  const char *it = f ? tg_safetensors_meta(f, "iteration") : NULL;
  CHECK_MSG(it && strcmp(it, "1") == 0, "the checkpoint on disk is iteration %s", it ? it : "?");
  tg_safetensors_free(f);
  tg_env_free(e);
  rm_run(run);
}

/* ---- continuous actions ---- */

/* A 1-D tracking task: the observation s is uniform in [-1, 1], the reward -(a - s / 2)^2 for the
 * (clipped) action a, episodes of 16 steps (truncated). The best policy is a = s / 2. */
typedef struct track_env {
  uint64_t t; /* steps taken by every instance */
} track_env;

static float track_obs(uint64_t t, int i) { return 2.0f * tg_rng_uniform(99, (uint64_t)i, t) - 1.0f; }

static tg_status track_reset(tg_env *e, float *obs) {
  track_env *s = e->impl;
  for (int i = 0; i < e->spec.n; i++) obs[i] = track_obs(s->t, i);
  return TG_OK;
}

static tg_status track_step(tg_env *e, const void *actions, const tg_env_out *out) {
  track_env *s = e->impl;
  const float *a = actions; /* [n], already clipped to [-2, 2] */
  for (int i = 0; i < e->spec.n; i++) {
    float d = a[i] - 0.5f * track_obs(s->t, i);
    out->reward[i] = -d * d;
    out->terminated[i] = 0;
    out->truncated[i] = (s->t + 1) % 16 == 0;
    if (out->ep_return) out->ep_return[i] = 0.0; /* not tracked */
    if (out->ep_length) out->ep_length[i] = out->truncated[i] ? 16 : 0;
    out->obs[i] = track_obs(s->t + 1, i);
  }
  s->t++;
  return TG_OK;
}

static void track_destroy(tg_env *e) { free(e->impl); }

static const tg_env_kind TRACK_KIND = {.name = "track_test", .reset = track_reset, .step = track_step,
                                       .destroy = track_destroy};

/* PPO with a Gaussian policy learns the tracking task: the trained policy's mean action is close to
 * s / 2 and its standard deviation fell from 1. */
static void test_continuous(void) {
  char run[512];
  run_path(run, sizeof run, "track");
  tg_env_spec sp = {.n = 4, .obs_dim = 1, .n_actions = 0, .action_lo = -2, .action_hi = 2};
  tg_env *e = NULL;
  CHECK_OK(tg_env_alloc(&TRACK_KIND, sp, &e));
  if (!e) return;
  e->impl = calloc(1, sizeof(track_env));
  tg_ppo_config c = tg_ppo_defaults();
  c.total_timesteps = 40 * 512;
  c.learning_rate = 3e-3f;
  c.ent_coef = 0.0f;
  c.gamma = 0.0f; /* each step's reward is its own: a contextual bandit */
  tg_ppo_result res;
  CHECK_OK(tg_ppo_train(&c, e, run, &res));
  CHECK_MSG(res.entropy < 1.3f, "entropy %g: the Gaussian's std did not shrink (1.419 at std 1)", (double)res.entropy);
  tg_ppo_policy *p = NULL;
  tg_env_spec one = {.n = 8, .obs_dim = 1, .n_actions = 0, .action_lo = -2, .action_hi = 2};
  CHECK_OK(tg_ppo_policy_load(run, one, tg_cpu(0), &p));
  if (p) {
    float obs[8], act[8];
    double err = 0.0;
    for (int i = 0; i < 8; i++) obs[i] = -0.9f + 0.25f * (float)i;
    CHECK_OK(tg_ppo_policy_act(p, obs, act));
    for (int i = 0; i < 8; i++) err += fabs(act[i] - 0.5 * obs[i]) / 8.0;
    printf("track %lld steps: entropy %.3f (std %.3f), mean |a - s/2| %.3f\n", (long long)res.env_steps,
           (double)res.entropy, exp((double)res.entropy - 1.4189385), err);
    CHECK_MSG(err < 0.1, "mean |a - s/2| = %.3f over s in [-0.9, 0.85]; want < 0.1", err);
    tg_ppo_policy_free(p);
  }
  tg_env_free(e);
  rm_run(run);
}

/* ---- config ---- */

static void test_config(void) {
  tg_ppo_config c = tg_ppo_defaults();
  CHECK(c.total_timesteps == 500000 && c.num_envs == 4 && c.num_steps == 128 && c.num_minibatches == 4 &&
        c.update_epochs == 4 && c.hidden[0] == 64 && c.hidden[1] == 64 && c.n_hidden == 2);
  CHECK(fabsf(c.learning_rate - 2.5e-4f) < 1e-12f && fabsf(c.adam_eps - 1e-5f) < 1e-12f && c.anneal_lr == 1);
  CHECK_OK(tg_ppo_config_check(&c));
  CHECK_OK(tg_ppo_config_set(&c, "hidden", "256,64,64"));
  CHECK(c.n_hidden == 3 && c.hidden[0] == 256 && c.hidden[2] == 64);
  CHECK_STATUS(tg_ppo_config_set(&c, "gamma", "1.5"), TG_ERR_INVALID);
  CHECK_STATUS(tg_ppo_config_set(&c, "nonsense", "1"), TG_ERR_INVALID);
  CHECK_OK(tg_ppo_config_set(&c, "num_minibatches", "3"));
  CHECK_STATUS(tg_ppo_config_check(&c), TG_ERR_INVALID); /* 512 does not split into 3 */
  CHECK_MSG(strstr(tg_last_error(), "minibatches") != NULL, "message: %s", tg_last_error());
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_test_ppo_%ld", (long)getpid());
  if (mkdir(g_dir, 0755) != 0) return tg_test_skip("cannot create a scratch folder under /tmp");
  test_gae();
  test_orthogonal();
  test_net_loss();
  test_torch_reference();
  test_config();
  test_nan_stop();
  test_resume_bitwise();
  test_cartpole_learns();
  test_continuous();
  rmdir(g_dir);
  return tg_test_finish();
}
