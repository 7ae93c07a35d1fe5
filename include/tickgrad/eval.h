/* Many training runs judged together: walk-forward folds and hyperparameter sweeps, each run a tg_train_run (and a
 * backtest of held-out bars), spread over MPI ranks, summarised in a CSV table and a page. */
#ifndef TICKGRAD_EVAL_H
#define TICKGRAD_EVAL_H

#include <stdint.h>
#include <stdio.h>
#include "tickgrad/backtest.h"
#include "tickgrad/status.h"
#include "tickgrad/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One training run's outcome as walk-forward and sweep report it. */
typedef struct tg_eval_run {
  int ok;                /* trained to the end */
  tg_train_result train;
  tg_bt_stats st, bh;    /* its backtest and buy and hold's (zeros without one) */
} tg_eval_run;

/* Under mpirun, run k is made on rank k mod N: 1 when that is this process. */
int tg_eval_mine(long k);
/* The result of a run made on one rank (mine = 1 there) reaches every rank: the reported numbers summed over the ranks,
 * the others contributing zeros. Collective: every rank calls it for every run, in the same order. */
tg_status tg_eval_share(tg_eval_run *r, int mine);

/* ==== walk-forward ====
 * The bars (in time order) are cut into K + W + 1 equal blocks (the oldest bars that do not fill a block are left
 * out). Fold k trains on W blocks (anchored: blocks 0 .. W+k-1, growing; rolling: blocks k .. W+k-1), validates
 * (early stopping) on the next block and is tested on the one after: a tg_train_run into OUT/fold-NN, then
 * tg_fc_backtest_run of the test block with every bar before it fed to the predictor first. */
#define TG_WF_MAX_FOLDS 64

typedef struct tg_wf_config {
  tg_train_config train; /* every fold's settings (data: the whole series; out and the fractions are set per fold) */
  int folds;             /* K: 1 .. TG_WF_MAX_FOLDS */
  int train_blocks;      /* W: blocks of the first fold's training data (default 3) */
  int rolling;           /* 1: the last W blocks only; 0 (default): anchored */
  char out[TG_PATH_MAX]; /* must not hold a walk-forward already */
  tg_fc_bt_opts bt;      /* the test blocks' rule and costs */
  FILE *log;             /* progress and the summary table (rank 0 only; NULL: silent) */
} tg_wf_config;

typedef struct tg_wf_fold {
  int64_t begin, val_begin, test_begin, end; /* rows: train [begin, val_begin), val, test [test_begin, end) */
  tg_eval_run res;
} tg_wf_fold;

/* train: tg_train_defaults(kind); K 1, W 3, anchored, tg_fc_bt_defaults. */
void tg_wf_defaults(tg_wf_config *c, tg_model_kind kind);
/* The folds' rows over n bars: f [c->folds]. TG_ERR_INVALID when the blocks would hold fewer than 2 bars. */
tg_status tg_wf_plan(const tg_wf_config *c, int64_t n, tg_wf_fold *f);
/* Every fold (fold k on rank k mod N, each in one process; the results shared), then on rank 0 tg_wf_write. bars: the
 * series (NULL: read c->train's data). folds [c->folds] receives every fold's rows and results (may be NULL). A fold
 * whose training a stop request interrupted (tg_stop_request) ends the walk-forward there: TG_ERR_INTERRUPTED naming
 * the fold and its checkpoint; the folds' files so far are kept, walkforward.csv is not written. */
tg_status tg_wf_run(const tg_wf_config *c, const tg_bars *bars, tg_wf_fold *folds);
/* OUT/walkforward.csv (a row per fold: its dates, training and backtest numbers), OUT/walkforward.html (the table
 * with links to each fold's report) and the summary on c->log; all bars gives the dates. */
tg_status tg_wf_write(const tg_wf_config *c, const tg_bars *all, const tg_wf_fold *f);

/* ==== sweep ====
 * Every combination of the grids' values (the first grid varies slowest) is a tg_train_run into OUT/run-NNN, with
 * an optional backtest of its test split; the table is ranked by the metric (lower is better, NaN last). */
#define TG_SWEEP_MAX_GRIDS 8
#define TG_SWEEP_MAX_VALUES 64
#define TG_SWEEP_MAX_RUNS 256

typedef struct tg_sweep_grid {
  char key[64];          /* a setting's config.json name: lr, mlp.hidden, ... */
  int n;
  int at[TG_SWEEP_MAX_VALUES]; /* value i is the string at text + at[i] */
  char text[1024];
} tg_sweep_grid;

typedef enum tg_sweep_metric { TG_SWEEP_VAL_LOSS = 0, TG_SWEEP_VAL_QRISK50 } tg_sweep_metric;

typedef struct tg_sweep_config {
  tg_train_config base;  /* the settings every run starts from */
  int n_grids;
  tg_sweep_grid grid[TG_SWEEP_MAX_GRIDS];
  tg_sweep_metric metric;
  int backtest;          /* 1: backtest each run's test split with bt */
  tg_fc_bt_opts bt;
  char out[TG_PATH_MAX]; /* must not hold a sweep already */
  FILE *log;             /* progress and the ranked table (rank 0 only; NULL: silent) */
} tg_sweep_config;

/* base: tg_train_defaults(kind); no grids, val_loss, no backtest (tg_fc_bt_defaults). */
void tg_sweep_defaults(tg_sweep_config *c, tg_model_kind kind);
/* "KEY=V1,V2,..": a grid added to c. TG_ERR_INVALID naming the text (empty or repeated values, too many). */
tg_status tg_sweep_add_grid(tg_sweep_config *c, const char *text);
const char *tg_sweep_value(const tg_sweep_grid *g, int i);
/* The number of runs: the product of the grids' sizes (TG_SWEEP_MAX_RUNS + 1 for any more than a sweep makes). */
long tg_sweep_runs(const tg_sweep_config *c);
/* Run r's (0-based) value index in grid g: the last grid varies fastest. */
int tg_sweep_value_of(const tg_sweep_config *c, long r, int g);
/* "lr=0.001 mlp.hidden=8" for run r. */
void tg_sweep_label(const tg_sweep_config *c, long r, char *buf, size_t cap);
/* Run r's config: base with r's grid values, out OUT/run-NNN. */
tg_status tg_sweep_run_config(const tg_sweep_config *c, long r, tg_train_config *out);
/* Every grid and every combination before anything trains: keys that are settings of this model and may vary, values
 * they accept, no more than TG_SWEEP_MAX_RUNS runs, the metric's quantile and the backtest's horizon.
 * TG_ERR_INVALID naming the grid or the run. */
tg_status tg_sweep_check(const tg_sweep_config *c);
/* Checks OUT and (with a backtest) every run's test split, then every run (run r on rank r mod N; a NaN or infinite
 * loss marks the run diverged, other failures end the sweep), then on rank 0 tg_sweep_write. bars: the data (NULL:
 * read base's). runs [tg_sweep_runs] receives the results (may be NULL). TG_ERR_NUMERIC when every run diverged.
 * A run whose training a stop request interrupted ends the sweep there: TG_ERR_INTERRUPTED naming the run and its
 * checkpoint; the runs' files so far are kept, sweep.csv is not written. */
tg_status tg_sweep_run(const tg_sweep_config *c, const tg_bars *bars, tg_eval_run *runs);
/* OUT/sweep.csv (a row per run in run order), OUT/sweep.html (ranked by the metric, best first, each run linked to its
 * report) and the ranked table and the best run on c->log. TG_ERR_NUMERIC when every run diverged (files written). */
tg_status tg_sweep_write(const tg_sweep_config *c, const tg_eval_run *runs);

#ifdef __cplusplus
}
#endif
#endif
