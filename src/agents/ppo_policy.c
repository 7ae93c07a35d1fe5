/* A trained PPO run's policy: its actor from config.json and weights.safetensors, the most likely action per observation. */
#include <string.h>
#include "base/alloc.h"
#include "agents/ppo_internal.h"

struct tg_ppo_policy {
  rl_ppo_net net;
  tg_env_spec spec;
};

/* The policy for observations of spec; env (may be NULL) says whether windows are gathered. */
static tg_status policy_open(const char *run_dir, tg_env_spec spec, const tg_env *env, tg_device dev,
                             tg_ppo_policy **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "ppo policy: out is NULL");
  *out = NULL;
  tg_ppo_config c = tg_ppo_defaults();
  tg_status st = rl_policy_config(&PP_CONFIG_FILE, run_dir, spec, &c);
  if (st != TG_OK) return st;
  c.device = dev;
  tg_ppo_policy *p = tg_calloc(1, sizeof *p);
  if (!p) return tg_error(TG_ERR_NOMEM, "ppo policy: out of host memory");
  p->spec = spec;
  rl_ppo_net_cfg nc = pp_net_cfg(&c, spec.obs_dim, spec.n_actions, spec.n, 2, 0);
  nc.env = env;
  st = rl_ppo_net_open(&p->net, &nc);
  if (st == TG_OK) st = rl_policy_weights(run_dir, p->net.base.store);
  if (st != TG_OK) {
    rl_error e = rl_error_keep(st);
    tg_ppo_policy_free(p);
    return rl_error_raise(&e);
  }
  *out = p;
  return TG_OK;
}

tg_status tg_ppo_policy_load(const char *run_dir, tg_env_spec spec, tg_device dev, tg_ppo_policy **out) {
  return policy_open(run_dir, spec, NULL, dev, out);
}

tg_status tg_ppo_policy_load_env(const char *run_dir, const tg_env *env, tg_device dev, tg_ppo_policy **out) {
  if (!env) return tg_error(TG_ERR_INVALID, "ppo policy: env is NULL");
  return policy_open(run_dir, tg_env_spec_of(env), env, dev, out);
}

tg_status tg_ppo_policy_act(tg_ppo_policy *p, const float *obs, void *actions) {
  if (!p || !obs || !actions) return tg_error(TG_ERR_INVALID, "ppo policy act: policy, obs and actions are required");
  const float *pol;
  tg_status st = rl_ppo_net_eval(&p->net, obs, &pol, NULL);
  if (st != TG_OK) return st;
  int A = p->spec.n_actions;
  for (int i = 0; i < p->spec.n; i++) {
    if (A == 0) ((float *)actions)[i] = pol[i]; /* the Gaussian's mean (the env clips it) */
    else ((int32_t *)actions)[i] = rl_argmax(pol + (size_t)i * (size_t)A, A);
  }
  return TG_OK;
}

void tg_ppo_policy_free(tg_ppo_policy *p) {
  if (!p) return;
  rl_ppo_net_close(&p->net);
  tg_free(p);
}

tg_status tg_ppo_policy_values(tg_ppo_policy *p, const float *obs, float *logits, float *value) {
  if (!p || !obs) return tg_error(TG_ERR_INVALID, "ppo policy values: policy and obs are required");
  const float *l, *v;
  tg_status st = rl_ppo_net_eval(&p->net, obs, &l, &v);
  size_t n = (size_t)p->spec.n, A = (size_t)(p->spec.n_actions ? p->spec.n_actions : 1);
  if (st == TG_OK && logits) memcpy(logits, l, n * A * sizeof *logits);
  if (st == TG_OK && value) memcpy(value, v, n * sizeof *value);
  return st;
}
