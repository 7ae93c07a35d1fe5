/* DQN settings: CleanRL's defaults and the settings engine's table of names and ranges (checks, config.json, resume). */
#include <stddef.h>
#include <string.h>
#include "agents/dqn_internal.h"

#define OFF(m) offsetof(tg_dqn_config, m)
/* a number row: key (its flag --key-with-dashes), type, member, closed range, may change on resume, help */
#define NUM(k, ty, m, l, h, resumable, hl) \
  {.key = k, .type = ty, .off = OFF(m), .lo = l, .hi = h, .flags = (resumable) ? TG_SET_RESUMABLE : 0u, .help = hl}
static const tg_setting SETTINGS[] = {
    NUM("total_timesteps", TG_SET_INT64, total_timesteps, 1, 1e15, 0, "vector steps to train (CleanRL's global_step)"),
    NUM("learning_rate", TG_SET_FLOAT, learning_rate, 1e-12, 10, 0, "Adam's learning rate"),
    NUM("adam_eps", TG_SET_FLOAT, adam_eps, 1e-30, 1, 0, "Adam's epsilon"),
    NUM("buffer_size", TG_SET_INT64, buffer_size, 1, 1e10, 0, "replay capacity in transitions"),
    NUM("gamma", TG_SET_FLOAT, gamma, 0, 1, 0, "discount"),
    NUM("tau", TG_SET_FLOAT, tau, 1e-9, 1, 0, "target update: 1 copies, < 1 is Polyak averaging"),
    NUM("target_network_frequency", TG_SET_INT64, target_network_frequency, 1, 1e15, 0, "steps between target updates"),
    NUM("batch_size", TG_SET_INT, batch_size, 1, 1e7, 0, "transitions per gradient step"),
    NUM("start_e", TG_SET_FLOAT, start_e, 0, 1, 0, "epsilon at step 0"),
    NUM("end_e", TG_SET_FLOAT, end_e, 0, 1, 0, "final epsilon"),
    NUM("exploration_fraction", TG_SET_FLOAT, exploration_fraction, 1e-9, 1, 0,
        "fraction of total_timesteps over which epsilon falls linearly"),
    NUM("learning_starts", TG_SET_INT64, learning_starts, 0, 1e15, 0, "steps before the first gradient step"),
    NUM("train_frequency", TG_SET_INT64, train_frequency, 1, 1e15, 0, "steps between gradient steps"),
    {.key = "hidden", .type = TG_SET_NUMS, .off = OFF(hidden), .lo = 1, .hi = 1e6, .elem = TG_SET_INT,
     .count_off = OFF(n_hidden), .max_n = TG_DQN_MAX_HIDDEN, .help = "hidden layer widths, e.g. 120,84 (ReLU between)"},
    NUM("double_q", TG_SET_INT, double_q, 0, 1, 0, "1: Double DQN targets"),
    NUM("huber", TG_SET_INT, huber, 0, 1, 0, "1: Huber loss (delta 1); 0: MSE"),
    NUM("max_grad_norm", TG_SET_FLOAT, max_grad_norm, 0, 1e30, 0, "global gradient-norm clip (0: none)"),
    {.key = "seed", .type = TG_SET_UINT64, .off = OFF(seed), .help = "initialisation, exploration and replay draws"},
    {.key = "precision", .type = TG_SET_ENUM, .off = OFF(precision), .names = tg_precision_names,
     .help = "fp32 (default), bf16 (GEMM operands in bf16 with f32 accumulation, f32 weights and Adam state) or "
             "auto (bf16 where the device has native bf16 GEMMs and a hidden layer is at least 128 wide, else fp32)"},
    NUM("log_every", TG_SET_INT64, log_every, 1, 1e15, 1, "steps between log lines and metrics.csv rows"),
    NUM("ckpt_every", TG_SET_INT64, ckpt_every, 0, 1e15, 1, "steps between checkpoints (0: only at the end)"),
};

tg_dqn_config tg_dqn_defaults(void) {
  tg_dqn_config c;
  memset(&c, 0, sizeof c);
  c.total_timesteps = 500000;
  c.learning_rate = 2.5e-4f;
  c.adam_eps = 1e-8f;
  c.buffer_size = 10000;
  c.gamma = 0.99f;
  c.tau = 1.0f;
  c.target_network_frequency = 500;
  c.batch_size = 128;
  c.start_e = 1.0f;
  c.end_e = 0.05f;
  c.exploration_fraction = 0.5f;
  c.learning_starts = 10000;
  c.train_frequency = 10;
  c.n_hidden = 2;
  c.hidden[0] = 120;
  c.hidden[1] = 84;
  c.seed = 1;
  c.device = tg_cpu(0);
  c.log_every = 10000;
  c.ckpt_every = 100000;
  return c;
}

static const tg_settings TABLE = {"dqn config", SETTINGS, (int)(sizeof SETTINGS / sizeof SETTINGS[0]), 0, 1,
                                  RL_CONFIG_EXTRA};
static const rl_config_file CONFIG_FILE = {&TABLE, "DQN", DQ_CONFIG_FORMAT};

tg_status tg_dqn_config_set(tg_dqn_config *c, const char *key, const char *value) {
  if (!c) return tg_error(TG_ERR_INVALID, "dqn config: NULL config");
  return tg_settings_set(&TABLE, c, key, value);
}

tg_status tg_dqn_config_check(const tg_dqn_config *c) {
  tg_status st = tg_settings_check(&TABLE, c);
  if (st != TG_OK) return st;
  if (c->end_e > c->start_e)
    return tg_error(TG_ERR_INVALID, "dqn config: end_e %g is above start_e %g; epsilon only falls", (double)c->end_e,
                    (double)c->start_e);
  if (c->batch_size > c->buffer_size)
    return tg_error(TG_ERR_INVALID, "dqn config: batch_size %d is larger than buffer_size %lld", c->batch_size,
                    (long long)c->buffer_size);
  if (c->stop_after < 0) return tg_error(TG_ERR_INVALID, "dqn config: stop_after %lld must be >= 0", (long long)c->stop_after);
  return TG_OK;
}

tg_status tg_dqn_config_load(const char *run_dir, tg_dqn_config *c) { return rl_config_load_run(&CONFIG_FILE, run_dir, c); }

char *dq_config_json(const tg_dqn_config *c, const tg_env *env) { return rl_config_json(&CONFIG_FILE, c, c->device, env); }

tg_status dq_config_load(const char *path, tg_dqn_config *c, dq_env_id *env) { return rl_config_load(&CONFIG_FILE, path, c, env); }

const char *dq_config_diff(const tg_dqn_config *a, const tg_dqn_config *b) {
  const tg_setting *s = tg_settings_diff(&TABLE, a, b);
  return s ? s->key : NULL;
}
