/* What DQN's and PPO's runs share as they open and stop: the run folder, resume or reset, metrics.csv, numeric stops. */
#include <string.h>
#include "agents/rl_shared.h"

tg_status rl_run_open(rl_run *b, const char *what, tg_env *env, const char *dir) {
  b->what = what, b->env = env, b->sp = tg_env_spec_of(env);
  if (!dir || !*dir || strlen(dir) >= sizeof b->dir)
    return tg_error(TG_ERR_INVALID, "%s: the run folder is empty or longer than %zu bytes", what, sizeof b->dir - 1);
  snprintf(b->dir, sizeof b->dir, "%s", dir);
  return tg_make_dirs(b->dir);
}

tg_status rl_run_start(rl_run *b, const rl_run_resume *rs, float *obs, const char *header, FILE *log) {
  int found = 0;
  tg_status st = rs->resume ? rs->load(rs->run, &found) : TG_OK;
  if (st == TG_OK && rs->resume && !found && log)
    fprintf(log, "%s holds no checkpoint (the run stopped before its first): starting it from the beginning\n", b->dir);
  if (st == TG_OK && !found) st = tg_env_reset(b->env, obs);
  return st == TG_OK ? rl_metrics_open(b->dir, header, found, *rs->position, b->what, &b->metrics) : st;
}

tg_status rl_numeric_stop(const rl_run *b, const char *why, const char *at, const char *unit, int64_t saved) {
  char w[768];
  snprintf(w, sizeof w, "%s", why); /* why may be tg_last_error's buffer, which tg_error rewrites */
  if (saved >= 0)
    return tg_error(TG_ERR_NUMERIC, "%s: %s at %s; stopped, the last good checkpoint (%s %lld) is kept in %s", b->what, w,
                    at, unit, (long long)saved, b->dir);
  return tg_error(TG_ERR_NUMERIC, "%s: %s at %s; stopped before any checkpoint was written", b->what, w, at);
}

void rl_run_close(rl_run *b) {
  if (b->metrics) fclose(b->metrics);
  b->metrics = NULL;
}
