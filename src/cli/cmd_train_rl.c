/* `tickgrad train --model dqn|ppo --env cartpole|trading`: build the environment, train the agent, evaluate its policy. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli/cli.h"
#include "io/json.h"
#include "tickgrad/rl_agents.h"
#include "tickgrad/tickgrad.h"

#define RL_MAX_PAIRS 64
#define RL_MAX_DATA 16

/* The environment's settings: flags of a new run, RUN/env.json of a resumed one. */
typedef struct rl_env_args {
  char kind[16];  /* cartpole, trading */
  int n;          /* instances (0: the agent's default: DQN 1, PPO its num_envs) */
  int n_data;
  char data[RL_MAX_DATA][1024]; /* trading: bar files; none: the synthetic market */
  char data_tz[64], tz[64];
  int window, episode_len;
  double cost_bps, slippage;
  double synth_signal; /* the synthetic market's planted signal */
  long synth_bars, synth_seed;
  long seed;           /* the env's own draws (segments, resets) */
  int copy_windows;    /* trading: 1 copies each window into the observation; 0 (default) the agent gathers
                          it from the feature table on its device (omit_window) */
} rl_env_args;

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

static int is_rl_model(const char *m) { return m && (strcmp(m, "dqn") == 0 || strcmp(m, "ppo") == 0); }

/* 1 when argv asks for an RL run: --model dqn|ppo, or --resume of a run that has env.json. */
int tg_cli_train_is_rl(int argc, char **argv) {
  for (int i = 0; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--model") == 0) return is_rl_model(argv[i + 1]);
    if (strcmp(argv[i], "--resume") == 0) {
      char p[2048];
      struct stat sb;
      snprintf(p, sizeof p, "%s/env.json", argv[i + 1]);
      if (stat(p, &sb) == 0) return 1;
    }
  }
  return 0;
}

static void env_defaults(rl_env_args *e) {
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
  env_defaults(&a->env);
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
        if (!is_rl_model(v)) return tg_cli_usage_error("train", "--model %s: want dqn or ppo here", v);
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
  char path[2048], tmp[2100];
  snprintf(path, sizeof path, "%s/env.json", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = b.oom ? NULL : fopen(tmp, "wb");
  int ok = f && fwrite(b.data, 1, b.len, f) == b.len;
  if (f) ok = (fclose(f) == 0) && ok;
  ok = ok && rename(tmp, path) == 0;
  tg_json_buf_free(&b);
  if (!ok) fprintf(stderr, "tickgrad train: cannot write %s: %s\n", path, strerror(errno));
  return ok;
}

static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1)) != NULL) {
      *len = fread(text, 1, (size_t)n, f);
      text[*len] = '\0';
    }
  }
  fclose(f);
  return text;
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

static int read_env_json(const char *dir, char *model, size_t model_cap, rl_env_args *e) {
  char path[2048];
  snprintf(path, sizeof path, "%s/env.json", dir);
  size_t len = 0;
  char *text = read_text(path, &len);
  if (!text) {
    fprintf(stderr, "tickgrad train: resume: cannot read %s: %s\n", path, strerror(errno));
    return 0;
  }
  tg_json_doc *doc = NULL;
  int ok = tg_json_parse(text, len, path, 0, &doc) == TG_OK;
  free(text);
  if (!ok) {
    fprintf(stderr, "tickgrad train: resume: %s\n", tg_last_error());
    return 0;
  }
  const tg_json *r = tg_json_root(doc), *data = tg_json_get(r, "data");
  double n, w, el, cost, slip, sig, sb, ss, es, cw = 1; /* no copy_windows: a run from before gathering, which copied */
  env_defaults(e);
  ok = json_str(r, "model", model, model_cap) && is_rl_model(model) && json_str(r, "env", e->kind, sizeof e->kind) &&
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
  if (!ok) fprintf(stderr, "tickgrad train: resume: %s is not an env.json this version wrote\n", path);
  return ok;
}

/* ---- the environment ---- */

static int load_bars(const rl_env_args *e, tg_bars *bars) {
  if (e->n_data == 0) {
    tg_synth_config s = tg_synth_defaults();
    s.bars = e->synth_bars;
    s.signal = e->synth_signal;
    s.seed = (uint64_t)e->synth_seed;
    if (tg_synth_generate(&s, bars) != TG_OK) {
      fprintf(stderr, "tickgrad train: synthetic market: %s\n", tg_last_error());
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
    fprintf(stderr, "tickgrad train: %s\n", tg_last_error());
    return 0;
  }
  printf("data: %lld bars from %d file%s\n", (long long)bars->n, e->n_data, e->n_data == 1 ? "" : "s");
  return 1;
}

static int make_env(const rl_env_args *e, const tg_bars *bars, int n, int split, tg_env **env) {
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
  if (st != TG_OK) fprintf(stderr, "tickgrad train: environment %s: %s\n", e->kind, tg_last_error());
  return st == TG_OK;
}

/* ---- evaluation of the trained policy ---- */

typedef struct rl_policy {
  tg_dqn_policy *dqn;
  tg_ppo_policy *ppo;
} rl_policy;

static tg_status policy_act(rl_policy *p, const float *obs, int32_t *act) {
  return p->dqn ? tg_dqn_policy_act(p->dqn, obs, act) : tg_ppo_policy_act(p->ppo, obs, act);
}

static int policy_load(const char *model, const char *dir, const tg_env *env, tg_device dev, rl_policy *p) {
  memset(p, 0, sizeof *p);
  tg_status st = strcmp(model, "dqn") == 0 ? tg_dqn_policy_load_env(dir, env, dev, &p->dqn)
                                           : tg_ppo_policy_load_env(dir, env, dev, &p->ppo);
  if (st != TG_OK) fprintf(stderr, "tickgrad train: evaluation: %s\n", tg_last_error());
  return st == TG_OK;
}

static void policy_free(rl_policy *p) {
  tg_dqn_policy_free(p->dqn);
  tg_ppo_policy_free(p->ppo);
}

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
    ok = policy_act(p, obs, act) == TG_OK && tg_env_step(env, act, &out) == TG_OK;
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
  if (!make_env(&e, NULL, 10, 0, &env)) return 0;
  rl_policy p;
  int ok = policy_load(a->model, dir, env, dev, &p);
  double mean = ok ? run_episodes(env, &p) : NAN;
  if (ok) policy_free(&p);
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
    if (!make_env(&a->env, bars, 1, k + 1, &env)) return 0;
    rl_policy p;
    int ok = policy_load(a->model, dir, env, dev, &p);
    ok = ok && !isnan(run_episodes(env, &p));
    if (p.dqn || p.ppo) policy_free(&p);
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

static int mkdirs(const char *path) {
  char p[2048];
  snprintf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) return 0;
      *s = '/';
    }
  return mkdir(p, 0777) == 0 || errno == EEXIST;
}

static int train_agent(const rl_args *a, tg_env *env, const char *dir, tg_device dev, tg_dqn_config *dc,
                       tg_ppo_config *pc) {
  tg_status st;
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
    if (!read_env_json(a.resume, a.model, sizeof a.model, &a.env)) return TG_EXIT_FAIL;
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
  int trading = strcmp(a.env.kind, "trading") == 0, ok = 1;
  if (trading) ok = load_bars(&a.env, &bars);
  tg_env *env = NULL;
  ok = ok && make_env(&a.env, trading ? &bars : NULL, a.env.n, 0, &env);
  if (ok && !a.resume) {
    char cfg[2048];
    struct stat sb;
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    if (stat(cfg, &sb) == 0) {
      fprintf(stderr, "tickgrad train: %s already holds a run; give another --out, or --resume %s\n", dir, dir);
      ok = 0;
    } else if (!mkdirs(dir)) {
      fprintf(stderr, "tickgrad train: cannot create %s: %s\n", dir, strerror(errno));
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
  }
  tg_env_free(env);
  int stopped = ok && a.stop_after > 0;
  if (ok && !stopped) ok = trading ? evaluate_trading(&a, &bars, dir, dev) : evaluate_cartpole(&a, dir, dev);
  if (trading) tg_bars_free(&bars);
  return ok ? TG_EXIT_OK : TG_EXIT_FAIL;
}
