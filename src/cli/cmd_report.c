/* `tickgrad report RUN`: writes RUN/report.html from the run folder's files and prints its path. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "tickgrad/report.h"

static void report_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad report RUN\n"
          "Writes RUN/report.html, one self-contained page (inline CSS and SVG, no network) of what the run folder\n"
          "holds: settings (config.json, env.json), training by epoch or by environment step (metrics.csv,\n"
          "trainer.json), every split's scores out of sample (evaluation.json), process and GPU telemetry over time (telemetry.csv), and a backtest's equity against buy\n"
          "and hold, drawdown, statistics and trades (equity.csv, backtest.json, trades.csv); a part whose file is\n"
          "missing says so. Training writes the report at its end; this writes it again. Prints the file's path.\n"
          "exit codes: 0 written, 1 failure (no such folder, files), 2 usage\n");
}

int tg_cmd_report(int argc, char **argv) {
  const char *run = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      report_usage(stdout);
      return TG_EXIT_OK;
    }
    if (strncmp(argv[i], "-", 1) == 0) return tg_cli_usage_error("report", "unknown flag '%s'", argv[i]);
    if (run) return tg_cli_usage_error("report", "one run folder, not '%s' and '%s'", run, argv[i]);
    run = argv[i];
  }
  if (!run) return tg_cli_usage_error("report", "which run? give its folder: tickgrad report RUN");
  if (tg_report_write(run, NULL) != TG_OK) {
    fprintf(stderr, "tickgrad report: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  size_t n = strlen(run);
  printf("%s%sreport.html\n", run, n && run[n - 1] == '/' ? "" : "/");
  return TG_EXIT_OK;
}
