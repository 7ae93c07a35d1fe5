/* `tickgrad evaluate`: a trained forecaster scored on every split of its data; a split's tables printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "tickgrad/tickgrad.h"

#define EV_MAX_DATA TG_TRAIN_MAX_DATA

typedef struct ev_args {
  const char *run, *split, *weights, *device;
  int n_data;
  const char *data[EV_MAX_DATA];
} ev_args;

static void ev_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad evaluate --run RUN [--split test|val|train] [--weights best|last] [--data FILE...]\n"
          "Scores a trained forecaster out of sample: every window of every split of the run's data (rebuilt as the\n"
          "trainer built it: the same features, normalisation, targets and splits) goes through its weights once, as\n"
          "in the trainer's validation pass. Prints the split's tables and writes RUN/evaluation.json (every split)\n"
          "and RUN/report.html.\n"
          "\n"
          "A quantile forecaster: the mean pinball loss per horizon and quantile in target-std units (each horizon's\n"
          "target divided by its training-split std; the mean over all is the trainer's validation loss), against the\n"
          "zero forecast and the naive one (the training split's quantiles per horizon); q-risk 2 sum QL / sum |y| per\n"
          "quantile in original units; the share of targets inside each central interval (q, 1 - q) against its\n"
          "nominal width; and calibration, the share of targets below each forecast quantile (ideal: the quantile).\n"
          "A classifier: log loss, accuracy and balanced accuracy against the training split's majority class, and\n"
          "the confusion counts.\n"
          "\n"
          "  --run RUN            the run folder (config.json, best.safetensors)\n"
          "  --split S            the split whose tables print: test (default), val or train\n"
          "  --weights W          best (default: the best validation epoch's) or last\n"
          "  --data FILE...       the run's data read from these paths instead of those in its config.json (moved\n"
          "                       files); they must hold the bars it trained on (RUN/data.json), because its splits\n"
          "                       and normalisation come from them\n"
          "  --device D           auto (default), cpu, cuda:N\n"
          "exit codes: 0 done, 1 failure (run, data, files), 2 usage\n");
}

static int take_data(ev_args *a, int argc, char **argv, int *i) {
  int n0 = a->n_data;
  while (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
    if (a->n_data == EV_MAX_DATA) return tg_cli_usage_error("evaluate", "more than %d --data paths", EV_MAX_DATA);
    a->data[a->n_data++] = argv[++*i];
  }
  return a->n_data > n0 ? 0 : tg_cli_usage_error("evaluate", "--data needs at least one file");
}

static int parse(int argc, char **argv, ev_args *a) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      ev_usage(stdout);
      return -1;
    }
    if (!strcmp(f, "--data")) {
      int rc = take_data(a, argc, argv, &i);
      if (rc) return rc;
      continue;
    }
    const char **slot = !strcmp(f, "--run") ? &a->run : !strcmp(f, "--split") ? &a->split
                        : !strcmp(f, "--weights") ? &a->weights : !strcmp(f, "--device") ? &a->device : NULL;
    if (!slot && strncmp(f, "--", 2) != 0) return tg_cli_usage_error("evaluate", "unexpected argument '%s'", f);
    if (!slot) return tg_cli_usage_error("evaluate", "unknown flag '%s'", f);
    if (!v) return tg_cli_usage_error("evaluate", "%s needs a value", f);
    *slot = v;
    i++;
  }
  if (!a->run) return tg_cli_usage_error("evaluate", "which run? give --run RUN");
  if (a->weights && strcmp(a->weights, "best") && strcmp(a->weights, "last"))
    return tg_cli_usage_error("evaluate", "--weights '%s': want best or last", a->weights);
  return 0;
}

int tg_cmd_evaluate(int argc, char **argv) {
  ev_args a;
  memset(&a, 0, sizeof a);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  int split = TG_TEST;
  if (a.split && tg_eval_split_parse(a.split, &split) != TG_OK)
    return tg_cli_usage_error("evaluate", "--split %s", tg_last_error());
  tg_eval_opts o = {.run = a.run, .last = a.weights && !strcmp(a.weights, "last"), .n_data = a.n_data, .data = a.data,
                    .device = a.device, .log = stderr};
  tg_evaluation *e = calloc(1, sizeof *e);
  if (!e) {
    fprintf(stderr, "tickgrad evaluate: out of memory\n");
    return TG_EXIT_FAIL;
  }
  tg_status st = tg_evaluate(&o, e);
  if (st != TG_OK) {
    fprintf(stderr, "tickgrad %s\n", tg_last_error()); /* the message starts "evaluate: " */
    free(e);
    return TG_EXIT_FAIL;
  }
  printf("%s weights of %s\n", e->weights, a.run);
  tg_evaluation_print(stdout, e, split);
  for (int s = 0; s < TG_SPLIT_COUNT; s++)
    if (s != split) tg_evaluation_line(stdout, e, s);
  size_t n = strlen(a.run);
  printf("wrote %s%sevaluation.json\n", a.run, n && a.run[n - 1] == '/' ? "" : "/");
  free(e);
  return TG_EXIT_OK;
}
