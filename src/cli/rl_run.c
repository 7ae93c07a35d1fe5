/* A DQN or PPO run's environment (RUN/env.json), its bars and its greedy policy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/rl_run.h"
#include "graph/backend.h"
#include "base/files.h"
#include "base/json.h"

int rl_is_model(const char *m) { return m && (strcmp(m, "dqn") == 0 || strcmp(m, "ppo") == 0); }

void rl_env_defaults(rl_env_args *e) {
  memset(e, 0, sizeof *e);
  snprintf(e->kind, sizeof e->kind, "cartpole");
  tg_trading_cfg t = tg_trading_defaults();
  e->window = t.window;
  e->episode_len = t.episode_len;
  e->cost_bps = t.cost_bps;
  e->slippage = t.slippage;
  e->synth_signal = 0.3;
  e->synth_bars = 20000;
  e->synth_seed = 1;
  e->seed = 1;
}

static int json_num(const tg_json *root, const char *key, double *out) {
  const tg_json *v = tg_json_get(root, key);
  if (!v || (v->type != TG_JSON_INT && v->type != TG_JSON_REAL)) return 0;
  *out = v->num;
  return 1;
}

static int json_str(const tg_json *root, const char *key, char *out, size_t cap) {
  const tg_json *v = tg_json_get(root, key);
  if (!v || v->type != TG_JSON_STRING || v->len >= cap) return 0;
  memcpy(out, v->str, v->len + 1);
  return 1;
}

int rl_read_env_json(const char *dir, const char *who, char *model, size_t model_cap, rl_env_args *e) {
  char path[2048];
  snprintf(path, sizeof path, "%s/env.json", dir);
  size_t len = 0;
  char *text = NULL;
  tg_json_doc *doc = NULL;
  int ok = tg_read_file(path, &text, &len) == TG_OK && tg_json_parse(text, len, path, 0, &doc) == TG_OK;
  tg_free(text);
  if (!ok) {
    fprintf(stderr, "%s: %s\n", who, tg_last_error());
    return 0;
  }
  const tg_json *r = tg_json_root(doc), *data = tg_json_get(r, "data");
  double n, w, el, cost, slip, sig, sb, ss, es, cw = 1; /* no copy_windows: a run from before gathering, which copied */
  rl_env_defaults(e);
  ok = json_str(r, "model", model, model_cap) && rl_is_model(model) && json_str(r, "env", e->kind, sizeof e->kind) &&
       json_str(r, "data_tz", e->data_tz, sizeof e->data_tz) && json_str(r, "tz", e->tz, sizeof e->tz) &&
       json_num(r, "envs", &n) && json_num(r, "window", &w) && json_num(r, "episode_len", &el) &&
       json_num(r, "cost_bps", &cost) && json_num(r, "slippage", &slip) && json_num(r, "synth_signal", &sig) &&
       json_num(r, "synth_bars", &sb) && json_num(r, "synth_seed", &ss) && json_num(r, "env_seed", &es) && data &&
       data->type == TG_JSON_ARRAY && data->count <= RL_MAX_DATA;
  if (ok) {
    e->n = (int)n, e->window = (int)w, e->episode_len = (int)el, e->cost_bps = cost, e->slippage = slip;
    e->synth_signal = sig, e->synth_bars = (long)sb, e->synth_seed = (long)ss, e->seed = (long)es;
    json_num(r, "copy_windows", &cw);
    e->copy_windows = cw != 0;
    for (const tg_json *d = data->first; d && ok; d = d->next)
      ok = d->type == TG_JSON_STRING && d->len < sizeof e->data[0] &&
           (memcpy(e->data[e->n_data++], d->str, d->len + 1), 1);
  }
  tg_json_free(doc);
  if (!ok) fprintf(stderr, "%s: %s is not an env.json this version wrote\n", who, path);
  return ok;
}

/* ---- the environment ---- */

int rl_load_bars(const rl_env_args *e, tg_bars *bars) {
  if (e->n_data == 0) {
    tg_synth_config s = tg_synth_defaults();
    s.bars = e->synth_bars;
    s.signal = e->synth_signal;
    s.seed = (uint64_t)e->synth_seed;
    if (tg_synth_generate(&s, bars) != TG_OK) {
      fprintf(stderr, "tickgrad: synthetic market: %s\n", tg_last_error());
      return 0;
    }
    printf("data: the synthetic market, %ld bars, planted signal %g, seed %ld\n", e->synth_bars, e->synth_signal,
           e->synth_seed);
    return 1;
  }
  tg_read_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.tz = e->data_tz[0] ? e->data_tz : NULL;
  ro.warn = stderr;
  const char *paths[RL_MAX_DATA];
  for (int i = 0; i < e->n_data; i++) paths[i] = e->data[i];
  if (tg_bars_read_paths(e->n_data, paths, &ro, bars) != TG_OK) {
    fprintf(stderr, "tickgrad: %s\n", tg_last_error());
    return 0;
  }
  printf("data: %lld bars from %d file%s\n", (long long)bars->n, e->n_data, e->n_data == 1 ? "" : "s");
  return 1;
}

int rl_make_env(const rl_env_args *e, const tg_bars *bars, int n, int split, tg_env **env) {
  tg_status st;
  if (strcmp(e->kind, "cartpole") == 0) {
    st = tg_env_cartpole_new(n, (uint64_t)e->seed, 500, env);
  } else {
    tg_trading_cfg t = tg_trading_defaults();
    t.window = e->window;
    t.episode_len = e->episode_len;
    t.cost_bps = e->cost_bps;
    t.slippage = e->slippage;
    t.split = split;
    t.seed = (uint64_t)e->seed;
    t.omit_window = !e->copy_windows; /* the agent gathers windows on its device */
    if (e->tz[0]) t.tz = e->tz;
    st = tg_env_trading_new(n, bars, &t, env);
  }
  if (st != TG_OK) fprintf(stderr, "tickgrad: environment %s: %s\n", e->kind, tg_last_error());
  return st == TG_OK;
}

tg_status rl_policy_act(rl_policy *p, const float *obs, int32_t *act) {
  return p->dqn ? tg_dqn_policy_act(p->dqn, obs, act) : tg_ppo_policy_act(p->ppo, obs, act);
}

int rl_policy_load(const char *model, const char *dir, const tg_env *env, tg_device dev, rl_policy *p) {
  memset(p, 0, sizeof *p);
  tg_status st = strcmp(model, "dqn") == 0 ? tg_dqn_policy_load_env(dir, env, dev, &p->dqn)
                                           : tg_ppo_policy_load_env(dir, env, dev, &p->ppo);
  if (st != TG_OK) fprintf(stderr, "tickgrad: policy: %s\n", tg_last_error());
  return st == TG_OK;
}

void rl_policy_free(rl_policy *p) {
  tg_dqn_policy_free(p->dqn);
  tg_ppo_policy_free(p->ppo);
}
