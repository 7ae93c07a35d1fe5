/* The greedy policy of a trained DQN or PPO run, and its evaluation: every instance of an env until one episode each ends. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tickgrad/agents.h"
#include "tickgrad/rl_agents.h"

struct tg_policy {
  tg_dqn_policy *dqn;
  tg_ppo_policy *ppo;
};

tg_status tg_policy_load(const char *model, const char *run_dir, const tg_env *env, tg_device dev, tg_policy **out) {
  *out = NULL;
  if (!tg_agent_is_model(model)) return tg_error(TG_ERR_INVALID, "policy: model '%s': want dqn or ppo", model ? model : "");
  tg_policy *p = calloc(1, sizeof *p);
  if (!p) return tg_error(TG_ERR_NOMEM, "policy: out of memory");
  tg_status st = strcmp(model, "dqn") == 0 ? tg_dqn_policy_load_env(run_dir, env, dev, &p->dqn)
                                           : tg_ppo_policy_load_env(run_dir, env, dev, &p->ppo);
  if (st != TG_OK) {
    free(p);
    return tg_error(st, "policy: %s", tg_last_error());
  }
  *out = p;
  return TG_OK;
}

tg_status tg_policy_act(tg_policy *p, const float *obs, int32_t *actions) {
  return p->dqn ? tg_dqn_policy_act(p->dqn, obs, actions) : tg_ppo_policy_act(p->ppo, obs, actions);
}

void tg_policy_free(tg_policy *p) {
  if (!p) return;
  tg_dqn_policy_free(p->dqn);
  tg_ppo_policy_free(p->ppo);
  free(p);
}

tg_status tg_policy_episodes(tg_env *env, tg_policy *p, double *mean_return) {
  tg_env_spec s = tg_env_spec_of(env);
  size_t no = (size_t)s.n * (size_t)s.obs_dim;
  float *obs = malloc(no * sizeof *obs), *rew = malloc((size_t)s.n * sizeof *rew);
  int32_t *act = malloc((size_t)s.n * sizeof *act), *len = malloc((size_t)s.n * sizeof *len);
  uint8_t *term = malloc((size_t)s.n), *trunc = malloc((size_t)s.n), *seen = calloc((size_t)s.n, 1);
  double *ret = malloc((size_t)s.n * sizeof *ret), sum = 0;
  int left = s.n;
  tg_status st = obs && rew && act && len && term && trunc && seen && ret ? tg_env_reset(env, obs)
                                                                          : tg_error(TG_ERR_NOMEM, "out of memory");
  while (st == TG_OK && left > 0) {
    tg_env_out out = {.obs = obs, .reward = rew, .terminated = term, .truncated = trunc, .ep_return = ret, .ep_length = len};
    st = tg_policy_act(p, obs, act);
    if (st == TG_OK) st = tg_env_step(env, act, &out);
    for (int i = 0; st == TG_OK && i < s.n; i++)
      if ((term[i] || trunc[i]) && !seen[i]) {
        seen[i] = 1, left--;
        sum += ret[i];
      }
  }
  free(obs), free(rew), free(act), free(len), free(term), free(trunc), free(seen), free(ret);
  *mean_return = st == TG_OK ? sum / s.n : NAN;
  return st;
}
