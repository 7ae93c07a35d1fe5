/* A trained DQN run's greedy policy: its Q-network from config.json and weights.safetensors, argmax per observation. */
#include <string.h>
#include "base/alloc.h"
#include "agents/dqn_internal.h"

struct tg_dqn_policy {
  tg_env_spec spec;
  rl_net net;       /* the Q-network: act is obs [n, obs_dim] -> Q [n, n_actions] */
  tg_tensor *q;
  float *hq;        /* [n, n_actions] host copy of Q on a device */
};

void tg_dqn_policy_free(tg_dqn_policy *p) {
  if (!p) return;
  rl_net_close(&p->net, NULL, 0);
  tg_free(p->hq);
  tg_free(p);
}

/* The Q-network of c acting on n observations, on dev; env (may be NULL) says whether windows are gathered. */
static tg_status policy_net(tg_dqn_policy *p, const tg_dqn_config *c, const tg_env *env, tg_device dev) {
  int64_t xs[2] = {p->spec.n, p->spec.obs_dim};
  rl_mlp_spec ms = rl_mlp_torch("q", c->n_hidden, c->hidden, p->spec.n_actions);
  tg_status st = rl_net_open(&p->net, "dqn policy", dev, c->seed, p->spec.n, p->spec.obs_dim, env);
  if (st == TG_OK && !(p->net.act = tg_graph_new(p->net.store, "dqn_policy")))
    st = tg_error(TG_ERR_NOMEM, "dqn policy: out of memory");
  if (st != TG_OK) return st;
  tg_graph *g = p->net.act;
  p->q = rl_mlp(g, rl_obs_input(g, &p->net.src, tg_input(g, "obs", TG_F32, 2, xs)), &ms); /* [n, A] */
  st = rl_plan(g, dev, 0, c->precision); /* inference: no gradient buffers */
  if (st == TG_OK) st = rl_net_bind_act(&p->net);
  if (st == TG_OK && !p->net.host && !(p->hq = tg_malloc((size_t)p->spec.n * (size_t)p->spec.n_actions * sizeof(float))))
    st = tg_error(TG_ERR_NOMEM, "dqn policy: out of host memory");
  return st;
}

/* The policy for observations of spec; env (may be NULL) says whether windows are gathered. */
static tg_status policy_open(const char *run_dir, tg_env_spec spec, const tg_env *env, tg_device dev,
                             tg_dqn_policy **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "dqn policy: out is NULL");
  *out = NULL;
  tg_dqn_config c = tg_dqn_defaults();
  tg_status st = rl_policy_config(&DQ_CONFIG_FILE, run_dir, spec, &c);
  if (st != TG_OK) return st;
  tg_dqn_policy *p = tg_calloc(1, sizeof *p);
  if (!p) return tg_error(TG_ERR_NOMEM, "dqn policy: out of memory");
  p->spec = spec;
  st = policy_net(p, &c, env, dev);
  if (st == TG_OK) st = rl_policy_weights(run_dir, p->net.store);
  if (st != TG_OK) {
    rl_error e = rl_error_keep(st);
    tg_dqn_policy_free(p);
    return rl_error_raise(&e);
  }
  *out = p;
  return TG_OK;
}

tg_status tg_dqn_policy_load(const char *run_dir, tg_env_spec spec, tg_device dev, tg_dqn_policy **out) {
  return policy_open(run_dir, spec, NULL, dev, out);
}

tg_status tg_dqn_policy_load_env(const char *run_dir, const tg_env *env, tg_device dev, tg_dqn_policy **out) {
  if (!env) return tg_error(TG_ERR_INVALID, "dqn policy: env is NULL");
  return policy_open(run_dir, tg_env_spec_of(env), env, dev, out);
}

tg_status tg_dqn_policy_act(tg_dqn_policy *p, const float *obs, int32_t *actions) {
  if (!p || !obs || !actions) return tg_error(TG_ERR_INVALID, "dqn policy act: policy, obs and actions are required");
  size_t n = (size_t)p->spec.n, A = (size_t)p->spec.n_actions;
  const float *q;
  tg_status st = rl_net_act(&p->net, obs);
  if (st == TG_OK) st = rl_read_out(p->net.host, p->net.dev, p->q, p->hq, n * A, &q);
  if (st != TG_OK) return st;
  for (size_t i = 0; i < n; i++) actions[i] = rl_argmax(q + i * A, (int)A);
  return TG_OK;
}

tg_status tg_dqn_policy_values(tg_dqn_policy *p, const float *obs, float *q) {
  if (!p || !obs || !q) return tg_error(TG_ERR_INVALID, "dqn policy values: policy, obs and q are required");
  size_t count = (size_t)p->spec.n * (size_t)p->spec.n_actions;
  const float *v;
  tg_status st = rl_net_act(&p->net, obs);
  if (st == TG_OK) st = rl_read_out(p->net.host, p->net.dev, p->q, p->hq, count, &v);
  if (st == TG_OK) memcpy(q, v, count * sizeof *q);
  return st;
}
