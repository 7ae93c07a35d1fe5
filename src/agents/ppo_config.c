/* PPO settings: CleanRL's CartPole defaults and the table of names and ranges behind checks, config.json and resume. */
#include <stddef.h>
#include <string.h>
#include "agents/ppo_internal.h"

_Static_assert(TG_PPO_MAX_HIDDEN <= RL_MAX_HIDDEN, "the settings engine holds at most RL_MAX_HIDDEN widths");

#define OFF(m) offsetof(tg_ppo_config, m)
static const rl_setting SETTINGS[] = {
    {"total_timesteps", RL_I64, OFF(total_timesteps), 1, 1e15, 0, "environment steps to train (CleanRL's global_step)"},
    {"learning_rate", RL_F32, OFF(learning_rate), 1e-12, 10, 0, "Adam's learning rate"},
    {"anneal_lr", RL_INT, OFF(anneal_lr), 0, 1, 0, "1: the learning rate falls linearly to 0 over the run"},
    {"adam_eps", RL_F32, OFF(adam_eps), 1e-30, 1, 0, "Adam's epsilon"},
    {"num_envs", RL_INT, OFF(num_envs), 1, 1e6, 0, "environment instances (the env's n)"},
    {"num_steps", RL_INT, OFF(num_steps), 1, 1e7, 0, "vector steps per rollout"},
    {"num_minibatches", RL_INT, OFF(num_minibatches), 1, 1e7, 0, "minibatches per epoch"},
    {"update_epochs", RL_INT, OFF(update_epochs), 1, 1e4, 0, "passes over each rollout"},
    {"gamma", RL_F32, OFF(gamma), 0, 1, 0, "discount"},
    {"gae_lambda", RL_F32, OFF(gae_lambda), 0, 1, 0, "GAE lambda"},
    {"norm_adv", RL_INT, OFF(norm_adv), 0, 1, 0, "1: normalise advantages per minibatch"},
    {"clip_coef", RL_F32, OFF(clip_coef), 1e-9, 1e6, 0, "ratio clip epsilon (and the value clip)"},
    {"clip_vloss", RL_INT, OFF(clip_vloss), 0, 1, 0, "1: clipped value loss"},
    {"ent_coef", RL_F32, OFF(ent_coef), -1e6, 1e6, 0, "entropy bonus coefficient"},
    {"vf_coef", RL_F32, OFF(vf_coef), 0, 1e6, 0, "value loss coefficient"},
    {"max_grad_norm", RL_F32, OFF(max_grad_norm), 0, 1e30, 0, "global gradient-norm clip (0: none)"},
    {"target_kl", RL_F32, OFF(target_kl), 0, 1e30, 0, "stop an iteration's epochs above this approx_kl (0: never)"},
    {"hidden", RL_HIDDEN, OFF(hidden), 0, 0, 0, "hidden widths of the actor and the critic, e.g. 64,64 (tanh)"},
    {"seed", RL_U64, OFF(seed), 0, 0, 0, "initialisation, actions and minibatch permutations"},
    {"log_every", RL_I64, OFF(log_every), 1, 1e15, 1, "environment steps between log lines and metrics.csv rows"},
    {"ckpt_every", RL_I64, OFF(ckpt_every), 0, 1e15, 1, "iterations between checkpoints (0: only at the end)"},
};
#define N_SETTINGS ((int)(sizeof SETTINGS / sizeof SETTINGS[0]))

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

static const rl_settings TABLE = {"ppo", "PPO", PP_CONFIG_FORMAT, SETTINGS, N_SETTINGS, OFF(n_hidden), TG_PPO_MAX_HIDDEN,
                                  "64,64", 9};

tg_status tg_ppo_config_set(tg_ppo_config *c, const char *key, const char *value) {
  return rl_settings_set(&TABLE, c, key, value);
}


tg_status tg_ppo_config_check(const tg_ppo_config *c) {
  tg_status st = rl_settings_check(&TABLE, c);
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
  if (c->stop_after < 0) return tg_error(TG_ERR_INVALID, "ppo config: stop_after %lld must be >= 0", (long long)c->stop_after);
  return TG_OK;
}

tg_status tg_ppo_config_load(const char *run_dir, tg_ppo_config *c) { return rl_config_load_run(&TABLE, run_dir, c); }

char *pp_config_json(const tg_ppo_config *c, const tg_env *env) { return rl_config_json(&TABLE, c, c->device, env); }

tg_status pp_config_load(const char *path, tg_ppo_config *c, pp_env_id *env) { return rl_config_load(&TABLE, path, c, env); }

const char *pp_config_diff(const tg_ppo_config *a, const tg_ppo_config *b) { return rl_config_diff(&TABLE, a, b); }

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
  return n;
}
