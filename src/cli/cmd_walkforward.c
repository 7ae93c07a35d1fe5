/* `tickgrad walkforward`: flags -> tg_wf_run (time folds over bar files, each a training run and a backtest of its test block). */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/fc_flags.h"
#include "tickgrad/tickgrad.h"

#define WF_MAX_ARGS 256

typedef struct wf_args {
  long folds, train_blocks;
  int rolling;
  const char *out;
  cli_fc_flags bt; /* the test blocks' backtest */
  int n_rest;
  char *rest[WF_MAX_ARGS]; /* everything else: train's flags */
} wf_args;

static void wf_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad walkforward --folds K --model M --data FILE... --out DIR [train flags] [flags]\n"
          "Walk-forward evaluation of a forecaster: the bars (in time order) are cut into K + W + 1 equal blocks (the\n"
          "oldest bars that do not fill a block are left out). Fold k trains on W blocks (anchored: blocks 0 .. W+k-1,\n"
          "growing; rolling: blocks k .. W+k-1), validates (early stopping) on the next block and is tested on the one\n"
          "after: a full `tickgrad train` run into DIR/fold-NN, then a backtest of the test block as `backtest --run`\n"
          "does it (the predictor is fed every bar before the test block first, so no decision sees a later bar).\n"
          "The trainer's purge gap keeps every training window and target away from the validation and test rows.\n"
          "Writes DIR/walkforward.csv (a row per fold) and DIR/walkforward.html (the table, links to each fold's\n"
          "report), and prints the table. Under mpirun -np N, fold k trains on rank k mod N (each fold in one\n"
          "process) and rank 0 prints and writes the summary: the same files as one process writes.\n"
          "\n"
          "  --folds K            folds (1..%d)\n"
          "  --train-blocks W     blocks of the first fold's training data (default 3)\n"
          "  --rolling            train on the last W blocks only (default: anchored, all blocks so far)\n"
          "  --out DIR            the output folder (required; must not hold a walk-forward already)\n"
          "  --rule, --horizon, --long-only, --sized, --class-map, --threshold, --cash, --commission, --cost-bps, --slippage,\n"
          "  --commission-per-contract, --multiplier, --tick-size, --no-spread: as backtest --run\n"
          "  every other flag is a training flag: tickgrad train --help (--model, --data, --epochs, ...)\n"
          "Ctrl-C (SIGINT) or SIGTERM stops the fold in training at the end of its step with a checkpoint (tickgrad\n"
          "train --resume continues it) and ends the walk-forward there: the files so far are kept, no summary is written.\n"
          "exit codes: 0 done, 1 failure (data, training, files), 2 usage, 130 stopped by Ctrl-C\n",
          TG_WF_MAX_FOLDS);
}

/* Walk-forward and backtest flags here; the rest goes to train's parser. */
static int parse(int argc, char **argv, wf_args *a) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0, used = 1; /* arguments this flag takes after itself */
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      wf_usage(stdout);
      return -1;
    }
    int took = cli_fc_flag("walkforward", &a->bt, f, v, &rc);
    if (took >= 0) used = took;
    else if (!strcmp(f, "--folds")) rc = tg_cli_parse_long(f, v, 1, TG_WF_MAX_FOLDS, &a->folds) ? 0 : TG_EXIT_USAGE;
    else if (!strcmp(f, "--train-blocks")) rc = tg_cli_parse_long(f, v, 1, 1000, &a->train_blocks) ? 0 : TG_EXIT_USAGE;
    else if (!strcmp(f, "--out")) {
      if (!v) return tg_cli_usage_error("walkforward", "%s needs a value", f);
      a->out = v;
    } else if (!strcmp(f, "--rolling")) a->rolling = 1, used = 0;
    else {
      if (a->n_rest == WF_MAX_ARGS) return tg_cli_usage_error("walkforward", "too many arguments");
      a->rest[a->n_rest++] = argv[i];
      used = 0;
    }
    if (rc) return rc;
    i += used;
  }
  if (!a->folds) return tg_cli_usage_error("walkforward", "give --folds K");
  if (!a->out) return tg_cli_usage_error("walkforward", "give --out DIR");
  return 0;
}

int tg_cmd_walkforward(int argc, char **argv) {
  static wf_args a;
  static tg_wf_config c;
  memset(&a, 0, sizeof a);
  a.train_blocks = 3;
  cli_fc_flags_init(&a.bt);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  tg_wf_defaults(&c, tg_model_default_kind());
  rc = tg_cli_train_config("walkforward", a.n_rest, a.rest, &c.train);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  c.folds = (int)a.folds, c.train_blocks = (int)a.train_blocks, c.rolling = a.rolling;
  snprintf(c.out, sizeof c.out, "%s", a.out);
  c.bt = a.bt.b;
  c.log = c.train.log = stdout;
  tg_cli_stop_signals();
  tg_status st = tg_wf_run(&c, NULL, NULL);
  if (st != TG_OK) { /* under mpirun: fold k on rank k mod N, rank 0 writes the summary */
    fflush(stdout);
    fprintf(stderr, "tickgrad %s\n", tg_last_error());
    return st == TG_ERR_INTERRUPTED ? TG_EXIT_INTERRUPTED : TG_EXIT_FAIL;
  }
  return TG_EXIT_OK;
}
