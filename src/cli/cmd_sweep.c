/* `tickgrad sweep`: every combination of hyperparameter grids a training run (and a backtest); a ranked table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/fc_backtest.h"
#include "base/files.h"
#include "tickgrad/report.h"
#include "tickgrad/tickgrad.h"

#define SW_MAX_ARGS 256
#define SW_MAX_GRIDS 8
#define SW_MAX_VALUES 64
#define SW_MAX_RUNS 256
#define SW_LABEL 512

typedef enum sw_metric { SW_VAL_LOSS = 0, SW_VAL_QRISK50 } sw_metric;

/* One --grid KEY=V1,V2,..: the key and its values (pointers into text, whose commas became NULs). */
typedef struct sw_grid {
  char key[64];
  int n;
  const char *v[SW_MAX_VALUES];
  char text[1024];
} sw_grid;

typedef struct sw_args {
  int n_grids, backtest;
  sw_grid grid[SW_MAX_GRIDS];
  long runs;
  sw_metric metric;
  const char *out;
  cli_fc_flags bt; /* with --backtest: each run's test split */
  int n_rest;
  char *rest[SW_MAX_ARGS]; /* everything else: train's flags */
} sw_args;

typedef cli_run_result sw_run; /* one run's results (ok 0: stopped on a NaN or infinite loss) */

static void sw_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad sweep --grid KEY=V1,V2[,..] [--grid KEY=..].. --model M --data FILE... --out DIR\n"
          "                      [train flags] [--metric val_loss|val_qrisk50] [--backtest [backtest flags]]\n"
          "A hyperparameter sweep of a forecaster: every combination of the grids' values (the first --grid varies\n"
          "slowest) is a full `tickgrad train` run into DIR/run-NNN, one after another; its config.json records its\n"
          "values. KEY is a setting's name in config.json (lr, batch, dropout, epochs, seed, horizons, mlp.hidden,\n"
          "tft.hidden, tft.heads, mamba2.d_model, ...); a --grid value replaces the same setting given as a flag.\n"
          "Every combination is checked before anything is trained. With --backtest each run's test split is then\n"
          "backtested as `tickgrad backtest --run` does it. Writes DIR/sweep.csv (a row per run, in run order) and\n"
          "DIR/sweep.html (the table ranked by the metric, best first, each run linked to its report), prints the\n"
          "ranked table and the best run. A run whose loss turns NaN or infinite stays in the table as diverged,\n"
          "ranked last.\n"
          "\n"
          "  --grid KEY=V1,V2,..  a setting and the values to try (up to %d grids of %d values, %d runs in all)\n"
          "  --metric M           rank by the best epoch's val_loss (default) or val_qrisk50 (validation q-risk P50);\n"
          "                       lower is better (the test split is not used to choose)\n"
          "  --out DIR            the output folder (required; must not hold a sweep already)\n"
          "  --backtest           backtest each run's test split (columns total_return, sharpe, max_drawdown, trades,\n"
          "                       bh_total_return)\n"
          "  --rule, --horizon, --long-only, --sized, --cash, --commission, --cost-bps, --slippage: as backtest --run\n"
          "  every other flag is a training flag: tickgrad train --help (--model, --data, --epochs, ...)\n"
          "exit codes: 0 done, 1 failure (data, training, files; every run diverged), 2 usage\n",
          SW_MAX_GRIDS, SW_MAX_VALUES, SW_MAX_RUNS);
}

/* Settings a grid cannot vary: the model kind (its defaults differ), where the data and the run go, and quantiles
 * (a list: its commas would split the grid). */
static const char *fixed_key(const char *key) {
  if (!strcmp(key, "model")) return "the model kind (sweep one --model at a time)";
  if (!strcmp(key, "data")) return "the data (give --data)";
  if (!strcmp(key, "out")) return "the run folder (each run goes to DIR/run-NNN)";
  if (!strcmp(key, "quantiles")) return "a list whose commas would split the grid (give --quantiles)";
  return NULL;
}

/* "KEY=V1,V2": splits into g; the key and the values are checked against the config later. */
static int parse_grid(const char *text, sw_grid *g) {
  const char *eq = text ? strchr(text, '=') : NULL;
  if (!eq || eq == text) return tg_cli_usage_error("sweep", "--grid '%s': want KEY=V1,V2,..", text ? text : "");
  if ((size_t)(eq - text) >= sizeof g->key) return tg_cli_usage_error("sweep", "--grid '%.64s..': key too long", text);
  if (strlen(eq + 1) >= sizeof g->text) return tg_cli_usage_error("sweep", "--grid %.64s..: values too long", text);
  snprintf(g->key, sizeof g->key, "%.*s", (int)(eq - text), text);
  snprintf(g->text, sizeof g->text, "%s", eq + 1);
  g->n = 0;
  for (char *p = g->text;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    if (!*p) return tg_cli_usage_error("sweep", "--grid %s: an empty value", text);
    if (g->n == SW_MAX_VALUES)
      return tg_cli_usage_error("sweep", "--grid %s: more than %d values", g->key, SW_MAX_VALUES);
    for (int i = 0; i < g->n; i++)
      if (!strcmp(g->v[i], p)) return tg_cli_usage_error("sweep", "--grid %s: value '%s' given twice", g->key, p);
    g->v[g->n++] = p;
    if (!comma) return 0;
    p = comma + 1;
  }
}

static int parse_metric(const char *v, sw_metric *m) {
  if (v && !strcmp(v, "val_loss")) *m = SW_VAL_LOSS;
  else if (v && !strcmp(v, "val_qrisk50")) *m = SW_VAL_QRISK50;
  else return tg_cli_usage_error("sweep", "--metric '%s': want val_loss or val_qrisk50", v ? v : "");
  return 0;
}

/* One of sweep's own flags at argv[i] (its value at argv[i + 1]): 1 when taken (*used: values after it), else 0. */
static int own_flag(sw_args *a, const char *f, const char *v, int *rc, int *used) {
  *used = 1;
  if (!strcmp(f, "--grid")) {
    if (a->n_grids == SW_MAX_GRIDS) *rc = tg_cli_usage_error("sweep", "more than %d --grid flags", SW_MAX_GRIDS);
    else *rc = parse_grid(v, &a->grid[a->n_grids++]);
  } else if (!strcmp(f, "--metric")) *rc = parse_metric(v, &a->metric);
  else if (!strcmp(f, "--out")) {
    if (!v) *rc = tg_cli_usage_error("sweep", "%s needs a value", f);
    else a->out = v;
  } else if (!strcmp(f, "--backtest")) a->backtest = 1, *used = 0;
  else {
    int took = cli_fc_flag("sweep", &a->bt, f, v, rc);
    if (took < 0) return 0;
    *used = took;
  }
  return 1;
}

/* Sweep and backtest flags here; the rest goes to train's parser. */
static int parse(int argc, char **argv, sw_args *a) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0, used = 0;
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      sw_usage(stdout);
      return -1;
    }
    if (own_flag(a, f, v, &rc, &used)) {
      if (rc) return rc;
      i += used;
      continue;
    }
    if (a->n_rest == SW_MAX_ARGS) return tg_cli_usage_error("sweep", "too many arguments");
    a->rest[a->n_rest++] = argv[i];
  }
  if (!a->n_grids) return tg_cli_usage_error("sweep", "give at least one --grid KEY=V1,V2");
  if (!a->out) return tg_cli_usage_error("sweep", "give --out DIR");
  if (a->bt.given && !a->backtest)
    return tg_cli_usage_error("sweep", "--rule, --horizon, --long-only, --sized and the cost flags go with --backtest");
  return 0;
}

/* The number of runs, or a usage error when it passes SW_MAX_RUNS or a key repeats. */
static int count_runs(sw_args *a) {
  double runs = 1; /* up to 64^8: exact in a double */
  for (int g = 0; g < a->n_grids; g++) {
    for (int h = 0; h < g; h++)
      if (!strcmp(a->grid[g].key, a->grid[h].key))
        return tg_cli_usage_error("sweep", "--grid %s given twice", a->grid[g].key);
    runs *= a->grid[g].n;
  }
  if (runs > SW_MAX_RUNS)
    return tg_cli_usage_error("sweep", "the grids make %.0f runs; a sweep runs at most %d (drop values or split it)",
                              runs, SW_MAX_RUNS);
  a->runs = (long)runs;
  return 0;
}

/* Run r's (0-based) value index in grid g: the last grid varies fastest. */
static int value_of(const sw_args *a, long r, int g) {
  for (int h = a->n_grids - 1; h > g; h--) r /= a->grid[h].n;
  return (int)(r % a->grid[g].n);
}

/* "lr=0.001 mlp.hidden=8" for run r. */
static void run_label(const sw_args *a, long r, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int g = 0; g < a->n_grids && len < cap; g++) {
    const char *v = a->grid[g].v[value_of(a, r, g)];
    len += (size_t)snprintf(buf + len, cap - len, "%s%s=%s", g ? " " : "", a->grid[g].key, v);
  }
}

/* Run r's config: base with r's grid values and its folder DIR/run-NNN. */
static tg_status run_config(const sw_args *a, const tg_train_config *base, long r, tg_train_config *c) {
  *c = *base;
  for (int g = 0; g < a->n_grids; g++) {
    const char *v = a->grid[g].v[value_of(a, r, g)];
    if (tg_train_config_set(c, a->grid[g].key, v) != TG_OK)
      return tg_error(TG_ERR_INVALID, "--grid %s=%s: %s", a->grid[g].key, v, tg_last_error());
  }
  snprintf(c->out, sizeof c->out, "%s/run-%03ld", a->out, r + 1);
  return TG_OK;
}

/* A key that is not a setting, cannot be swept or belongs to another model; a value the setting refuses. */
static int check_grid(const sw_grid *g, const tg_train_config *base) {
  static tg_train_config c;
  const char *why = fixed_key(g->key), *dot = strchr(g->key, '.'), *model = tg_train_model_name(base->model.kind);
  if (why) return tg_cli_usage_error("sweep", "--grid %s: a sweep cannot vary %s", g->key, why);
  if (dot && (strncmp(g->key, model, (size_t)(dot - g->key)) || model[dot - g->key]))
    return tg_cli_usage_error("sweep", "--grid %s: a setting of %.*s, not of --model %s", g->key, (int)(dot - g->key),
                              g->key, model);
  for (int i = 0; i < g->n; i++) {
    c = *base;
    if (tg_train_config_set(&c, g->key, g->v[i]) != TG_OK)
      return tg_cli_usage_error("sweep", "--grid %s=%s: %s", g->key, g->v[i], tg_last_error());
  }
  return 0;
}

static int has_median(const tg_train_config *c) {
  for (int k = 0; k < c->model.nq; k++)
    if (fabsf(c->model.q[k] - 0.5f) < 1e-6f) return 1; /* as the trainer finds its q-risk P50 */
  return 0;
}

/* Every grid and every combination, before anything runs (settings that must agree, the backtest horizon). */
static int check_all(sw_args *a, const tg_train_config *base) {
  static tg_train_config c;
  int rc = count_runs(a);
  for (int g = 0; !rc && g < a->n_grids; g++) rc = check_grid(&a->grid[g], base);
  char label[SW_LABEL];
  for (long r = 0; !rc && r < a->runs; r++) {
    run_label(a, r, label, sizeof label);
    if (run_config(a, base, r, &c) != TG_OK || tg_train_config_check(&c) != TG_OK)
      rc = tg_cli_usage_error("sweep", "run %ld (%s): %s", r + 1, label, tg_last_error());
    else if (a->metric == SW_VAL_QRISK50 && !has_median(&c))
      rc = tg_cli_usage_error("sweep", "--metric val_qrisk50 needs the quantile 0.5 (--quantiles)");
    else if (a->backtest && a->bt.horizon > c.horizons)
      rc = tg_cli_usage_error("sweep", "run %ld (%s): --horizon %ld: the run forecasts 1..%d bars ahead", r + 1, label,
                              a->bt.horizon, c.horizons);
  }
  return rc;
}

/* Before anything is trained: no run in DIR already; with --backtest, every run's test split can be backtested. */
static tg_status check_out_and_data(const sw_args *a, const tg_train_config *base, const tg_bars *all) {
  static tg_train_config c;
  char path[1200];
  for (long r = 0; r < a->runs; r++) {
    run_config(a, base, r, &c);
    snprintf(path, sizeof path, "%s/config.json", c.out);
    if (tg_file_exists(path))
      return tg_error(TG_ERR_INVALID, "sweep: %s already holds a run (an interrupted sweep?); choose another --out",
                      c.out);
    tg_bars view;
    tg_status st = a->backtest ? tg_backtest_split(all, "test", c.train_frac, c.val_frac, &view) : TG_OK;
    if (st == TG_OK && a->backtest) st = tg_backtest_check_bars(&view, "sweep --backtest");
    if (st != TG_OK) return tg_error(st, "sweep: run %ld: %s", r + 1, tg_last_error());
  }
  return TG_OK;
}

/* The run's test split backtested as `backtest --run` does: the predictor sees every bar before it first. */
static tg_status backtest(const sw_args *a, const tg_train_config *c, const tg_bars *all, sw_run *run) {
  tg_bars view;
  tg_status st = tg_backtest_split(all, "test", c->train_frac, c->val_frac, &view);
  tg_bars upto = *all;
  upto.n = (view.ts - all->ts) + view.n; /* the test split ends the data */
  return st == TG_OK ? cli_fc_backtest(c->out, &upto, view.ts - all->ts, &a->bt, "sweep", &run->st, &run->bh) : st;
}

/* NaN results for a run that did not finish (ranked last; its epochs so far are kept). */
static void mark_diverged(sw_run *run) {
  run->ok = 0;
  run->train.best.val_loss = run->train.best.q50 = run->train.best.naive50 = NAN;
  run->st.total_return = run->st.sharpe = run->st.max_drawdown = run->bh.total_return = NAN;
  run->st.trades = 0;
}

/* Run r: training (a NaN or infinite loss marks it diverged; other failures end the sweep), then the backtest. */
static tg_status one_run(const sw_args *a, const tg_train_config *base, const tg_bars *all, long r, sw_run *run) {
  static tg_train_config c;
  char label[SW_LABEL];
  run_label(a, r, label, sizeof label);
  run_config(a, base, r, &c);
  if (!a->bt.quiet) {
    printf("\n== run %ld/%ld: %s -> %s\n", r + 1, a->runs, label, c.out);
    fflush(stdout);
  }
  tg_status st = tg_train_run(&c, all, &run->train);
  if (st == TG_ERR_NUMERIC) {
    fflush(stdout);
    fprintf(stderr, "tickgrad sweep: run %ld (%s) diverged: %s\n", r + 1, label, tg_last_error());
    mark_diverged(run);
    return TG_OK;
  }
  if (st != TG_OK) return tg_error(st, "sweep: run %ld (%s): %s", r + 1, label, tg_last_error());
  run->ok = 1;
  st = a->backtest ? backtest(a, &c, all, run) : TG_OK;
  return st == TG_OK ? TG_OK : tg_error(st, "sweep: run %ld (%s): backtest: %s", r + 1, label, tg_last_error());
}

static double metric(const sw_args *a, const sw_run *run) {
  if (!run->ok) return NAN;
  return a->metric == SW_VAL_QRISK50 ? run->train.best.q50 : run->train.best.val_loss;
}

typedef struct sw_rank {
  double m;
  long r;
} sw_rank;

/* Lower first, NaN last, ties in run order: the same order every time. */
static int rank_cmp(const void *pa, const void *pb) {
  const sw_rank *x = pa, *y = pb;
  int nx = isnan(x->m), ny = isnan(y->m);
  if (nx != ny) return nx - ny;
  if (!nx && x->m != y->m) return x->m < y->m ? -1 : 1;
  return x->r < y->r ? -1 : x->r > y->r;
}

static void csv_row(FILE *o, const sw_args *a, long r, const sw_run *run) {
  fprintf(o, "%ld", r + 1);
  for (int g = 0; g < a->n_grids; g++) fprintf(o, ",%s", a->grid[g].v[value_of(a, r, g)]);
  fprintf(o, ",%d,%d,%.6g,%.6g,%.6g", run->train.epochs_run, run->train.best_epoch, run->train.best.val_loss,
          run->train.best.q50, run->train.best.naive50);
  if (a->backtest)
    fprintf(o, ",%.6g,%.6g,%.6g,%lld,%.6g", run->st.total_return, run->st.sharpe, run->st.max_drawdown,
            (long long)run->st.trades, run->bh.total_return);
  fputc('\n', o);
}

/* DIR/sweep.csv: a row per run in run order (nothing in it depends on the folder or the time). */
static tg_status write_csv(const sw_args *a, const sw_run *runs) {
  char path[1100], *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  fputs("run", m);
  for (int g = 0; g < a->n_grids; g++) fprintf(m, ",%s", a->grid[g].key);
  fputs(",epochs,best_epoch,best_val_loss,val_qrisk50,naive_qrisk50", m);
  fputs(a->backtest ? ",total_return,sharpe,max_drawdown,trades,bh_total_return\n" : "\n", m);
  for (long r = 0; r < a->runs; r++) csv_row(m, a, r, &runs[r]);
  fclose(m);
  snprintf(path, sizeof path, "%s/sweep.csv", a->out);
  tg_status st = buf ? tg_write_atomic(path, buf, len) : tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  free(buf);
  return st;
}

static void html_text(FILE *o, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", o);
    else if (*s == '>') fputs("&gt;", o);
    else if (*s == '&') fputs("&amp;", o);
    else if (*s == '"') fputs("&quot;", o);
    else fputc(*s, o);
  }
}

static void html_row(FILE *o, const sw_args *a, int rank, long r, const sw_run *run) {
  fprintf(o, "<tr%s><td>%d</td><td><a href=\"run-%03ld/report.html\">run-%03ld</a></td>", rank == 1 && run->ok ?
          " style=\"font-weight:bold\"" : "", rank, r + 1, r + 1);
  for (int g = 0; g < a->n_grids; g++) {
    fputs("<td>", o);
    html_text(o, a->grid[g].v[value_of(a, r, g)]);
    fputs("</td>", o);
  }
  fprintf(o, "<td>%d</td><td>%d</td>", run->train.epochs_run, run->train.best_epoch);
  if (!run->ok) fprintf(o, "<td colspan=\"%d\">diverged (NaN or infinite loss)</td>", a->backtest ? 7 : 2);
  else {
    const tg_train_metrics *b = &run->train.best;
    fprintf(o, "<td>%.5f</td><td>%.4f (%.4f)</td>", b->val_loss, b->q50, b->naive50);
    if (a->backtest)
      fprintf(o, "<td>%+.2f%%</td><td>%.2f</td><td>%.2f%%</td><td>%lld</td><td>%+.2f%%</td>",
              100 * run->st.total_return, run->st.sharpe, 100 * run->st.max_drawdown, (long long)run->st.trades,
              100 * run->bh.total_return);
  }
  fputs("</tr>\n", o);
}

/* DIR/sweep.html: the table ranked by the metric, best first, each run linked to its report. */
static tg_status write_html(const sw_args *a, const sw_run *runs, const sw_rank *rank) {
  char path[1100], *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  fprintf(m, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>sweep</title><style>body{font:14px "
          "sans-serif;margin:24px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;"
          "text-align:right}</style></head><body>\n<h1>Sweep: %ld runs</h1>\n<p>Ranked by the best epoch's %s "
          "(lower is better), best first.</p>\n<table>\n<tr><th>rank</th><th>run</th>", a->runs,
          a->metric == SW_VAL_QRISK50 ? "validation q-risk P50" : "validation loss");
  for (int g = 0; g < a->n_grids; g++) {
    fputs("<th>", m);
    html_text(m, a->grid[g].key);
    fputs("</th>", m);
  }
  fputs("<th>epochs</th><th>best epoch</th><th>best val loss</th><th>q-risk P50 (naive)</th>", m);
  if (a->backtest)
    fputs("<th>test return</th><th>Sharpe</th><th>max drawdown</th><th>trades</th><th>buy and hold</th>", m);
  fputs("</tr>\n", m);
  for (long i = 0; i < a->runs; i++) html_row(m, a, (int)i + 1, rank[i].r, &runs[rank[i].r]);
  fputs("</table>\n<p>Each run's <code>config.json</code> holds all its settings; the rows in run order: "
        "sweep.csv.</p>\n</body></html>\n", m);
  fclose(m);
  snprintf(path, sizeof path, "%s/sweep.html", a->out);
  tg_status st = buf ? tg_write_atomic(path, buf, len) : tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  free(buf);
  return st;
}

/* The ranked table on stdout, then the best run. */
static void print_table(const sw_args *a, const sw_run *runs, const sw_rank *rank) {
  int w[SW_MAX_GRIDS];
  for (int g = 0; g < a->n_grids; g++) {
    w[g] = (int)strlen(a->grid[g].key);
    for (int i = 0; i < a->grid[g].n; i++) {
      int n = (int)strlen(a->grid[g].v[i]);
      w[g] = n > w[g] ? n : w[g];
    }
  }
  printf("\nsweep, %ld runs ranked by %s (lower is better):\n%4s  %-7s", a->runs,
         a->metric == SW_VAL_QRISK50 ? "val_qrisk50" : "val_loss", "rank", "run");
  for (int g = 0; g < a->n_grids; g++) printf("  %*s", w[g], a->grid[g].key);
  printf("  %6s  %4s  %10s  %11s  %8s", "epochs", "best", "val_loss", "val_qrisk50", "naive");
  if (a->backtest) printf("  %8s  %7s  %8s  %6s  %8s", "return", "sharpe", "max_dd", "trades", "b&h");
  putchar('\n');
  for (long i = 0; i < a->runs; i++) {
    long r = rank[i].r;
    const sw_run *x = &runs[r];
    printf("%4ld  run-%03ld", i + 1, r + 1);
    for (int g = 0; g < a->n_grids; g++) printf("  %*s", w[g], a->grid[g].v[value_of(a, r, g)]);
    printf("  %6d  %4d", x->train.epochs_run, x->train.best_epoch);
    if (!x->ok) {
      printf("  diverged (NaN or infinite loss)\n");
      continue;
    }
    printf("  %10.5f  %11.4f  %8.4f", x->train.best.val_loss, x->train.best.q50, x->train.best.naive50);
    if (a->backtest)
      printf("  %+7.2f%%  %7.2f  %7.2f%%  %6lld  %+7.2f%%", 100 * x->st.total_return, x->st.sharpe,
             100 * x->st.max_drawdown, (long long)x->st.trades, 100 * x->bh.total_return);
    putchar('\n');
  }
  char label[SW_LABEL];
  if (runs[rank[0].r].ok) {
    run_label(a, rank[0].r, label, sizeof label);
    printf("best: run-%03ld (%s): %s %.6g; %s/run-%03ld\n", rank[0].r + 1, label,
           a->metric == SW_VAL_QRISK50 ? "val_qrisk50" : "val_loss", rank[0].m, a->out, rank[0].r + 1);
  }
}

static tg_status write_summary(const sw_args *a, const sw_run *runs) {
  sw_rank *rank = malloc((size_t)a->runs * sizeof *rank);
  if (!rank) return tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  for (long r = 0; r < a->runs; r++) rank[r].m = metric(a, &runs[r]), rank[r].r = r;
  qsort(rank, (size_t)a->runs, sizeof *rank, rank_cmp);
  tg_status st = write_csv(a, runs);
  if (st == TG_OK) st = write_html(a, runs, rank);
  if (st == TG_OK) {
    print_table(a, runs, rank);
    printf("wrote %s/sweep.csv and %s/sweep.html\n", a->out, a->out);
    if (!runs[rank[0].r].ok) st = tg_error(TG_ERR_NUMERIC, "sweep: every run diverged (NaN or infinite loss)");
  }
  free(rank);
  return st;
}

static tg_status run(const sw_args *a, const tg_train_config *base) {
  char path[1100];
  snprintf(path, sizeof path, "%s/sweep.csv", a->out);
  if (tg_file_exists(path))
    return tg_error(TG_ERR_INVALID, "sweep: %s already holds a sweep; choose another --out", a->out);
  tg_bars all;
  tg_status st = cli_read_train_data(base, &all);
  sw_run *runs = st == TG_OK ? calloc((size_t)a->runs, sizeof *runs) : NULL;
  if (st == TG_OK && !runs) st = tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  if (st == TG_OK) st = check_out_and_data(a, base, &all);
  if (st == TG_OK) st = tg_dist_barrier(); /* every rank has looked before any rank writes a run */
  if (st == TG_OK) st = tg_make_dirs(a->out);
  for (long r = 0; st == TG_OK && r < a->runs; r++)
    if (r % tg_dist_size() == tg_dist_rank()) st = one_run(a, base, &all, r, &runs[r]); /* run r on rank r mod N */
  for (long r = 0; st == TG_OK && r < a->runs; r++) st = cli_share_result(&runs[r], r % tg_dist_size() == tg_dist_rank());
  if (st == TG_OK && tg_dist_rank() == 0) st = write_summary(a, runs);
  free(runs);
  tg_bars_free(&all);
  return st;
}

int tg_cmd_sweep(int argc, char **argv) {
  static sw_args a;
  static tg_train_config c;
  memset(&a, 0, sizeof a);
  cli_fc_flags_init(&a.bt);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  rc = tg_cli_train_config("sweep", a.n_rest, a.rest, &c);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  rc = check_all(&a, &c);
  if (rc) return rc;
  /* under mpirun each rank trains whole runs of its own (run r on rank r mod N); rank 0 prints and writes the table */
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
