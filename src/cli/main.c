/* tickgrad command line: global flags, command dispatch, usage and exit codes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/parse.h"
#include "cli/cli.h"
#include "tickgrad/dist.h"
#include "tickgrad/tickgrad.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad [--threads N] <command> [flags]\n"
          "\n"
          "commands:\n"
          "  demo       train a small MLP on a built-in synthetic regression (a smoke test of a device)\n"
          "  devices    list compute devices: CPU cores, SIMD level, BLAS and threads; GPUs\n"
          "  inspect    read bar files (CSV, DBN, Parquet) and report columns, range, gaps and problems\n"
          "  synth      write a seeded synthetic market (OHLCV bars) as CSV\n"
          "  bars       build bars from trade and quote ticks (time, tick, volume, dollar, imbalance, run) as CSV\n"
          "  train      train a quantile forecaster (tft, transformer, ...) on bar files, or a policy (dqn, ppo)\n"
          "             on CartPole or a trading market; resume a run\n"
          "  backtest   run a rule strategy (buy-and-hold, sma-cross) or a trained run's forecasts or policy on bar\n"
          "             files: fills at the next open, costs, metrics\n"
          "  evaluate   score a trained forecaster on its test (val, train) split: pinball per horizon and quantile,\n"
          "             q-risk, interval coverage and calibration against baselines; RUN/evaluation.json\n"
          "  predict    a trained forecaster's quantile forecasts per bar, from files or streamed on stdin\n"
          "  export     write a trained run's model as an ONNX file (forecasters and DQN/PPO policies)\n"
          "  walkforward  time folds: a training run and a backtest of the next block per fold, a summary table\n"
          "  sweep      a hyperparameter grid: a training run (and a backtest) per combination, a ranked table\n"
          "  report     write RUN/report.html: charts of a run's training, telemetry and backtest (self-contained)\n"
          "  ops        list every op and whether it has forward and backward kernels per backend\n"
          "  version    print the version\n"
          "  help       this message (also --help, -h); `tickgrad <command> --help` for flags\n"
          "\n"
          "global flags:\n"
          "  --threads N   CPU threads for OpenMP loops and OpenBLAS (default: OMP_NUM_THREADS, else all cores)\n"
          "\n"
          "exit codes: 0 success, 1 failure, 2 usage error\n");
}

int tg_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "tickgrad%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(see `tickgrad %s%s--help`)\n", cmd ? cmd : "", cmd ? " " : "");
  return TG_EXIT_USAGE;
}

int tg_cli_parse_long(const char *flag, const char *value, long lo, long hi, long *out) {
  if (!value) {
    fprintf(stderr, "tickgrad: %s needs a value\n", flag);
    return 0;
  }
  int64_t v;
  if (tg_parse_int64(value, lo, hi, flag, &v) != TG_OK) {
    fprintf(stderr, "tickgrad: %s\n", tg_last_error());
    return 0;
  }
  *out = (long)v;
  return 1;
}

int tg_cli_number(const char *cmd, const char *flag, const char *value, double lo, double hi, double *out) {
  if (!value) return tg_cli_usage_error(cmd, "%s needs a value", flag), 0;
  if (tg_parse_double(value, lo, hi, flag, out) != TG_OK) return tg_cli_usage_error(cmd, "%s", tg_last_error()), 0;
  return 1;
}

static int run_command(int argc, char **argv) {
  int i = 1, threads_set = 0;
  while (i < argc && argv[i][0] == '-') {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return TG_EXIT_OK;
    } else if (strcmp(argv[i], "--version") == 0) {
      printf("tickgrad %s\n", tg_version());
      return TG_EXIT_OK;
    } else if (strcmp(argv[i], "--threads") == 0) {
      long n;
      if (!tg_cli_parse_long("--threads", i + 1 < argc ? argv[i + 1] : NULL, 1, 4096, &n)) return TG_EXIT_USAGE;
      tg_set_threads((int)n);
      threads_set = 1;
      i += 2;
    } else {
      fprintf(stderr, "tickgrad: unknown flag '%s'\n\n", argv[i]);
      usage(stderr);
      return TG_EXIT_USAGE;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return TG_EXIT_USAGE;
  }
  /* one thread pool even without --threads: OpenMP's default count, OpenBLAS single-threaded */
  if (!threads_set) tg_set_threads(tg_threads());
  const char *cmd = argv[i];
  int sub_argc = argc - i - 1;
  char **sub_argv = argv + i + 1;
  if (strcmp(cmd, "help") == 0) {
    usage(stdout);
    return TG_EXIT_OK;
  }
  if (strcmp(cmd, "version") == 0) {
    if (sub_argc) return tg_cli_usage_error("version", "unexpected argument '%s'", sub_argv[0]);
    printf("tickgrad %s\n", tg_version());
    return TG_EXIT_OK;
  }
  if (tg_dist_size() > 1 && strcmp(cmd, "train") != 0 && strcmp(cmd, "walkforward") != 0 && strcmp(cmd, "sweep") != 0)
    return tg_cli_usage_error(cmd, "only `tickgrad train` (forecasters), `walkforward` and `sweep` run as several MPI "
                              "processes; run %s as one", cmd);
  if (strcmp(cmd, "devices") == 0) return tg_cmd_devices(sub_argc, sub_argv);
  if (strcmp(cmd, "ops") == 0) return tg_cmd_ops(sub_argc, sub_argv);
  if (strcmp(cmd, "demo") == 0) return tg_cmd_demo(sub_argc, sub_argv);
  if (strcmp(cmd, "inspect") == 0) return tg_cmd_inspect(sub_argc, sub_argv);
  if (strcmp(cmd, "synth") == 0) return tg_cmd_synth(sub_argc, sub_argv);
  if (strcmp(cmd, "bars") == 0) return tg_cmd_bars(sub_argc, sub_argv);
  if (strcmp(cmd, "train") == 0) return tg_cmd_train(sub_argc, sub_argv);
  if (strcmp(cmd, "backtest") == 0) return tg_cmd_backtest(sub_argc, sub_argv);
  if (strcmp(cmd, "evaluate") == 0) return tg_cmd_evaluate(sub_argc, sub_argv);
  if (strcmp(cmd, "report") == 0) return tg_cmd_report(sub_argc, sub_argv);
  if (strcmp(cmd, "predict") == 0) return tg_cmd_predict(sub_argc, sub_argv);
  if (strcmp(cmd, "export") == 0) return tg_cmd_export(sub_argc, sub_argv);
  if (strcmp(cmd, "walkforward") == 0) return tg_cmd_walkforward(sub_argc, sub_argv);
  if (strcmp(cmd, "sweep") == 0) return tg_cmd_sweep(sub_argc, sub_argv);
  fprintf(stderr, "tickgrad: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return TG_EXIT_USAGE;
}

int main(int argc, char **argv) {
  tg_blas_fix_core(argv); /* before MPI starts: a re-run must happen in a process that has done nothing yet */
  if (tg_dist_init(&argc, &argv) != TG_OK) {
    fprintf(stderr, "tickgrad: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  int rc = run_command(argc, argv);
  if (rc != TG_EXIT_OK && tg_dist_size() > 1) {
    fprintf(stderr, "tickgrad: rank %d of %d failed (exit %d): ending every rank of the job\n", tg_dist_rank(),
            tg_dist_size(), rc);
    tg_dist_abort(rc); /* no rank is left waiting in a collective */
  }
  tg_dist_finish();
  return rc;
}
