/* `tickgrad backtest`: bar files and a rule strategy -> fills at the next open with costs, the metrics table, trades.csv and equity.csv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/cli.h"
#include "tickgrad/tickgrad.h"

#define BT_MAX_DATA 64

typedef struct bt_args {
  int n_data;
  const char *data[BT_MAX_DATA];
  const char *tz, *strategy, *split, *out;
  double price_scale;
  tg_bt_opts o;
} bt_args;

static void bt_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad backtest --data FILE... --strategy S [flags]\n"
          "Backtests a rule strategy on the bars of one instrument (CSV, DBN, Parquet): the target position decided at\n"
          "each bar's close (from that bar and earlier ones only) fills at the next bar's open, with costs. Prints the\n"
          "metrics of the strategy beside buy and hold over the same bars and costs, and writes OUT/trades.csv (round\n"
          "trips), OUT/equity.csv (per bar: close, position, equity, drawdown, buy-and-hold equity) and OUT/backtest.json.\n"
          "\n"
          "  --data FILE...       bar files, folders or globs of one instrument (concatenated, sorted by time)\n"
          "  --data-tz ZONE       zone of naive timestamps in the files (default UTC), e.g. America/New_York\n"
          "  --price-scale X      multiply prices by X (Lean equities: 0.0001; returns do not change)\n"
          "  --strategy S         buy-and-hold, or sma-cross:FAST,SLOW (long when the FAST-bar mean of closes is above\n"
          "                       the SLOW-bar mean, flat otherwise)\n"
          "  --cash X             starting cash (default 100000)\n"
          "  --commission X       fee as a fraction of traded value (default 0)\n"
          "  --cost-bps X         further fee in basis points of traded value (default 0)\n"
          "  --slippage X         fills move against the order by this fraction of the open (default 0)\n"
          "  --split S            all (default), or the trainer's chronological split by bars: train (first 70%%),\n"
          "                       val (next 15%%), test (last 15%%)\n"
          "  --out DIR            output folder (default runs/backtest-<strategy>-<timestamp>)\n"
          "exit codes: 0 done, 1 failure (data, files), 2 usage\n");
}

/* A number in [lo, hi); 0 when it is, else the usage exit code (the message printed). */
static int num(const char *flag, const char *v, double lo, double hi, double *out) {
  char *end = NULL;
  double x = strtod(v, &end);
  if (end == v || *end || !(x >= lo && x < hi))
    return tg_cli_usage_error("backtest", "%s '%s': want a number in [%g, %g)", flag, v, lo, hi);
  *out = x;
  return 0;
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
  if (!strcmp(f, "--data-tz")) a->tz = v;
  else if (!strcmp(f, "--strategy")) a->strategy = v;
  else if (!strcmp(f, "--split")) a->split = v;
  else if (!strcmp(f, "--out")) a->out = v;
  else if (!strcmp(f, "--cash")) return num(f, v, 1e-9, 1e15, &a->o.cash);
  else if (!strcmp(f, "--commission")) return num(f, v, 0, 1, &a->o.commission);
  else if (!strcmp(f, "--cost-bps")) return num(f, v, 0, 10000, &a->o.cost_bps);
  else if (!strcmp(f, "--slippage")) return num(f, v, 0, 1, &a->o.slippage);
  else if (!strcmp(f, "--price-scale")) return num(f, v, 1e-300, 1e300, &a->price_scale);
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
    if (!strcmp(f, "--data")) rc = take_data(a, argc, argv, &i);
    else if (strncmp(f, "--", 2) != 0) rc = tg_cli_usage_error("backtest", "unexpected argument '%s'", f);
    else rc = flag_value(a, f, i + 1 < argc ? argv[++i] : NULL);
    if (rc) return rc;
  }
  if (!a->n_data) return tg_cli_usage_error("backtest", "no data: give --data FILE...");
  if (!a->strategy) return tg_cli_usage_error("backtest", "no strategy: give --strategy buy-and-hold or sma-cross:FAST,SLOW");
  return 0;
}

/* Every --data path, concatenated and sorted by time. */
static tg_status read_all(const bt_args *a, tg_bars *all) {
  tg_read_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.tz = a->tz;
  ro.price_scale = a->price_scale;
  ro.warn = stderr;
  return tg_bars_read_paths(a->n_data, a->data, &ro, all);
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

static tg_status run(const bt_args *a, const tg_strategy *s, const char *out) {
  tg_bars all, view;
  tg_backtest bt;
  memset(&bt, 0, sizeof bt);
  double *target = NULL;
  tg_status st = read_all(a, &all);
  if (st == TG_OK) st = tg_backtest_split(&all, a->split, &view);
  if (st == TG_OK) st = tg_backtest_check_bars(&view, "backtest");
  if (st == TG_OK) {
    target = malloc((size_t)view.n * sizeof(double));
    st = target ? tg_strategy_targets(s, &view, target) : tg_error(TG_ERR_NOMEM, "backtest: out of memory");
  }
  if (st == TG_OK) st = tg_backtest_run(&view, target, &a->o, &bt);
  if (st == TG_OK) st = tg_backtest_write(&bt, s->name, out);
  if (st == TG_OK) {
    printf("data: %s, %s split\n", all.source, a->split);
    tg_backtest_print(stdout, &bt, s->name);
    printf("wrote %s/trades.csv (%lld trades), %s/equity.csv, %s/backtest.json\n", out, (long long)bt.n_trades, out, out);
  }
  free(target);
  tg_backtest_free(&bt);
  tg_bars_free(&all);
  return st;
}

int tg_cmd_backtest(int argc, char **argv) {
  bt_args a;
  memset(&a, 0, sizeof a);
  a.o = tg_bt_defaults();
  a.split = "all";
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  tg_strategy s;
  if (tg_strategy_parse(a.strategy, &s) != TG_OK) return tg_cli_usage_error("backtest", "--strategy: %s", tg_last_error());
  if (strcmp(a.split, "all") && strcmp(a.split, "train") && strcmp(a.split, "val") && strcmp(a.split, "test"))
    return tg_cli_usage_error("backtest", "--split '%s': want all, train, val or test", a.split);
  char out[1024];
  if (a.out) snprintf(out, sizeof out, "%s", a.out);
  else default_out(&s, out, sizeof out);
  if (run(&a, &s, out) != TG_OK) {
    fflush(stdout);
    fprintf(stderr, "tickgrad backtest: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  return TG_EXIT_OK;
}
