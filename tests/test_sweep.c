/* A sweep without the command: grids, runs and their order, checks before training, sweep.csv and the ranked page; the table page itself. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256];

static void small(tg_sweep_config *c) {
  tg_sweep_defaults(c, TG_MODEL_MLP);
  c->base.horizons = 2, c->base.epochs = 2, c->base.threads = 1;
  snprintf(c->base.device, sizeof c->base.device, "cpu");
}

static void test_grids(void) {
  static tg_sweep_config c;
  static tg_train_config rc;
  char label[128];
  small(&c);
  snprintf(c.out, sizeof c.out, "OUT");
  CHECK_OK(tg_sweep_add_grid(&c, "lr=0.001,0.003"));
  CHECK_OK(tg_sweep_add_grid(&c, "mlp.hidden=8,16,32"));
  CHECK(tg_sweep_runs(&c) == 6);
  tg_sweep_label(&c, 4, label, sizeof label); /* the last grid varies fastest */
  CHECK(strcmp(label, "lr=0.003 mlp.hidden=16") == 0);
  CHECK_OK(tg_sweep_run_config(&c, 4, &rc));
  CHECK(fabs(rc.lr - 0.003) < 1e-12 && rc.model.mlp.hidden == 16 && strcmp(rc.out, "OUT/run-005") == 0);
  CHECK_OK(tg_sweep_check(&c));
  CHECK_STATUS(tg_sweep_add_grid(&c, "seed=1,,2"), TG_ERR_INVALID);
  CHECK_STATUS(tg_sweep_add_grid(&c, "seed=1,1"), TG_ERR_INVALID);
  CHECK_STATUS(tg_sweep_add_grid(&c, "seed"), TG_ERR_INVALID);
  CHECK(c.n_grids == 2);
  const char *bad[][2] = {{"frob=1,2", "unknown setting 'frob'"}, {"lr=abc", "lr=abc"},
                          {"tft.hidden=8", "a setting of tft, not of --model mlp"}, {"data=x.csv", "cannot vary"},
                          {"train_frac=0.5,0.9", "run 2 (train_frac=0.9)"}};
  for (int i = 0; i < 5; i++) {
    small(&c);
    CHECK_OK(tg_sweep_add_grid(&c, bad[i][0]));
    CHECK_STATUS(tg_sweep_check(&c), TG_ERR_INVALID);
    CHECK_MSG(strstr(tg_last_error(), bad[i][1]) != NULL, "%s: %s", bad[i][0], tg_last_error());
  }
  small(&c);
  CHECK_OK(tg_sweep_add_grid(&c, "lr=1,2,3,4,5,6,7,8"));
  CHECK_OK(tg_sweep_add_grid(&c, "seed=1,2,3,4,5,6,7,8"));
  CHECK_OK(tg_sweep_add_grid(&c, "batch=1,2,3,4,5"));
  CHECK_STATUS(tg_sweep_check(&c), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "make 320 runs; a sweep runs at most 256") != NULL);
}

static void test_run(void) {
  static tg_sweep_config c;
  tg_bars bars;
  tg_synth_config s = tg_synth_defaults();
  s.bars = 3000, s.signal = 0.5, s.seed = 6;
  CHECK_OK(tg_synth_generate(&s, &bars));
  small(&c);
  CHECK_OK(tg_sweep_add_grid(&c, "lr=0.001,0.01"));
  CHECK_OK(tg_sweep_add_grid(&c, "mlp.hidden=8,16"));
  c.backtest = 1;
  c.bt.rule = "median";
  snprintf(c.out, sizeof c.out, "%s/sw", g_tmp);
  tg_eval_run runs[4];
  CHECK_OK(tg_sweep_run(&c, &bars, runs));
  long best = 0;
  for (long r = 0; r < 4; r++) {
    CHECK(runs[r].ok && runs[r].train.epochs_run == 2 && runs[r].st.bars > 0);
    if (runs[r].train.best.val_loss < runs[best].train.best.val_loss) best = r;
  }
  char path[1200];
  size_t len = 0;
  snprintf(path, sizeof path, "%s/sweep.csv", c.out);
  char *csv = (char *)tg_test_read_file(path, &len);
  const char *head = "run,lr,mlp.hidden,epochs,best_epoch,best_val_loss,val_qrisk50,naive_qrisk50,total_return,sharpe,"
                     "max_drawdown,trades,bh_total_return\n1,0.001,8,2,";
  CHECK(csv && strncmp(csv, head, strlen(head)) == 0);
  CHECK(csv && strstr(csv, "\n2,0.001,16,") && strstr(csv, "\n3,0.01,8,") && strstr(csv, "\n4,0.01,16,"));
  snprintf(path, sizeof path, "%s/sweep.html", c.out);
  char *html = (char *)tg_test_read_file(path, &len);
  char want[128];
  snprintf(want, sizeof want, "<tr style=\"font-weight:bold\"><td>1</td><td><a href=\"run-%03ld/report.html\">", best + 1);
  CHECK_MSG(html && strstr(html, want), "the best run (%ld) is not first and bold", best + 1);
  for (int r = 1; r <= 4; r++) {
    snprintf(want, sizeof want, "href=\"run-%03d/report.html\"", r);
    CHECK(html && strstr(html, want));
  }
  snprintf(path, sizeof path, "%s/run-003/equity.csv", c.out);
  unsigned char *eq = tg_test_read_file(path, &len);
  CHECK(eq && len > 0);
  CHECK_STATUS(tg_sweep_run(&c, &bars, NULL), TG_ERR_INVALID); /* OUT holds a sweep */
  /* a stop request ends the sweep in its first run (after one step, with a checkpoint), naming it */
  snprintf(c.out, sizeof c.out, "%s/sw-stopped", g_tmp);
  tg_stop_request();
  CHECK_STATUS(tg_sweep_run(&c, &bars, runs), TG_ERR_INTERRUPTED);
  tg_stop_clear();
  CHECK_MSG(strstr(tg_last_error(), "sweep: run 1 of 4 (lr=0.001 mlp.hidden=8) was interrupted"), "%s", tg_last_error());
  snprintf(path, sizeof path, "%s/run-001/trainer.json", c.out);
  CHECK(access(path, F_OK) == 0);
  snprintf(path, sizeof path, "%s/run-002", c.out);
  CHECK(access(path, F_OK) != 0);
  free(csv), free(html), free(eq);
  tg_bars_free(&bars);
}

/* The report layer's table page: escaped text, spans, links, a bold row. */
static void test_table_page(void) {
  const char *head[3] = {"a", "b<", "c"};
  const char *cells[6] = {"1", "x&y", "z", "2", "spans", NULL};
  const char *links[2] = {"r1/report.html", NULL};
  int strong[2] = {0, 1};
  tg_report_table t = {"T \"1\"", "intro", "outro", 3, head, 2, cells, links, 0, strong};
  char path[1200];
  size_t len = 0;
  snprintf(path, sizeof path, "%s/t.html", g_tmp);
  CHECK_OK(tg_report_table_write(path, &t, NULL));
  char *html = (char *)tg_test_read_file(path, &len);
  CHECK(html && strstr(html, "<title>T &quot;1&quot;</title>") && strstr(html, "<th>b&lt;</th>"));
  CHECK(html && strstr(html, "<tr><td><a href=\"r1/report.html\">1</a></td><td>x&amp;y</td><td>z</td></tr>\n"));
  CHECK(html && strstr(html, "<tr style=\"font-weight:bold\"><td>2</td><td colspan=\"2\">spans</td></tr>\n"));
  free(html);
  cells[3] = NULL;
  CHECK_STATUS(tg_report_table_write(path, &t, NULL), TG_ERR_INVALID);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_sweep_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  tg_set_threads(1);
  test_grids();
  test_run();
  test_table_page();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
