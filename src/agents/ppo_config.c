/* PPO settings: CleanRL's CartPole defaults and the settings engine's table of names and ranges (checks, config.json, resume). */
#include <stddef.h>
#include <string.h>
#include "agents/ppo_internal.h"

#define NUM(...) RL_NUM(tg_ppo_config, __VA_ARGS__)
static const tg_setting SETTINGS[] = {
    NUM("total_timesteps", TG_SET_INT64, total_timesteps, 1, 1e15, 0, "environment steps to train (CleanRL's global_step)"),
    NUM("learning_rate", TG_SET_FLOAT, learning_rate, 1e-12, 10, 0, "Adam's learning rate"),
    NUM("anneal_lr", TG_SET_INT, anneal_lr, 0, 1, 0, "1: the learning rate falls linearly to 0 over the run"),
    NUM("adam_eps", TG_SET_FLOAT, adam_eps, 1e-30, 1, 0, "Adam's epsilon"),
    NUM("num_envs", TG_SET_INT, num_envs, 1, 1e6, 0, "environment instances (the env's n)"),
    NUM("num_steps", TG_SET_INT, num_steps, 1, 1e7, 0, "vector steps per rollout"),
    NUM("num_minibatches", TG_SET_INT, num_minibatches, 1, 1e7, 0, "minibatches per epoch"),
    NUM("update_epochs", TG_SET_INT, update_epochs, 1, 1e4, 0, "passes over each rollout"),
    NUM("gamma", TG_SET_FLOAT, gamma, 0, 1, 0, "discount"),
    NUM("gae_lambda", TG_SET_FLOAT, gae_lambda, 0, 1, 0, "GAE lambda"),
    NUM("norm_adv", TG_SET_INT, norm_adv, 0, 1, 0, "1: normalise advantages per minibatch"),
    NUM("clip_coef", TG_SET_FLOAT, clip_coef, 1e-9, 1e6, 0, "ratio clip epsilon (and the value clip)"),
    NUM("clip_vloss", TG_SET_INT, clip_vloss, 0, 1, 0, "1: clipped value loss"),
    NUM("ent_coef", TG_SET_FLOAT, ent_coef, -1e6, 1e6, 0, "entropy bonus coefficient"),
    NUM("vf_coef", TG_SET_FLOAT, vf_coef, 0, 1e6, 0, "value loss coefficient"),
    NUM("max_grad_norm", TG_SET_FLOAT, max_grad_norm, 0, 1e30, 0, "global gradient-norm clip (0: none)"),
    NUM("target_kl", TG_SET_FLOAT, target_kl, 0, 1e30, 0, "stop an iteration's epochs above this approx_kl (0: never)"),
    RL_HIDDEN_ROW(tg_ppo_config, TG_PPO_MAX_HIDDEN, "hidden widths of the actor and the critic, e.g. 64,64 (tanh)"),
    RL_SEED_ROW(tg_ppo_config, "initialisation, actions and minibatch permutations"),
    RL_PRECISION_ROW(tg_ppo_config),
    NUM("log_every", TG_SET_INT64, log_every, 1, 1e15, 1, "environment steps between log lines and metrics.csv rows"),
    NUM("ckpt_every", TG_SET_INT64, ckpt_every, 0, 1e15, 1, "iterations between checkpoints (0: only at the end)"),
};

tg_ppo_config tg_ppo_defaults(void) {
  tg_ppo_config c;
  memset(&c, 0, sizeof c);
  c.total_timesteps = 500000;
  c.learning_rate = 2.5e-4f;
  c.anneal_lr = 1;
  c.adam_eps = 1e-5f;
  c.num_envs = 4;
  c.num_steps = 128;
  c.num_minibatches = 4;
  c.update_epochs = 4;
  c.gamma = 0.99f;
  c.gae_lambda = 0.95f;
  c.norm_adv = 1;
  c.clip_coef = 0.2f;
  c.clip_vloss = 1;
  c.ent_coef = 0.01f;
  c.vf_coef = 0.5f;
  c.max_grad_norm = 0.5f;
  c.target_kl = 0.0f;
  c.n_hidden = 2;
  c.hidden[0] = 64;
  c.hidden[1] = 64;
  c.seed = 1;
  c.device = tg_cpu(0);
  c.log_every = 10000;
  c.ckpt_every = 0;
  return c;
}

static const tg_settings TABLE = {"ppo config", SETTINGS, (int)(sizeof SETTINGS / sizeof SETTINGS[0]), 9, 1,
                                  RL_CONFIG_EXTRA};
const rl_config_file PP_CONFIG_FILE = {&TABLE, "PPO", PP_CONFIG_FORMAT, "ppo"};

tg_status tg_ppo_config_set(tg_ppo_config *c, const char *key, const char *value) {
  return rl_config_set(&PP_CONFIG_FILE, c, key, value);
}

tg_status tg_ppo_config_check(const tg_ppo_config *c) {
  tg_status st = rl_config_check(&PP_CONFIG_FILE, c, c->stop_after);
  if (st != TG_OK) return st;
  int64_t batch = (int64_t)c->num_envs * c->num_steps;
  if (batch % c->num_minibatches != 0 || batch / c->num_minibatches < 2)
    return tg_error(TG_ERR_INVALID,
                    "ppo config: the batch num_envs * num_steps = %lld does not split into %d minibatches of at least 2",
                    (long long)batch, c->num_minibatches);
  if (batch > INT32_MAX) return tg_error(TG_ERR_INVALID, "ppo config: the batch %lld is too large", (long long)batch);
  if (c->total_timesteps < batch)
    return tg_error(TG_ERR_INVALID, "ppo config: total_timesteps %lld is less than one rollout (num_envs * num_steps = %lld)",
                    (long long)c->total_timesteps, (long long)batch);
  return TG_OK;
}

tg_status tg_ppo_config_load(const char *run_dir, tg_ppo_config *c) { return rl_config_load_run(&PP_CONFIG_FILE, run_dir, c); }

rl_ppo_net_cfg pp_net_cfg(const tg_ppo_config *c, int obs_dim, int n_actions, int n_act, int mb, int64_t updates) {
  rl_ppo_net_cfg n;
  memset(&n, 0, sizeof n);
  n.dev = c->device;
  n.obs_dim = obs_dim;
  n.continuous = n_actions == 0; /* a tg_env's continuous action is one float per instance */
  n.n_actions = n_actions ? n_actions : 1;
  n.n_hidden = c->n_hidden;
  for (int k = 0; k < c->n_hidden; k++) n.hidden[k] = c->hidden[k];
  n.n_act = n_act;
  n.mb = mb;
  n.coefs = (tg_ppo_coefs){c->clip_coef, c->vf_coef, c->ent_coef, c->clip_vloss, c->norm_adv};
  n.optim = tg_optim_defaults(TG_ADAM);
  n.optim.lr = c->learning_rate;
  n.optim.eps = c->adam_eps;
  n.optim.clip_norm = c->max_grad_norm;
  if (c->anneal_lr && updates > 0) {
    n.optim.schedule.kind = TG_LR_LINEAR;
    n.optim.schedule.total_steps = updates;
    n.optim.schedule.final_frac = 0.0f;
  }
  n.seed = c->seed;
  n.precision = c->precision;
  return n;
}
