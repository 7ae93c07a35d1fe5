/* A walk-forward's summary: walkforward.csv (a row per fold), walkforward.html (the report's table page) and the printed table. */
#include <stdio.h>
#include <stdlib.h>
#include "base/files.h"
#include "base/text.h"
#include "data/readers/timeconv.h"
#include "tickgrad/eval.h"
#include "tickgrad/report.h"

static const char *WF_HEADER = "fold,train_start,val_start,test_start,test_end,epochs,best_epoch,best_val_loss,"
                               "val_qrisk50,naive_qrisk50,test_bars,total_return,sharpe,max_drawdown,trades,win_rate,"
                               "exposure,bh_total_return,bh_sharpe\n";

/* A fold's row; a number that is not finite (a diverged fold's losses, a statistic its bars leave undefined) is an
 * empty field, as in metrics.csv. */
static void fold_row(FILE *o, const tg_bars *all, int k, const tg_wf_fold *f) {
  char t[4][48], v[10][40];
  const tg_eval_run *r = &f->res;
  const double x[10] = {r->train.best.val_loss, r->train.best.q50, r->train.best.naive50, r->st.total_return,
                        r->st.sharpe, r->st.max_drawdown, r->st.win_rate, r->st.exposure, r->bh.total_return,
                        r->bh.sharpe};
  const char *c[10];
  for (int i = 0; i < 10; i++) c[i] = tg_format_finite(v[i], x[i], 6, "");
  fprintf(o, "%d,%s,%s,%s,%s,%d,%d,%s,%s,%s,%lld,%s,%s,%s,%lld,%s,%s,%s,%s\n", k + 1,
          tg_format_utc(all->ts[f->begin], 0, t[0], 48), tg_format_utc(all->ts[f->val_begin], 0, t[1], 48),
          tg_format_utc(all->ts[f->test_begin], 0, t[2], 48), tg_format_utc(all->ts[f->end - 1], 0, t[3], 48),
          r->train.epochs_run, r->train.best_epoch, c[0], c[1], c[2], (long long)r->st.bars, c[3], c[4], c[5],
          (long long)r->st.trades, c[6], c[7], c[8], c[9]);
}

#define WF_COLS 10
#define WF_CELL 48

/* The page: the same folds, each linked to its report. */
static tg_status write_html(const tg_wf_config *c, const tg_bars *all, const tg_wf_fold *f, const char *intro) {
  static const char *head[WF_COLS] = {"fold", "test from", "to", "best val loss", "q-risk P50 (naive)", "return",
                                      "Sharpe", "max drawdown", "trades", "buy and hold"};
  char (*text)[WF_CELL] = calloc((size_t)c->folds * WF_COLS, WF_CELL);
  const char **cells = calloc((size_t)c->folds * WF_COLS, sizeof *cells);
  char (*link)[32] = calloc((size_t)c->folds, 32);
  const char **links = calloc((size_t)c->folds, sizeof *links);
  tg_status st = text && cells && link && links ? TG_OK : tg_error(TG_ERR_NOMEM, "walkforward: out of memory");
  for (int k = 0; st == TG_OK && k < c->folds; k++) {
    char(*t)[WF_CELL] = text + (size_t)k * WF_COLS;
    const tg_eval_run *r = &f[k].res;
    snprintf(t[0], WF_CELL, "%d", k + 1);
    tg_format_utc(all->ts[f[k].test_begin], 0, t[1], WF_CELL);
    tg_format_utc(all->ts[f[k].end - 1], 0, t[2], WF_CELL);
    tg_format_cell(t[3], WF_CELL, r->train.best.val_loss, "%.5f", r->train.best.val_loss); /* "-": undefined */
    tg_format_cell(t[4], WF_CELL, r->train.best.q50 + r->train.best.naive50, "%.4f (%.4f)", r->train.best.q50,
                   r->train.best.naive50);
    tg_format_cell(t[5], WF_CELL, r->st.total_return, "%+.2f%%", 100 * r->st.total_return);
    tg_format_cell(t[6], WF_CELL, r->st.sharpe, "%.2f", r->st.sharpe);
    tg_format_cell(t[7], WF_CELL, r->st.max_drawdown, "%.2f%%", 100 * r->st.max_drawdown);
    snprintf(t[8], WF_CELL, "%lld", (long long)r->st.trades);
    tg_format_cell(t[9], WF_CELL, r->bh.total_return, "%+.2f%%", 100 * r->bh.total_return);
    for (int j = 0; j < WF_COLS; j++) cells[(size_t)k * WF_COLS + j] = t[j];
    snprintf(link[k], 32, "fold-%02d/report.html", k + 1);
    links[k] = link[k];
  }
  char title[64], path[TG_PATH_MAX + 32];
  snprintf(title, sizeof title, "Walk-forward: %d %s folds", c->folds, c->rolling ? "rolling" : "anchored");
  snprintf(path, sizeof path, "%s/walkforward.html", c->out);
  tg_report_table t = {title, intro,
                       "Each fold: config.json records the whole data; the fold trained on the rows in the table (its "
                       "train/val fractions are of those rows). Rows of every fold: walkforward.csv.",
                       WF_COLS, head, c->folds, cells, links, 0, NULL};
  if (st == TG_OK) st = tg_report_table_write(path, &t, NULL);
  free(text), free(cells), free(link), free(links);
  return st;
}

tg_status tg_wf_write(const tg_wf_config *c, const tg_bars *all, const tg_wf_fold *f) {
  char path[TG_PATH_MAX + 32], *buf = NULL, intro[256];
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return tg_error(TG_ERR_NOMEM, "walkforward: out of memory");
  fputs(WF_HEADER, m);
  double growth = 1, bh_growth = 1;
  int beat = 0;
  for (int k = 0; k < c->folds; k++) {
    fold_row(m, all, k, &f[k]);
    growth *= 1 + f[k].res.st.total_return, bh_growth *= 1 + f[k].res.bh.total_return;
    beat += f[k].res.st.total_return > f[k].res.bh.total_return;
  }
  fclose(m);
  snprintf(path, sizeof path, "%s/walkforward.csv", c->out);
  tg_status st = buf ? tg_write_atomic(path, buf, len) : tg_error(TG_ERR_NOMEM, "walkforward: out of memory");
  snprintf(intro, sizeof intro, "Test blocks compounded %+.2f%%, buy and hold %+.2f%%; the forecast beat buy and hold in "
           "%d of %d folds.", 100 * (growth - 1), 100 * (bh_growth - 1), beat, c->folds);
  if (c->log && buf)
    fprintf(c->log, "\nwalk-forward, %d %s folds: test blocks compounded %+.2f%% (buy and hold %+.2f%%); the forecast "
            "beat buy and hold in %d of %d folds\n%s", c->folds, c->rolling ? "rolling" : "anchored",
            100 * (growth - 1), 100 * (bh_growth - 1), beat, c->folds, buf);
  free(buf);
  if (st == TG_OK) st = write_html(c, all, f, intro);
  if (st == TG_OK && c->log) fprintf(c->log, "wrote %s/walkforward.csv and %s/walkforward.html\n", c->out, c->out);
  return st;
}
