/* `tickgrad walkforward`: time folds over bar files, each a full training run and a backtest of its test block. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/fc_backtest.h"
#include "data/timeconv.h"
#include "base/files.h"
#include "tickgrad/report.h"
#include "tickgrad/tickgrad.h"

#define WF_MAX_ARGS 256
#define WF_MAX_FOLDS 64

typedef struct wf_args {
  long folds, train_blocks;
  int rolling;
  const char *out;
  cli_fc_flags bt; /* the test blocks' backtest */
  int n_rest;
  char *rest[WF_MAX_ARGS]; /* everything else: train's flags */
} wf_args;

/* One fold: its bars (rows of the whole series) and results. */
typedef struct wf_fold {
  int64_t begin, val_begin, test_begin, end; /* rows: train [begin, val_begin), val, test [test_begin, end) */
  cli_run_result res;
} wf_fold;

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
          "  --rule, --horizon, --long-only, --sized, --cash, --commission, --cost-bps, --slippage: as backtest --run\n"
          "  every other flag is a training flag: tickgrad train --help (--model, --data, --epochs, ...)\n"
          "exit codes: 0 done, 1 failure (data, training, files), 2 usage\n",
          WF_MAX_FOLDS);
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
    else if (!strcmp(f, "--folds")) rc = tg_cli_parse_long(f, v, 1, WF_MAX_FOLDS, &a->folds) ? 0 : TG_EXIT_USAGE;
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

/* The folds' rows: K + W + 1 blocks of S bars after the first n - blocks * S bars. */
static tg_status plan_folds(const wf_args *a, int64_t n, wf_fold *f) {
  int64_t blocks = a->folds + a->train_blocks + 1, S = n / blocks, off = n - blocks * S;
  if (S < 2)
    return tg_error(TG_ERR_INVALID, "walkforward: %lld bars make %lld blocks of %lld bars; give more data or fewer "
                    "folds", (long long)n, (long long)blocks, (long long)S);
  for (int64_t k = 0; k < a->folds; k++) {
    int64_t first = a->rolling ? k : 0, train = a->rolling ? a->train_blocks : a->train_blocks + k;
    f[k].begin = off + first * S;
    f[k].val_begin = f[k].begin + train * S;
    f[k].test_begin = f[k].val_begin + S;
    f[k].end = f[k].test_begin + S;
  }
  return TG_OK;
}

/* bars' rows [a, b) as a view (nothing copied). */
static tg_bars rows_view(const tg_bars *all, int64_t a, int64_t b) {
  tg_bars v = *all;
  v.ts += a, v.open += a, v.high += a, v.low += a, v.close += a, v.volume += a;
  if (v.instrument) v.instrument += a;
  v.n = b - a;
  v.cap = v.n;
  return v;
}

/* One fold: train on rows [begin, test_begin) (the trainer's last block of them validates), backtest the test rows. */
static tg_status run_fold(const wf_args *a, const tg_train_config *c0, const tg_bars *all, int k, wf_fold *f) {
  tg_train_config c = *c0;
  int64_t blocks = (f->end - f->begin) / (f->test_begin - f->val_begin);
  c.train_frac = (double)(blocks - 2) / (double)blocks;
  c.val_frac = 1.0 / (double)blocks;
  snprintf(c.out, sizeof c.out, "%s/fold-%02d", a->out, k + 1);
  tg_bars slice = rows_view(all, f->begin, f->end);
  char t0[48], t1[48], t2[48];
  if (!a->bt.quiet)
    printf("\n== fold %d/%ld: train %s .., validate from %s, test from %s (%lld bars)\n", k + 1, a->folds,
         tg_format_utc(all->ts[f->begin], 0, t0, sizeof t0), tg_format_utc(all->ts[f->val_begin], 0, t1, sizeof t1),
         tg_format_utc(all->ts[f->test_begin], 0, t2, sizeof t2), (long long)(f->end - f->test_begin));
  tg_status st = tg_train_run(&c, &slice, &f->res.train);
  tg_bars upto = rows_view(all, 0, f->end); /* every bar before the test block, then the test block */
  if (st == TG_OK) st = cli_fc_backtest(c.out, &upto, f->test_begin, &a->bt, "walkforward", &f->res.st, &f->res.bh);
  f->res.ok = st == TG_OK;
  return st == TG_OK ? TG_OK : tg_error(st, "walkforward: fold %d: %s", k + 1, tg_last_error());
}

static const char *WF_HEADER = "fold,train_start,val_start,test_start,test_end,epochs,best_epoch,best_val_loss,"
                               "val_qrisk50,naive_qrisk50,test_bars,total_return,sharpe,max_drawdown,trades,win_rate,"
                               "exposure,bh_total_return,bh_sharpe\n";

static void fold_row(FILE *o, const tg_bars *all, int k, const wf_fold *f) {
  char t[4][48];
  fprintf(o, "%d,%s,%s,%s,%s,%d,%d,%.6g,%.6g,%.6g,%lld,%.6g,%.6g,%.6g,%lld,%.6g,%.6g,%.6g,%.6g\n", k + 1,
          tg_format_utc(all->ts[f->begin], 0, t[0], 48), tg_format_utc(all->ts[f->val_begin], 0, t[1], 48),
          tg_format_utc(all->ts[f->test_begin], 0, t[2], 48), tg_format_utc(all->ts[f->end - 1], 0, t[3], 48),
          f->res.train.epochs_run, f->res.train.best_epoch, f->res.train.best.val_loss, f->res.train.best.q50, f->res.train.best.naive50,
          (long long)f->res.st.bars, f->res.st.total_return, f->res.st.sharpe, f->res.st.max_drawdown, (long long)f->res.st.trades,
          f->res.st.win_rate, f->res.st.exposure, f->res.bh.total_return, f->res.bh.sharpe);
}

/* DIR/walkforward.csv, DIR/walkforward.html and the table on stdout. */
static tg_status write_summary(const wf_args *a, const tg_bars *all, const wf_fold *f) {
  char path[1100], *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return tg_error(TG_ERR_NOMEM, "walkforward: out of memory");
  fputs(WF_HEADER, m);
  double growth = 1, bh_growth = 1;
  int beat = 0;
  for (int k = 0; k < a->folds; k++) {
    fold_row(m, all, k, &f[k]);
    growth *= 1 + f[k].res.st.total_return, bh_growth *= 1 + f[k].res.bh.total_return;
    beat += f[k].res.st.total_return > f[k].res.bh.total_return;
  }
  fclose(m);
  snprintf(path, sizeof path, "%s/walkforward.csv", a->out);
  tg_status st = tg_write_atomic(path, buf, len);
  printf("\nwalk-forward, %ld %s folds: test blocks compounded %+.2f%% (buy and hold %+.2f%%); the forecast beat buy and "
         "hold in %d of %ld folds\n%s", a->folds, a->rolling ? "rolling" : "anchored", 100 * (growth - 1),
         100 * (bh_growth - 1), beat, a->folds, buf);
  /* the page: the same table, each fold linked to its report */
  free(buf);
  buf = NULL;
  m = open_memstream(&buf, &len);
  if (!m) return tg_error(TG_ERR_NOMEM, "walkforward: out of memory");
  fprintf(m, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>walk-forward</title><style>body{font:14px "
          "sans-serif;margin:24px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;"
          "text-align:right}</style></head><body>\n<h1>Walk-forward: %ld %s folds</h1>\n<p>Test blocks compounded "
          "%+.2f%%, buy and hold %+.2f%%; the forecast beat buy and hold in %d of %ld folds.</p>\n<table>\n<tr><th>"
          "fold</th><th>test from</th><th>to</th><th>best val loss</th><th>q-risk P50 (naive)</th><th>return</th>"
          "<th>Sharpe</th><th>max drawdown</th><th>trades</th><th>buy and hold</th></tr>\n",
          a->folds, a->rolling ? "rolling" : "anchored", 100 * (growth - 1),
          100 * (bh_growth - 1), beat, a->folds);
  for (int k = 0; k < a->folds; k++) {
    char t0[48], t1[48];
    fprintf(m, "<tr><td><a href=\"fold-%02d/report.html\">%d</a></td><td>%s</td><td>%s</td><td>%.5f</td><td>%.4f "
            "(%.4f)</td><td>%+.2f%%</td><td>%.2f</td><td>%.2f%%</td><td>%lld</td><td>%+.2f%%</td></tr>\n", k + 1, k + 1,
            tg_format_utc(all->ts[f[k].test_begin], 0, t0, 48), tg_format_utc(all->ts[f[k].end - 1], 0, t1, 48),
            f[k].res.train.best.val_loss, f[k].res.train.best.q50, f[k].res.train.best.naive50, 100 * f[k].res.st.total_return,
            f[k].res.st.sharpe, 100 * f[k].res.st.max_drawdown, (long long)f[k].res.st.trades, 100 * f[k].res.bh.total_return);
  }
  fputs("</table>\n<p>Each fold: <code>config.json</code> records the whole data; the fold trained on the rows in "
        "the table (its train/val fractions are of those rows). Rows of every fold: walkforward.csv.</p>\n"
        "</body></html>\n", m);
  fclose(m);
  snprintf(path, sizeof path, "%s/walkforward.html", a->out);
  if (st == TG_OK) st = tg_write_atomic(path, buf, len);
  free(buf);
  if (st == TG_OK) printf("wrote %s/walkforward.csv and %s/walkforward.html\n", a->out, a->out);
  return st;
}

static tg_status run(const wf_args *a, const tg_train_config *c) {
  char path[1100];
  snprintf(path, sizeof path, "%s/walkforward.csv", a->out);
  if (tg_file_exists(path))
    return tg_error(TG_ERR_INVALID, "walkforward: %s already holds a walk-forward; choose another --out", a->out);
  tg_bars all;
  tg_status st = cli_read_train_data(c, &all);
  wf_fold *f = st == TG_OK ? calloc((size_t)a->folds, sizeof *f) : NULL;
  if (st == TG_OK && !f) st = tg_error(TG_ERR_NOMEM, "walkforward: out of memory");
  if (st == TG_OK) st = plan_folds(a, all.n, f);
  if (st == TG_OK) st = tg_dist_barrier(); /* every rank has checked --out before any rank writes into it */
  if (st == TG_OK) st = tg_make_dirs(a->out);
  for (int k = 0; st == TG_OK && k < a->folds; k++)
    if (k % tg_dist_size() == tg_dist_rank()) st = run_fold(a, c, &all, k, &f[k]); /* fold k on rank k mod N */
  for (long k = 0; st == TG_OK && k < a->folds; k++) st = cli_share_result(&f[k].res, k % tg_dist_size() == tg_dist_rank());
  if (st == TG_OK && tg_dist_rank() == 0) st = write_summary(a, &all, f);
  free(f);
  tg_bars_free(&all);
  return st;
}

int tg_cmd_walkforward(int argc, char **argv) {
  static wf_args a;
  static tg_train_config c;
  memset(&a, 0, sizeof a);
  a.train_blocks = 3;
  cli_fc_flags_init(&a.bt);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  rc = tg_cli_train_config("walkforward", a.n_rest, a.rest, &c);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  /* under mpirun each rank trains whole folds of its own (fold k on rank k mod N); rank 0 prints and writes the summary */
  c.solo = 1;
  a.bt.quiet = tg_dist_rank() != 0;
  c.log = a.bt.quiet ? NULL : stdout;
  if (run(&a, &c) != TG_OK) {
    fflush(stdout);
    fprintf(stderr, "tickgrad %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  return TG_EXIT_OK;
}
