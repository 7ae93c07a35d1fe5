/* `tickgrad train --model dqn|ppo --env cartpole|trading`: build the environment, train the agent, evaluate its policy. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli/cli.h"
#include "cli/rl_run.h"
#include "base/files.h"
#include "base/json.h"
#include "tickgrad/rl_agents.h"
#include "tickgrad/tickgrad.h"

#define RL_MAX_PAIRS 64

typedef struct rl_args {
  char model[8];
  const char *out, *resume, *device;
  long stop_after;
  rl_env_args env;
  int n_pairs;
  const char *key[RL_MAX_PAIRS], *value[RL_MAX_PAIRS]; /* agent settings (config.json names) */
  char keybuf[RL_MAX_PAIRS][64];
} rl_args;

static void rl_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad train --model dqn|ppo [--env cartpole|trading] [flags] [--KEY VALUE ...]\n"
          "       tickgrad train --resume RUN [--stop-after N] [--device D]\n"
          "Trains a policy in C from start to finish. DQN and PPO start from CleanRL's CartPole defaults; every\n"
          "agent setting is a flag named after its config.json key with dashes (--total-timesteps 500000,\n"
          "--learning-rate 2.5e-4, --hidden 120,84, --double-q 1, ...). Logs a line per reporting interval\n"
          "(and RUN/metrics.csv), checkpoints into RUN/, then evaluates the greedy policy: CartPole over 10\n"
          "episodes; trading on the validation and test splits in order, after costs, against buy and hold.\n"
          "RUN/telemetry.csv samples the process (and the GPU) once a second while it trains; RUN/report.html\n"
          "charts the run at the end (tickgrad report RUN writes it again).\n"
          "\n"
          "  --env S              cartpole (default) or trading\n"
          "  --envs N             environment instances stepped together (default: DQN 1, PPO --num-envs 4)\n"
          "  --data FILE...       trading: bar files of one instrument (default: the synthetic market)\n"
          "  --data-tz S, --tz S  trading: zone of naive timestamps; zone of the time features (default UTC)\n"
          "  --window N           trading: bars of features in an observation (default 32)\n"
          "  --cost-bps X         trading: commission per unit of position traded (default 1)\n"
          "  --slippage X         trading: fraction of the price lost per unit traded (default 0)\n"
          "  --episode-len N      trading: decisions per training episode (default 256)\n"
          "  --copy-windows       trading: the env copies each feature window into the observation (default:\n"
          "                       the agent keeps the feature table on its device and gathers windows there)\n"
          "  --synth-signal X     synthetic market: planted lag-1 signal in (-1, 1) (default 0.3)\n"
          "  --synth-bars N       synthetic market: bars (default 20000)\n"
          "  --synth-seed N       synthetic market: seed (default 1)\n"
          "  --env-seed N         the environment's own draws (default 1)\n"
          "  --device S           cpu or cuda[:N] (default cpu)\n"
          "  --out RUN            run folder (default runs/<model>-<env>-<timestamp>)\n"
          "  --resume RUN         continue RUN bitwise (its config.json and env.json)\n"
          "  --stop-after N       stop with a checkpoint after N steps (DQN) or iterations (PPO) in all\n"
          "exit codes: 0 done, 1 failure, 2 usage\n");
}

/* 1 when argv asks for an RL run: --model dqn|ppo, or --resume of a run that has env.json. */
int tg_cli_train_is_rl(int argc, char **argv) {
  for (int i = 0; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--model") == 0) return rl_is_model(argv[i + 1]);
    if (strcmp(argv[i], "--resume") == 0) {
      char p[2048];
      struct stat sb;
      snprintf(p, sizeof p, "%s/env.json", argv[i + 1]);
      if (stat(p, &sb) == 0) return 1;
    }
  }
  return 0;
}

static int parse_double(const char *flag, const char *v, double lo, double hi, double *out) {
  char *end = NULL;
  errno = 0;
  double x = v ? strtod(v, &end) : NAN;
  if (!v || *v == '\0' || *end != '\0' || errno || !(x >= lo && x <= hi))
    return tg_cli_usage_error("train", "%s %s: want a number in [%g, %g]", flag, v ? v : "(missing)", lo, hi), 0;
  *out = x;
  return 1;
}

/* One env flag; 0 when flag is not one, 1 when taken, -1 on a bad value (already reported). */
static int env_flag(rl_env_args *e, const char *f, const char *v) {
  long n;
  if (strcmp(f, "--env") == 0) {
    if (!v || (strcmp(v, "cartpole") != 0 && strcmp(v, "trading") != 0))
      return tg_cli_usage_error("train", "--env %s: want cartpole or trading", v ? v : "(missing)"), -1;
    snprintf(e->kind, sizeof e->kind, "%s", v);
  } else if (strcmp(f, "--envs") == 0) {
    if (!tg_cli_parse_long(f, v, 1, 65536, &n)) return -1;
    e->n = (int)n;
  } else if (strcmp(f, "--data-tz") == 0 || strcmp(f, "--tz") == 0) {
    if (!v) return tg_cli_usage_error("train", "%s needs a zone", f), -1;
    snprintf(f[2] == 'd' ? e->data_tz : e->tz, sizeof e->tz, "%s", v);
  } else if (strcmp(f, "--window") == 0) {
    if (!tg_cli_parse_long(f, v, 1, 4096, &n)) return -1;
    e->window = (int)n;
  } else if (strcmp(f, "--episode-len") == 0) {
    if (!tg_cli_parse_long(f, v, 2, 100000000, &n)) return -1;
    e->episode_len = (int)n;
  } else if (strcmp(f, "--cost-bps") == 0) {
    if (!parse_double(f, v, 0, 10000, &e->cost_bps)) return -1;
  } else if (strcmp(f, "--slippage") == 0) {
    if (!parse_double(f, v, 0, 0.5, &e->slippage)) return -1;
  } else if (strcmp(f, "--synth-signal") == 0) {
    if (!parse_double(f, v, -0.99, 0.99, &e->synth_signal)) return -1;
  } else if (strcmp(f, "--synth-bars") == 0) {
    if (!tg_cli_parse_long(f, v, 100, 100000000, &e->synth_bars)) return -1;
  } else if (strcmp(f, "--synth-seed") == 0) {
    if (!tg_cli_parse_long(f, v, 0, 2147483647, &e->synth_seed)) return -1;
  } else if (strcmp(f, "--env-seed") == 0) {
    if (!tg_cli_parse_long(f, v, 0, 2147483647, &e->seed)) return -1;
  } else {
    return 0;
  }
  return 1;
}

static int parse(int argc, char **argv, rl_args *a) {
  rl_env_defaults(&a->env);
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
      rl_usage(stdout);
      return -1;
    }
    if (strncmp(f, "--", 2) != 0) return tg_cli_usage_error("train", "unexpected argument '%s'", f);
    if (strcmp(f, "--data") == 0) {
      int n0 = a->env.n_data;
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
        if (a->env.n_data == RL_MAX_DATA) return tg_cli_usage_error("train", "more than %d --data paths", RL_MAX_DATA);
        snprintf(a->env.data[a->env.n_data++], sizeof a->env.data[0], "%s", argv[++i]);
      }
      if (a->env.n_data == n0) return tg_cli_usage_error("train", "--data needs at least one file");
      continue;
    }
    if (strcmp(f, "--copy-windows") == 0) {
      a->env.copy_windows = 1;
      continue;
    }
    if (!v) return tg_cli_usage_error("train", "%s needs a value", f);
    int e = env_flag(&a->env, f, v);
    if (e < 0) return TG_EXIT_USAGE;
    if (e == 0) {
      if (strcmp(f, "--model") == 0) {
        if (!rl_is_model(v)) return tg_cli_usage_error("train", "--model %s: want dqn or ppo here", v);
        snprintf(a->model, sizeof a->model, "%s", v);
      } else if (strcmp(f, "--out") == 0) {
        a->out = v;
      } else if (strcmp(f, "--resume") == 0) {
        a->resume = v;
      } else if (strcmp(f, "--device") == 0) {
        a->device = v;
      } else if (strcmp(f, "--stop-after") == 0) {
        if (!tg_cli_parse_long(f, v, 1, 1000000000, &a->stop_after)) return TG_EXIT_USAGE;
      } else { /* an agent setting: --learning-rate -> learning_rate, checked when applied */
        if (a->n_pairs == RL_MAX_PAIRS) return tg_cli_usage_error("train", "too many flags");
        char *k = a->keybuf[a->n_pairs];
        snprintf(k, sizeof a->keybuf[0], "%s", f + 2);
        for (char *p = k; *p; p++)
          if (*p == '-') *p = '_';
        a->key[a->n_pairs] = k;
        a->value[a->n_pairs++] = v;
      }
    }
    i++;
  }
  return 0;
}

/* ---- env.json: the environment of a run, so --resume rebuilds the same one ---- */

static int write_env_json(const char *dir, const char *model, const rl_env_args *e) {
  tg_json_buf b = {0};
  tg_json_buf_puts(&b, "{\n  \"model\": ");
  tg_json_buf_append_string(&b, model);
  tg_json_buf_puts(&b, ",\n  \"env\": ");
  tg_json_buf_append_string(&b, e->kind);
  tg_json_buf_printf(&b, ",\n  \"envs\": %d,\n  \"data\": [", e->n);
  for (int i = 0; i < e->n_data; i++) {
    if (i) tg_json_buf_puts(&b, ", ");
    tg_json_buf_append_string(&b, e->data[i]);
  }
  tg_json_buf_puts(&b, "],\n  \"data_tz\": ");
  tg_json_buf_append_string(&b, e->data_tz);
  tg_json_buf_puts(&b, ",\n  \"tz\": ");
  tg_json_buf_append_string(&b, e->tz);
  tg_json_buf_printf(&b,
                     ",\n  \"window\": %d,\n  \"episode_len\": %d,\n  \"cost_bps\": %.17g,\n  \"slippage\": %.17g,\n"
                     "  \"synth_signal\": %.17g,\n  \"synth_bars\": %ld,\n  \"synth_seed\": %ld,\n  \"env_seed\": %ld,\n"
                     "  \"copy_windows\": %d\n}\n",
                     e->window, e->episode_len, e->cost_bps, e->slippage, e->synth_signal, e->synth_bars,
                     e->synth_seed, e->seed, e->copy_windows);
  char path[2048];
  snprintf(path, sizeof path, "%s/env.json", dir);
  int ok = !b.oom && tg_write_atomic(path, b.data, b.len) == TG_OK;
  if (!ok) fprintf(stderr, "tickgrad train: cannot write %s: %s\n", path, b.oom ? "out of memory" : tg_last_error());
  tg_json_buf_free(&b);
  return ok;
}

/* ---- evaluation of the trained policy ---- */

/* Runs every instance of env with the greedy policy until each has finished one episode; returns
 * the mean return (NaN on error). */
static double run_episodes(tg_env *env, rl_policy *p) {
  tg_env_spec s = tg_env_spec_of(env);
  size_t no = (size_t)s.n * (size_t)s.obs_dim;
  float *obs = malloc(no * sizeof *obs), *rew = malloc((size_t)s.n * sizeof *rew);
  int32_t *act = malloc((size_t)s.n * sizeof *act), *len = malloc((size_t)s.n * sizeof *len);
  uint8_t *term = malloc((size_t)s.n), *trunc = malloc((size_t)s.n), *seen = calloc((size_t)s.n, 1);
  double *ret = malloc((size_t)s.n * sizeof *ret), sum = 0;
  int left = s.n, ok = obs && rew && act && len && term && trunc && seen && ret;
  ok = ok && tg_env_reset(env, obs) == TG_OK;
  while (ok && left > 0) {
    tg_env_out out = {.obs = obs, .reward = rew, .terminated = term, .truncated = trunc, .ep_return = ret, .ep_length = len};
    ok = rl_policy_act(p, obs, act) == TG_OK && tg_env_step(env, act, &out) == TG_OK;
    for (int i = 0; ok && i < s.n; i++)
      if ((term[i] || trunc[i]) && !seen[i]) {
        seen[i] = 1, left--;
        sum += ret[i];
      }
  }
  if (!ok) fprintf(stderr, "tickgrad train: evaluation: %s\n", tg_last_error());
  free(obs), free(rew), free(act), free(len), free(term), free(trunc), free(seen), free(ret);
  return ok ? sum / s.n : NAN;
}

static int evaluate_cartpole(const rl_args *a, const char *dir, tg_device dev) {
  tg_env *env = NULL;
  rl_env_args e = a->env;
  e.seed = a->env.seed + 1000003; /* episodes the training never saw */
  if (!rl_make_env(&e, NULL, 10, 0, &env)) return 0;
  rl_policy p;
  int ok = rl_policy_load(a->model, dir, env, dev, &p);
  double mean = ok ? run_episodes(env, &p) : NAN;
  if (ok) rl_policy_free(&p);
  tg_env_free(env);
  if (isnan(mean)) return 0;
  printf("evaluation: greedy policy, 10 new episodes: mean return %.1f (500 is the most)\n", mean);
  return 1;
}

static int evaluate_trading(const rl_args *a, const tg_bars *bars, const char *dir, tg_device dev) {
  static const char *names[2] = {"validation", "test"};
  printf("evaluation: greedy policy over each split in order, after costs (%.3g bps + slippage %.3g):\n",
         a->env.cost_bps, a->env.slippage);
  printf("  %-10s %8s %10s %10s %10s %10s %8s %9s\n", "split", "bars", "log_ret", "sharpe", "bh_log_ret",
         "bh_sharpe", "trades", "exposure");
  for (int k = 0; k < 2; k++) {
    tg_env *env = NULL;
    if (!rl_make_env(&a->env, bars, 1, k + 1, &env)) return 0;
    rl_policy p;
    int ok = rl_policy_load(a->model, dir, env, dev, &p);
    ok = ok && !isnan(run_episodes(env, &p));
    if (p.dqn || p.ppo) rl_policy_free(&p);
    tg_trading_stats s;
    ok = ok && tg_env_trading_episode_stats(env, 0, &s) == TG_OK;
    tg_env_free(env);
    if (!ok) {
      fprintf(stderr, "tickgrad train: evaluation on %s: %s\n", names[k], tg_last_error());
      return 0;
    }
    printf("  %-10s %8lld %10.4f %10.2f %10.4f %10.2f %8lld %9.2f\n", names[k], (long long)s.steps,
           s.total_log_return, s.sharpe, s.bh_log_return, s.bh_sharpe, (long long)s.trades, s.exposure);
  }
  return 1;
}

/* ---- the command ---- */

static void default_out(char *out, size_t cap, const rl_args *a) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  snprintf(out, cap, "runs/%s-%s-%04d%02d%02d-%02d%02d%02d", a->model, a->env.kind, tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* DIR/telemetry.csv at 1 Hz while the agent trains (a resumed run starts it afresh); a failure is a warning. */
static tg_telemetry *telemetry_start(const char *dir, tg_device dev) {
  char path[2048];
  tg_telemetry *tel = NULL;
  snprintf(path, sizeof path, "%s/telemetry.csv", dir);
  if (tg_telemetry_start(path, tg_telemetry_gpu_for(dev), 1.0, &tel) != TG_OK)
    fprintf(stderr, "tickgrad train: warning: no telemetry: %s\n", tg_last_error());
  else printf("telemetry: %s once a second (%s)\n", path, tg_telemetry_nvml_status(tel));
  return tel;
}

static int train_agent(const rl_args *a, tg_env *env, const char *dir, tg_device dev, tg_dqn_config *dc,
                       tg_ppo_config *pc) {
  tg_status st;
  tg_telemetry *tel = telemetry_start(dir, dev);
  if (dc) {
    dc->device = dev, dc->log = stdout, dc->stop_after = a->stop_after, dc->resume = a->resume != NULL;
    tg_dqn_result r;
    st = tg_dqn_train(dc, env, dir, &r);
    if (st == TG_OK)
      printf("done: %lld steps, %lld episodes, mean return of the last 100 %.1f, %.1f s, %.0f env steps/s; run in %s\n",
             (long long)r.steps, (long long)r.episodes, r.mean_return, r.seconds, r.env_steps_per_s, dir);
  } else {
    pc->device = dev, pc->log = stdout, pc->stop_after = a->stop_after, pc->resume = a->resume != NULL;
    tg_ppo_result r;
    st = tg_ppo_train(pc, env, dir, &r);
    if (st == TG_OK)
      printf("done: %lld iterations, %lld env steps, %lld episodes, mean return of the last 100 %.1f, %.1f s, "
             "%.0f env steps/s; run in %s\n",
             (long long)r.iterations, (long long)r.env_steps, (long long)r.episodes, r.mean_return, r.seconds,
             r.env_steps_per_s, dir);
  }
  if (tel && tg_telemetry_stop(tel) != TG_OK) fprintf(stderr, "tickgrad train: warning: %s\n", tg_last_error());
  if (st != TG_OK) {
    fflush(stdout);
    fprintf(stderr, "tickgrad train: %s\n", tg_last_error());
  }
  return st == TG_OK;
}

int tg_cmd_train_rl(int argc, char **argv) {
  static rl_args a;
  memset(&a, 0, sizeof a);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  if (a.resume) {
    if (a.model[0] || a.n_pairs || a.out || a.env.n_data)
      return tg_cli_usage_error("train", "--resume %s keeps the run's settings; only --device and --stop-after may be given",
                                a.resume);
    if (!rl_read_env_json(a.resume, "tickgrad train: resume", a.model, sizeof a.model, &a.env)) return TG_EXIT_FAIL;
  } else if (!a.model[0]) {
    return tg_cli_usage_error("train", "which model? give --model dqn or ppo");
  }
  int is_dqn = strcmp(a.model, "dqn") == 0;
  static tg_dqn_config dc;
  static tg_ppo_config pc;
  dc = tg_dqn_defaults(), pc = tg_ppo_defaults();
  if (a.resume && (is_dqn ? tg_dqn_config_load(a.resume, &dc) : tg_ppo_config_load(a.resume, &pc)) != TG_OK) {
    fprintf(stderr, "tickgrad train: resume: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  for (int i = 0; i < a.n_pairs; i++) {
    tg_status st = is_dqn ? tg_dqn_config_set(&dc, a.key[i], a.value[i]) : tg_ppo_config_set(&pc, a.key[i], a.value[i]);
    if (st != TG_OK) return tg_cli_usage_error("train", "--%s: %s", a.keybuf[i], tg_last_error());
  }
  if (!is_dqn && a.env.n) pc.num_envs = a.env.n;
  if (!is_dqn) a.env.n = pc.num_envs;
  if (is_dqn && !a.env.n) a.env.n = 1;
  if ((is_dqn ? tg_dqn_config_check(&dc) : tg_ppo_config_check(&pc)) != TG_OK)
    return tg_cli_usage_error("train", "%s", tg_last_error());
  if (strcmp(a.env.kind, "cartpole") == 0 && a.env.n_data)
    return tg_cli_usage_error("train", "--data is for --env trading, not cartpole");
  tg_device dev;
  if (tg_device_choose(a.device ? a.device : "cpu", &dev, NULL, 0) != TG_OK)
    return tg_cli_usage_error("train", "--device %s: %s", a.device ? a.device : "cpu", tg_last_error());

  char dir[1024];
  if (a.resume) snprintf(dir, sizeof dir, "%s", a.resume);
  else if (a.out) snprintf(dir, sizeof dir, "%s", a.out);
  else default_out(dir, sizeof dir, &a);
  tg_bars bars;
  memset(&bars, 0, sizeof bars);
  int trading = strcmp(a.env.kind, "trading") == 0, ok = 1, trained = 0;
  if (trading) ok = rl_load_bars(&a.env, &bars);
  tg_env *env = NULL;
  ok = ok && rl_make_env(&a.env, trading ? &bars : NULL, a.env.n, 0, &env);
  if (ok && !a.resume) {
    char cfg[2048];
    struct stat sb;
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    if (stat(cfg, &sb) == 0) {
      fprintf(stderr, "tickgrad train: %s already holds a run; give another --out, or --resume %s\n", dir, dir);
      ok = 0;
    } else if (tg_make_dirs(dir) != TG_OK) {
      fprintf(stderr, "tickgrad train: %s\n", tg_last_error());
      ok = 0;
    } else {
      ok = write_env_json(dir, a.model, &a.env);
    }
  }
  if (ok) {
    tg_env_spec s = tg_env_spec_of(env);
    char dname[32];
    printf("training %s on %s (%d instance%s, obs %d, %d actions) on %s into %s\n", a.model, tg_env_name(env), s.n,
           s.n == 1 ? "" : "s", s.obs_dim, s.n_actions, tg_device_str(dev, dname, sizeof dname), dir);
    ok = train_agent(&a, env, dir, dev, is_dqn ? &dc : NULL, is_dqn ? NULL : &pc);
    trained = 1;
  }
  tg_env_free(env);
  int stopped = ok && a.stop_after > 0;
  if (ok && !stopped) ok = trading ? evaluate_trading(&a, &bars, dir, dev) : evaluate_cartpole(&a, dir, dev);
  if (trading) tg_bars_free(&bars);
  if (trained && tg_report_write(dir, stdout) != TG_OK) /* also after a NaN stop; a warning, not a failure */
    fprintf(stderr, "tickgrad train: warning: report not written: %s\n", tg_last_error());
  return ok ? TG_EXIT_OK : TG_EXIT_FAIL;
}
