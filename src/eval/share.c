/* Runs spread over MPI ranks: which run is this rank's, and one run's results reaching every rank by a sum. */
#include <string.h>
#include "tickgrad/dist.h"
#include "tickgrad/eval.h"

int tg_eval_mine(long k) { return k % tg_dist_size() == tg_dist_rank(); }

#define EV_NUMS 15
tg_status tg_eval_share(tg_eval_run *r, int mine) {
  if (tg_dist_size() == 1) return TG_OK;
  double v[EV_NUMS] = {0};
  if (mine) {
    double row[EV_NUMS] = {r->ok, r->train.epochs_run, r->train.best_epoch, r->train.best.val_loss, r->train.best.q50,
                           r->train.best.naive50, (double)r->st.bars, r->st.total_return, r->st.sharpe,
                           r->st.max_drawdown, (double)r->st.trades, r->st.win_rate, r->st.exposure,
                           r->bh.total_return, r->bh.sharpe};
    memcpy(v, row, sizeof row);
  }
  tg_status st = tg_dist_sum_f64(v, EV_NUMS);
  if (st != TG_OK || mine) return st;
  r->ok = (int)v[0], r->train.epochs_run = (int)v[1], r->train.best_epoch = (int)v[2], r->train.best.val_loss = v[3];
  r->train.best.q50 = v[4], r->train.best.naive50 = v[5], r->st.bars = (int64_t)v[6], r->st.total_return = v[7];
  r->st.sharpe = v[8], r->st.max_drawdown = v[9], r->st.trades = (int64_t)v[10], r->st.win_rate = v[11];
  r->st.exposure = v[12], r->bh.total_return = v[13], r->bh.sharpe = v[14];
  return TG_OK;
}
