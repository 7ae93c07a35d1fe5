/* What backtest --run, walkforward and sweep share: the backtest flags of a forecaster, its backtest on held-out bars, the run's data. */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/fc_backtest.h"
#include "tickgrad/report.h"

void cli_fc_flags_init(cli_fc_flags *f) {
  memset(f, 0, sizeof *f);
  f->o = tg_bt_defaults();
}

static int num(const char *cmd, const char *flag, const char *v, double lo, double hi, double *out) {
  char *end = NULL;
  double x = v ? strtod(v, &end) : 0;
  if (!v || end == v || *end || !(x >= lo && x < hi))
    return tg_cli_usage_error(cmd, "%s '%s': want a number in [%g, %g)", flag, v ? v : "", lo, hi);
  *out = x;
  return 0;
}

int cli_fc_flag(const char *cmd, cli_fc_flags *f, const char *flag, const char *v, int *rc) {
  *rc = 0;
  if (!strcmp(flag, "--long-only")) return f->long_only = 1, f->given = 1, 0;
  if (!strcmp(flag, "--sized")) return f->sized = 1, f->given = 1, 0;
  if (!strcmp(flag, "--rule")) {
    tg_fc_rule_kind k;
    if (!v || tg_fc_rule_parse(v, &k) != TG_OK) *rc = tg_cli_usage_error(cmd, "--rule '%s': want band or median", v ? v : "");
    f->rule = v, f->given = 1;
  } else if (!strcmp(flag, "--horizon")) {
    *rc = tg_cli_parse_long(flag, v, 1, TG_MAX_HORIZONS, &f->horizon) ? 0 : TG_EXIT_USAGE;
    f->given = 1;
  } else if (!strcmp(flag, "--cash")) *rc = num(cmd, flag, v, 1e-9, 1e15, &f->o.cash), f->given = 1;
  else if (!strcmp(flag, "--commission")) *rc = num(cmd, flag, v, 0, 1, &f->o.commission), f->given = f->costs_given = 1;
  else if (!strcmp(flag, "--cost-bps")) *rc = num(cmd, flag, v, 0, 10000, &f->o.cost_bps), f->given = f->costs_given = 1;
  else if (!strcmp(flag, "--slippage")) *rc = num(cmd, flag, v, 0, 1, &f->o.slippage), f->given = f->costs_given = 1;
  else return -1;
  return 1;
}

tg_fc_rule cli_fc_rule(const cli_fc_flags *f) {
  tg_fc_rule r = tg_fc_rule_defaults();
  r.horizon = (int)f->horizon;
  r.allow_short = !f->long_only;
  r.sized = f->sized;
  r.cost = tg_bt_round_trip(&f->o);
  if (f->rule) tg_fc_rule_parse(f->rule, &r.kind);
  return r;
}

tg_status cli_fc_backtest(const char *run, const tg_bars *upto, int64_t from, const cli_fc_flags *f, const char *who,
                          tg_bt_stats *st_out, tg_bt_stats *bh_out) {
  tg_predictor *p = NULL;
  tg_fc_rule r = cli_fc_rule(f);
  tg_bars test = *upto;
  test.ts += from, test.open += from, test.high += from, test.low += from, test.close += from, test.volume += from;
  if (test.instrument) test.instrument += from;
  test.n = upto->n - from;
  double *target = test.n > 0 ? malloc((size_t)test.n * sizeof *target) : NULL;
  tg_backtest bt;
  memset(&bt, 0, sizeof bt);
  char name[128] = "";
  tg_status st = target ? tg_predictor_open(run, NULL, &p) : tg_error(TG_ERR_NOMEM, "%s: no bars to backtest", who);
  if (st == TG_OK) st = tg_fc_targets(p, upto, from, &r, target, NULL);
  if (st == TG_OK) {
    const tg_predictor_info *in = tg_predictor_get_info(p);
    snprintf(name, sizeof name, "%s %s h%d%s%s", tg_train_model_name(in->kind), r.kind == TG_FC_BAND ? "band" : "median",
             r.horizon ? r.horizon : in->horizons, r.allow_short ? "" : " long-only", r.sized ? " sized" : "");
    st = tg_backtest_run(&test, target, &f->o, &bt);
  }
  if (st == TG_OK) st = tg_backtest_write(&bt, name, run);
  if (st == TG_OK) {
    *st_out = bt.stats, *bh_out = bt.bh;
    if (!f->quiet) tg_backtest_print(stdout, &bt, name);
    if (tg_report_write(run, NULL) != TG_OK) fprintf(stderr, "tickgrad %s: warning: %s\n", who, tg_last_error());
  }
  tg_backtest_free(&bt);
  tg_predictor_free(p);
  free(target);
  return st;
}

#define CLI_NUMS 15
tg_status cli_share_result(cli_run_result *r, int mine) {
  if (tg_dist_size() == 1) return TG_OK;
  double v[CLI_NUMS] = {0};
  if (mine) {
    double row[CLI_NUMS] = {r->ok, r->train.epochs_run, r->train.best_epoch, r->train.best.val_loss, r->train.best.q50,
                            r->train.best.naive50, (double)r->st.bars, r->st.total_return, r->st.sharpe,
                            r->st.max_drawdown, (double)r->st.trades, r->st.win_rate, r->st.exposure,
                            r->bh.total_return, r->bh.sharpe};
    memcpy(v, row, sizeof row);
  }
  tg_status st = tg_dist_sum_f64(v, CLI_NUMS);
  if (st != TG_OK || mine) return st;
  r->ok = (int)v[0], r->train.epochs_run = (int)v[1], r->train.best_epoch = (int)v[2], r->train.best.val_loss = v[3];
  r->train.best.q50 = v[4], r->train.best.naive50 = v[5], r->st.bars = (int64_t)v[6], r->st.total_return = v[7];
  r->st.sharpe = v[8], r->st.max_drawdown = v[9], r->st.trades = (int64_t)v[10], r->st.win_rate = v[11];
  r->st.exposure = v[12], r->bh.total_return = v[13], r->bh.sharpe = v[14];
  return TG_OK;
}

tg_status cli_read_train_data(const tg_train_config *c, tg_bars *all) {
  tg_read_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.tz = c->data_tz[0] ? c->data_tz : NULL;
  ro.warn = stderr;
  const char *paths[TG_TRAIN_MAX_DATA];
  for (int i = 0; i < c->n_data; i++) paths[i] = c->data[i];
  return tg_bars_read_paths(c->n_data, paths, &ro, all);
}
