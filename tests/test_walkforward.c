/* A walk-forward without the command: the folds' plan, every fold trained and backtested, walkforward.csv and .html. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256];

static void test_plan(void) {
  tg_wf_config c;
  tg_wf_fold f[3];
  tg_wf_defaults(&c, TG_MODEL_MLP);
  c.folds = 3, c.train_blocks = 2; /* 6 blocks of 16 bars after the first 4 */
  CHECK_OK(tg_wf_plan(&c, 100, f));
  CHECK(f[0].begin == 4 && f[0].val_begin == 36 && f[0].test_begin == 52 && f[0].end == 68);
  CHECK(f[2].begin == 4 && f[2].val_begin == 68 && f[2].end == 100); /* anchored: growing */
  c.rolling = 1;
  CHECK_OK(tg_wf_plan(&c, 100, f));
  CHECK(f[2].begin == 36 && f[2].val_begin == 68 && f[2].end == 100); /* rolling: the last 2 blocks */
  CHECK_STATUS(tg_wf_plan(&c, 11, f), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "11 bars make 6 blocks of 1 bars") != NULL, "%s", tg_last_error());
}

static int lines(const char *text) {
  int n = 0;
  for (; *text; text++) n += *text == '\n';
  return n;
}

static void test_run(void) {
  static tg_wf_config c;
  tg_bars bars;
  tg_synth_config s = tg_synth_defaults();
  s.bars = 3000, s.signal = 0.5, s.seed = 4;
  CHECK_OK(tg_synth_generate(&s, &bars));
  tg_wf_defaults(&c, TG_MODEL_MLP);
  c.train.horizons = 2, c.train.epochs = 2, c.train.threads = 1;
  snprintf(c.train.device, sizeof c.train.device, "cpu");
  c.folds = 2, c.train_blocks = 2;
  c.bt.rule = "median";
  c.bt.o.cost_bps = 1;
  snprintf(c.out, sizeof c.out, "%s/wf", g_tmp);
  tg_wf_fold f[2];
  CHECK_OK(tg_wf_run(&c, &bars, f));
  char path[1200];
  size_t len = 0;
  snprintf(path, sizeof path, "%s/walkforward.csv", c.out);
  char *csv = (char *)tg_test_read_file(path, &len);
  CHECK(csv && lines(csv) == 3);
  if (csv) {
    CHECK(strncmp(csv, "fold,train_start,val_start,test_start,test_end,epochs,best_epoch,", 65) == 0);
    char *row2 = strchr(strchr(csv, '\n') + 1, '\n') + 1;
    long bars2 = 0;
    int fold = 0, epochs = 0;
    CHECK(sscanf(row2, "%d,%*[^,],%*[^,],%*[^,],%*[^,],%d,%*d,%*g,%*g,%*g,%ld", &fold, &epochs, &bars2) == 3);
    CHECK(fold == 2 && epochs == 2 && bars2 == f[1].end - f[1].test_begin && bars2 == f[1].res.st.bars);
  }
  for (int k = 0; k < 2; k++) CHECK(f[k].res.ok && f[k].res.train.epochs_run == 2);
  CHECK(f[1].test_begin == f[0].end); /* the test blocks follow each other */
  const char *files[] = {"fold-01/report.html", "fold-01/equity.csv", "fold-02/trades.csv", "fold-02/config.json"};
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/%s", c.out, files[i]);
    unsigned char *t = tg_test_read_file(path, &len);
    CHECK_MSG(t && len > 0, "%s", path);
    free(t);
  }
  snprintf(path, sizeof path, "%s/walkforward.html", c.out);
  char *html = (char *)tg_test_read_file(path, &len);
  CHECK(html && strstr(html, "<a href=\"fold-02/report.html\">2</a>") && strstr(html, "Walk-forward: 2 anchored folds"));
  CHECK(html && !strstr(html, g_tmp)); /* nothing on the page depends on the folder */
  CHECK_STATUS(tg_wf_run(&c, &bars, NULL), TG_ERR_INVALID); /* OUT holds one already */
  /* a stop request ends the walk-forward in its first fold (after one step, with a checkpoint), naming it */
  snprintf(c.out, sizeof c.out, "%s/wf-stopped", g_tmp);
  tg_stop_request();
  CHECK_STATUS(tg_wf_run(&c, &bars, NULL), TG_ERR_INTERRUPTED);
  tg_stop_clear();
  CHECK_MSG(strstr(tg_last_error(), "walkforward: fold 1 of 2 was interrupted"), "%s", tg_last_error());
  snprintf(path, sizeof path, "%s/fold-01/trainer.json", c.out);
  CHECK(access(path, F_OK) == 0);
  snprintf(path, sizeof path, "%s/fold-02", c.out);
  CHECK(access(path, F_OK) != 0);
  free(csv), free(html);
  tg_bars_free(&bars);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_walkforward_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  tg_set_threads(1);
  test_plan();
  test_run();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
