/* An agent run's greedy policy evaluated after training: CartPole's new episodes, or the market's validation and test splits. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tickgrad/agent_run.h"

static tg_status cartpole(const char *model, const tg_agent_env *e0, const char *dir, tg_device dev, FILE *log,
                          tg_agent_eval *out) {
  tg_env *env = NULL;
  tg_policy *p = NULL;
  tg_agent_env e = *e0;
  e.seed = e0->seed + 1000003; /* episodes the training never saw */
  tg_status st = tg_agent_env_make(&e, NULL, 10, 0, &env);
  if (st == TG_OK) st = tg_policy_load(model, dir, env, dev, &p);
  if (st == TG_OK) st = tg_policy_episodes(env, p, &out->mean_return);
  tg_policy_free(p);
  tg_env_free(env);
  if (st != TG_OK) return tg_error(st, "evaluation: %s", tg_last_error());
  if (log) fprintf(log, "evaluation: greedy policy, 10 new episodes: mean return %.1f (500 is the most)\n", out->mean_return);
  return TG_OK;
}

static tg_status trading(const char *model, const tg_agent_env *e, const tg_bars *bars, const char *dir, tg_device dev,
                         FILE *log, tg_agent_eval *out) {
  static const char *names[2] = {"validation", "test"};
  if (log) {
    fprintf(log, "evaluation: greedy policy over each split in order, after costs (%.3g bps + slippage %.3g):\n",
            e->cost_bps, e->slippage);
    fprintf(log, "  %-10s %8s %10s %10s %10s %10s %8s %9s\n", "split", "bars", "log_ret", "sharpe", "bh_log_ret",
            "bh_sharpe", "trades", "exposure");
  }
  for (int k = 0; k < 2; k++) {
    tg_env *env = NULL;
    tg_policy *p = NULL;
    double mean;
    tg_trading_stats *s = &out->split[k];
    tg_status st = tg_agent_env_make(e, bars, 1, k + 1, &env);
    if (st == TG_OK) st = tg_policy_load(model, dir, env, dev, &p);
    if (st == TG_OK) st = tg_policy_episodes(env, p, &mean);
    if (st == TG_OK) st = tg_env_trading_episode_stats(env, 0, s);
    tg_policy_free(p);
    tg_env_free(env);
    if (st != TG_OK) return tg_error(st, "evaluation on %s: %s", names[k], tg_last_error());
    if (log)
      fprintf(log, "  %-10s %8lld %10.4f %10.2f %10.4f %10.2f %8lld %9.2f\n", names[k], (long long)s->steps,
              s->total_log_return, s->sharpe, s->bh_log_return, s->bh_sharpe, (long long)s->trades, s->exposure);
  }
  return TG_OK;
}

tg_status tg_agent_evaluate(const char *model, const tg_agent_env *e, const tg_bars *bars, const char *dir,
                            tg_device dev, FILE *log, tg_agent_eval *out) {
  memset(out, 0, sizeof *out);
  out->mean_return = NAN;
  if (strcmp(e->kind, "trading") != 0) return cartpole(model, e, dir, dev, log, out);
  out->trading = 1;
  if (bars) return trading(model, e, bars, dir, dev, log, out);
  tg_bars own;
  tg_status st = tg_agent_env_bars(e, log, &own);
  if (st == TG_OK) st = trading(model, e, &own, dir, dev, log, out);
  tg_bars_free(&own);
  return st;
}
