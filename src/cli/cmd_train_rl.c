/* `tickgrad train --model dqn|ppo --env cartpole|trading`: flags -> tg_agent_run (environment, training, evaluation, report). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "cli/read_flags.h"
#include "tickgrad/agent_run.h"
#include "tickgrad/tickgrad.h"

#define RL_MAX_PAIRS 64

typedef struct rl_args {
  char model[8];
  const char *out, *resume, *device;
  long stop_after;
  tg_agent_env env;
  cli_read_flags read; /* into env.read */
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
          "  --tz S               trading: zone of the time features (default UTC)\n"
          "  --window N           trading: bars of features in an observation (default 32)\n"
          "  --cost-bps X         trading: commission per unit of position traded (default 1)\n"
          "  --slippage X         trading: fraction of the price lost per unit traded (default 0)\n"
          "  --episode-len N      trading: decisions per training episode (default 256)\n"
          "  --copy-windows       trading: the env copies each feature window into the observation (default:\n"
          "                       the agent keeps the feature table on its device and gathers windows there)\n"
          "  --synth-signal X     synthetic market: planted lag-1 signal in [-0.99, 0.99] (default 0.3)\n"
          "  --synth-bars N       synthetic market: bars (default 20000)\n"
          "  --synth-seed N       synthetic market: seed (default 1)\n"
          "  --env-seed N         the environment's own draws (default 1)\n"
          "  --device S           cpu or cuda[:N] (default cpu)\n"
          "  --out RUN            run folder (default runs/<model>-<env>-<timestamp>)\n"
          "  --resume RUN         continue RUN bitwise (its config.json and env.json)\n"
          "  --stop-after N       stop with a checkpoint after N steps (DQN) or iterations (PPO) in all\n"
          "Ctrl-C (SIGINT) or SIGTERM stops at the end of the current step (DQN) or iteration (PPO) with a checkpoint,\n"
          "prints the --resume line and exits with 130; a resume ends bitwise as if never stopped. A second Ctrl-C\n"
          "quits at once.\n"
          "exit codes: 0 done, 1 failure, 2 usage, 130 stopped by Ctrl-C (resume it)\n");
  cli_read_flags_help(f);
}

/* 1 when argv asks for an RL run: --model dqn|ppo, or --resume of a run that has env.json. */
int tg_cli_train_is_rl(int argc, char **argv) {
  for (int i = 0; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--model") == 0) return tg_agent_is_model(argv[i + 1]);
    if (strcmp(argv[i], "--resume") == 0) {
      char p[2048];
      struct stat sb;
      snprintf(p, sizeof p, "%s/env.json", argv[i + 1]);
      if (stat(p, &sb) == 0) return 1;
    }
  }
  return 0;
}

/* One env flag; 0 when flag is not one, 1 when taken, -1 on a bad value (already reported). */
static int env_flag(tg_agent_env *e, const char *f, const char *v) {
  long n;
  if (strcmp(f, "--env") == 0) {
    if (!v || (strcmp(v, "cartpole") != 0 && strcmp(v, "trading") != 0))
      return tg_cli_usage_error("train", "--env %s: want cartpole or trading", v ? v : "(missing)"), -1;
    snprintf(e->kind, sizeof e->kind, "%s", v);
  } else if (strcmp(f, "--envs") == 0) {
    if (!tg_cli_parse_long(f, v, 1, 65536, &n)) return -1;
    e->n = (int)n;
  } else if (strcmp(f, "--tz") == 0) {
    if (!v) return tg_cli_usage_error("train", "%s needs a zone", f), -1;
    snprintf(e->tz, sizeof e->tz, "%s", v);
  } else if (strcmp(f, "--window") == 0) {
    if (!tg_cli_parse_long(f, v, 1, 4096, &n)) return -1;
    e->window = (int)n;
  } else if (strcmp(f, "--episode-len") == 0) {
    if (!tg_cli_parse_long(f, v, 2, 100000000, &n)) return -1;
    e->episode_len = (int)n;
  } else if (strcmp(f, "--cost-bps") == 0) {
    if (!tg_cli_number("train", f, v, 0, 10000, &e->cost_bps)) return -1;
  } else if (strcmp(f, "--slippage") == 0) {
    if (!tg_cli_number("train", f, v, 0, 0.5, &e->slippage)) return -1;
  } else if (strcmp(f, "--synth-signal") == 0) {
    if (!tg_cli_number("train", f, v, -0.99, 0.99, &e->synth_signal)) return -1;
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
  tg_agent_env_defaults(&a->env);
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
        if (a->env.n_data == TG_AGENT_MAX_DATA) return tg_cli_usage_error("train", "more than %d --data paths", TG_AGENT_MAX_DATA);
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
    int rc = 0, e = cli_read_flag("train", &a->read, f, v, &rc);
    if (rc) return rc;
    if (e < 0) e = env_flag(&a->env, f, v);
    if (e < 0) return TG_EXIT_USAGE;
    if (e == 0) {
      if (strcmp(f, "--model") == 0) {
        if (!tg_agent_is_model(v)) return tg_cli_usage_error("train", "--model %s: want dqn or ppo here", v);
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

int tg_cmd_train_rl(int argc, char **argv) {
  static rl_args a;
  static tg_agent_run_config c;
  memset(&a, 0, sizeof a);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  if (a.resume) {
    if (a.model[0] || a.n_pairs || a.out || a.env.n_data || a.read.n)
      return tg_cli_usage_error("train", "--resume %s keeps the run's settings; only --device and --stop-after may be given",
                                a.resume);
    if (tg_agent_run_load(a.resume, &c) != TG_OK) {
      fprintf(stderr, "tickgrad train: resume: %s\n", tg_last_error());
      return TG_EXIT_FAIL;
    }
  } else if (!a.model[0]) {
    return tg_cli_usage_error("train", "which model? give --model dqn or ppo");
  } else {
    tg_agent_run_defaults(a.model, &c);
    c.env = a.env;
    c.env.read = a.read.s;
    if (a.out) snprintf(c.out, sizeof c.out, "%s", a.out);
  }
  for (int i = 0; i < a.n_pairs; i++)
    if (tg_agent_run_set(&c, a.key[i], a.value[i]) != TG_OK)
      return tg_cli_usage_error("train", "--%s: %s", a.keybuf[i], tg_last_error());
  if (tg_agent_run_check(&c) != TG_OK) return tg_cli_usage_error("train", "%s", tg_last_error());
  if (tg_device_choose(a.device ? a.device : "cpu", &c.device, NULL, 0) != TG_OK)
    return tg_cli_usage_error("train", "--device %s: %s", a.device ? a.device : "cpu", tg_last_error());
  c.stop_after = a.stop_after;
  c.log = stdout;
  static tg_agent_run_result res;
  tg_cli_stop_signals();
  if (tg_agent_run(&c, &res) != TG_OK) {
    fflush(stdout);
    fprintf(stderr, "tickgrad train: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  return res.interrupted ? TG_EXIT_INTERRUPTED : TG_EXIT_OK; /* the library printed the --resume line */
}
