/* A trained agent's greedy policy without the command: its evaluation over a split, and its backtest (positions, costs, errors). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256], g_run[512];
static tg_agent_env g_env;

/* A small DQN on the synthetic market (3000 minute bars, window 8), trained once for every test here. */
static int train_run(void) {
  static tg_agent_run_config c;
  CHECK_OK(tg_agent_run_defaults("dqn", &c));
  snprintf(c.env.kind, sizeof c.env.kind, "trading");
  c.env.synth_bars = 3000, c.env.window = 8, c.env.episode_len = 64, c.env.cost_bps = 2;
  const char *kv[][2] = {{"total_timesteps", "600"}, {"learning_starts", "200"}, {"buffer_size", "1000"}, {"hidden", "16"}};
  for (int i = 0; i < 4; i++) CHECK_OK(tg_agent_run_set(&c, kv[i][0], kv[i][1]));
  snprintf(c.out, sizeof c.out, "%s", g_run);
  c.stop_after = 600; /* no evaluation: the tests below do it */
  CHECK_OK(tg_agent_run_check(&c));
  g_env = c.env;
  return tg_agent_run(&c, NULL) == TG_OK;
}

/* The greedy policy over the test split: one episode of every decision bar; the same twice; the stats agree. */
static void test_episodes(void) {
  tg_bars bars;
  tg_env *env = NULL;
  tg_policy *p = NULL;
  CHECK_OK(tg_agent_env_bars(&g_env, NULL, &bars));
  CHECK_OK(tg_agent_env_make(&g_env, &bars, 1, TG_TEST, &env));
  CHECK_OK(tg_policy_load("dqn", g_run, env, (tg_device){TG_CPU, 0}, &p));
  double m1 = NAN, m2 = NAN;
  tg_trading_info ti;
  tg_trading_stats s;
  CHECK_OK(tg_policy_episodes(env, p, &m1));
  CHECK_OK(tg_env_trading_info(env, &ti));
  CHECK_OK(tg_env_trading_episode_stats(env, 0, &s));
  CHECK(isfinite(m1) && s.steps == ti.steps && s.steps > 100);
  CHECK_MSG(fabs(m1 - s.total_log_return) < 1e-4, "mean return %g, episode log return %g", m1, s.total_log_return);
  CHECK_OK(tg_policy_episodes(env, p, &m2));
  CHECK(m1 == m2); /* greedy and reset: the same episode */
  int32_t act = -1;
  float obs[3] = {(float)ti.first_bar, 0, 0}; /* omit_window: [t, position, unrealised] */
  CHECK_OK(tg_policy_act(p, obs, &act));
  CHECK(act >= 0 && act <= 2);
  tg_policy_free(p);
  tg_env_free(env);
  /* tg_agent_evaluate reports the same test split */
  tg_agent_eval ev;
  CHECK_OK(tg_agent_evaluate("dqn", &g_env, &bars, g_run, (tg_device){TG_CPU, 0}, NULL, &ev));
  CHECK(ev.trading && ev.split[1].steps == s.steps && ev.split[1].total_log_return == s.total_log_return);
  CHECK_STATUS(tg_policy_load("a2c", g_run, NULL, (tg_device){TG_CPU, 0}, &p), TG_ERR_INVALID);
  tg_bars_free(&bars);
}

/* The backtest: a position in {-1, 0, 1} per decision and the bar after, the env's costs, the split's bars. */
static void test_backtest(void) {
  tg_policy_bt_opts o = {"test", 0, NULL, tg_bt_defaults(), 0, NULL};
  tg_policy_bt r;
  CHECK_OK(tg_policy_backtest(g_run, &o, &r));
  CHECK(strcmp(r.name, "dqn policy") == 0 && strcmp(r.model, "dqn") == 0);
  CHECK(r.decisions > 100 && r.bt.n == r.decisions + 1);
  int whole = 1;
  for (int64_t t = 0; t < r.bt.n; t++) whole &= r.bt.target[t] == -1 || r.bt.target[t] == 0 || r.bt.target[t] == 1;
  CHECK(whole);
  CHECK(r.bt.target[r.bt.n - 1] == r.bt.target[r.bt.n - 2]); /* the bar after the last decision: no new order */
  CHECK(r.bt.equity[0] == 100000);
  /* the costs are the env's (2 bps) unless given: free trading ends no lower when there are trades */
  tg_policy_bt_opts free_o = o;
  free_o.costs_given = 1; /* tg_bt_defaults: no costs */
  tg_policy_bt f;
  CHECK_OK(tg_policy_backtest(g_run, &free_o, &f));
  CHECK(f.bt.n == r.bt.n && memcmp(f.bt.target, r.bt.target, (size_t)r.bt.n * sizeof(double)) == 0);
  CHECK(r.bt.n_trades == 0 || f.bt.equity[f.bt.n - 1] > r.bt.equity[r.bt.n - 1]);
  /* the validation split comes before the test split */
  tg_policy_bt_opts val_o = o;
  val_o.split = "val";
  tg_policy_bt v;
  CHECK_OK(tg_policy_backtest(g_run, &val_o, &v));
  CHECK(v.bt.n > 0 && v.bt.ts[v.bt.n - 1] < r.bt.ts[0]);
  tg_policy_bt_free(&v);
  tg_policy_bt_free(&f);
  tg_policy_bt_free(&r);
  /* errors: a split that is not a policy's, a CartPole run, no run */
  tg_policy_bt x;
  val_o.split = "all";
  CHECK_STATUS(tg_policy_backtest(g_run, &val_o, &x), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "val or test split") != NULL);
  char cp[600];
  snprintf(cp, sizeof cp, "%s/cartpole", g_tmp);
  tg_agent_env e;
  tg_agent_env_defaults(&e);
  char mk[700];
  snprintf(mk, sizeof mk, "mkdir -p '%s'", cp);
  CHECK(system(mk) == 0);
  CHECK_OK(tg_agent_env_write(cp, "ppo", &e));
  CHECK_STATUS(tg_policy_backtest(cp, &o, &x), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "not on a market") != NULL, "%s", tg_last_error());
  snprintf(cp, sizeof cp, "%s/none", g_tmp);
  CHECK(tg_policy_backtest(cp, &o, &x) != TG_OK);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_policy_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  snprintf(g_run, sizeof g_run, "%s/dqn", g_tmp);
  tg_set_threads(1);
  if (train_run()) {
    test_episodes();
    test_backtest();
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
