/* Mixed precision end to end: bf16 training of each forecaster within 2% of fp32's best validation loss on the planted-signal market, bitwise resume in bf16, the precision in config.json, inference.json and the predictor, and what auto and an explicit bf16 do on this CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "support/train_cfg.h"

static char g_tmp[256];

/* fp32 and bf16 runs of kind on the same bars and seed: bf16's best validation loss within 2% of fp32's, and the
 * two runs really differ (the bf16 GEMMs ran). */
static void test_close_to_fp32(tg_model_kind kind, const tg_bars *bars) {
  char name[64];
  tg_train_result r[2];
  for (int p = 0; p < 2; p++) {
    snprintf(name, sizeof name, "close-%s-%s", tg_train_model_name(kind), tg_precision_name((tg_precision)p));
    tg_train_config c = tg_test_small_config(kind, g_tmp, name, 3);
    c.precision = (tg_precision)p;
    CHECK_OK(tg_train_run(&c, bars, &r[p]));
  }
  double f = r[0].best.val_loss, b = r[1].best.val_loss;
  printf("%s best validation loss: fp32 %.6f (epoch %d), bf16 %.6f (epoch %d): %+.3f%%\n", tg_train_model_name(kind),
         f, r[0].best_epoch, b, r[1].best_epoch, 100.0 * (b - f) / f);
  CHECK_MSG(isfinite(b) && fabs(b - f) <= 0.02 * f, "%s: bf16 %.6f vs fp32 %.6f", tg_train_model_name(kind), b, f);
  CHECK_MSG(r[0].last.train_loss != r[1].last.train_loss, "%s: the bf16 run equals the fp32 run: nothing was rounded",
            tg_train_model_name(kind));
}

/* 1 when the file at dir/name contains text. */
static int file_has(const char *dir, const char *name, const char *text) {
  char path[TG_TRAIN_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t len = 0;
  char *s = (char *)tg_test_read_file(path, &len);
  int has = s && strstr(s, text) != NULL;
  free(s);
  return has;
}

/* A bf16 run of kind stopped after epoch 2 of 3 and resumed equals the uninterrupted run bitwise (dropout on); the
 * run keeps its precision on resume and refuses another; config.json and inference.json say bf16. */
static void test_resume_bf16(tg_model_kind kind, const tg_bars *bars) {
  tg_train_config full = tg_test_small_config(kind, g_tmp, "bf16-full", 3);
  full.precision = TG_PRECISION_BF16;
  tg_train_config part = full;
  snprintf(part.out, sizeof part.out, "%s/bf16-part", g_tmp);
  part.stop_after = 2;
  tg_train_result rf, rp, rr;
  CHECK_OK(tg_train_run(&full, bars, &rf));
  CHECK_OK(tg_train_run(&part, bars, &rp));
  CHECK(rp.epochs_run == 2);
  tg_train_config again = part;
  again.stop_after = 0;
  snprintf(again.resume, sizeof again.resume, "%s", part.out);
  CHECK_OK(tg_train_run(&again, bars, &rr));
  CHECK(rr.epochs_run == 3 && rr.steps == rf.steps);
  const char *files[3] = {"weights.safetensors", "state.safetensors", "best.safetensors"};
  char a[TG_TRAIN_PATH_MAX + 64], b[TG_TRAIN_PATH_MAX + 64];
  for (int i = 0; i < 3; i++) {
    snprintf(a, sizeof a, "%s/%s", full.out, files[i]);
    snprintf(b, sizeof b, "%s/%s", part.out, files[i]);
    CHECK_MSG(tg_test_same_tensors(a, b), "bf16: %s differs after resume", files[i]);
  }
  CHECK(rr.last.train_loss == rf.last.train_loss && rr.last.val_loss == rf.last.val_loss);
  CHECK_MSG(file_has(part.out, "config.json", "\"precision\": \"bf16\""), "config.json names the precision");
  CHECK_MSG(file_has(part.out, "inference.json", "\"precision\": \"bf16\""), "inference.json names the precision");
  /* resuming with another precision is refused, naming the setting */
  tg_train_config other = part;
  other.stop_after = 0;
  other.precision = TG_PRECISION_FP32;
  snprintf(other.resume, sizeof other.resume, "%s", part.out);
  CHECK_STATUS(tg_train_run(&other, bars, NULL), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "precision") != NULL, "the refusal names precision: %s", tg_last_error());
}

/* The predictor of a bf16 run plans its GEMMs in bf16, as the run validated. */
static void test_predict_precision(const tg_bars *bars) {
  tg_train_config c = tg_test_small_config(TG_MODEL_MLP, g_tmp, "bf16-predict", 2);
  c.precision = TG_PRECISION_BF16;
  CHECK_OK(tg_train_run(&c, bars, NULL));
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(c.out, NULL, &p));
  if (p) CHECK_MSG(tg_predictor_get_info(p)->precision == TG_PRECISION_BF16, "the predictor plans in the run's precision");
  tg_predictor_free(p);
}

/* auto becomes bf16 exactly where the CPU has native bf16 GEMMs and the model is wide enough, and config.json records
 * the choice; an explicit bf16
 * where they are not native says in the log that it will be slower than fp32, and where they are says nothing. */
static void test_auto(const tg_bars *bars) {
  char why[256];
  tg_device cpu = {TG_CPU, 0};
  int native = tg_device_bf16_native(cpu, why, sizeof why);
  printf("native bf16 GEMMs on this CPU: %s%s\n", native ? "yes" : "no: ", native ? "" : why);
  CHECK_MSG(native || strlen(why) > 20, "no reason given for bf16 not being native: '%s'", why);
  char notice[512];
  int min_width = tg_device_bf16_auto_min_width(cpu);
  printf("precision auto takes bf16 from width %d here\n", min_width);
  CHECK_MSG(min_width == 64 || min_width == TG_BF16_AUTO_MIN_WIDTH, "auto's narrowest bf16 width %d", min_width);
  const int widths[2] = {min_width / 2, min_width};
  for (int w = 0; w < 2; w++)
    for (int p = 0; p < 3; p++) {
      tg_precision got = (tg_precision)p;
      tg_precision_resolve(&got, cpu, widths[w], notice, sizeof notice);
      tg_precision want = p != TG_PRECISION_AUTO ? (tg_precision)p
                        : native && w == 1 ? TG_PRECISION_BF16 : TG_PRECISION_FP32;
      CHECK_MSG(got == want, "%s at width %d resolved to %s", tg_precision_name((tg_precision)p), widths[w],
                tg_precision_name(got));
      int warns = p == TG_PRECISION_BF16 && !native;
      char says[64];
      snprintf(says, sizeof says, "precision auto: %s", tg_precision_name(want));
      const char *expect = p == TG_PRECISION_AUTO ? says : warns ? "slower than fp32" : NULL;
      CHECK_MSG(expect ? strstr(notice, expect) != NULL : notice[0] == 0, "%s at width %d: notice '%s'",
                tg_precision_name((tg_precision)p), widths[w], notice);
    }
  tg_train_config c = tg_test_small_config(TG_MODEL_MLP, g_tmp, "auto", 1);
  c.model.mlp.hidden = min_width;
  c.precision = TG_PRECISION_AUTO;
  CHECK_OK(tg_train_run(&c, bars, NULL));
  CHECK_MSG(file_has(c.out, "config.json", native ? "\"precision\": \"bf16\"" : "\"precision\": \"fp32\""),
            "config.json records auto's choice (%s)", native ? "bf16" : "fp32");
  c = tg_test_small_config(TG_MODEL_MLP, g_tmp, "explicit-bf16", 1);
  c.precision = TG_PRECISION_BF16;
  char log[TG_TRAIN_PATH_MAX + 64];
  snprintf(log, sizeof log, "%s/explicit-bf16.log", g_tmp);
  c.log = fopen(log, "w");
  CHECK(c.log != NULL);
  if (!c.log) return;
  CHECK_OK(tg_train_run(&c, bars, NULL));
  fclose(c.log);
  CHECK_MSG(file_has(g_tmp, "explicit-bf16.log", "will be slower than fp32") == !native,
            "an explicit bf16 %s warn here", native ? "must not" : "must");
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_mixed_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  tg_bars bars;
  CHECK(tg_test_synth_bars(&bars, 5000, 0.5, 3));
  /* under the sanitizers the MLP alone, which runs the same bf16 kernels in minutes less (the TFT and Mamba-2
   * comparisons and the TFT's resume are numbers, checked in Release) */
  const char *san = getenv("TG_SANITIZED");
  int sanitized = san && strcmp(san, "1") == 0;
  const tg_model_kind kinds[3] = {TG_MODEL_MLP, TG_MODEL_TFT, TG_MODEL_MAMBA2};
  for (int k = 0; k < (sanitized ? 1 : 3); k++) test_close_to_fp32(kinds[k], &bars);
  test_resume_bf16(sanitized ? TG_MODEL_MLP : TG_MODEL_TFT, &bars);
  test_predict_precision(&bars);
  test_auto(&bars);
  tg_bars_free(&bars);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
