/* A forecaster run backtested on held-out bars (the run folder locked): its rule, decisions, the engine, files, report. */
#include <stdlib.h>
#include <string.h>
#include "base/run_lock.h"
#include "tickgrad/backtest.h"
#include "tickgrad/report.h"
#include "tickgrad/train.h"

tg_fc_bt_opts tg_fc_bt_defaults(void) {
  tg_fc_bt_opts o;
  memset(&o, 0, sizeof o);
  o.o = tg_bt_defaults();
  return o;
}

tg_fc_rule tg_fc_bt_rule(const tg_fc_bt_opts *o) {
  tg_fc_rule r = tg_fc_rule_defaults();
  r.horizon = o->horizon;
  r.allow_short = !o->long_only;
  r.sized = o->sized;
  r.cost = tg_bt_round_trip(&o->o);
  r.class_map = o->class_map;
  r.threshold = o->threshold;
  if (o->rule) tg_fc_rule_parse(o->rule, &r.kind);
  return r;
}

void tg_fc_rule_name(const tg_fc_rule *r, const tg_predictor_info *in, char *buf, size_t cap) {
  if (in->n_classes) { /* "tft classes down=-1,time=0,up=1 p>=0.6 long-only" */
    double pos[TG_MAX_CLASSES];
    size_t n = (size_t)snprintf(buf, cap, "%s classes", tg_train_model_name(in->kind));
    if (tg_fc_class_positions(r, in, pos) != TG_OK) return;
    for (int k = 0; k < in->n_classes && n < cap; k++)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s=%g", k ? "," : " ", in->classes[k], pos[k]);
    if (r->threshold > 0 && n < cap) n += (size_t)snprintf(buf + n, cap - n, " p>=%g", r->threshold);
    if (n < cap) snprintf(buf + n, cap - n, "%s%s", r->allow_short ? "" : " long-only", r->sized ? " sized" : "");
    return;
  }
  snprintf(buf, cap, "%s %s h%d%s%s", tg_train_model_name(in->kind), r->kind == TG_FC_BAND ? "band" : "median",
           r->horizon ? r->horizon : in->horizons, r->allow_short ? "" : " long-only", r->sized ? " sized" : "");
}

tg_status tg_fc_backtest_run(const char *run, const tg_bars *upto, int64_t from, const tg_fc_bt_opts *o,
                             const char *who, tg_bt_stats *st_out, tg_bt_stats *bh_out) {
  tg_predictor *p = NULL;
  tg_predictor_opts po = {.weights = o->weights};
  tg_fc_rule r = tg_fc_bt_rule(o);
  tg_bars test; /* the engine's bars (their quotes and contracts too); the predictor reads upto's */
  tg_bar_column *cols = upto->n_cols ? malloc((size_t)upto->n_cols * sizeof *cols) : NULL;
  tg_bars_view(upto, from, upto->n, cols, &test);
  double *target = test.n > 0 && (cols || !upto->n_cols) ? malloc((size_t)test.n * sizeof *target) : NULL;
  tg_backtest bt;
  memset(&bt, 0, sizeof bt);
  char name[128] = "";
  int lock = -1; /* the run's files are written here: one writer at a time */
  tg_status st = target ? tg_run_lock(run, "backtest", &lock) : tg_error(TG_ERR_NOMEM, "%s: no bars to backtest", who);
  if (st == TG_OK) st = tg_predictor_open(run, &po, &p);
  if (st == TG_OK) st = tg_fc_targets(p, upto, from, &r, target, NULL);
  if (st == TG_OK) {
    tg_fc_rule_name(&r, tg_predictor_get_info(p), name, sizeof name);
    st = tg_backtest_run(&test, target, &o->o, &bt);
  }
  if (st == TG_OK) st = tg_backtest_write(&bt, name, run);
  if (st == TG_OK) {
    if (st_out) *st_out = bt.stats;
    if (bh_out) *bh_out = bt.bh;
    if (o->log) tg_backtest_print(o->log, &bt, name);
    if (tg_report_write(run, NULL) != TG_OK && o->log) fprintf(o->log, "%s: warning: %s\n", who, tg_last_error());
  }
  tg_backtest_free(&bt);
  tg_predictor_free(p);
  free(target);
  free(cols);
  tg_run_unlock(lock);
  return st;
}
