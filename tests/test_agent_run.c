/* Agents run from a config without the command: RUN/env.json written and read back (a damaged one named), training and a bitwise resume, the evaluation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256];

static int exists(const char *dir, const char *file) {
  char p[1200];
  snprintf(p, sizeof p, "%s/%s", dir, file);
  FILE *f = fopen(p, "rb");
  if (f) fclose(f);
  return f != NULL;
}

static void put(const char *dir, const char *file, const char *text) {
  char p[1200];
  snprintf(p, sizeof p, "%s/%s", dir, file);
  FILE *f = fopen(p, "w");
  if (f) fputs(text, f), fclose(f);
}

static int same_file(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  unsigned char *x = tg_test_read_file(a, &na), *y = tg_test_read_file(b, &nb);
  int same = x && y && na == nb && memcmp(x, y, na) == 0;
  free(x), free(y);
  return same;
}

/* env.json: every member back as written; a damaged one is refused naming the file and the member. */
static void test_env_json(void) {
  char dir[300], model[16];
  snprintf(dir, sizeof dir, "%s/envjson", g_tmp);
  tg_agent_env e, back;
  tg_agent_env_defaults(&e);
  snprintf(e.kind, sizeof e.kind, "trading");
  e.n = 3, e.n_data = 2, e.window = 12, e.episode_len = 77, e.cost_bps = 2.5, e.slippage = 0.001;
  e.synth_signal = -0.25, e.synth_bars = 4321, e.synth_seed = 9, e.seed = 42, e.copy_windows = 1;
  snprintf(e.data[0], sizeof e.data[0], "a \"quoted\" path.csv");
  snprintf(e.data[1], sizeof e.data[1], "b.parquet");
  snprintf(e.read.tz, sizeof e.read.tz, "America/New_York");
  snprintf(e.tz, sizeof e.tz, "Europe/London");
  char mk[400];
  snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
  CHECK(system(mk) == 0);
  CHECK_OK(tg_agent_env_write(dir, "ppo", &e));
  CHECK_OK(tg_agent_env_read(dir, model, sizeof model, &back));
  CHECK(strcmp(model, "ppo") == 0);
  CHECK(memcmp(&e, &back, sizeof e) == 0);

  put(dir, "env.json", "{\"model\": \"dqn\", \"env\": \"trading\", \"window\": 8}\n"); /* members missing */
  CHECK_STATUS(tg_agent_env_read(dir, model, sizeof model, &back), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "/envjson/env.json") && strstr(tg_last_error(), "data_tz"), "%s", tg_last_error());
  put(dir, "env.json", "{\"model\": \"dqn\", \"env\": ");                               /* cut short */
  CHECK(tg_agent_env_read(dir, model, sizeof model, &back) != TG_OK);
  CHECK_MSG(strstr(tg_last_error(), "env.json") != NULL, "%s", tg_last_error());
  put(dir, "env.json", "{\"model\": \"a2c\"}\n");                                        /* not an agent */
  CHECK_STATUS(tg_agent_env_read(dir, model, sizeof model, &back), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "model"), "%s", tg_last_error());
  snprintf(mk, sizeof mk, "%s/none", g_tmp);
  CHECK_STATUS(tg_agent_env_read(mk, model, sizeof model, &back), TG_ERR_IO);
  CHECK_MSG(strstr(tg_last_error(), "none/env.json") != NULL, "%s", tg_last_error());
}

/* A small PPO on CartPole: 4 iterations of 4 x 64 steps, 16-unit networks. */
static void small_ppo(tg_agent_run_config *c, const char *name) {
  CHECK_OK(tg_agent_run_defaults("ppo", c));
  CHECK_OK(tg_agent_run_set(c, "total_timesteps", "1024"));
  CHECK_OK(tg_agent_run_set(c, "num_steps", "64"));
  CHECK_OK(tg_agent_run_set(c, "hidden", "16,16"));
  snprintf(c->out, sizeof c->out, "%s/%s", g_tmp, name);
  CHECK_OK(tg_agent_run_check(c));
}

static void test_train_and_resume(void) {
  static tg_agent_run_config c;
  static tg_agent_run_result r;
  small_ppo(&c, "whole");
  CHECK(c.env.n == 4); /* PPO's num_envs */
  CHECK_OK(tg_agent_run(&c, &r));
  CHECK(r.evaluated && !r.eval.trading && isfinite(r.eval.mean_return) && r.eval.mean_return >= 1);
  CHECK(r.ppo.iterations == 4);
  const char *files[] = {"config.json", "env.json", "metrics.csv", "weights.safetensors", "telemetry.csv", "report.html"};
  for (int i = 0; i < 6; i++) CHECK_MSG(exists(c.out, files[i]), "%s/%s", c.out, files[i]);
  CHECK_STATUS(tg_agent_run(&c, NULL), TG_ERR_INVALID); /* the folder holds a run */
  CHECK_MSG(strstr(tg_last_error(), "already holds a run") != NULL, "%s", tg_last_error());

  small_ppo(&c, "split");
  c.stop_after = 2;
  CHECK_OK(tg_agent_run(&c, &r));
  CHECK(!r.evaluated && r.ppo.iterations == 2);
  static tg_agent_run_config back;
  memset(&back, 0, sizeof back);
  char dir[300];
  snprintf(dir, sizeof dir, "%s/split", g_tmp);
  CHECK_OK(tg_agent_run_load(dir, &back));
  CHECK(back.resume && strcmp(back.model, "ppo") == 0 && back.ppo.num_steps == 64 && back.ppo.hidden[0] == 16);
  CHECK_OK(tg_agent_run_check(&back));
  CHECK_OK(tg_agent_run(&back, &r));
  CHECK(r.evaluated && r.ppo.iterations == 4);
  char a[600], b[600];
  snprintf(a, sizeof a, "%s/whole/weights.safetensors", g_tmp);
  snprintf(b, sizeof b, "%s/split/weights.safetensors", g_tmp);
  CHECK_MSG(same_file(a, b), "a resumed run differs from the uninterrupted one");
  snprintf(a, sizeof a, "%s/whole/optim.safetensors", g_tmp);
  snprintf(b, sizeof b, "%s/split/optim.safetensors", g_tmp);
  CHECK(same_file(a, b));
}

/* A DQN on the synthetic market: evaluated on the validation and test splits; tg_agent_evaluate gives the same. */
static void test_trading_eval(void) {
  static tg_agent_run_config c;
  static tg_agent_run_result r;
  CHECK_OK(tg_agent_run_defaults("dqn", &c));
  snprintf(c.env.kind, sizeof c.env.kind, "trading");
  c.env.synth_bars = 3000, c.env.window = 8, c.env.episode_len = 64;
  CHECK_OK(tg_agent_run_set(&c, "total_timesteps", "600"));
  CHECK_OK(tg_agent_run_set(&c, "learning_starts", "200"));
  CHECK_OK(tg_agent_run_set(&c, "buffer_size", "1000"));
  CHECK_OK(tg_agent_run_set(&c, "hidden", "16"));
  snprintf(c.out, sizeof c.out, "%s/dqnt", g_tmp);
  CHECK_OK(tg_agent_run_check(&c));
  CHECK_OK(tg_agent_run(&c, &r));
  CHECK(r.evaluated && r.eval.trading && r.eval.split[0].steps > 0 && r.eval.split[1].steps > 0);
  tg_agent_eval again;
  CHECK_OK(tg_agent_evaluate("dqn", &c.env, NULL, c.out, (tg_device){TG_CPU, 0}, NULL, &again));
  CHECK(again.split[1].steps == r.eval.split[1].steps && again.split[1].trades == r.eval.split[1].trades &&
        again.split[1].total_log_return == r.eval.split[1].total_log_return);
  /* settings checked before anything runs */
  CHECK_OK(tg_agent_run_defaults("dqn", &c));
  snprintf(c.env.data[c.env.n_data++], sizeof c.env.data[0], "x.csv");
  CHECK_STATUS(tg_agent_run_check(&c), TG_ERR_INVALID); /* --data on cartpole */
  CHECK_STATUS(tg_agent_run_set(&c, "frob", "1"), TG_ERR_INVALID);
  CHECK_STATUS(tg_agent_run_defaults("a2c", &c), TG_ERR_INVALID);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_agent_run_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  tg_set_threads(1);
  test_env_json();
  test_train_and_resume();
  test_trading_eval();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
