/* A walk-forward: the folds planned over the bars, each trained and its test block backtested (fold k on rank k mod N). */
#include <stdlib.h>
#include <string.h>
#include "base/files.h"
#include "data/readers/timeconv.h"
#include "tickgrad/dist.h"
#include "tickgrad/eval.h"

void tg_wf_defaults(tg_wf_config *c, tg_model_kind kind) {
  memset(c, 0, sizeof *c);
  c->train = tg_train_defaults(kind);
  c->folds = 1;
  c->train_blocks = 3;
  c->bt = tg_fc_bt_defaults();
}

tg_status tg_wf_plan(const tg_wf_config *c, int64_t n, tg_wf_fold *f) {
  int64_t blocks = (int64_t)c->folds + c->train_blocks + 1, S = n / blocks, off = n - blocks * S;
  if (c->folds < 1 || c->folds > TG_WF_MAX_FOLDS || c->train_blocks < 1)
    return tg_error(TG_ERR_INVALID, "walkforward: %d folds of %d training blocks: want 1..%d folds, 1 block or more",
                    c->folds, c->train_blocks, TG_WF_MAX_FOLDS);
  if (S < 2)
    return tg_error(TG_ERR_INVALID, "walkforward: %lld bars make %lld blocks of %lld bars; give more data or fewer "
                    "folds", (long long)n, (long long)blocks, (long long)S);
  for (int64_t k = 0; k < c->folds; k++) {
    int64_t first = c->rolling ? k : 0, train = c->rolling ? c->train_blocks : c->train_blocks + k;
    memset(&f[k], 0, sizeof f[k]);
    f[k].begin = off + first * S;
    f[k].val_begin = f[k].begin + train * S;
    f[k].test_begin = f[k].val_begin + S;
    f[k].end = f[k].test_begin + S;
  }
  return TG_OK;
}

/* One fold: train on rows [begin, test_begin) (the trainer's last block of them validates), backtest the test rows. */
static tg_status run_fold(const tg_wf_config *c, const tg_bars *all, int k, tg_wf_fold *f, tg_train_config *tc) {
  *tc = c->train;
  int64_t blocks = (f->end - f->begin) / (f->test_begin - f->val_begin);
  tc->train_frac = (double)(blocks - 2) / (double)blocks;
  tc->val_frac = 1.0 / (double)blocks;
  tc->solo = 1;
  int len = snprintf(tc->out, sizeof tc->out, "%s/fold-%02d", c->out, k + 1);
  if (len < 0 || (size_t)len >= sizeof tc->out) return tg_error(TG_ERR_INVALID, "walkforward: the path of %s is too long", c->out);
  tg_bar_column *cols = all->n_cols ? malloc(2 * (size_t)all->n_cols * sizeof *cols) : NULL; /* the views' */
  if (all->n_cols && !cols) return tg_error(TG_ERR_NOMEM, "walkforward: out of memory");
  tg_bars slice, upto;
  tg_bars_view(all, f->begin, f->end, cols, &slice);
  tg_bars_view(all, 0, f->end, cols ? cols + all->n_cols : NULL, &upto); /* every bar before the test block, then it */
  char t0[48], t1[48], t2[48];
  if (c->log)
    fprintf(c->log, "\n== fold %d/%d: train %s .., validate from %s, test from %s (%lld bars)\n", k + 1, c->folds,
            tg_format_utc(all->ts[f->begin], 0, t0, sizeof t0), tg_format_utc(all->ts[f->val_begin], 0, t1, sizeof t1),
            tg_format_utc(all->ts[f->test_begin], 0, t2, sizeof t2), (long long)(f->end - f->test_begin));
  tg_status st = tg_train_run(tc, &slice, &f->res.train);
  if (st == TG_OK && f->res.train.interrupted) {
    free(cols);
    return tg_error(TG_ERR_INTERRUPTED, "walkforward: fold %d of %d was interrupted (its checkpoint is in %s); the folds "
                    "after it were not run and walkforward.csv was not written", k + 1, c->folds, tc->out);
  }
  if (st == TG_OK) st = tg_fc_backtest_run(tc->out, &upto, f->test_begin, &c->bt, "walkforward", &f->res.st, &f->res.bh);
  free(cols);
  f->res.ok = st == TG_OK;
  return st == TG_OK ? TG_OK : tg_error(st, "walkforward: fold %d: %s", k + 1, tg_last_error());
}

static tg_status run_all(const tg_wf_config *c, const tg_bars *all, tg_wf_fold *f) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/walkforward.csv", c->out);
  if (tg_file_exists(path))
    return tg_error(TG_ERR_INVALID, "walkforward: %s already holds a walk-forward; choose another --out", c->out);
  tg_train_config *tc = malloc(sizeof *tc);
  tg_status st = tc ? tg_wf_plan(c, all->n, f) : tg_error(TG_ERR_NOMEM, "walkforward: out of memory");
  if (st == TG_OK) st = tg_dist_barrier(); /* every rank has checked OUT before any rank writes into it */
  if (st == TG_OK) st = tg_make_dirs(c->out);
  for (int k = 0; st == TG_OK && k < c->folds; k++)
    if (tg_eval_mine(k)) st = run_fold(c, all, k, &f[k], tc);
  for (int k = 0; st == TG_OK && k < c->folds; k++) st = tg_eval_share(&f[k].res, tg_eval_mine(k));
  if (st == TG_OK && tg_dist_rank() == 0) st = tg_wf_write(c, all, f);
  free(tc);
  return st;
}

tg_status tg_wf_run(const tg_wf_config *c0, const tg_bars *bars, tg_wf_fold *folds) {
  tg_wf_config *c = malloc(sizeof *c);
  tg_wf_fold *f = c && c0->folds >= 1 && c0->folds <= TG_WF_MAX_FOLDS ? calloc((size_t)c0->folds, sizeof *f) : NULL;
  if (!f) {
    free(c);
    return c0->folds >= 1 && c0->folds <= TG_WF_MAX_FOLDS ? tg_error(TG_ERR_NOMEM, "walkforward: out of memory")
                                                          : tg_error(TG_ERR_INVALID, "walkforward: %d folds: want 1..%d",
                                                                     c0->folds, TG_WF_MAX_FOLDS);
  }
  *c = *c0;
  if (tg_dist_rank() != 0) /* rank 0 prints and writes the summary */
    c->log = c->bt.log = c->train.log = c->train.progress = NULL;
  tg_bars own;
  tg_bars_init(&own);
  tg_status st = bars ? TG_OK : tg_train_read_bars(&c->train, stderr, &own);
  if (st == TG_OK) st = run_all(c, bars ? bars : &own, f);
  if (folds && st == TG_OK) memcpy(folds, f, (size_t)c->folds * sizeof *f);
  tg_bars_free(&own);
  free(f);
  free(c);
  return st;
}
