/* A DQN or PPO run's trading env rebuilt from its env.json, its greedy action at each decision bar of a split, the engine. */
#include <stdlib.h>
#include <string.h>
#include "tickgrad/agents.h"
#include "tickgrad/backtest.h"

/* The env's position for a discrete action: 0 short, 1 flat, 2 long. */
static double action_position(int32_t act) { return (double)act - 1.0; }

static tg_status decisions(const char *run, const char *model, tg_env *env, const tg_trading_info *ti, double *target) {
  tg_policy *pol = NULL;
  tg_status st = tg_policy_load(model, run, env, (tg_device){TG_CPU, 0}, &pol);
  if (st != TG_OK) return tg_error(st, "backtest: %s", tg_last_error());
  tg_env_spec sp = tg_env_spec_of(env);
  float *obs = malloc((size_t)sp.obs_dim * sizeof *obs), rew;
  uint8_t term, trunc;
  tg_env_out eo = {.obs = obs, .reward = &rew, .terminated = &term, .truncated = &trunc};
  st = obs ? tg_env_reset(env, obs) : tg_error(TG_ERR_NOMEM, "backtest: out of memory");
  for (int64_t k = 0; st == TG_OK && k < ti->steps; k++) {
    int64_t row = 0;
    int32_t act = 1;
    st = tg_env_trading_bar(env, 0, &row, NULL);
    if (st == TG_OK) st = tg_policy_act(pol, obs, &act);
    if (st == TG_OK) target[row - ti->first_bar] = action_position(act);
    if (st == TG_OK) st = tg_env_step(env, &act, &eo);
  }
  target[ti->steps] = ti->steps ? target[ti->steps - 1] : 0.0; /* the bar after the last decision: no fill */
  free(obs);
  tg_policy_free(pol);
  return st;
}

/* The run's env settings with o's costs and data; the split's number, -1 when it is not val or test. */
static tg_status settle(const char *run, const tg_policy_bt_opts *o, tg_agent_env *e, tg_bt_opts *costs, int *split,
                        tg_policy_bt *r) {
  const char *s = o->split ? o->split : "test";
  tg_status st = tg_agent_env_read(run, r->model, sizeof r->model, e);
  if (st != TG_OK) return tg_error(st, "backtest: %s", tg_last_error());
  if (strcmp(e->kind, "trading") != 0)
    return tg_error(TG_ERR_INVALID, "backtest: %s is a %s policy on %s, not on a market", run, r->model, e->kind);
  *split = !strcmp(s, "test") ? TG_TEST : !strcmp(s, "val") ? TG_VAL : -1;
  if (*split < 0)
    return tg_error(TG_ERR_INVALID, "backtest: a policy is backtested on its env's val or test split, not '%s'", s);
  *costs = o->o;
  if (!o->costs_given) {
    costs->cost_bps = e->cost_bps;
    costs->slippage = e->slippage;
    if (o->log) fprintf(o->log, "costs: the run's env: %g bps, slippage %g\n", e->cost_bps, e->slippage);
  }
  if (o->n_data) {
    e->n_data = 0; /* the given bars replace the run's own */
    for (int i = 0; i < o->n_data && i < TG_AGENT_MAX_DATA; i++)
      snprintf(e->data[e->n_data++], sizeof e->data[0], "%s", o->data[i]);
  }
  snprintf(r->name, sizeof r->name, "%s policy", r->model);
  return TG_OK;
}

tg_status tg_policy_backtest(const char *run, const tg_policy_bt_opts *o, tg_policy_bt *r) {
  memset(r, 0, sizeof *r);
  tg_agent_env e;
  tg_bt_opts costs;
  int split = 0;
  tg_bars bars;
  tg_bars_init(&bars);
  tg_env *env = NULL;
  tg_trading_info ti;
  double *target = NULL;
  tg_status st = settle(run, o, &e, &costs, &split, r);
  if (st == TG_OK && (st = tg_agent_env_bars(&e, o->log, &bars)) == TG_OK) st = tg_agent_env_make(&e, &bars, 1, split, &env);
  if (st == TG_OK) st = tg_env_trading_info(env, &ti);
  if (st == TG_OK && !(target = malloc((size_t)(ti.steps + 1) * sizeof *target)))
    st = tg_error(TG_ERR_NOMEM, "backtest: out of memory");
  if (st == TG_OK) st = decisions(run, r->model, env, &ti, target);
  if (st == TG_OK) {
    tg_bars view; /* the last decision fills at the next bar's open */
    tg_bar_column *cols = bars.n_cols ? malloc((size_t)bars.n_cols * sizeof *cols) : NULL; /* quotes, contracts */
    tg_bars_view(&bars, ti.first_bar, ti.first_bar + ti.steps + 1, cols, &view);
    r->decisions = ti.steps;
    snprintf(r->source, sizeof r->source, "%s", bars.source);
    if (o->log)
      fprintf(o->log, "decisions: %lld bars of the %s split (after the window and feature warm-up)\n",
              (long long)ti.steps, o->split ? o->split : "test");
    st = bars.n_cols && !cols ? tg_error(TG_ERR_NOMEM, "backtest: out of memory")
                              : tg_backtest_run(&view, target, &costs, &r->bt);
    free(cols);
  }
  free(target);
  tg_env_free(env);
  tg_bars_free(&bars);
  return st;
}

void tg_policy_bt_free(tg_policy_bt *r) { tg_backtest_free(&r->bt); }
