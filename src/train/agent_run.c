/* tg_agent_run: an agent's environment built from its config, the run folder, training, evaluation and the report. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "base/files.h"
#include "base/run_lock.h"
#include "io/ckpt_set.h"
#include "tickgrad/agent_run.h"
#include "tickgrad/report.h"
#include "tickgrad/telemetry.h"

static void default_out(char *out, size_t cap, const tg_agent_run_config *c) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  snprintf(out, cap, "runs/%s-%s-%04d%02d%02d-%02d%02d%02d", c->model, c->env.kind, tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* DIR/telemetry.csv at 1 Hz while the agent trains (a resumed run starts it afresh); a failure is a warning. */
static tg_telemetry *telemetry_start(const char *dir, tg_device dev, FILE *log) {
  char path[TG_PATH_MAX + 32];
  tg_telemetry *tel = NULL;
  snprintf(path, sizeof path, "%s/telemetry.csv", dir);
  if (tg_telemetry_start(path, tg_telemetry_gpu_for(dev), 1.0, &tel) != TG_OK) {
    if (log) fprintf(log, "warning: no telemetry: %s\n", tg_last_error());
  } else if (log) {
    fprintf(log, "telemetry: %s once a second (%s)\n", path, tg_telemetry_nvml_status(tel));
  }
  return tel;
}

static tg_status train(const tg_agent_run_config *c, tg_env *env, const char *dir, tg_agent_run_result *r) {
  tg_status st;
  FILE *log = c->log;
  tg_telemetry *tel = telemetry_start(dir, c->device, log);
  if (strcmp(c->model, "dqn") == 0) {
    tg_dqn_config dc = c->dqn;
    dc.device = c->device, dc.log = log, dc.stop_after = c->stop_after, dc.resume = c->resume;
    st = tg_dqn_train(&dc, env, dir, &r->dqn);
    r->interrupted = r->dqn.interrupted;
    if (st == TG_OK && log && r->interrupted)
      fprintf(log, "interrupted: stopped after step %lld; checkpoint in %s; continue with: tickgrad train --resume %s\n",
              (long long)r->dqn.steps, dir, dir);
    else if (st == TG_OK && log)
      fprintf(log, "done: %lld steps, %lld episodes, mean return of the last 100 %.1f, %.1f s, %.0f env steps/s; run in %s\n",
              (long long)r->dqn.steps, (long long)r->dqn.episodes, r->dqn.mean_return, r->dqn.seconds,
              r->dqn.env_steps_per_s, dir);
  } else {
    tg_ppo_config pc = c->ppo;
    pc.device = c->device, pc.log = log, pc.stop_after = c->stop_after, pc.resume = c->resume;
    st = tg_ppo_train(&pc, env, dir, &r->ppo);
    r->interrupted = r->ppo.interrupted;
    if (st == TG_OK && log && r->interrupted)
      fprintf(log, "interrupted: stopped after iteration %lld; checkpoint in %s; continue with: tickgrad train --resume "
              "%s\n", (long long)r->ppo.iterations, dir, dir);
    else if (st == TG_OK && log)
      fprintf(log, "done: %lld iterations, %lld env steps, %lld episodes, mean return of the last 100 %.1f, %.1f s, "
              "%.0f env steps/s; run in %s\n",
              (long long)r->ppo.iterations, (long long)r->ppo.env_steps, (long long)r->ppo.episodes,
              r->ppo.mean_return, r->ppo.seconds, r->ppo.env_steps_per_s, dir);
  }
  if (tel && tg_telemetry_stop(tel) != TG_OK && log) fprintf(log, "warning: %s\n", tg_last_error());
  return st;
}

/* The run folder, locked for this run (*lock); a new run's refused when it holds a run already, then its env.json. */
static tg_status start_folder(const tg_agent_run_config *c, const char *dir, int *lock) {
  char cfg[TG_PATH_MAX + 32];
  snprintf(cfg, sizeof cfg, "%s/config.json", dir);
  tg_status st = c->resume ? TG_OK : tg_make_dirs(dir);
  if (st == TG_OK) st = tg_run_lock(dir, "train", lock);
  if (st != TG_OK || c->resume) return st;
  if (tg_file_exists(cfg) && tg_ckpt_exists(dir))
    return tg_error(TG_ERR_INVALID, "%s already holds a run; give another --out, or --resume %s", dir, dir);
  if (tg_file_exists(cfg) && c->log) /* the agent writes its config.json anew */
    fprintf(c->log, "%s holds a run that stopped before its first checkpoint; starting over in it\n", dir);
  return tg_agent_env_write(dir, c->model, &c->env);
}

tg_status tg_agent_run(const tg_agent_run_config *c, tg_agent_run_result *out) {
  tg_agent_run_result local;
  tg_agent_run_result *r = out ? out : &local;
  memset(r, 0, sizeof *r);
  char *dir = r->out;
  if (c->out[0]) snprintf(dir, sizeof r->out, "%s", c->out);
  else default_out(dir, sizeof r->out, c);
  tg_bars bars;
  tg_bars_init(&bars);
  int trading = strcmp(c->env.kind, "trading") == 0, trained = 0, lock = -1;
  tg_env *env = NULL;
  tg_status st = trading ? tg_agent_env_bars(&c->env, c->log, &bars) : TG_OK;
  if (st == TG_OK) st = tg_agent_env_make(&c->env, trading ? &bars : NULL, c->env.n, 0, &env);
  if (st == TG_OK) st = start_folder(c, dir, &lock);
  if (st == TG_OK) {
    tg_env_spec s = tg_env_spec_of(env);
    char dname[32];
    if (c->log)
      fprintf(c->log, "training %s on %s (%d instance%s, obs %d, %d actions) on %s into %s\n", c->model,
              tg_env_name(env), s.n, s.n == 1 ? "" : "s", s.obs_dim, s.n_actions,
              tg_device_str(c->device, dname, sizeof dname), dir);
    st = train(c, env, dir, r);
    trained = 1;
  }
  tg_env_free(env);
  if (st == TG_OK && c->stop_after <= 0 && !r->interrupted) {
    st = tg_agent_evaluate(c->model, &c->env, trading ? &bars : NULL, dir, c->device, c->log, &r->eval);
    r->evaluated = st == TG_OK;
  }
  tg_bars_free(&bars);
  if (trained) { /* also after a NaN stop; a warning, not a failure */
    char err[1024];
    snprintf(err, sizeof err, "%s", st == TG_OK ? "" : tg_last_error());
    if (tg_report_write(dir, c->log) != TG_OK && c->log)
      fprintf(c->log, "warning: report not written: %s\n", tg_last_error());
    if (st != TG_OK) tg_error(st, "%s", err); /* the run's error, not the report's */
  }
  tg_run_unlock(lock);
  return st;
}
