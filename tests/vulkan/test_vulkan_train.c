/* The trainers on vulkan:0 against cpu:0: each forecaster (mlp, tft, mamba2, transformer) trains a few steps from the
 * same seed on both, and DQN and PPO a few updates on CartPole, and the weights agree within tolerance; a run stopped on vulkan:0 and resumed there ends bitwise
 * as the uninterrupted run on vulkan:0; batches are staged on the device (0 bytes host to device in the epoch). Small
 * models: lavapipe runs every kernel on the CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "support/files.h"
#include "support/train_cfg.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

#define STEPS 2     /* optimizer steps each run takes */
#define CLOSE 1e-5  /* a weight this close to the CPU's agrees */
#define FAR_MAX 0.005 /* the share of the weights that may be further: Adam moves a weight with a gradient near 0 by
                       * about lr whatever its sign, and a ReLU kink crossed by one sample changes a unit's gradient, so
                       * float rounding moves a few weights by up to lr a step; a wrong kernel moves whole tensors */

static char g_dir[] = "/tmp/tg_vk_train_XXXXXX";

/* The largest |a - b| over every tensor of two weight files (INFINITY when they do not hold the same tensors), the
 * largest |a| and the share of the weights that differ by more than `close` beside it. */
static double weights_diff(const char *pa, const char *pb, double close, double *scale, double *far_share) {
  tg_safetensors *fa = NULL, *fb = NULL;
  double worst = INFINITY;
  int64_t far = 0, n = 0;
  *scale = 0;
  if (tg_safetensors_load(pa, &fa) == TG_OK && tg_safetensors_load(pb, &fb) == TG_OK &&
      tg_safetensors_count(fa) == tg_safetensors_count(fb)) {
    worst = 0;
    for (int i = 0; i < tg_safetensors_count(fa); i++) {
      const tg_tensor *ta = tg_safetensors_at(fa, i), *tb = tg_safetensors_find(fb, ta->name);
      if (!tb || tg_numel(ta) != tg_numel(tb) || ta->dtype != TG_F32 || tb->dtype != TG_F32) {
        worst = INFINITY;
        break;
      }
      for (int64_t k = 0; k < tg_numel(ta); k++) {
        double a = ((const float *)ta->data)[k], b = ((const float *)tb->data)[k], d = fabs(a - b);
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
        if (fabs(a) > *scale) *scale = fabs(a);
        far += !(d <= close), n++;
      }
    }
  }
  tg_safetensors_free(fa);
  tg_safetensors_free(fb);
  *far_share = n ? (double)far / (double)n : 1.0;
  return worst;
}

static tg_train_config small(tg_model_kind kind, const char *device, const char *name) {
  tg_train_config c = tg_test_small_config(kind, g_dir, name, 1);
  snprintf(c.device, sizeof c.device, "%s", device);
  c.stop_after_step = STEPS;
  return c;
}

/* kind trained STEPS steps on cpu:0 and on vulkan:0: the same steps; all but FAR_MAX of the weights within CLOSE of the
 * CPU's, and every one within 2 lr a step. */
static void check_parity(tg_model_kind kind, const tg_bars *bars) {
  const char *m = tg_train_model_name(kind);
  char cpu[64], vk[64], pa[1100], pb[1100];
  snprintf(cpu, sizeof cpu, "%s_cpu", m), snprintf(vk, sizeof vk, "%s_vk", m);
  tg_train_config cc = small(kind, "cpu", cpu), cv = small(kind, "vulkan:0", vk);
  tg_train_result rc, rv;
  CHECK_OK(tg_train_run(&cc, bars, &rc));
  CHECK_OK(tg_train_run(&cv, bars, &rv));
  CHECK_MSG(rc.steps == STEPS && rv.steps == STEPS, "%s: %lld and %lld steps", m, (long long)rc.steps,
            (long long)rv.steps);
  snprintf(pa, sizeof pa, "%s/weights.safetensors", cc.out), snprintf(pb, sizeof pb, "%s/weights.safetensors", cv.out);
  double scale, far, d = weights_diff(pa, pb, CLOSE, &scale, &far), tol = 2 * cc.lr * STEPS;
  CHECK_MSG(far <= FAR_MAX, "%s: %.2f%% of vulkan:0's weights differ from cpu:0's by more than %.0e", m, 100 * far,
            CLOSE);
  CHECK_MSG(d <= tol, "%s: a weight on vulkan:0 differs from cpu:0's by %.3g (at most %.0e: 2 lr a step)", m, d, tol);
  printf("%s: %d steps on vulkan:0 and cpu:0, %.3f%% of the weights beyond %.0e, the furthest %.2g off (largest weight "
         "%.3g)\n", m, STEPS, 100 * far, CLOSE, d, scale);
}

/* Two weight files of `what`, after `updates` optimizer steps at lr: the agreement check_parity asks for. */
static void check_weights(const char *what, const char *dir_a, const char *dir_b, double lr, int updates) {
  char pa[1100], pb[1100];
  snprintf(pa, sizeof pa, "%s/weights.safetensors", dir_a), snprintf(pb, sizeof pb, "%s/weights.safetensors", dir_b);
  double scale, far, d = weights_diff(pa, pb, CLOSE, &scale, &far), tol = 2 * lr * updates;
  CHECK_MSG(far <= FAR_MAX, "%s: %.2f%% of vulkan:0's weights differ from cpu:0's by more than %.0e", what, 100 * far,
            CLOSE);
  CHECK_MSG(d <= tol, "%s: a weight on vulkan:0 differs from cpu:0's by %.3g (at most %.0e: 2 lr a step)", what, d, tol);
  printf("%s: %d updates on vulkan:0 and cpu:0, %.3f%% of the weights beyond %.0e, the furthest %.2g off (largest "
         "weight %.3g)\n", what, updates, 100 * far, CLOSE, d, scale);
}

/* DQN on CartPole: 9 gradient steps (one every 10 env steps after 200, up to step 299), on both devices: the same
 * episodes, so the same greedy actions. */
static void check_dqn(void) {
  char dirs[2][300];
  tg_dqn_result r[2];
  for (int k = 0; k < 2; k++) {
    tg_dqn_config c = tg_dqn_defaults();
    c.total_timesteps = 300, c.learning_starts = 200, c.train_frequency = 10, c.buffer_size = 300;
    c.target_network_frequency = 50, c.log_every = 1000, c.ckpt_every = 0, c.seed = 2;
    c.device = k ? (tg_device){TG_VULKAN, 0} : tg_cpu(0);
    snprintf(dirs[k], sizeof dirs[k], "%s/dqn_%s", g_dir, k ? "vk" : "cpu");
    tg_env *env = NULL;
    CHECK_OK(tg_env_cartpole_new(1, 2, 500, &env));
    CHECK_OK(tg_dqn_train(&c, env, dirs[k], &r[k]));
    tg_env_free(env);
  }
  CHECK_MSG(r[0].grad_steps == r[1].grad_steps && r[0].grad_steps == 9 && r[0].episodes == r[1].episodes,
            "dqn: %lld and %lld gradient steps, %lld and %lld episodes", (long long)r[0].grad_steps,
            (long long)r[1].grad_steps, (long long)r[0].episodes, (long long)r[1].episodes);
  check_weights("dqn", dirs[0], dirs[1], tg_dqn_defaults().learning_rate, (int)r[0].grad_steps);
}

/* PPO on CartPole: 2 iterations of 4 envs x 32 steps, 2 epochs of 4 minibatches: 16 updates, on both devices. */
static void check_ppo(void) {
  char dirs[2][300];
  tg_ppo_result r[2];
  for (int k = 0; k < 2; k++) {
    tg_ppo_config c = tg_ppo_defaults();
    c.num_envs = 4, c.num_steps = 32, c.total_timesteps = 256, c.update_epochs = 2, c.log_every = 1000, c.seed = 2;
    c.device = k ? (tg_device){TG_VULKAN, 0} : tg_cpu(0);
    snprintf(dirs[k], sizeof dirs[k], "%s/ppo_%s", g_dir, k ? "vk" : "cpu");
    tg_env *env = NULL;
    CHECK_OK(tg_env_cartpole_new(4, 2, 500, &env));
    CHECK_OK(tg_ppo_train(&c, env, dirs[k], &r[k]));
    tg_env_free(env);
  }
  CHECK(r[0].updates == 16 && r[1].updates == 16);
  check_weights("ppo", dirs[0], dirs[1], tg_ppo_defaults().learning_rate, 16);
}

/* A run stopped after 1 step on vulkan:0 and resumed there ends bitwise as the uninterrupted one. */
static void check_resume(tg_model_kind kind, const tg_bars *bars) {
  const char *m = tg_train_model_name(kind);
  char full[64], part[64], pa[1100], pb[1100];
  snprintf(full, sizeof full, "%s_vk_full", m), snprintf(part, sizeof part, "%s_vk_part", m);
  tg_train_config a = small(kind, "vulkan:0", full), b = small(kind, "vulkan:0", part);
  tg_train_result r;
  CHECK_OK(tg_train_run(&a, bars, &r));
  b.stop_after_step = 1;
  CHECK_OK(tg_train_run(&b, bars, &r));
  CHECK(r.interrupted && r.steps == 1);
  snprintf(b.resume, sizeof b.resume, "%s", b.out);
  b.stop_after_step = STEPS;
  CHECK_OK(tg_train_run(&b, bars, &r));
  CHECK(r.steps == STEPS);
  snprintf(pa, sizeof pa, "%s/weights.safetensors", a.out), snprintf(pb, sizeof pb, "%s/weights.safetensors", b.out);
  CHECK_MSG(tg_test_same_tensors(pa, pb), "%s: resumed on vulkan:0, the weights differ from the uninterrupted run's", m);
  snprintf(pa, sizeof pa, "%s/state.safetensors", a.out), snprintf(pb, sizeof pb, "%s/state.safetensors", b.out);
  CHECK_MSG(tg_test_same_tensors(pa, pb), "%s: resumed on vulkan:0, the optimizer state differs", m);
}

/* Once the data and its index tables are on vulkan:0 (the first epoch), an epoch moves nothing host to device: the
 * device counts every byte it is sent. */
static void check_staged(const tg_bars *bars) {
  tg_train_config c = tg_test_small_config(TG_MODEL_MLP, g_dir, "mlp_vk_epochs", 2);
  snprintf(c.device, sizeof c.device, "vulkan:0");
  tg_train_result r;
  CHECK_OK(tg_train_run(&c, bars, &r));
  CHECK_MSG(r.epochs_run == 2 && r.last.h2d_bytes == 0 && r.last.d2h_bytes > 0,
            "the second epoch on vulkan:0 moved %.0f bytes host to device (and %.0f back)", r.last.h2d_bytes,
            r.last.d2h_bytes);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  CHECK(mkdtemp(g_dir) != NULL);
  tg_bars bars;
  CHECK(tg_test_synth_bars(&bars, 600, 0.5, 3));
  check_parity(TG_MODEL_MLP, &bars);
  check_parity(TG_MODEL_TFT, &bars);
  check_parity(TG_MODEL_MAMBA2, &bars);
  check_parity(TG_MODEL_TRANSFORMER, &bars);
  check_dqn();
  check_ppo();
  check_resume(TG_MODEL_TFT, &bars);
  check_staged(&bars);
  tg_bars_free(&bars);
  tg_test_remove_tree(g_dir);
  return tg_test_finish();
}
