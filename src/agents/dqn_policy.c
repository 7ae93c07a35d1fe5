/* A trained DQN run's greedy policy: its Q-network from config.json and weights.safetensors, argmax per observation. */
#include <string.h>
#include "tickgrad/device.h"
#include "graph/backend.h"
#include "agents/dqn_internal.h"
#include "tickgrad/checkpoint.h"
#include "io/finite.h"
#include "io/ckpt_set.h"

/* cpu:0's memory is the caller's: inputs are bound, outputs read in place; other devices copy. */
static int on_host(tg_device d) { return tg_device_is_host(d); }

struct tg_dqn_policy {
  tg_env_spec spec;
  tg_device dev;
  tg_store *store;
  tg_graph *g;      /* obs [n, obs_dim] -> Q [n, n_actions] */
  tg_tensor *q;
  float *d_obs;     /* [n, obs_dim] on the device (NULL on cpu:0: the caller's buffer is bound) */
  float *hq;        /* [n, n_actions] host copy of Q on a device */
  rl_obs_src src;   /* the observations' front-end (a gathering trading env's feature table on dev) */
};

void tg_dqn_policy_free(tg_dqn_policy *p) {
  if (!p) return;
  const tg_backend *be = tg_backend_for(p->dev.kind);
  if (p->d_obs && be) be->free(p->dev, p->d_obs);
  tg_graph_free(p->g);
  tg_store_free(p->store);
  rl_obs_close(&p->src);
  tg_free(p->hq);
  tg_free(p);
}

/* The run's network, checked against the env spec it will act on. */
static tg_status policy_config(const char *run_dir, tg_env_spec spec, tg_dqn_config *c) {
  char path[TG_PATH_MAX + 32];
  rl_env_id id;
  snprintf(path, sizeof path, "%s/config.json", run_dir);
  *c = tg_dqn_defaults();
  tg_status st = rl_config_load(&DQ_CONFIG_FILE, path, c, &id);
  if (st != TG_OK) return st;
  if (id.obs_dim != spec.obs_dim || id.n_actions != spec.n_actions)
    return tg_error(TG_ERR_INVALID, "dqn policy: %s was trained on observations of %d floats and %d actions; this env has "
                    "%d and %d", path, id.obs_dim, id.n_actions, spec.obs_dim, spec.n_actions);
  return TG_OK;
}

static tg_status policy_graph(tg_dqn_policy *p, const tg_dqn_config *c, const char *run_dir) {
  int64_t xs[2] = {p->spec.n, p->spec.obs_dim};
  rl_mlp_spec ms = rl_mlp_torch("q", c->n_hidden, c->hidden, p->spec.n_actions);
  char path[TG_PATH_MAX + 32];
  p->store = tg_store_new(p->dev, c->seed);
  p->g = p->store ? tg_graph_new(p->store, "dqn_policy") : NULL;
  if (!p->g) return tg_error(TG_ERR_NOMEM, "dqn policy: out of memory");
  p->q = rl_mlp(p->g, rl_obs_input(p->g, &p->src, tg_input(p->g, "obs", TG_F32, 2, xs)), &ms); /* [n, A] */
  tg_status st = rl_plan(p->g, p->dev, 0, c->precision); /* inference: no gradient buffers */
  if (st == TG_OK) st = rl_obs_bind(p->g, &p->src);
  snprintf(path, sizeof path, "%s/weights.safetensors", run_dir);
  if (st == TG_OK) st = tg_ckpt_check_run_files(run_dir); /* config.json and env.json as the run wrote them */
  if (st == TG_OK) st = tg_weights_check_finite(path);
  if (st == TG_OK) st = tg_store_load(p->store, path);
  return st;
}

static tg_status policy_buffers(tg_dqn_policy *p) {
  if (on_host(p->dev)) return TG_OK;
  const tg_backend *be = tg_backend_for(p->dev.kind);
  size_t n = (size_t)p->spec.n;
  int64_t xs[2] = {p->spec.n, p->spec.obs_dim};
  p->hq = tg_malloc(n * (size_t)p->spec.n_actions * sizeof(float));
  if (!p->hq) return tg_error(TG_ERR_NOMEM, "dqn policy: out of host memory");
  tg_status st = be->alloc(p->dev, n * (size_t)p->spec.obs_dim * sizeof(float), (void **)&p->d_obs);
  tg_tensor t;
  if (st == TG_OK) st = tg_tensor_view(&t, "obs", p->dev, TG_F32, 2, xs, p->d_obs);
  return st == TG_OK ? tg_graph_bind(p->g, "obs", &t) : st;
}

/* The policy for observations of spec; env (may be NULL) says whether windows are gathered. */
static tg_status policy_open(const char *run_dir, tg_env_spec spec, const tg_env *env, tg_device dev,
                             tg_dqn_policy **out) {
  if (!out || !run_dir) return tg_error(TG_ERR_INVALID, "dqn policy: run_dir and out are required");
  *out = NULL;
  if (spec.n < 1 || spec.obs_dim < 1 || spec.n_actions < 2)
    return tg_error(TG_ERR_INVALID, "dqn policy: env spec n %d, obs_dim %d, %d actions; need n, obs_dim >= 1 and 2 or "
                    "more discrete actions", spec.n, spec.obs_dim, spec.n_actions);
  if (!tg_backend_for(dev.kind)) return tg_error(TG_ERR_DEVICE, "dqn policy: the device's backend is not in this build");
  tg_dqn_config c;
  tg_status st = policy_config(run_dir, spec, &c);
  if (st != TG_OK) return st;
  tg_dqn_policy *p = tg_calloc(1, sizeof *p);
  if (!p) return tg_error(TG_ERR_NOMEM, "dqn policy: out of memory");
  p->spec = spec;
  p->dev = dev;
  st = rl_obs_open(&p->src, env, dev);
  if (st == TG_OK) st = policy_graph(p, &c, run_dir);
  if (st == TG_OK) st = policy_buffers(p);
  if (st != TG_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", tg_last_error());
    tg_dqn_policy_free(p);
    return tg_error(st, "%s", why);
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
  const tg_backend *be = tg_backend_for(p->dev.kind);
  const float *q = p->hq;
  tg_status st;
  if (on_host(p->dev)) {
    int64_t xs[2] = {p->spec.n, p->spec.obs_dim};
    tg_tensor t;
    st = tg_tensor_view(&t, "obs", p->dev, TG_F32, 2, xs, (void *)obs); /* read only */
    if (st == TG_OK) st = tg_graph_bind(p->g, "obs", &t);
  } else {
    st = be->from_host(p->dev, p->d_obs, obs, n * (size_t)p->spec.obs_dim * sizeof(float));
  }
  if (st == TG_OK) st = tg_graph_run(p->g);
  if (st != TG_OK) return st;
  if (on_host(p->dev)) q = (const float *)p->q->data;
  else if ((st = be->to_host(p->dev, p->hq, p->q->data, n * A * sizeof(float))) != TG_OK) return st;
  for (size_t i = 0; i < n; i++) actions[i] = rl_argmax(q + i * A, (int)A);
  return TG_OK;
}
