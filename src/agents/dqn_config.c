/* DQN settings: CleanRL's defaults and the settings engine's table of names and ranges (checks, config.json, resume). */
#include <stddef.h>
#include <string.h>
#include "agents/dqn_internal.h"

#define NUM(...) RL_NUM(tg_dqn_config, __VA_ARGS__)
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
    RL_HIDDEN_ROW(tg_dqn_config, TG_DQN_MAX_HIDDEN, "hidden layer widths, e.g. 120,84 (ReLU between)"),
    NUM("double_q", TG_SET_INT, double_q, 0, 1, 0, "1: Double DQN targets"),
    NUM("huber", TG_SET_INT, huber, 0, 1, 0, "1: Huber loss (delta 1); 0: MSE"),
    NUM("max_grad_norm", TG_SET_FLOAT, max_grad_norm, 0, 1e30, 0, "global gradient-norm clip (0: none)"),
    RL_SEED_ROW(tg_dqn_config, "initialisation, exploration and replay draws"),
    RL_PRECISION_ROW(tg_dqn_config),
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
const rl_config_file DQ_CONFIG_FILE = {&TABLE, "DQN", DQ_CONFIG_FORMAT, "dqn"};

tg_status tg_dqn_config_set(tg_dqn_config *c, const char *key, const char *value) {
  return rl_config_set(&DQ_CONFIG_FILE, c, key, value);
}

tg_status tg_dqn_config_check(const tg_dqn_config *c) {
  tg_status st = rl_config_check(&DQ_CONFIG_FILE, c, c->stop_after);
  if (st != TG_OK) return st;
  if (c->end_e > c->start_e)
    return tg_error(TG_ERR_INVALID, "dqn config: end_e %g is above start_e %g; epsilon only falls", (double)c->end_e,
                    (double)c->start_e);
  if (c->batch_size > c->buffer_size)
    return tg_error(TG_ERR_INVALID, "dqn config: batch_size %d is larger than buffer_size %lld", c->batch_size,
                    (long long)c->buffer_size);
  return TG_OK;
}

tg_status tg_dqn_config_load(const char *run_dir, tg_dqn_config *c) { return rl_config_load_run(&DQ_CONFIG_FILE, run_dir, c); }
