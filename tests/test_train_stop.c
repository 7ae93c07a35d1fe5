/* A forecaster stopped after any step (stop_after_step, or a stop request) and resumed ends bitwise as an uninterrupted run. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "support/stop_hook.h"
#include "support/train_cfg.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256];

#define MAX_EPOCHS 8
#define LOSS_COLS 8

/* Each epoch's loss numbers as on_epoch saw them, over every call of one run (an epoch is reported once). */
typedef struct rows {
  double v[MAX_EPOCHS + 1][LOSS_COLS];
  int seen[MAX_EPOCHS + 1];
} rows;

static int record(void *ctx, const tg_train_metrics *m, tg_store *store) {
  (void)store;
  rows *r = ctx;
  const double v[LOSS_COLS] = {m->train_loss, m->val_loss, m->q50, m->q90, m->naive50, m->naive90, m->lr,
                               m->grad_norm};
  if (m->epoch >= 1 && m->epoch <= MAX_EPOCHS) {
    memcpy(r->v[m->epoch], v, sizeof v);
    r->seen[m->epoch]++;
  }
  return 0;
}

static tg_train_config small(tg_model_kind kind, const char *name, int epochs, rows *r) {
  tg_train_config c = tg_test_small_config(kind, g_tmp, name, epochs);
  c.model.dropout = 0.2f; /* the RNG position is part of the state */
  c.patience = 0;
  c.on_epoch = record;
  c.on_epoch_ctx = r;
  memset(r, 0, sizeof *r);
  return c;
}

/* metrics.csv's first 1 + LOSS_COLS fields of every line (epoch and the loss columns; the rest are times). */
static int same_loss_columns(const char *a, const char *b) {
  size_t la = 0, lb = 0;
  char *x = (char *)tg_test_read_file(a, &la), *y = (char *)tg_test_read_file(b, &lb);
  int same = x && y, lines = 0;
  char *sx = NULL, *sy = NULL;
  for (char *p = same ? strtok_r(x, "\n", &sx) : NULL, *q = same ? strtok_r(y, "\n", &sy) : NULL; same && (p || q);
       p = strtok_r(NULL, "\n", &sx), q = strtok_r(NULL, "\n", &sy), lines++) {
    const char *ep = p, *eq = q;
    same = p && q;
    for (int f = 0; same && ep && eq && f <= LOSS_COLS; f++) {
      ep = strchr(ep + (f > 0), ','), eq = strchr(eq + (f > 0), ',');
      same = ep && eq && ep - p == eq - q;
    }
    same = same && memcmp(p, q, (size_t)(ep - p)) == 0;
  }
  free(x);
  free(y);
  return same && lines > 1;
}

/* b (stopped and resumed) against a (uninterrupted): the files and every epoch's numbers, bitwise. */
static void check_same(const tg_train_config *a, const rows *ra, const tg_train_config *b, const rows *rb, int epochs,
                       const char *what) {
  const char *files[3] = {"weights.safetensors", "best.safetensors", "state.safetensors"};
  char pa[TG_TRAIN_PATH_MAX + 64], pb[TG_TRAIN_PATH_MAX + 64];
  for (int i = 0; i < 3; i++) {
    snprintf(pa, sizeof pa, "%s/%s", a->out, files[i]);
    snprintf(pb, sizeof pb, "%s/%s", b->out, files[i]);
    CHECK_MSG(tg_test_same_tensors(pa, pb), "%s: %s differs from the uninterrupted run's", what, files[i]);
  }
  snprintf(pa, sizeof pa, "%s/metrics.csv", a->out);
  snprintf(pb, sizeof pb, "%s/metrics.csv", b->out);
  CHECK_MSG(same_loss_columns(pa, pb), "%s: the loss columns of metrics.csv differ", what);
  for (int e = 1; e <= epochs; e++) {
    CHECK_MSG(ra->seen[e] == 1 && rb->seen[e] == 1, "%s: epoch %d reported %d and %d times", what, e, ra->seen[e],
              rb->seen[e]);
    CHECK_MSG(memcmp(ra->v[e], rb->v[e], sizeof ra->v[e]) == 0, "%s: epoch %d's numbers differ (train loss %.17g, "
              "%.17g)", what, e, ra->v[e][0], rb->v[e][0]);
  }
}

/* The run stopped by stop_after_step at each of stops[] in turn, each time resumed, then finished. */
static void stop_and_resume(const tg_bars *bars, tg_model_kind kind, int epochs, const tg_train_config *full,
                            const rows *rf, const int64_t *stops, int n, const char *what) {
  static int k;
  char name[64];
  snprintf(name, sizeof name, "part-%d", k++);
  rows rp;
  tg_train_config c = small(kind, name, epochs, &rp);
  tg_train_result r;
  for (int i = 0; i < n; i++) {
    c.stop_after_step = stops[i];
    CHECK_OK(tg_train_run(&c, bars, &r));
    CHECK_MSG(r.interrupted == 1 && r.steps == stops[i], "%s: stopped at step %lld (interrupted %d), want %lld", what,
              (long long)r.steps, r.interrupted, (long long)stops[i]);
    snprintf(c.resume, sizeof c.resume, "%s", c.out);
  }
  c.stop_after_step = 0;
  CHECK_OK(tg_train_run(&c, bars, &r));
  CHECK(r.interrupted == 0 && r.epochs_run == epochs);
  check_same(full, rf, &c, &rp, epochs, what);
}

/* Stops at the first step of an epoch, mid epoch, the last step of an epoch and of the run, twice in one epoch. */
static void test_positions(tg_model_kind kind, int64_t n_bars, int epochs) {
  tg_bars bars;
  CHECK(tg_test_synth_bars(&bars, n_bars, 0.5, 11));
  rows rf;
  char name[64];
  snprintf(name, sizeof name, "full-%s", tg_train_model_name(kind));
  tg_train_config full = small(kind, name, epochs, &rf);
  tg_train_result r;
  CHECK_OK(tg_train_run(&full, &bars, &r));
  int64_t S = r.steps / epochs;
  CHECK(S >= 4 && r.steps == S * epochs);
  char what[96];
  const int64_t cases[5][2] = {{1, 0}, {S + 1, 0}, {S + S / 2, 0}, {2 * S, 0}, {S / 3, 2 * S / 3}};
  for (int i = 0; i < 5; i++) {
    int n = cases[i][1] ? 2 : 1;
    snprintf(what, sizeof what, "%s stopped at step %lld%s (%lld steps an epoch)", tg_train_model_name(kind),
             (long long)cases[i][0], n == 2 ? " and again" : "", (long long)S);
    stop_and_resume(&bars, kind, epochs, &full, &rf, cases[i], n, what);
  }
  const int64_t last = S * epochs; /* the run's last step: the resume only validates */
  snprintf(what, sizeof what, "%s stopped at its last step", tg_train_model_name(kind));
  stop_and_resume(&bars, kind, epochs, &full, &rf, &last, 1, what);
  tg_bars_free(&bars);
}

/* A stop request during step S + 2 (raised by the progress stream) stops there with a checkpoint and the line that
 * says how to go on; the resume ends bitwise as the uninterrupted run. A request left set stops after one step. */
static void test_request(void) {
  tg_bars bars;
  CHECK(tg_test_synth_bars(&bars, 6000, 0.5, 11));
  rows rf, rp;
  tg_train_config full = small(TG_MODEL_MLP, "req-full", 2, &rf), c = small(TG_MODEL_MLP, "req-part", 2, &rp);
  tg_train_result r;
  CHECK_OK(tg_train_run(&full, &bars, &r));
  int64_t S = r.steps / 2;
  char *log = NULL;
  size_t log_len = 0;
  c.log = open_memstream(&log, &log_len);
  c.progress = tg_test_stop_stream(" steps", (int)S + 2); /* a progress line after every step (fewer than 50) */
  tg_stop_clear();
  CHECK_OK(tg_train_run(&c, &bars, &r));
  fclose(c.progress);
  fclose(c.log);
  CHECK(tg_stop_requested() && r.interrupted && r.steps == S + 2 && r.epochs_run == 1);
  char want[TG_TRAIN_PATH_MAX * 2 + 256];
  snprintf(want, sizeof want, "interrupted: stopped after step 2 of epoch 2 (global step %lld); checkpoint in %s; "
           "continue with: tickgrad train --resume %s\n", (long long)S + 2, c.out, c.out);
  CHECK_MSG(log && strstr(log, want) && !strstr(log, "done:"), "the log lacks '%s'", want);
  free(log);
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/report.html", c.out);
  CHECK(access(path, F_OK) == 0);
  /* the request is still set: the resume stops again, after one more step */
  c.log = c.progress = NULL;
  snprintf(c.resume, sizeof c.resume, "%s", c.out);
  CHECK_OK(tg_train_run(&c, &bars, &r));
  CHECK(r.interrupted && r.steps == S + 3);
  tg_stop_clear();
  CHECK_OK(tg_train_run(&c, &bars, &r));
  CHECK(!r.interrupted && r.epochs_run == 2 && r.steps == 2 * S);
  check_same(&full, &rf, &c, &rp, 2, "mlp stopped by a request");
  tg_bars_free(&bars);
}

/* A loss that overflows stops the run at that step naming the loss, whether or not its gradients are finite. */
static void test_nan_loss(void) {
  tg_bars bars;
  CHECK(tg_test_synth_bars(&bars, 3000, 0.5, 12));
  rows r;
  tg_train_config c = small(TG_MODEL_MLP, "nan", 2, &r);
  c.lr = 1e30;
  tg_train_result res;
  tg_status st = tg_train_run(&c, &bars, &res);
  const char *e = tg_last_error();
  CHECK_MSG(st == TG_ERR_NUMERIC && (strstr(e, "train: loss is NaN at epoch 1") || strstr(e, "train: loss is Inf at epoch 1")) &&
                strstr(e, "stopped, no checkpoint had been written yet"),
            "a diverging run: status %d, '%s'", (int)st, e);
  tg_bars_free(&bars);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_train_stop_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  test_request();
  test_nan_loss();
  test_positions(TG_MODEL_MLP, 6000, 3);
  /* under the sanitizers the MLP alone: the stop and resume paths are the trainer's, the same for every model (the
   * TFT's bitwise resume is checked in Release; under ASan it took minutes) */
  const char *san = getenv("TG_SANITIZED");
  if (!(san && strcmp(san, "1") == 0)) test_positions(TG_MODEL_TFT, 3000, 2);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
