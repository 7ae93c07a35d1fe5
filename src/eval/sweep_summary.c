/* A sweep's summary: sweep.csv in run order, sweep.html ranked by the metric (the report's table page), the printed table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/files.h"
#include "base/text.h"
#include "tickgrad/eval.h"
#include "tickgrad/report.h"

typedef struct sw_rank {
  double m;
  long r;
} sw_rank;

static double metric(const tg_sweep_config *s, const tg_eval_run *run) {
  if (!run->ok) return NAN;
  return s->metric == TG_SWEEP_VAL_QRISK50 ? run->train.best.q50 : run->train.best.val_loss;
}

static const char *metric_name(const tg_sweep_config *s) {
  return s->metric == TG_SWEEP_VAL_QRISK50 ? "val_qrisk50" : "val_loss";
}

/* Lower first, NaN last, ties in run order: the same order every time. */
static int rank_cmp(const void *pa, const void *pb) {
  const sw_rank *x = pa, *y = pb;
  int nx = isnan(x->m), ny = isnan(y->m);
  if (nx != ny) return nx - ny;
  if (!nx && x->m != y->m) return x->m < y->m ? -1 : 1;
  return x->r < y->r ? -1 : x->r > y->r;
}

static const char *value(const tg_sweep_config *s, long r, int g) {
  return tg_sweep_value(&s->grid[g], tg_sweep_value_of(s, r, g));
}

/* A run's row; a number that is not finite (a diverged run's losses) is an empty field, as in metrics.csv. */
static void csv_row(FILE *o, const tg_sweep_config *s, long r, const tg_eval_run *run) {
  char v[4][40];
  fprintf(o, "%ld", r + 1);
  for (int g = 0; g < s->n_grids; g++) fprintf(o, ",%s", value(s, r, g));
  fprintf(o, ",%d,%d,%s,%s,%s", run->train.epochs_run, run->train.best_epoch,
          tg_format_finite(v[0], run->train.best.val_loss, 6, ""), tg_format_finite(v[1], run->train.best.q50, 6, ""),
          tg_format_finite(v[2], run->train.best.naive50, 6, ""));
  if (s->backtest)
    fprintf(o, ",%s,%s,%s,%lld,%s", tg_format_finite(v[0], run->st.total_return, 6, ""),
            tg_format_finite(v[1], run->st.sharpe, 6, ""), tg_format_finite(v[2], run->st.max_drawdown, 6, ""),
            (long long)run->st.trades, tg_format_finite(v[3], run->bh.total_return, 6, ""));
  fputc('\n', o);
}

/* OUT/sweep.csv: a row per run in run order (nothing in it depends on the folder or the time). */
static tg_status write_csv(const tg_sweep_config *s, const tg_eval_run *runs) {
  char path[TG_PATH_MAX + 32], *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  fputs("run", m);
  for (int g = 0; g < s->n_grids; g++) fprintf(m, ",%s", s->grid[g].key);
  fputs(",epochs,best_epoch,best_val_loss,val_qrisk50,naive_qrisk50", m);
  fputs(s->backtest ? ",total_return,sharpe,max_drawdown,trades,bh_total_return\n" : "\n", m);
  for (long r = 0; r < tg_sweep_runs(s); r++) csv_row(m, s, r, &runs[r]);
  fclose(m);
  snprintf(path, sizeof path, "%s/sweep.csv", s->out);
  tg_status st = buf ? tg_write_atomic(path, buf, len) : tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  free(buf);
  return st;
}

#define SW_CELL 64
#define SW_FIXED 9 /* epochs, best epoch, 2 training numbers, 5 backtest numbers */

/* One ranked row's cells from t[0]: rank, run, the grid values, the numbers (a diverged run: one cell spanning them). */
static int html_cells(const tg_sweep_config *s, int rank, long r, const tg_eval_run *x, char (*t)[SW_CELL],
                      const char **cell) {
  int k = 0, nums = s->backtest ? 7 : 2;
  snprintf(t[k], SW_CELL, "%d", rank), cell[k] = t[k], k++;
  snprintf(t[k], SW_CELL, "run-%03ld", r + 1), cell[k] = t[k], k++;
  for (int g = 0; g < s->n_grids; g++) cell[k++] = value(s, r, g);
  snprintf(t[k], SW_CELL, "%d", x->train.epochs_run), cell[k] = t[k], k++;
  snprintf(t[k], SW_CELL, "%d", x->train.best_epoch), cell[k] = t[k], k++;
  if (!x->ok) {
    cell[k++] = "diverged (NaN or infinite loss)";
    for (int j = 1; j < nums; j++) cell[k++] = NULL;
    return k;
  }
  const tg_train_metrics *b = &x->train.best; /* "-": a value these bars leave undefined */
  cell[k] = tg_format_cell(t[k], SW_CELL, b->val_loss, "%.5f", b->val_loss), k++;
  cell[k] = tg_format_cell(t[k], SW_CELL, b->q50 + b->naive50, "%.4f (%.4f)", b->q50, b->naive50), k++;
  if (s->backtest) {
    cell[k] = tg_format_cell(t[k], SW_CELL, x->st.total_return, "%+.2f%%", 100 * x->st.total_return), k++;
    cell[k] = tg_format_cell(t[k], SW_CELL, x->st.sharpe, "%.2f", x->st.sharpe), k++;
    cell[k] = tg_format_cell(t[k], SW_CELL, x->st.max_drawdown, "%.2f%%", 100 * x->st.max_drawdown), k++;
    snprintf(t[k], SW_CELL, "%lld", (long long)x->st.trades), cell[k] = t[k], k++;
    cell[k] = tg_format_cell(t[k], SW_CELL, x->bh.total_return, "%+.2f%%", 100 * x->bh.total_return), k++;
  }
  return k;
}

/* OUT/sweep.html: the table ranked by the metric, best first, each run linked to its report. */
static tg_status write_html(const tg_sweep_config *s, const tg_eval_run *runs, const sw_rank *rank) {
  static const char *fixed[SW_FIXED] = {"epochs", "best epoch", "best val loss", "q-risk P50 (naive)", "test return",
                                        "Sharpe", "max drawdown", "trades", "buy and hold"};
  long n = tg_sweep_runs(s);
  int ncol = 2 + s->n_grids + (s->backtest ? 9 : 4);
  const char *head[2 + TG_SWEEP_MAX_GRIDS + 9] = {"rank", "run"};
  for (int g = 0; g < s->n_grids; g++) head[2 + g] = s->grid[g].key;
  for (int j = 0; j < ncol - 2 - s->n_grids; j++) head[2 + s->n_grids + j] = fixed[j];
  char (*text)[SW_CELL] = calloc((size_t)n * (size_t)ncol, SW_CELL), (*link)[32] = calloc((size_t)n, 32);
  const char **cells = calloc((size_t)n * (size_t)ncol, sizeof *cells), **links = calloc((size_t)n, sizeof *links);
  int *strong = calloc((size_t)n, sizeof *strong);
  tg_status st = text && link && cells && links && strong ? TG_OK : tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  for (long i = 0; st == TG_OK && i < n; i++) {
    long r = rank[i].r;
    html_cells(s, (int)i + 1, r, &runs[r], text + i * ncol, cells + i * ncol);
    snprintf(link[i], 32, "run-%03d/report.html", (int)(r + 1) % 1000);
    links[i] = link[i];
    strong[i] = i == 0 && runs[r].ok;
  }
  char title[64], intro[128], path[TG_PATH_MAX + 32];
  snprintf(title, sizeof title, "Sweep: %ld runs", n);
  snprintf(intro, sizeof intro, "Ranked by the best epoch's %s (lower is better), best first.",
           s->metric == TG_SWEEP_VAL_QRISK50 ? "validation q-risk P50" : "validation loss");
  snprintf(path, sizeof path, "%s/sweep.html", s->out);
  tg_report_table t = {title, intro, "Each run's config.json holds all its settings; the rows in run order: sweep.csv.",
                       ncol, head, (int)n, cells, links, 1, strong};
  if (st == TG_OK) st = tg_report_table_write(path, &t, NULL);
  free(text), free(link), free(cells), free(links), free(strong);
  return st;
}

/* The ranked table on log, then the best run. */
static void print_table(FILE *o, const tg_sweep_config *s, const tg_eval_run *runs, const sw_rank *rank) {
  int w[TG_SWEEP_MAX_GRIDS];
  long n = tg_sweep_runs(s);
  for (int g = 0; g < s->n_grids; g++) {
    w[g] = (int)strlen(s->grid[g].key);
    for (int i = 0; i < s->grid[g].n; i++) {
      int k = (int)strlen(tg_sweep_value(&s->grid[g], i));
      w[g] = k > w[g] ? k : w[g];
    }
  }
  fprintf(o, "\nsweep, %ld runs ranked by %s (lower is better):\n%4s  %-7s", n, metric_name(s), "rank", "run");
  for (int g = 0; g < s->n_grids; g++) fprintf(o, "  %*s", w[g], s->grid[g].key);
  fprintf(o, "  %6s  %4s  %10s  %11s  %8s", "epochs", "best", "val_loss", "val_qrisk50", "naive");
  if (s->backtest) fprintf(o, "  %8s  %7s  %8s  %6s  %8s", "return", "sharpe", "max_dd", "trades", "b&h");
  fputc('\n', o);
  for (long i = 0; i < n; i++) {
    long r = rank[i].r;
    const tg_eval_run *x = &runs[r];
    fprintf(o, "%4ld  run-%03ld", i + 1, r + 1);
    for (int g = 0; g < s->n_grids; g++) fprintf(o, "  %*s", w[g], value(s, r, g));
    fprintf(o, "  %6d  %4d", x->train.epochs_run, x->train.best_epoch);
    if (!x->ok) {
      fprintf(o, "  diverged (NaN or infinite loss)\n");
      continue;
    }
    char c[8][40]; /* "-": a value these bars leave undefined */
    fprintf(o, "  %10s  %11s  %8s", tg_format_cell(c[0], 40, x->train.best.val_loss, "%.5f", x->train.best.val_loss),
            tg_format_cell(c[1], 40, x->train.best.q50, "%.4f", x->train.best.q50),
            tg_format_cell(c[2], 40, x->train.best.naive50, "%.4f", x->train.best.naive50));
    if (s->backtest)
      fprintf(o, "  %8s  %7s  %8s  %6lld  %8s", tg_format_cell(c[3], 40, x->st.total_return, "%+.2f%%", 100 * x->st.total_return),
              tg_format_cell(c[4], 40, x->st.sharpe, "%.2f", x->st.sharpe),
              tg_format_cell(c[5], 40, x->st.max_drawdown, "%.2f%%", 100 * x->st.max_drawdown), (long long)x->st.trades,
              tg_format_cell(c[6], 40, x->bh.total_return, "%+.2f%%", 100 * x->bh.total_return));
    fputc('\n', o);
  }
  char label[512];
  if (runs[rank[0].r].ok) {
    tg_sweep_label(s, rank[0].r, label, sizeof label);
    fprintf(o, "best: run-%03ld (%s): %s %.6g; %s/run-%03ld\n", rank[0].r + 1, label, metric_name(s), rank[0].m, s->out,
            rank[0].r + 1);
  }
}

tg_status tg_sweep_write(const tg_sweep_config *s, const tg_eval_run *runs) {
  long n = tg_sweep_runs(s);
  sw_rank *rank = n > 0 ? malloc((size_t)n * sizeof *rank) : NULL;
  if (!rank) return tg_error(TG_ERR_NOMEM, "sweep: out of memory or no runs");
  for (long r = 0; r < n; r++) rank[r].m = metric(s, &runs[r]), rank[r].r = r;
  qsort(rank, (size_t)n, sizeof *rank, rank_cmp);
  tg_status st = write_csv(s, runs);
  if (st == TG_OK) st = write_html(s, runs, rank);
  if (st == TG_OK) {
    if (s->log) {
      print_table(s->log, s, runs, rank);
      fprintf(s->log, "wrote %s/sweep.csv and %s/sweep.html\n", s->out, s->out);
    }
    if (!runs[rank[0].r].ok) st = tg_error(TG_ERR_NUMERIC, "sweep: every run diverged (NaN or infinite loss)");
  }
  free(rank);
  return st;
}
