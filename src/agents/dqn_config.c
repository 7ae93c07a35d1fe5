/* DQN settings: CleanRL's defaults and the table of names and ranges behind checks, config.json and resume. */
#include <stddef.h>
#include <string.h>
#include "agents/dqn_internal.h"

_Static_assert(TG_DQN_MAX_HIDDEN <= RL_MAX_HIDDEN, "the settings engine holds at most RL_MAX_HIDDEN widths");

#define OFF(m) offsetof(tg_dqn_config, m)
static const rl_setting SETTINGS[] = {
    {"total_timesteps", RL_I64, OFF(total_timesteps), 1, 1e15, 0, "vector steps to train (CleanRL's global_step)"},
    {"learning_rate", RL_F32, OFF(learning_rate), 1e-12, 10, 0, "Adam's learning rate"},
    {"adam_eps", RL_F32, OFF(adam_eps), 1e-30, 1, 0, "Adam's epsilon"},
    {"buffer_size", RL_I64, OFF(buffer_size), 1, 1e10, 0, "replay capacity in transitions"},
    {"gamma", RL_F32, OFF(gamma), 0, 1, 0, "discount"},
    {"tau", RL_F32, OFF(tau), 1e-9, 1, 0, "target update: 1 copies, < 1 is Polyak averaging"},
    {"target_network_frequency", RL_I64, OFF(target_network_frequency), 1, 1e15, 0, "steps between target updates"},
    {"batch_size", RL_INT, OFF(batch_size), 1, 1e7, 0, "transitions per gradient step"},
    {"start_e", RL_F32, OFF(start_e), 0, 1, 0, "epsilon at step 0"},
    {"end_e", RL_F32, OFF(end_e), 0, 1, 0, "final epsilon"},
    {"exploration_fraction", RL_F32, OFF(exploration_fraction), 1e-9, 1, 0,
     "fraction of total_timesteps over which epsilon falls linearly"},
    {"learning_starts", RL_I64, OFF(learning_starts), 0, 1e15, 0, "steps before the first gradient step"},
    {"train_frequency", RL_I64, OFF(train_frequency), 1, 1e15, 0, "steps between gradient steps"},
    {"hidden", RL_HIDDEN, OFF(hidden), 0, 0, 0, "hidden layer widths, e.g. 120,84 (ReLU between)"},
    {"double_q", RL_INT, OFF(double_q), 0, 1, 0, "1: Double DQN targets"},
    {"huber", RL_INT, OFF(huber), 0, 1, 0, "1: Huber loss (delta 1); 0: MSE"},
    {"max_grad_norm", RL_F32, OFF(max_grad_norm), 0, 1e30, 0, "global gradient-norm clip (0: none)"},
    {"seed", RL_U64, OFF(seed), 0, 0, 0, "initialisation, exploration and replay draws"},
    {"log_every", RL_I64, OFF(log_every), 1, 1e15, 1, "steps between log lines and metrics.csv rows"},
    {"ckpt_every", RL_I64, OFF(ckpt_every), 0, 1e15, 1, "steps between checkpoints (0: only at the end)"},
};
#define N_SETTINGS ((int)(sizeof SETTINGS / sizeof SETTINGS[0]))

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

static const rl_settings TABLE = {"dqn", "DQN", DQ_CONFIG_FORMAT, SETTINGS, N_SETTINGS, OFF(n_hidden), TG_DQN_MAX_HIDDEN,
                                  "120,84", 0};

tg_status tg_dqn_config_set(tg_dqn_config *c, const char *key, const char *value) {
  return rl_settings_set(&TABLE, c, key, value);
}


tg_status tg_dqn_config_check(const tg_dqn_config *c) {
  tg_status st = rl_settings_check(&TABLE, c);
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

tg_status tg_dqn_config_load(const char *run_dir, tg_dqn_config *c) { return rl_config_load_run(&TABLE, run_dir, c); }

char *dq_config_json(const tg_dqn_config *c, const tg_env *env) { return rl_config_json(&TABLE, c, c->device, env); }

tg_status dq_config_load(const char *path, tg_dqn_config *c, dq_env_id *env) { return rl_config_load(&TABLE, path, c, env); }

const char *dq_config_diff(const tg_dqn_config *a, const tg_dqn_config *b) { return rl_config_diff(&TABLE, a, b); }
