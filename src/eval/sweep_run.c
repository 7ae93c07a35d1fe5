/* A sweep run: OUT and every test split checked, each combination trained (run r on rank r mod N) and backtested, the results shared. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/files.h"
#include "tickgrad/dist.h"
#include "tickgrad/eval.h"

/* Before anything is trained: no run in OUT already; with a backtest, every run's test split can be backtested. */
static tg_status check_out_and_data(const tg_sweep_config *s, const tg_bars *all, tg_train_config *c) {
  char path[TG_PATH_MAX + 32];
  long runs = tg_sweep_runs(s);
  for (long r = 0; r < runs; r++) {
    tg_sweep_run_config(s, r, c);
    snprintf(path, sizeof path, "%s/config.json", c->out);
    if (tg_file_exists(path))
      return tg_error(TG_ERR_INVALID, "sweep: %s already holds a run (an interrupted sweep?); choose another --out",
                      c->out);
    tg_bars view;
    tg_status st = s->backtest ? tg_backtest_split(all, "test", c->train_frac, c->val_frac, NULL, &view) : TG_OK;
    if (st == TG_OK && s->backtest) st = tg_backtest_check_bars(&view, "sweep --backtest");
    if (st != TG_OK) return tg_error(st, "sweep: run %ld: %s", r + 1, tg_last_error());
  }
  return TG_OK;
}

/* The run's test split backtested as `backtest --run` does: the predictor sees every bar before it first. */
static tg_status backtest(const tg_sweep_config *s, const tg_train_config *c, const tg_bars *all, tg_eval_run *run) {
  tg_bars view;
  tg_status st = tg_backtest_split(all, "test", c->train_frac, c->val_frac, NULL, &view); /* where the split starts */
  tg_bars upto = *all;
  upto.n = (view.ts - all->ts) + view.n; /* the test split ends the data */
  return st == TG_OK ? tg_fc_backtest_run(c->out, &upto, view.ts - all->ts, &s->bt, "sweep", &run->st, &run->bh) : st;
}

/* NaN results for a run that did not finish (ranked last; its epochs so far are kept). */
static void mark_diverged(tg_eval_run *run) {
  run->ok = 0;
  run->train.best.val_loss = run->train.best.q50 = run->train.best.naive50 = NAN;
  run->st.total_return = run->st.sharpe = run->st.max_drawdown = run->bh.total_return = NAN;
  run->st.trades = 0;
}

/* Run r: training (a NaN or infinite loss marks it diverged; other failures end the sweep), then the backtest. */
static tg_status one_run(const tg_sweep_config *s, const tg_bars *all, long r, tg_eval_run *run, tg_train_config *c) {
  char label[512];
  tg_sweep_label(s, r, label, sizeof label);
  tg_sweep_run_config(s, r, c);
  c->solo = 1;
  if (s->log) {
    fprintf(s->log, "\n== run %ld/%ld: %s -> %s\n", r + 1, tg_sweep_runs(s), label, c->out);
    fflush(s->log);
  }
  tg_status st = tg_train_run(c, all, &run->train);
  if (st == TG_ERR_NUMERIC) {
    if (s->log) fprintf(s->log, "sweep: run %ld (%s) diverged: %s\n", r + 1, label, tg_last_error());
    mark_diverged(run);
    return TG_OK;
  }
  if (st != TG_OK) return tg_error(st, "sweep: run %ld (%s): %s", r + 1, label, tg_last_error());
  if (run->train.interrupted)
    return tg_error(TG_ERR_INTERRUPTED, "sweep: run %ld of %ld (%s) was interrupted (its checkpoint is in %s); the runs "
                    "after it were not started and sweep.csv was not written", r + 1, tg_sweep_runs(s), label, c->out);
  run->ok = 1;
  st = s->backtest ? backtest(s, c, all, run) : TG_OK;
  return st == TG_OK ? TG_OK : tg_error(st, "sweep: run %ld (%s): backtest: %s", r + 1, label, tg_last_error());
}

static tg_status run_all(const tg_sweep_config *s, const tg_bars *all, tg_eval_run *runs) {
  char path[TG_PATH_MAX + 32];
  long n = tg_sweep_runs(s);
  snprintf(path, sizeof path, "%s/sweep.csv", s->out);
  if (tg_file_exists(path))
    return tg_error(TG_ERR_INVALID, "sweep: %s already holds a sweep; choose another --out", s->out);
  tg_train_config *c = malloc(sizeof *c);
  tg_status st = c ? check_out_and_data(s, all, c) : tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  if (st == TG_OK) st = tg_dist_barrier(); /* every rank has looked before any rank writes a run */
  if (st == TG_OK) st = tg_make_dirs(s->out);
  for (long r = 0; st == TG_OK && r < n; r++)
    if (tg_eval_mine(r)) st = one_run(s, all, r, &runs[r], c);
  for (long r = 0; st == TG_OK && r < n; r++) st = tg_eval_share(&runs[r], tg_eval_mine(r));
  if (st == TG_OK && tg_dist_rank() == 0) st = tg_sweep_write(s, runs);
  free(c);
  return st;
}

tg_status tg_sweep_run(const tg_sweep_config *s0, const tg_bars *bars, tg_eval_run *out) {
  tg_status st = tg_sweep_check(s0);
  if (st != TG_OK) return st;
  long n = tg_sweep_runs(s0);
  tg_sweep_config *s = malloc(sizeof *s);
  tg_eval_run *runs = calloc((size_t)n, sizeof *runs);
  tg_bars own;
  tg_bars_init(&own);
  st = s && runs ? TG_OK : tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  if (st == TG_OK) {
    *s = *s0;
    if (tg_dist_rank() != 0) /* rank 0 prints and writes the table */
      s->log = s->bt.log = s->base.log = s->base.progress = NULL;
    if (!bars) st = tg_train_read_bars(&s->base, stderr, &own);
  }
  if (st == TG_OK) st = run_all(s, bars ? bars : &own, runs);
  if (out && runs) memcpy(out, runs, (size_t)n * sizeof *runs);
  tg_bars_free(&own);
  free(runs);
  free(s);
  return st;
}
