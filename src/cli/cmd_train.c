/* `tickgrad train`: flags and a JSON config -> tg_train_run (forecasters on bar files), resume, exit codes; RL runs go to cmd_train_rl.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "tickgrad/dist.h"
#include "tickgrad/tickgrad.h"

#define MAX_PAIRS 128

typedef struct train_args {
  const char *config, *resume, *export_windows;
  long stop_after;
  int data_changed_ok;
  int n_data;
  const char *data[TG_TRAIN_MAX_DATA];
  int n_pairs;
  const char *flag[MAX_PAIRS], *value[MAX_PAIRS];
} train_args;

static void train_usage(FILE *f) {
  char names[256];
  tg_model_list(names, sizeof names, "|", "|");
  fprintf(f, "usage: tickgrad train --model %s --data FILE... [flags]\n", names);
  fprintf(f,
          "       tickgrad train --resume RUN [--stop-after N] [--device D] [--threads N] [--data-changed ok]\n"
          "Trains a quantile forecaster of forward log returns 1..H bars ahead on bar files (CSV, DBN, Parquet):\n"
          "causal features, chronological train/validation/test splits, targets scaled by their training std,\n"
          "Adam with warm-up and cosine decay, clipping, early stopping on the validation loss. Each epoch prints\n"
          "one line (and writes one row of RUN/metrics.csv): losses, validation q-risk at P50 and P90 against the\n"
          "naive forecaster (the training split's quantiles), time per phase, memory, bytes moved.\n"
          "The loss (train and val) is the mean pinball loss max(q e, (q - 1) e), e = y - forecast, over the\n"
          "windows, horizons and quantiles, with each horizon's target divided by its training-split std (a\n"
          "classifier's: the log loss). A finished run scores its best weights on the test split, which training\n"
          "never reads, and prints that line (`tickgrad evaluate --run RUN` gives the tables).\n"
          "RUN/ gets config.json (a valid --config file), data.json (the data's fingerprint, which a resume checks),\n"
          "metrics.csv, weights.safetensors and state.safetensors\n"
          "(every --ckpt-every epochs and at the end), trainer.json, best.safetensors (best validation epoch),\n"
          "evaluation.json (the best weights on the validation and test splits), telemetry.csv (process CPU and memory, GPU\n"
          "through NVML, once a second; a resume starts it afresh) and report.html (charts of all of it, written at\n"
          "the end; `tickgrad report RUN` writes it again).\n"
          "Reinforcement learning (DQN, PPO on CartPole or the trading market): tickgrad train --model dqn --help\n"
          "\n"
          "  --config FILE          settings from a JSON file (keys as in RUN/config.json); flags override it\n"
          "  --resume RUN           continue RUN exactly as if it had not stopped (its config.json; only --device,\n"
          "                         --threads and --stop-after may be given)\n"
          "  --stop-after N         stop with a checkpoint after N epochs in all\n"
          "  --data-changed ok      with --resume: continue although the data differs from what the run read (RUN/\n"
          "                         data.json fingerprints it; without this flag such a resume is refused, naming what\n"
          "                         changed; the change is recorded in data.json)\n"
          "  --export-windows FILE  tft: write the prepared windows (features, targets, splits) to FILE and stop,\n"
          "                         for tools/pf_compare.py (pytorch-forecasting on the same windows)\n");
  tg_train_flags_help(f);
  fprintf(f,
          "Ctrl-C (SIGINT) or SIGTERM stops training at the end of the current step with a checkpoint, prints the\n"
          "--resume line and exits with 130; a resume ends bitwise as if never stopped. A second Ctrl-C quits at once.\n"
          "exit codes: 0 done, 1 failure (data, NaN loss, files), 2 usage, 130 stopped by Ctrl-C (resume it)\n");
}

/* --data takes every following argument up to the next flag. */
static int take_data(train_args *a, int argc, char **argv, int *i) {
  int n0 = a->n_data;
  while (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
    if (a->n_data == TG_TRAIN_MAX_DATA) return tg_cli_usage_error("train", "more than %d --data paths", TG_TRAIN_MAX_DATA);
    a->data[a->n_data++] = argv[++*i];
  }
  return a->n_data > n0 ? 0 : tg_cli_usage_error("train", "--data needs at least one file");
}

static int parse(int argc, char **argv, train_args *a) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0;
    if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
      train_usage(stdout);
      return -1;
    } else if (strcmp(f, "--data") == 0) {
      rc = take_data(a, argc, argv, &i);
      if (rc) return rc;
      continue;
    } else if (strcmp(f, "--stop-after") == 0) {
      if (!tg_cli_parse_long(f, v, 1, 1000000, &a->stop_after)) return TG_EXIT_USAGE;
    } else if (strcmp(f, "--data-changed") == 0) {
      if (!v || strcmp(v, "ok") != 0) return tg_cli_usage_error("train", "--data-changed takes 'ok'");
      a->data_changed_ok = 1;
    } else if (strcmp(f, "--export-windows") == 0) {
      if (!v) return tg_cli_usage_error("train", "%s needs a path", f);
      a->export_windows = v;
      i++;
      continue;
    } else if (strcmp(f, "--config") == 0 || strcmp(f, "--resume") == 0) {
      if (!v) return tg_cli_usage_error("train", "%s needs a path", f);
      if (f[2] == 'c') a->config = v;
      else a->resume = v;
    } else if (tg_train_flag_known(f)) {
      if (!v) return tg_cli_usage_error("train", "%s needs a value", f);
      if (a->n_pairs == MAX_PAIRS) return tg_cli_usage_error("train", "too many flags");
      a->flag[a->n_pairs] = f;
      a->value[a->n_pairs++] = v;
    } else {
      return tg_cli_usage_error("train", "unknown flag '%s'", f);
    }
    i++;
  }
  return 0;
}

static const char *pair_value(const train_args *a, const char *flag) {
  const char *v = NULL;
  for (int i = 0; i < a->n_pairs; i++)
    if (strcmp(a->flag[i], flag) == 0) v = a->value[i];
  return v;
}

/* --resume: RUN/config.json with only --device and --threads on top. */
static int config_resume(const train_args *a, tg_train_config *c) {
  if (a->config || a->n_data)
    return tg_cli_usage_error("train", "--resume %s continues with %s/config.json; %s cannot be given", a->resume,
                              a->resume, a->config ? "--config" : "--data");
  for (int i = 0; i < a->n_pairs; i++)
    if (strcmp(a->flag[i], "--device") != 0 && strcmp(a->flag[i], "--threads") != 0)
      return tg_cli_usage_error("train", "--resume %s keeps the run's settings; %s cannot be changed (only --device, "
                                "--threads and --stop-after)", a->resume, a->flag[i]);
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", a->resume);
  *c = tg_train_defaults(tg_model_default_kind());
  if (tg_train_config_load(path, c) != TG_OK) {
    fprintf(stderr, "tickgrad train: resume: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  for (int i = 0; i < a->n_pairs; i++)
    if (tg_train_config_set_flag(c, a->flag[i], a->value[i]) != TG_OK) return tg_cli_usage_error("train", "%s", tg_last_error());
  snprintf(c->resume, sizeof c->resume, "%s", a->resume);
  return 0;
}

/* A new run: defaults of the model, then the --config file, then the flags. */
static int config_new(const train_args *a, tg_train_config *c) {
  tg_model_kind kind = tg_model_default_kind();
  const char *model = pair_value(a, "--model");
  char *text = NULL;
  size_t len = 0;
  char names[256];
  tg_model_list(names, sizeof names, ", ", " or ");
  if (model && tg_train_model_parse(model, &kind) != TG_OK) return tg_cli_usage_error("train", "--model %s: want %s", model, names);
  if (a->config) {
    tg_train_config probe = tg_train_defaults(kind);
    tg_status st = tg_train_config_load(a->config, &probe);
    if (st == TG_ERR_IO || st == TG_ERR_NOMEM) { /* unreadable: a failure; a bad setting: usage */
      fprintf(stderr, "tickgrad train: --config: %s\n", tg_last_error());
      return TG_EXIT_FAIL;
    }
    if (st != TG_OK) return tg_cli_usage_error("train", "--config: %s", tg_last_error());
    if (!model) kind = probe.model.kind, model = tg_train_model_name(kind);
    FILE *f = fopen(a->config, "rb");
    if (f) {
      fseek(f, 0, SEEK_END);
      long n = ftell(f);
      fseek(f, 0, SEEK_SET);
      text = n >= 0 ? malloc((size_t)n + 1) : NULL;
      len = text ? fread(text, 1, (size_t)n, f) : 0;
      fclose(f);
    }
  }
  if (!model) {
    free(text);
    return tg_cli_usage_error("train", "which model? give --model %s (or \"model\" in --config)", names);
  }
  *c = tg_train_defaults(kind);
  tg_status st = text ? tg_train_config_apply_json(c, text, len, a->config) : TG_OK;
  free(text);
  if (st != TG_OK) return tg_cli_usage_error("train", "--config: %s", tg_last_error());
  c->model.kind = kind;
  for (int i = 0; i < a->n_pairs; i++)
    if (tg_train_config_set_flag(c, a->flag[i], a->value[i]) != TG_OK) return tg_cli_usage_error("train", "%s", tg_last_error());
  if (a->n_data) c->n_data = 0;
  for (int i = 0; i < a->n_data; i++)
    if (tg_train_config_set(c, "data", a->data[i]) != TG_OK) return tg_cli_usage_error("train", "%s", tg_last_error());
  if (c->n_data == 0) return tg_cli_usage_error("train", "no data: give --data FILE... (or \"data\" in --config)");
  if (tg_train_config_check(c) != TG_OK) return tg_cli_usage_error("train", "%s", tg_last_error());
  return 0;
}

int tg_cli_train_config(const char *cmd, int argc, char **argv, tg_train_config *c) {
  static train_args a;
  memset(&a, 0, sizeof a);
  int rc = parse(argc, argv, &a);
  if (rc) return rc;
  if (a.resume || a.export_windows || a.stop_after || a.data_changed_ok)
    return tg_cli_usage_error(cmd, "--resume, --export-windows, --stop-after and --data-changed are flags of train, "
                              "not of %s", cmd);
  return config_new(&a, c);
}

int tg_cmd_train(int argc, char **argv) {
  static train_args a;
  static tg_train_config c;
  if (tg_cli_train_is_rl(argc, argv)) {
    if (tg_dist_size() > 1) return tg_cli_usage_error("train", "DQN and PPO run as one process, not under mpirun");
    return tg_cmd_train_rl(argc, argv);
  }
  memset(&a, 0, sizeof a);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  rc = a.resume ? config_resume(&a, &c) : config_new(&a, &c);
  if (rc) return rc;
  tg_device dev;
  if (tg_device_choose(c.device, &dev, NULL, 0) != TG_OK)
    return tg_cli_usage_error("train", "--device %s: %s", c.device, tg_last_error());
  if (a.export_windows && !(tg_model_caps(c.model.kind) & TG_CAP_EXPORT_WINDOWS))
    return tg_cli_usage_error("train", "--export-windows is for --model tft, not %s", tg_train_model_name(c.model.kind));
  if (a.data_changed_ok && !a.resume) return tg_cli_usage_error("train", "--data-changed ok goes with --resume RUN");
  c.stop_after = (int)a.stop_after;
  c.data_changed_ok = a.data_changed_ok;
  c.log = stdout;
  c.progress = isatty(STDERR_FILENO) ? stderr : NULL;
  tg_train_result res;
  memset(&res, 0, sizeof res);
  tg_cli_stop_signals();
  if (a.export_windows ? tg_train_export_windows(&c, NULL, a.export_windows) != TG_OK : tg_train_run(&c, NULL, &res) != TG_OK) {
    const char *why = tg_last_error();
    fflush(stdout);
    fprintf(stderr, "tickgrad train: %s\n", strncmp(why, "train: ", 7) == 0 ? why + 7 : why);
    return TG_EXIT_FAIL;
  }
  return res.interrupted ? TG_EXIT_INTERRUPTED : TG_EXIT_OK; /* the library printed the --resume line */
}
