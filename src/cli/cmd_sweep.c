/* `tickgrad sweep`: flags -> tg_sweep_run (every combination of hyperparameter grids a training run, and a backtest; a ranked table). */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/fc_flags.h"
#include "tickgrad/tickgrad.h"

#define SW_MAX_ARGS 256

typedef struct sw_args {
  int backtest;
  const char *out;
  cli_fc_flags bt; /* with --backtest: each run's test split */
  int n_rest;
  char *rest[SW_MAX_ARGS]; /* everything else: train's flags */
} sw_args;

static void sw_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad sweep --grid KEY=V1,V2[,..] [--grid KEY=..].. --model M --data FILE... --out DIR\n"
          "                      [train flags] [--metric val_loss|val_qrisk50] [--backtest [backtest flags]]\n"
          "A hyperparameter sweep of a forecaster: every combination of the grids' values (the first --grid varies\n"
          "slowest) is a full `tickgrad train` run into DIR/run-NNN, one after another; its config.json records its\n"
          "values. KEY is a setting's name in config.json (lr, batch, dropout, epochs, seed, horizons, mlp.hidden,\n"
          "tft.hidden, tft.heads, mamba2.d_model, ...); a --grid value replaces the same setting given as a flag.\n"
          "Every combination is checked before anything is trained. With --backtest each run's test split is then\n"
          "backtested as `tickgrad backtest --run` does it. Writes DIR/sweep.csv (a row per run, in run order) and\n"
          "DIR/sweep.html (the table ranked by the metric, best first, each run linked to its report), prints the\n"
          "ranked table and the best run. A run whose loss turns NaN or infinite stays in the table as diverged,\n"
          "ranked last.\n"
          "\n"
          "  --grid KEY=V1,V2,..  a setting and the values to try (up to %d grids of %d values, %d runs in all)\n"
          "  --metric M           rank by the best epoch's val_loss (default) or val_qrisk50 (validation q-risk P50);\n"
          "                       lower is better (the test split is not used to choose)\n"
          "  --out DIR            the output folder (required; must not hold a sweep already)\n"
          "  --backtest           backtest each run's test split (columns total_return, sharpe, max_drawdown, trades,\n"
          "                       bh_total_return)\n"
          "  --rule, --horizon, --long-only, --sized, --class-map, --threshold, --cash, --commission, --cost-bps, --slippage,\n"
          "  --commission-per-contract, --multiplier, --tick-size, --no-spread: as backtest --run\n"
          "  every other flag is a training flag: tickgrad train --help (--model, --data, --epochs, ...)\n"
          "Ctrl-C (SIGINT) or SIGTERM stops the run in training at the end of its step with a checkpoint (tickgrad\n"
          "train --resume continues it) and ends the sweep there: the files so far are kept, no summary is written.\n"
          "exit codes: 0 done, 1 failure (data, training, files; every run diverged), 2 usage, 130 stopped by Ctrl-C\n",
          TG_SWEEP_MAX_GRIDS, TG_SWEEP_MAX_VALUES, TG_SWEEP_MAX_RUNS);
}

static int parse_metric(const char *v, tg_sweep_metric *m) {
  if (v && !strcmp(v, "val_loss")) *m = TG_SWEEP_VAL_LOSS;
  else if (v && !strcmp(v, "val_qrisk50")) *m = TG_SWEEP_VAL_QRISK50;
  else return tg_cli_usage_error("sweep", "--metric '%s': want val_loss or val_qrisk50", v ? v : "");
  return 0;
}

/* One of sweep's own flags at argv[i] (its value at argv[i + 1]): 1 when taken (*used: values after it), else 0. */
static int own_flag(sw_args *a, tg_sweep_config *c, const char *f, const char *v, int *rc, int *used) {
  *used = 1;
  if (!strcmp(f, "--grid")) {
    if (tg_sweep_add_grid(c, v) != TG_OK) *rc = tg_cli_usage_error("sweep", "%s", tg_last_error());
  } else if (!strcmp(f, "--metric")) *rc = parse_metric(v, &c->metric);
  else if (!strcmp(f, "--out")) {
    if (!v) *rc = tg_cli_usage_error("sweep", "%s needs a value", f);
    else a->out = v;
  } else if (!strcmp(f, "--backtest")) a->backtest = 1, *used = 0;
  else {
    int took = cli_fc_flag("sweep", &a->bt, f, v, rc);
    if (took < 0) return 0;
    *used = took;
  }
  return 1;
}

/* Sweep and backtest flags here; the rest goes to train's parser. */
static int parse(int argc, char **argv, sw_args *a, tg_sweep_config *c) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0, used = 0;
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      sw_usage(stdout);
      return -1;
    }
    if (own_flag(a, c, f, v, &rc, &used)) {
      if (rc) return rc;
      i += used;
      continue;
    }
    if (a->n_rest == SW_MAX_ARGS) return tg_cli_usage_error("sweep", "too many arguments");
    a->rest[a->n_rest++] = argv[i];
  }
  if (!c->n_grids) return tg_cli_usage_error("sweep", "give at least one --grid KEY=V1,V2");
  if (!a->out) return tg_cli_usage_error("sweep", "give --out DIR");
  if (a->bt.given && !a->backtest)
    return tg_cli_usage_error("sweep", "--rule, --horizon, --long-only, --sized and the cost flags go with --backtest");
  return 0;
}

int tg_cmd_sweep(int argc, char **argv) {
  static sw_args a;
  static tg_sweep_config c;
  memset(&a, 0, sizeof a);
  tg_sweep_defaults(&c, tg_model_default_kind());
  cli_fc_flags_init(&a.bt);
  int rc = parse(argc, argv, &a, &c);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  rc = tg_cli_train_config("sweep", a.n_rest, a.rest, &c.base);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  snprintf(c.out, sizeof c.out, "%s", a.out);
  c.backtest = a.backtest;
  c.bt = a.bt.b;
  if (tg_sweep_check(&c) != TG_OK) return tg_cli_usage_error("sweep", "%s", tg_last_error());
  c.log = c.base.log = stdout;
  tg_cli_stop_signals();
  tg_status st = tg_sweep_run(&c, NULL, NULL);
  if (st != TG_OK) { /* under mpirun: run r on rank r mod N, rank 0 writes the table */
    fflush(stdout);
    fprintf(stderr, "tickgrad %s\n", tg_last_error());
    return st == TG_ERR_INTERRUPTED ? TG_EXIT_INTERRUPTED : TG_EXIT_FAIL;
  }
  return TG_EXIT_OK;
}
