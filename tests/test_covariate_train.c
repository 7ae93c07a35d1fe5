/* Training on a desk's own inputs: a signal planted only in an extra column (col:, cat:, known:) is found by every
 * model, and the same data without it is not; classifiers on triple-barrier labels, their metrics, files and backtest. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "support/train_cfg.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256];

/* 1 when the file at path holds text. */
static int file_has(const char *path, const char *text) {
  size_t len = 0;
  unsigned char *b = tg_test_read_file(path, &len);
  int yes = b && strstr((const char *)b, text) != NULL;
  free(b);
  return yes;
}

/* Synthetic bars (a random walk, no planted lag) with three extra columns that carry the next bar's log return
 * r[t+1] (sigma its std):
 *   signal (numeric)  r[t+1] / sigma + N(0, 0.5^2): known at t, it predicts the next return;
 *   regime (category) "up" / "down" / "flat" by r[t+1] against +-sigma / 2: the same, as a name;
 *   event  (numeric)  r[t] / sigma + N(0, 0.5^2): at t it says nothing about r[t+1], but its value at t+1 does, so
 *                     only a known-ahead input (known:event) finds it. */
static int planted_bars(tg_bars *b, int64_t n, uint64_t seed) {
  tg_synth_config s = tg_synth_defaults();
  s.bars = n;
  s.seed = seed;
  s.regime_bars = 0;
  if (tg_synth_generate(&s, b) != TG_OK) return 0;
  double ss = 0;
  for (int64_t t = 1; t < n; t++) ss += pow(log(b->close[t] / b->close[t - 1]), 2);
  double sigma = sqrt(ss / (double)(n - 1));
  if (tg_bars_add_column(b, "signal", TG_COLUMN_NUMERIC) != TG_OK ||
      tg_bars_add_column(b, "regime", TG_COLUMN_CATEGORY) != TG_OK ||
      tg_bars_add_column(b, "event", TG_COLUMN_NUMERIC) != TG_OK)
    return 0;
  tg_bar_column *sig = &b->cols[0], *reg = &b->cols[1], *ev = &b->cols[2];
  uint32_t code[3];
  static const char *const names[3] = {"down", "flat", "up"};
  for (int k = 0; k < 3; k++)
    if (tg_categories_intern(&reg->cats, names[k], strlen(names[k]), &code[k]) != TG_OK) return 0;
  for (int64_t t = 0; t < n; t++) {
    double next = t + 1 < n ? log(b->close[t + 1] / b->close[t]) / sigma : 0.0;
    double now = t > 0 ? log(b->close[t] / b->close[t - 1]) / sigma : 0.0;
    sig->values[t] = next + 0.5 * tg_rng_normal(seed, 17, (uint64_t)t);
    reg->codes[t] = code[next > 0.5 ? 2 : next < -0.5 ? 0 : 1];
    ev->values[t] = now + 0.5 * tg_rng_normal(seed, 18, (uint64_t)t);
  }
  return 1;
}

/* A small run of kind on bars with features spec (and target, "" for logret); its result. */
static tg_status run(tg_model_kind kind, const tg_bars *bars, const char *name, const char *spec, const char *target,
                     int epochs, tg_train_result *r) {
  tg_train_config c = tg_test_small_config(kind, g_tmp, name, epochs);
  snprintf(c.features, sizeof c.features, "%s", spec);
  snprintf(c.target, sizeof c.target, "%s", target);
  c.patience = 0;
  return tg_train_run(&c, bars, r);
}

/* The built-in features a model needs (the tft's decoder reads the calendar). */
static const char *base_spec(tg_model_kind kind) { return kind == TG_MODEL_TFT ? "logret,range,tod,dow" : "logret,range"; }

/* The validation loss with the extra input is clearly below the loss without it: the model found the column. */
static void check_found(tg_model_kind kind, const tg_bars *bars, const char *input) {
  char with[256], name[96];
  snprintf(with, sizeof with, "%s,%s", base_spec(kind), input);
  tg_train_result a, b;
  snprintf(name, sizeof name, "with-%s-%.20s", tg_train_model_name(kind), input);
  for (char *p = name; *p; p++)
    if (*p == ':' || *p == ',') *p = '_';
  tg_status st = run(kind, bars, name, with, "", 4, &a);
  CHECK_OK(st);
  snprintf(name, sizeof name, "without-%s-%.20s", tg_train_model_name(kind), input);
  for (char *p = name; *p; p++)
    if (*p == ':' || *p == ',') *p = '_';
  tg_status st2 = run(kind, bars, name, base_spec(kind), "", 4, &b);
  CHECK_OK(st2);
  if (st != TG_OK || st2 != TG_OK) return;
  printf("%s %s: best validation loss %.4f with, %.4f without\n", tg_train_model_name(kind), input, a.best.val_loss,
         b.best.val_loss);
  CHECK_MSG(a.best.val_loss < 0.9 * b.best.val_loss, "%s with %s: %.4f, without: %.4f", tg_train_model_name(kind), input,
            a.best.val_loss, b.best.val_loss);
}

/* Decisions at bars up to t do not change when the bars after t are cut off, for a run reading covariates (cat:,
 * col:, known:) or trained on labels; a known: input's leads read values known lag bars ahead, so its decisions are
 * compared up to t - lag. */
static void check_causal(const tg_bars *bars, const char *name) {
  char run[512];
  snprintf(run, sizeof run, "%s/%s", g_tmp, name);
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(run, NULL, &p));
  if (!p) return;
  const tg_predictor_info *in = tg_predictor_get_info(p);
  int lag = 0;
  for (int i = 0; i < in->n_inputs; i++) lag += strstr(in->input_names[i], "@+") != NULL;
  int64_t n = 1500, from = 600;
  double *full = malloc((size_t)n * sizeof *full), *cut = malloc((size_t)n * sizeof *cut);
  tg_fc_bt_opts o = tg_fc_bt_defaults();
  tg_fc_rule r = tg_fc_bt_rule(&o);
  tg_bars b = *bars; /* the first n bars, columns and all */
  b.n = n;
  int64_t got = 0;
  CHECK_OK(tg_fc_targets(p, &b, from, &r, full, &got));
  CHECK(got > 0);
  const int64_t ends[3] = {from + 1 + lag, 1000, 1377};
  for (int i = 0; i < 3; i++) {
    tg_bars c = b;
    c.n = ends[i];
    CHECK_OK(tg_fc_targets(p, &c, from, &r, cut, NULL));
    CHECK_MSG(memcmp(cut, full, (size_t)(ends[i] - lag - from) * sizeof *cut) == 0,
              "%s: decisions up to bar %lld change when the bars after %lld are cut off", name,
              (long long)(ends[i] - lag), (long long)ends[i]);
  }
  free(full);
  free(cut);
  tg_predictor_free(p);
}

/* The predictor feeds a known: input's future values where training did: the event column at t+1 carries the
 * return of bar t+1, so the median forecast of horizon 1 must follow that return closely (misaligned by a bar, it
 * would not follow it at all). */
static void check_known_forecasts(const tg_bars *bars, const char *name) {
  char run[512];
  snprintf(run, sizeof run, "%s/%s", g_tmp, name);
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(run, NULL, &p));
  if (!p) return;
  const tg_predictor_info *in = tg_predictor_get_info(p);
  float out[TG_MAX_HORIZONS * TG_MAX_QUANTILES];
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, m = 0;
  for (int64_t t = 0; t + 1 < 2000; t++) {
    tg_pbar b;
    int ready = 0;
    if (tg_predictor_bar_at(p, bars, t, 1, &b) != TG_OK || tg_predictor_push(p, &b, out, &ready) != TG_OK) break;
    if (!ready || t < 600) continue;
    double x = out[in->nq / 2], y = log(bars->close[t + 1] / bars->close[t]);
    sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y, m++;
  }
  double corr = (sxy - sx * sy / m) / sqrt((sxx - sx * sx / m) * (syy - sy * sy / m));
  printf("%s: correlation of the predictor's median forecast (h1) with the next return %.3f over %.0f bars\n", name,
         corr, m);
  CHECK_MSG(m > 1000 && corr > 0.5, "%s: correlation %.3f over %.0f bars", name, corr, m);
  tg_predictor_free(p);
}

/* A classifier on triple-barrier labels: metrics against the baseline, the files that name the classes, the
 * predictor's probabilities and the backtest's class map. */
static void test_classifier(const tg_bars *bars) {
  tg_train_result r;
  tg_status st = run(TG_MODEL_MLP, bars, "classes-mlp", "logret,range,col:signal", "triple-barrier:0.5,0.5,1", 4, &r);
  CHECK_OK(st);
  if (st != TG_OK) return;
  printf("mlp triple-barrier: accuracy %.4f (majority %.4f), balanced %.4f (majority %.4f), log loss %.4f "
         "(majority %.4f)\n", r.best.acc, r.best.base_acc, r.best.bal_acc, r.best.base_bal_acc, r.best.val_loss,
         r.best.base_logloss);
  CHECK(r.best.n_classes == 3);
  CHECK_MSG(r.best.acc > r.best.base_acc + 0.05, "accuracy %.4f vs majority %.4f", r.best.acc, r.best.base_acc);
  CHECK_MSG(r.best.bal_acc > 0.45, "balanced accuracy %.4f (chance 1/3)", r.best.bal_acc);
  CHECK_MSG(r.best.val_loss < r.best.base_logloss, "log loss %.4f vs majority %.4f", r.best.val_loss, r.best.base_logloss);
  double seen = 0;
  for (int k = 0; k < 9; k++) seen += r.best.cm[k];
  CHECK_MSG(seen == (double)r.val_windows, "confusion counts %.0f of %lld windows", seen, (long long)r.val_windows);
  char path[512];
  snprintf(path, sizeof path, "%s/classes-mlp/config.json", g_tmp);
  CHECK(file_has(path, "\"classes\": [\"down\", \"time\", \"up\"]"));
  snprintf(path, sizeof path, "%s/classes-mlp/metrics.csv", g_tmp);
  CHECK(file_has(path, ",val_acc,val_bal_acc,base_acc,base_bal_acc,base_logloss,cm_0_0,"));
  snprintf(path, sizeof path, "%s/classes-mlp/report.html", g_tmp);
  CHECK(file_has(path, "confusion matrix"));

  /* the predictor streams class probabilities; the backtest maps down, time, up to -1, 0, 1 */
  snprintf(path, sizeof path, "%s/classes-mlp", g_tmp);
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(path, NULL, &p));
  if (!p) return;
  const tg_predictor_info *in = tg_predictor_get_info(p);
  CHECK(in->n_classes == 3 && strcmp(in->classes[2], "up") == 0 && tg_predictor_out_len(in) == 3);
  tg_fc_bt_opts o = tg_fc_bt_defaults();
  tg_fc_rule rule = tg_fc_bt_rule(&o);
  double pos[3];
  CHECK_OK(tg_fc_class_positions(&rule, in, pos));
  CHECK(pos[0] == -1 && pos[1] == 0 && pos[2] == 1);
  rule.class_map = "up=2,sideways=0";
  CHECK(tg_fc_class_positions(&rule, in, pos) == TG_ERR_INVALID && strstr(tg_last_error(), "down, time, up"));
  rule.class_map = "up=0.5,down=-0.5";
  CHECK_OK(tg_fc_class_positions(&rule, in, pos));
  CHECK(pos[0] == -0.5 && pos[1] == 0 && pos[2] == 0.5);
  int64_t from = bars->n - 500;
  double *target = malloc(500 * sizeof *target);
  int64_t got = 0;
  rule = tg_fc_bt_rule(&o);
  CHECK_OK(tg_fc_targets(p, bars, from, &rule, target, &got));
  int moved = 0;
  for (int i = 0; i < 500; i++) moved += target[i] != 0.0;
  CHECK_MSG(got == 500 && moved > 50, "%lld forecasts, %d positions taken", (long long)got, moved);
  free(target);
  tg_predictor_free(p);

  /* class weights: balanced, by name, and an unknown name */
  tg_train_config c = tg_test_small_config(TG_MODEL_MLP, g_tmp, "classes-weights", 1);
  snprintf(c.features, sizeof c.features, "logret,col:signal");
  snprintf(c.target, sizeof c.target, "triple-barrier:0.5,0.5,1");
  snprintf(c.class_weights, sizeof c.class_weights, "up=2,flat=1");
  CHECK(tg_train_run(&c, bars, &r) == TG_ERR_INVALID && strstr(tg_last_error(), "'flat'") &&
        strstr(tg_last_error(), "down, time, up"));
  snprintf(c.class_weights, sizeof c.class_weights, "balanced");
  snprintf(c.out, sizeof c.out, "%s/classes-balanced", g_tmp);
  CHECK_OK(tg_train_run(&c, bars, &r));
}

/* A label file through the trainer: classes from its names (and "none"), listed in config.json; a walk-forward of a
 * classifier reading covariates trains and backtests every fold (the folds' views carry the columns). */
static void test_labels_and_walkforward(const tg_bars *bars) {
  char path[600], line[600];
  snprintf(path, sizeof path, "%s/labels.csv", g_tmp);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("ts,label,end\n", f);
  for (int64_t t = 100; t + 3 < bars->n; t += 3) { /* a "trader" who buys before rises and sells before falls */
    const char *name = bars->cols[0].values[t] > 0.5 ? "buy" : bars->cols[0].values[t] < -0.5 ? "sell" : NULL;
    if (!name) continue;
    fprintf(f, "%lld,%s,%lld\n", (long long)(bars->ts[t] / 1000000000), name, (long long)(bars->ts[t + 2] / 1000000000));
  }
  fclose(f);
  tg_train_config c = tg_test_small_config(TG_MODEL_TRANSFORMER, g_tmp, "labels-transformer", 2);
  snprintf(c.features, sizeof c.features, "logret,col:signal");
  snprintf(c.target, sizeof c.target, "labels:%s", path);
  tg_train_result r;
  CHECK_OK(tg_train_run(&c, bars, &r));
  CHECK(r.best.n_classes == 3);
  snprintf(path, sizeof path, "%s/labels-transformer/config.json", g_tmp);
  CHECK(file_has(path, "\"classes\": [\"buy\", \"none\", \"sell\"]"));
  /* stopped after epoch 1 and resumed: bitwise the uninterrupted run (covariates, labels, a transformer) */
  tg_train_config part = c;
  snprintf(part.out, sizeof part.out, "%s/labels-part", g_tmp);
  part.stop_after = 1;
  CHECK_OK(tg_train_run(&part, bars, &r));
  part.stop_after = 0;
  snprintf(part.resume, sizeof part.resume, "%s", part.out);
  CHECK_OK(tg_train_run(&part, bars, &r));
  char a[700], b2[700];
  snprintf(a, sizeof a, "%s/labels-transformer/weights.safetensors", g_tmp);
  snprintf(b2, sizeof b2, "%s/labels-part/weights.safetensors", g_tmp);
  CHECK_MSG(tg_test_same_tensors(a, b2), "weights differ after resuming a labelled transformer run with covariates");
  /* a predictor given bars without the run's column says which column and which ones there are */
  snprintf(path, sizeof path, "%s/labels-transformer", g_tmp);
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(path, NULL, &p));
  tg_bars plain = *bars;
  plain.n_cols = 0, plain.cols = NULL;
  tg_pbar pb;
  CHECK(p && tg_predictor_bar_at(p, &plain, 0, 1, &pb) == TG_ERR_INVALID && strstr(tg_last_error(), "'signal'"));
  tg_predictor_free(p);
  snprintf(line, sizeof line, "labels:%s/nowhere.csv", g_tmp);
  snprintf(c.target, sizeof c.target, "%s", line);
  snprintf(c.out, sizeof c.out, "%s/labels-missing", g_tmp);
  CHECK(tg_train_run(&c, bars, &r) == TG_ERR_IO && strstr(tg_last_error(), "nowhere.csv"));

  static tg_wf_config w;
  tg_wf_defaults(&w, TG_MODEL_MLP);
  w.train = tg_test_small_config(TG_MODEL_MLP, g_tmp, "wf", 1);
  snprintf(w.train.features, sizeof w.train.features, "logret,col:signal,cat:regime");
  snprintf(w.train.target, sizeof w.train.target, "triple-barrier:0.5,0.5,1");
  w.folds = 2, w.train_blocks = 2;
  snprintf(w.out, sizeof w.out, "%s/wf", g_tmp);
  tg_wf_fold folds[2];
  CHECK_OK(tg_wf_run(&w, bars, folds));
  CHECK(folds[0].res.ok && folds[1].res.ok && folds[1].res.st.trades > 0);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_covariate_train_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  tg_bars bars;
  CHECK(planted_bars(&bars, 6000, 5));
  static const tg_model_kind kinds[] = {TG_MODEL_MLP, TG_MODEL_MAMBA2, TG_MODEL_TFT, TG_MODEL_TRANSFORMER};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) check_found(kinds[k], &bars, "col:signal");
  check_found(TG_MODEL_MLP, &bars, "cat:regime");
  check_found(TG_MODEL_MAMBA2, &bars, "cat:regime");
  check_found(TG_MODEL_TFT, &bars, "cat:regime");
  check_found(TG_MODEL_TRANSFORMER, &bars, "cat:regime");
  check_found(TG_MODEL_MLP, &bars, "known:event");
  check_found(TG_MODEL_MAMBA2, &bars, "known:event");
  check_found(TG_MODEL_TFT, &bars, "known:event");
  check_found(TG_MODEL_TRANSFORMER, &bars, "known:event");
  test_classifier(&bars);
  test_labels_and_walkforward(&bars);
  static const char *const causal_runs[] = {"with-mlp-col_signal", "with-transformer-cat_regime", "with-tft-cat_regime",
                                            "with-mlp-known_event", "with-transformer-known_event",
                                            "with-tft-known_event", "classes-mlp"};
  for (size_t k = 0; k < sizeof causal_runs / sizeof causal_runs[0]; k++) check_causal(&bars, causal_runs[k]);
  check_known_forecasts(&bars, "with-tft-known_event");
  check_known_forecasts(&bars, "with-mlp-known_event");
  check_known_forecasts(&bars, "with-transformer-known_event");
  check_known_forecasts(&bars, "with-mamba2-known_event");
  tg_bars_free(&bars);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
