/* The run report: one self-contained HTML page (inline CSS and SVG charts) from the files of a run folder; a table page. */
#ifndef TICKGRAD_REPORT_H
#define TICKGRAD_REPORT_H

#include <stdio.h>
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes run_dir/report.html (through a temporary file and a rename) from what the folder holds, each
 * section only when its file is there and otherwise a "not available: <why>" line:
 *   config.json (and env.json)         the run's name, model kind, dates, settings and device;
 *   metrics.csv                        forecasters: losses, q-risk against the naive forecaster, learning
 *                                      rate, gradient norm, time per phase, samples/s by epoch; DQN and
 *                                      PPO runs: return, episode length, loss, gradient norm, epsilon or
 *                                      learning rate, env steps/s (found from the header);
 *   trainer.json                       best epoch and early stopping;
 *   telemetry.csv                      device memory and utilisation, process CPU and RSS over time;
 *   equity.csv, backtest.json,         the equity curve against buy and hold, drawdown, every statistic of
 *   trades.csv                         both, the first and last trades.
 * Charts are <svg class="chart" data-chart="NAME"> elements drawn here; nothing is loaded from the
 * network, and the only script is a load check at the end of the body (it sets data-report="ok" on the
 * body and copies error messages into the element with id "report-errors"). Malformed CSV lines are
 * skipped and counted in a note on the page.
 *
 * log (may be NULL) gets one line naming the file written. Errors: TG_ERR_IO naming run_dir when it is
 * not a folder, or naming the file that could not be read or written; TG_ERR_NOMEM. */
tg_status tg_report_write(const char *run_dir, FILE *log);

/* A page of one table (a sweep's runs, a walk-forward's folds), in the run report's style, for tools that summarise
 * several runs. Text is escaped; nothing on the page depends on where it is written. */
typedef struct tg_report_table {
  const char *title;          /* the page's title and heading */
  const char *intro;          /* a paragraph above the table (NULL: none) */
  const char *outro;          /* a note below it (NULL: none) */
  int ncol;
  const char *const *head;    /* [ncol] column names */
  int nrow;
  const char *const *cells;   /* [nrow * ncol] row-major; NULL: the cell to its left spans this column too */
  const char *const *links;   /* [nrow] a link (relative URL) around the row's cell link_col; NULL (or an entry
                                 NULL): none */
  int link_col;
  const int *strong;          /* [nrow] 1: the row in bold (NULL: none) */
} tg_report_table;

/* Writes the page to path (through a temporary file and a rename). TG_ERR_INVALID for a table without columns or
 * with a NULL first cell in a row; TG_ERR_IO naming path; TG_ERR_NOMEM. log (may be NULL) gets a line naming it. */
tg_status tg_report_table_write(const char *path, const tg_report_table *t, FILE *log);

#ifdef __cplusplus
}
#endif
#endif
