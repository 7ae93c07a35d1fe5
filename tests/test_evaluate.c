/* Scoring a run out of sample: the scores worked by hand on a tiny split, the validation loss of the best weights
 * equal to the trainer's, every split covered, evaluation.json, and the refusals (other bars, no weights, a busy run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/run_lock.h"
#include "support/check.h"
#include "support/files.h"
#include "support/train_cfg.h"
#include "tickgrad/tickgrad.h"
#include "train/train_internal.h"

static char g_tmp[256];

#define CHECK_NEAR(a, b, tol) CHECK_MSG(fabs((a) - (b)) <= (tol), "%.17g vs %.17g", (double)(a), (double)(b))

/* Two windows, one horizon of scale 2, quantiles 0.1 / 0.5 / 0.9, naive (training) quantiles -1 / 0 / 1 in original
 * units. Scaled targets 0.5 and -1 (original 1 and -2); forecasts (scaled) -1, 0, 1 and -0.5, 0, 0.5. Worked by hand:
 *   window 1, e = y - yhat = 1.5, 0.5, -0.5: pinball 0.15, 0.25, 0.05
 *   window 2, e = -0.5, -1, -1.5: pinball 0.45, 0.5, 0.15
 *   per quantile mean 0.3, 0.375, 0.1; loss (1.55) / 6 = 0.258333..
 *   zero forecast: e = 0.5, -1 -> (0.05 + 0.9), (0.25 + 0.5), (0.45 + 0.1): loss 2.25 / 6 = 0.375
 *   naive (scaled -0.5, 0, 0.5): e = 1, 0.5, 0 and -0.5, -1, -1.5 -> 0.1 + 0.45, 0.25 + 0.5, 0 + 0.15: loss 1.45 / 6
 *   q-risk (original units, sum |y| = 3): model QL = 2 * pinball sums: 0.3 * 2 * 2 / 3 ...
 *     QL per quantile = scale * (pinball sums) = 2 * (0.6, 0.75, 0.2); R = 2 QL / 3 = 0.8, 1.0, 0.26667
 *   below (y < yhat): window 1: 0.5 < -1, 0, 1 -> 0, 0, 1; window 2: -1 < -0.5, 0, 0.5 -> 1, 1, 1: 0.5, 0.5, 1
 *   interval 0.1..0.9: window 1: -1 <= 0.5 <= 1 yes; window 2: -0.5 <= -1 no: coverage 0.5
 *   naive interval (original -1..1): y = 1 inside, y = -2 outside: 0.5 */
static void test_scores_by_hand(void) {
  tr_data d;
  memset(&d, 0, sizeof d);
  d.H = 1, d.nq = 3, d.scale[0] = 2.0;
  d.naive[0][0] = -1, d.naive[0][1] = 0, d.naive[0][2] = 1;
  const float q[3] = {0.1f, 0.5f, 0.9f};
  const float pred[6] = {-1, 0, 1, -0.5f, 0, 0.5f}, tgt[2] = {0.5f, -1};
  tr_eval_acc a;
  tg_eval_split s;
  tr_eval_acc_init(&a, &d, q);
  tr_eval_acc_add(&a, &d, q, pred, tgt, 2);
  tr_eval_acc_finish(&a, &d, &s);
  const double tol = 1e-6; /* the quantiles are floats: 0.1f is 0.1 to 1.5e-9 */
  CHECK(s.windows == 2);
  CHECK_NEAR(s.pinball[0][0], 0.3, tol);
  CHECK_NEAR(s.pinball[0][1], 0.375, tol);
  CHECK_NEAR(s.pinball[0][2], 0.1, tol);
  CHECK_NEAR(s.loss, 1.55 / 6, tol);
  CHECK_NEAR(s.zero_loss, 2.25 / 6, tol);
  CHECK_NEAR(s.naive_loss, 1.45 / 6, tol);
  CHECK_NEAR(s.qrisk[0], 0.8, tol);
  CHECK_NEAR(s.qrisk[1], 1.0, tol);
  CHECK_NEAR(s.qrisk[2], 0.8 / 3, tol);
  CHECK_NEAR(s.zero_qrisk[1], 1.0, tol); /* the zero forecast's median q-risk is 1 by definition */
  CHECK_NEAR(s.below[0], 0.5, 0);
  CHECK_NEAR(s.below[1], 0.5, 0);
  CHECK_NEAR(s.below[2], 1.0, 0);
  CHECK(s.n_intervals == 1 && s.iv_lo[0] == 0 && s.iv_hi[0] == 2);
  CHECK_NEAR(s.coverage[0], 0.5, 0);
  CHECK_NEAR(s.naive_coverage[0], 0.5, 0);
}

/* A trained run: its best weights' validation loss is the trainer's best, bitwise; every split is scored; the file. */
static void test_run(void) {
  tg_bars bars;
  CHECK(tg_test_synth_bars(&bars, 6000, 0.5, 7));
  tg_train_config c = tg_test_small_config(TG_MODEL_MLP, g_tmp, "run", 3);
  tg_train_result r;
  CHECK_OK(tg_train_run(&c, &bars, &r));
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/evaluation.json", c.out);
  CHECK_MSG(access(path, F_OK) == 0, "training wrote no %s", path);
  tg_evaluation e;
  tg_eval_opts o = {.run = c.out, .bars = &bars};
  CHECK_OK(tg_evaluate(&o, &e));
  CHECK(!strcmp(e.weights, "best") && e.H == 2 && e.nq == 3 && e.n_classes == 0);
  CHECK_MSG(e.s[TG_VAL].loss == r.best.val_loss, "val loss %.17g, trainer's best %.17g", e.s[TG_VAL].loss,
            r.best.val_loss);
  CHECK(e.s[TG_VAL].windows == r.val_windows && e.s[TG_TRAIN].windows == r.train_windows);
  CHECK(e.s[TG_TEST].windows > 0);
  for (int s = 0; s < TG_SPLIT_COUNT; s++) {
    double mean = 0;
    for (int h = 0; h < e.H; h++)
      for (int k = 0; k < e.nq; k++) mean += e.s[s].pinball[h][k] / (e.H * e.nq);
    CHECK_NEAR(mean, e.s[s].loss, 1e-9 * e.s[s].loss);
    CHECK(e.s[s].below[0] < e.s[s].below[1] && e.s[s].below[1] < e.s[s].below[2]);
    CHECK(e.s[s].coverage[0] > 0 && e.s[s].coverage[0] < 1);
    CHECK_NEAR(e.s[s].zero_qrisk[1], 1.0, 1e-12);
  }
  /* the planted signal: better than both baselines out of sample */
  CHECK(e.s[TG_TEST].loss < e.s[TG_TEST].naive_loss && e.s[TG_TEST].loss < e.s[TG_TEST].zero_loss);
  /* the last weights: the last epoch's validation loss */
  tg_evaluation last;
  o.last = 1;
  CHECK_OK(tg_evaluate(&o, &last));
  CHECK(!strcmp(last.weights, "last") && last.s[TG_VAL].loss == r.last.val_loss);
  size_t len = 0;
  char *text = (char *)tg_test_read_file(path, &len);
  CHECK(text && strstr(text, "\"format\": \"tickgrad-evaluation-1\"") && strstr(text, "\"test\": {") &&
        strstr(text, "\"weights\": \"last\"") && strstr(text, "\"coverage\""));
  free(text);
  /* other bars are refused: the splits and the normalisation would not be the run's */
  bars.close[100] *= 1.01;
  int rc = tg_evaluate(&o, &e);
  CHECK(rc == TG_ERR_INVALID && strstr(tg_last_error(), "not the ones"));
  bars.close[100] /= 1.01;
  /* a run in use: the lock's holder is named */
  int fd = -1;
  CHECK_OK(tg_run_lock(c.out, "train", &fd));
  rc = tg_evaluate(&o, &e);
  CHECK(rc == TG_ERR_INVALID && strstr(tg_last_error(), "in use"));
  tg_run_unlock(fd);
  tg_bars_free(&bars);
}

static void test_refusals(void) {
  tg_evaluation e;
  char run[512];
  snprintf(run, sizeof run, "%s/none", g_tmp);
  tg_eval_opts o = {.run = run};
  CHECK(tg_evaluate(&o, &e) != TG_OK);
  int split = -1;
  CHECK(tg_eval_split_parse("test", &split) == TG_OK && split == TG_TEST);
  CHECK(tg_eval_split_parse("validation", &split) == TG_ERR_INVALID && strstr(tg_last_error(), "train, val or test"));
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_evaluate_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  test_scores_by_hand();
  test_run();
  test_refusals();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
