/* An agent run's settings: defaults of a model, a run's env.json and config.json to resume it, one setting, the check. */
#include <stdio.h>
#include <string.h>
#include "tickgrad/agent_run.h"

tg_status tg_agent_run_defaults(const char *model, tg_agent_run_config *c) {
  memset(c, 0, sizeof *c);
  if (!tg_agent_is_model(model)) return tg_error(TG_ERR_INVALID, "model '%s': want dqn or ppo", model ? model : "");
  snprintf(c->model, sizeof c->model, "%s", model);
  tg_agent_env_defaults(&c->env);
  c->dqn = tg_dqn_defaults();
  c->ppo = tg_ppo_defaults();
  c->device = (tg_device){TG_CPU, 0};
  return TG_OK;
}

tg_status tg_agent_run_load(const char *dir, tg_agent_run_config *c) {
  char model[16];
  tg_agent_env e;
  tg_status st = tg_agent_env_read(dir, model, sizeof model, &e);
  if (st != TG_OK) return st;
  tg_device dev = c->device;
  FILE *log = c->log;
  long stop = c->stop_after;
  tg_agent_run_defaults(model, c);
  c->env = e;
  c->device = dev, c->log = log, c->stop_after = stop, c->resume = 1;
  snprintf(c->out, sizeof c->out, "%s", dir);
  return strcmp(model, "dqn") == 0 ? tg_dqn_config_load(dir, &c->dqn) : tg_ppo_config_load(dir, &c->ppo);
}

tg_status tg_agent_run_set(tg_agent_run_config *c, const char *key, const char *value) {
  return strcmp(c->model, "dqn") == 0 ? tg_dqn_config_set(&c->dqn, key, value) : tg_ppo_config_set(&c->ppo, key, value);
}

tg_status tg_agent_run_check(tg_agent_run_config *c) {
  if (!tg_agent_is_model(c->model)) return tg_error(TG_ERR_INVALID, "model '%s': want dqn or ppo", c->model);
  int dqn = strcmp(c->model, "dqn") == 0;
  if (!dqn && c->env.n) c->ppo.num_envs = c->env.n;
  if (!dqn) c->env.n = c->ppo.num_envs;
  if (dqn && !c->env.n) c->env.n = 1;
  tg_status st = dqn ? tg_dqn_config_check(&c->dqn) : tg_ppo_config_check(&c->ppo);
  if (st != TG_OK) return st;
  if (strcmp(c->env.kind, "cartpole") == 0 && c->env.n_data)
    return tg_error(TG_ERR_INVALID, "--data is for --env trading, not cartpole");
  if (strcmp(c->env.kind, "cartpole") != 0 && strcmp(c->env.kind, "trading") != 0)
    return tg_error(TG_ERR_INVALID, "--env %s: want cartpole or trading", c->env.kind);
  return TG_OK;
}
