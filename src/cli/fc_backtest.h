/* The backtest flags of a forecaster run (--rule, --horizon, --long-only, --sized, costs) and its backtest on held-out bars. */
#ifndef TG_CLI_FC_BACKTEST_H
#define TG_CLI_FC_BACKTEST_H

#include "tickgrad/tickgrad.h"

typedef struct cli_fc_flags {
  const char *rule; /* band, median (NULL: band) */
  long horizon;     /* 0: the longest */
  int long_only, sized;
  int given;        /* some flag was given */
  int costs_given;  /* --commission, --cost-bps or --slippage was given */
  int quiet;        /* 1: print nothing (a rank other than 0) */
  tg_bt_opts o;     /* cash and costs */
} cli_fc_flags;

void cli_fc_flags_init(cli_fc_flags *f);
/* flag (value v, NULL when none follows) if it is one of the backtest flags: returns how many arguments after the flag it
 * took (0 or 1) and sets *rc to a usage error's exit code (printed, naming cmd) or 0; -1 when it is not one of them. */
int cli_fc_flag(const char *cmd, cli_fc_flags *f, const char *flag, const char *v, int *rc);
tg_fc_rule cli_fc_rule(const cli_fc_flags *f);
/* Backtests the forecaster of run on the bars of upto from bar `from` on (the bars before it warm the predictor up;
 * none after upto's last is seen), as `tickgrad backtest --run` does: files and report into run, the table printed,
 * the strategy's and buy and hold's statistics out. who names the command in errors. */
tg_status cli_fc_backtest(const char *run, const tg_bars *upto, int64_t from, const cli_fc_flags *f, const char *who,
                          tg_bt_stats *st, tg_bt_stats *bh);
/* One training run's outcome as walkforward and sweep report it. */
typedef struct cli_run_result {
  int ok;                /* trained to the end */
  tg_train_result train;
  tg_bt_stats st, bh;    /* its backtest and buy and hold's (zeros without one) */
} cli_run_result;

/* Under mpirun, the result of a run made on one rank (mine = 1 there) reaches every rank: the reported numbers summed
 * over the ranks, the others contributing zeros. Collective: every rank calls it for every run, in the same order. */
tg_status cli_share_result(cli_run_result *r, int mine);

/* Every data path of c, concatenated and sorted by time (c's data_tz for naive times). */
tg_status cli_read_train_data(const tg_train_config *c, tg_bars *all);

#endif
