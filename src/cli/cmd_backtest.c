/* `tickgrad backtest`: bar files and a rule strategy -> fills at the next open with costs, the metrics table, trades.csv and equity.csv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/files.h"
#include "base/run_lock.h"
#include "cli/cli.h"
#include "cli/fc_flags.h"
#include "cli/read_flags.h"
#include "tickgrad/tickgrad.h"

#define BT_MAX_DATA 64

typedef struct bt_args {
  int n_data;
  const char *data[BT_MAX_DATA];
  const char *strategy, *split, *out;
  const char *run, *weights; /* --run: a trained forecaster or policy */
  cli_read_flags read;       /* over the run's own (its config.json) with --run */
  cli_fc_flags bt;           /* cash, costs and (forecasters) the rule */
} bt_args;

static void bt_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad backtest --data FILE... --strategy S [flags]\n"
          "       tickgrad backtest --run RUN [--data FILE...] [flags]\n"
          "Backtests a rule strategy, or a trained run, on the bars of one instrument (CSV, DBN, Parquet): the target\n"
          "position decided at each bar's close (from that bar and earlier ones only) fills at the next bar's open, with\n"
          "costs. Prints the metrics of the strategy beside buy and hold over the same bars and costs, and writes\n"
          "OUT/trades.csv (round trips), OUT/equity.csv (per bar: close, position, equity, drawdown, buy-and-hold\n"
          "equity) and OUT/backtest.json.\n"
          "\n"
          "  --run RUN            a trained run: a forecaster (any train --model) trades its quantile forecasts by --rule;\n"
          "                       a policy (dqn, ppo on the trading env) acts directly. Default data: the run's own, split\n"
          "                       test; default OUT: RUN (its report.html is rewritten with the backtest)\n"
          "  --rule R             forecaster: band (default: long when the lowest quantile of the horizon's return clears\n"
          "                       the round-trip cost, short when the highest is below minus it, else flat) or median\n"
          "                       (the median quantile against the cost)\n"
          "  --horizon H          forecaster: the horizon whose forecast trades (default: the longest)\n"
          "  --long-only          forecaster: never short\n"
          "  --sized              forecaster: positions min(1, |median| / |highest - lowest quantile|), not whole (a\n"
          "                       classifier: the position times the class's probability)\n"
          "  --class-map MAP      classifier: class=position pairs, e.g. buy=1,sell=-1,hold=0 (default: up, buy, long 1;\n"
          "                       down, sell, short -1; any other class 0); the most probable class is acted on\n"
          "  --threshold P        classifier: act only when that class's probability is at least P (default 0)\n"
          "  --weights W          best (default) or last epoch's weights\n"
          "  --data FILE...       bar files, folders or globs of one instrument (concatenated, sorted by time)\n"
          "  --strategy S         buy-and-hold, or sma-cross:FAST,SLOW (long when the FAST-bar mean of closes is above\n"
          "                       the SLOW-bar mean, flat otherwise)\n"
          "  --cash X             starting cash (default 100000)\n"
          "  --commission X       fee as a fraction of traded value (default 0)\n"
          "  --cost-bps X         further fee in basis points of traded value (default 0)\n"
          "  --slippage X         fills move against the order by this fraction of the open (default 0)\n"
          "  --commission-per-contract X  further fee per unit (contract, share) traded (default 0)\n"
          "  --multiplier X       cash value of one unit per point of price: a futures contract's multiplier (default:\n"
          "                       each bar's multiplier column, as DBN definition records give one, else 1)\n"
          "  --tick-size X        fill prices rounded to a multiple of X against the order (default: each bar's\n"
          "                       tick_size column, else 0: not rounded)\n"
          "  --no-spread          bars with bid and ask columns (tickgrad bars --quotes): do not cross half the spread\n"
          "                       (by default a buy pays ask - mid and a sale mid - bid of the quote at the fill)\n"
          "                       A contract column (continuous futures): a position held into a new contract pays a\n"
          "                       round trip at its first open\n"
          "  --split S            all (default; test with --run), or the trainer's chronological split by bars: train\n"
          "                       (first 70%%), val (next 15%%), test (last 15%%); a run's decisions still see the bars\n"
          "                       before the split (warm-up, state), never a later one\n"
          "  --out DIR            output folder (default runs/backtest-<strategy>-<timestamp>)\n"
          "exit codes: 0 done, 1 failure (data, files), 2 usage\n");
  cli_read_flags_help(f);
  fprintf(f, "  (with --run the bars are read as the run read its own unless these flags say otherwise)\n");
}

static int take_data(bt_args *a, int argc, char **argv, int *i) {
  int n0 = a->n_data;
  while (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
    if (a->n_data == BT_MAX_DATA) return tg_cli_usage_error("backtest", "more than %d --data paths", BT_MAX_DATA);
    a->data[a->n_data++] = argv[++*i];
  }
  return a->n_data > n0 ? 0 : tg_cli_usage_error("backtest", "--data needs at least one file");
}

/* One flag with a value; 0 when handled, else the exit code. */
static int flag_value(bt_args *a, const char *f, const char *v) {
  if (!v) return tg_cli_usage_error("backtest", "%s needs a value", f);
  if (!strcmp(f, "--strategy")) a->strategy = v;
  else if (!strcmp(f, "--split")) a->split = v;
  else if (!strcmp(f, "--out")) a->out = v;
  else if (!strcmp(f, "--run")) a->run = v;
  else if (!strcmp(f, "--weights")) a->weights = v;
  else return tg_cli_usage_error("backtest", "unknown flag '%s'", f);
  return 0;
}

static int parse(int argc, char **argv, bt_args *a) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i];
    int rc;
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      bt_usage(stdout);
      return -1;
    }
    int took = cli_fc_flag("backtest", &a->bt, f, i + 1 < argc ? argv[i + 1] : NULL, &rc);
    if (took < 0) took = cli_read_flag("backtest", &a->read, f, i + 1 < argc ? argv[i + 1] : NULL, &rc);
    if (took >= 0) i += took;
    else if (!strcmp(f, "--data")) rc = take_data(a, argc, argv, &i);
    else if (strncmp(f, "--", 2) != 0) rc = tg_cli_usage_error("backtest", "unexpected argument '%s'", f);
    else rc = flag_value(a, f, i + 1 < argc ? argv[++i] : NULL);
    if (rc) return rc;
  }
  if (!a->n_data && !a->run) return tg_cli_usage_error("backtest", "no data: give --data FILE... (or --run RUN)");
  if (!a->strategy == !a->run)
    return tg_cli_usage_error("backtest", "give either --strategy buy-and-hold|sma-cross:FAST,SLOW or --run RUN");
  if (!a->run && (a->bt.b.rule || a->weights || a->bt.b.horizon || a->bt.b.long_only || a->bt.b.sized))
    return tg_cli_usage_error("backtest", "--rule, --horizon, --long-only, --sized, --class-map, --threshold and --weights go with --run");
  if (a->weights && strcmp(a->weights, "best") && strcmp(a->weights, "last"))
    return tg_cli_usage_error("backtest", "--weights '%s': want best or last", a->weights);
  if (!a->split) a->split = a->run ? "test" : "all";
  return 0;
}

/* Every --data path, or without --data the run's own data (its config.json), concatenated and sorted by time;
 * frac [2] receives the run's train and validation fractions (0, 0: the defaults). */
static tg_status read_all(const bt_args *a, tg_bars *all, double *frac) {
  tg_read_opts ro = tg_read_settings_opts(&a->read.s, stderr);
  frac[0] = frac[1] = 0;
  if (!a->run) return tg_bars_read_paths(a->n_data, a->data, &ro, all);
  char path[1100];
  snprintf(path, sizeof path, "%s/config.json", a->run);
  tg_train_config c = tg_train_defaults(tg_model_default_kind());
  tg_status st = tg_train_config_load(path, &c);
  if (st != TG_OK) {
    tg_bars_init(all);
    return st;
  }
  frac[0] = c.train_frac, frac[1] = c.val_frac;
  cli_read_flags_over(&a->read, &c.read); /* the run's way of reading, with the flags given on top */
  ro = tg_read_settings_opts(&c.read, stderr);
  if (a->n_data) return tg_bars_read_paths(a->n_data, a->data, &ro, all);
  const char *paths[TG_TRAIN_MAX_DATA];
  for (int i = 0; i < c.n_data; i++) paths[i] = c.data[i];
  return tg_bars_read_paths(c.n_data, paths, &ro, all);
}

/* runs/backtest-<strategy>-<timestamp>, the strategy's ':' and ',' turned into '-'. */
static void default_out(const tg_strategy *s, char *buf, size_t n) {
  char name[64], stamp[32];
  snprintf(name, sizeof name, "%s", s->name);
  for (char *p = name; *p; p++)
    if (*p == ':' || *p == ',') *p = '-';
  time_t now = time(NULL);
  struct tm tmv;
  localtime_r(&now, &tmv);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
  snprintf(buf, n, "runs/backtest-%s-%s", name, stamp);
}

/* The forecaster's decisions at the bars of view (a part of all; the bars before it warm the predictor up). */
static tg_status forecast_targets(const bt_args *a, const tg_bars *all, const tg_bars *view, double *target, char *name,
                                  size_t cap) {
  tg_predictor *p = NULL;
  tg_predictor_opts po = {.weights = a->weights};
  tg_fc_rule r = tg_fc_bt_rule(&a->bt.b);
  tg_status st = tg_predictor_open(a->run, &po, &p);
  int64_t got = 0;
  if (st == TG_OK) st = tg_fc_targets(p, all, view->ts - all->ts, &r, target, &got);
  if (st == TG_OK) {
    const tg_predictor_info *in = tg_predictor_get_info(p);
    tg_fc_rule_name(&r, in, name, cap);
    printf("decisions: %lld of %lld bars had a forecast (warm-up: the first %lld bars of the data); round-trip cost "
           "%.4g\n", (long long)got, (long long)view->n, (long long)in->first_bar, r.cost);
  }
  tg_predictor_free(p);
  return st;
}

/* A backtest's files in out, the table, and out's report for a run. */
static tg_status report(const bt_args *a, const tg_backtest *bt, const char *name, const char *source, const char *out) {
  tg_status st = tg_backtest_write(bt, name, out);
  if (st == TG_OK) {
    printf("data: %s, %s split\n", source, a->split);
    tg_backtest_print(stdout, bt, name);
    printf("wrote %s/trades.csv (%lld trades), %s/equity.csv, %s/backtest.json\n", out, (long long)bt->n_trades, out, out);
  }
  if (st == TG_OK && a->run && tg_report_write(out, stdout) != TG_OK)
    fprintf(stderr, "tickgrad backtest: warning: no report: %s\n", tg_last_error());
  return st;
}

/* Runs the engine over view with target and reports it. */
static tg_status finish(const bt_args *a, const tg_bars *view, const double *target, const char *name,
                        const char *source, const char *out) {
  tg_backtest bt;
  memset(&bt, 0, sizeof bt);
  tg_status st = tg_backtest_run(view, target, &a->bt.b.o, &bt);
  if (st == TG_OK) st = report(a, &bt, name, source, out);
  tg_backtest_free(&bt);
  return st;
}

/* A DQN or PPO run on the trading env: its greedy policy over the split (tg_policy_backtest), reported. */
static tg_status policy_backtest(const bt_args *a, const char *out) {
  if (a->read.n)
    return tg_error(TG_ERR_INVALID, "backtest: %s is a policy run: its bars are read as its env.json says; %s cannot be "
                    "given", a->run, a->read.flag[0]);
  if (a->bt.b.rule || a->bt.b.horizon || a->bt.b.long_only || a->bt.b.sized || a->bt.b.class_map || a->bt.b.threshold > 0 ||
      a->weights) {
    char model[16];
    tg_agent_env e;
    if (tg_agent_env_read(a->run, model, sizeof model, &e) != TG_OK) return TG_ERR_FORMAT;
    return tg_error(TG_ERR_INVALID, "backtest: %s is a %s policy: it acts itself; --rule, --horizon, --long-only, "
                    "--sized and --weights are for forecaster runs", a->run, model);
  }
  tg_policy_bt_opts o = {a->split, a->n_data, a->data, a->bt.b.o, a->bt.costs_given, stdout};
  tg_policy_bt r;
  tg_status st = tg_policy_backtest(a->run, &o, &r);
  if (st == TG_OK) st = report(a, &r.bt, r.name, r.source, out);
  tg_policy_bt_free(&r);
  return st;
}

static tg_status run(const bt_args *a, const tg_strategy *s, const char *out) {
  tg_bars all, view;
  tg_bar_column *cols = NULL; /* the view's quote and contract columns */
  double *target = NULL;
  char name[128];
  snprintf(name, sizeof name, "%s", s ? s->name : "");
  double frac[2];
  tg_status st = read_all(a, &all, frac);
  if (st == TG_OK && all.n_cols && !(cols = malloc((size_t)all.n_cols * sizeof *cols)))
    st = tg_error(TG_ERR_NOMEM, "backtest: out of memory");
  if (st == TG_OK) st = tg_backtest_split(&all, a->split, frac[0], frac[1], cols, &view);
  if (st == TG_OK) st = tg_backtest_check_bars(&view, "backtest");
  if (st == TG_OK) {
    target = malloc((size_t)view.n * sizeof(double));
    if (!target) st = tg_error(TG_ERR_NOMEM, "backtest: out of memory");
    else if (s) st = tg_strategy_targets(s, &view, target);
    else st = forecast_targets(a, &all, &view, target, name, sizeof name);
  }
  if (st == TG_OK) st = finish(a, &view, target, name, all.source, out);
  free(target);
  free(cols);
  tg_bars_free(&all);
  return st;
}

int tg_cmd_backtest(int argc, char **argv) {
  bt_args a;
  memset(&a, 0, sizeof a);
  cli_fc_flags_init(&a.bt);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  tg_strategy s;
  if (a.strategy && tg_strategy_parse(a.strategy, &s) != TG_OK)
    return tg_cli_usage_error("backtest", "--strategy: %s", tg_last_error());
  if (strcmp(a.split, "all") && strcmp(a.split, "train") && strcmp(a.split, "val") && strcmp(a.split, "test"))
    return tg_cli_usage_error("backtest", "--split '%s': want all, train, val or test", a.split);
  char out[1024];
  if (a.out) snprintf(out, sizeof out, "%s", a.out);
  else if (a.run) snprintf(out, sizeof out, "%s", a.run);
  else default_out(&s, out, sizeof out);
  char env_json[1100];
  snprintf(env_json, sizeof env_json, "%s/env.json", a.run ? a.run : "");
  FILE *rl = a.run ? fopen(env_json, "r") : NULL;
  if (rl) fclose(rl);
  int lock = -1; /* a run's backtest writes into an existing folder (the run's): one writer at a time */
  tg_status st = a.run && tg_file_exists(out) ? tg_run_lock(out, "backtest", &lock) : TG_OK;
  if (st == TG_OK) st = rl ? policy_backtest(&a, out) : run(&a, a.strategy ? &s : NULL, out);
  tg_run_unlock(lock);
  if (st != TG_OK) {
    fflush(stdout);
    fprintf(stderr, "tickgrad backtest: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  return TG_EXIT_OK;
}
