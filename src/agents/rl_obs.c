/* The agents' observation front-end: a trading env's window gathered from its feature table on the agent's device. */
#include <string.h>
#include "graph/backend.h"
#include "agents/rl_internal.h"

/* A trading env whose observations leave the window to the agent (omit_window); 0 for any other env. */
static int gathers(const tg_env *env, tg_trading_info *info) {
  if (!env || strcmp(tg_env_name(env), "trading") != 0) return 0;
  if (tg_env_trading_info(env, info) != TG_OK) return 0;
  return info->omit_window && tg_env_spec_of(env).obs_dim == 3;
}

tg_status rl_obs_open(rl_obs_src *o, const tg_env *env, tg_device dev) {
  memset(o, 0, sizeof *o);
  tg_trading_info info;
  if (!gathers(env, &info)) return TG_OK;
  const tg_tensor *t = tg_env_trading_features(env); /* [rows, f] f32 on the host */
  if (!t || t->dtype != TG_F32 || t->ndim != 2 || t->shape[0] != info.rows || t->shape[1] != info.f)
    return tg_error(TG_ERR_INVALID, "rl obs: the trading env's feature table is not f32 [%lld, %d]",
                    (long long)info.rows, info.f);
  const tg_backend *be = tg_backend_for(dev.kind);
  if (!be) return rl_backend_check("rl obs", dev);
  size_t bytes = (size_t)info.rows * (size_t)info.f * sizeof(float);
  tg_status st = be->alloc(dev, bytes > 0 ? bytes : sizeof(float), (void **)&o->table);
  if (st == TG_OK && bytes > 0) st = be->from_host(dev, o->table, t->data, bytes);
  if (st != TG_OK) {
    rl_obs_close(o);
    return st;
  }
  o->gather = 1;
  o->window = info.window;
  o->f = info.f;
  o->rows = info.rows;
  o->dev = dev;
  return TG_OK;
}

void rl_obs_close(rl_obs_src *o) {
  const tg_backend *be = tg_backend_for(o->dev.kind);
  if (o->table && be) be->free(o->dev, o->table);
  memset(o, 0, sizeof *o);
}


tg_tensor *rl_obs_input(tg_graph *g, const rl_obs_src *o, tg_tensor *obs) {
  if (!o->gather || !obs || tg_graph_status(g) != TG_OK) return obs;
  int64_t B = obs->shape[0], W = o->window, F = o->f;
  int64_t ts[2] = {o->rows, F}, bs[1] = {B}, xs[2] = {B, W * F};
  tg_tensor *table = tg_input(g, RL_OBS_TABLE, TG_F32, 2, ts);                     /* [rows, F] */
  tg_tensor *t = tg_reshape(g, tg_slice(g, obs, 1, 0, 1), 1, bs);                 /* [B] */
  tg_tensor *win = tg_gather_rows(g, table, tg_window_rows(g, t, W, o->rows));     /* [B, W, F] */
  tg_tensor *parts[2] = {tg_reshape(g, win, 2, xs), tg_slice(g, obs, 1, 1, 2)};    /* [B, W*F], [B, 2] */
  if (!parts[0] || !parts[1]) return NULL; /* the graph's sticky error says why */
  return tg_concat(g, 2, parts, 1);                                               /* [B, W*F + 2] */
}

tg_status rl_obs_bind(tg_graph *g, const rl_obs_src *o) {
  if (!o->gather) return TG_OK;
  int64_t ts[2] = {o->rows, o->f};
  return rl_bind(g, RL_OBS_TABLE, o->dev, TG_F32, 2, ts, o->table);
}
