/* What DQN's and PPO's networks share: the device, the trained store with its optimizer and step, the acting graph's input. */
#include <stdio.h>
#include "graph/backend.h"
#include "agents/rl_internal.h"
#include "tickgrad/device.h"

tg_status rl_net_open(rl_net *b, const char *what, tg_device dev, uint64_t seed, int n_act, int obs_dim, const tg_env *env) {
  b->dev = dev, b->n_act = n_act, b->obs_dim = obs_dim;
  b->host = tg_device_is_host(dev); /* cpu:1 takes the device path (copies), as a test of it */
  tg_status st = rl_backend_check(what, dev);
  if (st != TG_OK) return st;
  if (!(b->store = tg_store_new(dev, seed))) return tg_error(TG_ERR_NOMEM, "%s: out of memory for the parameter store", what);
  if (!b->host) st = rl_dev_zeros(dev, (size_t)n_act * (size_t)obs_dim * sizeof(float), (void **)&b->d_obs);
  return st == TG_OK ? rl_obs_open(&b->src, env, dev) : st;
}

tg_status rl_net_bind_act(rl_net *b) {
  int64_t os[2] = {b->n_act, b->obs_dim};
  tg_status st = b->host ? TG_OK : rl_bind(b->act, "obs", b->dev, TG_F32, 2, os, b->d_obs);
  return st == TG_OK ? rl_obs_bind(b->act, &b->src) : st;
}

tg_status rl_net_train(rl_net *b, tg_graph *train, tg_tensor *loss, const tg_optim_config *optim) {
  tg_status st = tg_optim_new(b->store, optim, &b->opt);
  return st == TG_OK ? tg_step_new(train, loss, b->opt, &b->step) : st;
}

tg_status rl_net_act(rl_net *b, const float *obs) {
  int64_t os[2] = {b->n_act, b->obs_dim};
  tg_status st = b->host ? rl_bind(b->act, "obs", b->dev, TG_F32, 2, os, (float *)obs) /* read only: graphs never write inputs */
                         : tg_backend_for(b->dev.kind)->from_host(b->dev, b->d_obs, obs,
                                                                  (size_t)b->n_act * (size_t)b->obs_dim * sizeof(float));
  return st == TG_OK ? tg_graph_run(b->act) : st;
}

void rl_net_close(rl_net *b, tg_graph *const *graphs, int n) {
  tg_step_free(b->step);
  tg_optim_free(b->opt);
  for (int k = 0; k < n; k++) tg_graph_free(graphs[k]);
  tg_graph_free(b->act);
  tg_store_free(b->store);
  rl_obs_close(&b->src);
  if (!b->host) rl_dev_free(b->dev, (void *const[]){b->d_obs}, 1);
}

rl_error rl_error_keep(tg_status st) {
  rl_error e = {.st = st};
  snprintf(e.why, sizeof e.why, "%s", tg_last_error());
  return e;
}

tg_status rl_error_raise(const rl_error *e) { return tg_error(e->st, "%s", e->why); }
