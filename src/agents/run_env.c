/* An agent run's environment from its settings: defaults, its bars (files or the synthetic market), the env itself. */
#include <stdio.h>
#include <string.h>
#include "tickgrad/agents.h"
#include "tickgrad/synth.h"

int tg_agent_is_model(const char *m) { return m && (strcmp(m, "dqn") == 0 || strcmp(m, "ppo") == 0); }

void tg_agent_env_defaults(tg_agent_env *e) {
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

tg_status tg_agent_env_bars(const tg_agent_env *e, FILE *log, tg_bars *bars) {
  tg_bars_init(bars);
  if (e->n_data == 0) {
    tg_synth_config s = tg_synth_defaults();
    s.bars = e->synth_bars;
    s.signal = e->synth_signal;
    s.seed = (uint64_t)e->synth_seed;
    if (tg_synth_generate(&s, bars) != TG_OK) return tg_error(TG_ERR_INVALID, "synthetic market: %s", tg_last_error());
    if (log)
      fprintf(log, "data: the synthetic market, %ld bars, planted signal %g, seed %ld\n", e->synth_bars,
              e->synth_signal, e->synth_seed);
    return TG_OK;
  }
  tg_read_opts ro = tg_read_settings_opts(&e->read, log);
  const char *paths[TG_AGENT_MAX_DATA];
  for (int i = 0; i < e->n_data; i++) paths[i] = e->data[i];
  tg_status st = tg_bars_read_paths(e->n_data, paths, &ro, bars);
  if (st == TG_OK && log)
    fprintf(log, "data: %lld bars from %d file%s\n", (long long)bars->n, e->n_data, e->n_data == 1 ? "" : "s");
  return st;
}

tg_status tg_agent_env_make(const tg_agent_env *e, const tg_bars *bars, int n, int split, tg_env **env) {
  tg_status st;
  *env = NULL;
  if (strcmp(e->kind, "cartpole") == 0) {
    st = tg_env_cartpole_new(n, (uint64_t)e->seed, 500, env);
  } else if (strcmp(e->kind, "trading") == 0) {
    tg_trading_cfg t = tg_trading_defaults();
    t.window = e->window;
    t.episode_len = e->episode_len;
    t.cost_bps = e->cost_bps;
    t.slippage = e->slippage;
    t.split = split;
    t.seed = (uint64_t)e->seed;
    t.omit_window = !e->copy_windows; /* the agent gathers windows on its device */
    if (e->tz[0]) t.tz = e->tz;
    st = bars ? tg_env_trading_new(n, bars, &t, env) : tg_error(TG_ERR_INVALID, "no bars for the trading env");
  } else {
    st = tg_error(TG_ERR_INVALID, "unknown kind (want cartpole or trading)");
  }
  return st == TG_OK ? st : tg_error(st, "environment %s: %s", e->kind, tg_last_error());
}
