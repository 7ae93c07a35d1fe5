/* The report's training section: a forecaster's metrics.csv by epoch (an agent's goes to section_rl.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "report/report_internal.h"

enum { C_EPOCH, C_TRAIN, C_VAL, C_Q50, C_Q90, C_N50, C_N90, C_LR, C_GRAD, C_SEC, C_SPS, C_DATA, C_FWD, C_BWD, C_OPT,
       C_STEP, C_VALS, C_N };
static const char *const COLS[C_N] = {"epoch", "train_loss", "val_loss", "val_qrisk50", "val_qrisk90", "naive_qrisk50",
                                      "naive_qrisk90", "lr", "grad_norm", "seconds", "samples_per_s", "data_s",
                                      "forward_s", "backward_s", "optimizer_s", "step_s", "val_s"};

typedef struct fc_cols {
  double *v[C_N]; /* NULL: the column is absent */
  int64_t n;
} fc_cols;

static void kv_num(rp_page *p, const char *key, const char *fmt, double v) {
  char b[64];
  if (isfinite(v)) snprintf(b, sizeof b, fmt, v);
  else rp_num(v, b, sizeof b);
  rp_raw(p, "<div><dt>");
  rp_text(p, key);
  rp_raw(p, "</dt><dd>");
  rp_text(p, b);
  rp_raw(p, "</dd></div>");
}

/* trainer.json's flag, or -1 */
static int trainer_flag(const tg_json *t, const char *key) {
  const tg_json *v = t ? tg_json_get(t, key) : NULL;
  return v && v->type == TG_JSON_INT ? (int)v->i : -1;
}

/* The row with the lowest validation loss, or -1. */
static int64_t best_row(const fc_cols *c) {
  int64_t best = -1;
  for (int64_t i = 0; i < c->n; i++)
    if (c->v[C_VAL] && isfinite(c->v[C_VAL][i]) && (best < 0 || c->v[C_VAL][i] < c->v[C_VAL][best])) best = i;
  return best;
}

static void summary(rp_page *p, const fc_cols *c) {
  int64_t best = best_row(c);
  double total = 0, sps = 0;
  int n_sps = 0;
  for (int64_t i = 0; i < c->n; i++) {
    if (c->v[C_SEC] && isfinite(c->v[C_SEC][i])) total += c->v[C_SEC][i];
    if (c->v[C_SPS] && isfinite(c->v[C_SPS][i])) sps += c->v[C_SPS][i], n_sps++;
  }
  int64_t last = c->n - 1;
  tg_json_doc *doc = NULL;
  if (rp_read_json(p->run, "trainer.json", &doc) != TG_OK) doc = NULL;
  const tg_json *tj = doc ? tg_json_root(doc) : NULL;
  int early = trainer_flag(tj, "stopped_early"), finished = trainer_flag(tj, "finished");
  rp_raw(p, "<dl class=\"kv\">");
  kv_num(p, "epochs", "%.0f", c->v[C_EPOCH] ? c->v[C_EPOCH][last] : (double)c->n);
  if (best >= 0) {
    kv_num(p, "best validation loss", "%.5f", c->v[C_VAL][best]);
    kv_num(p, "best epoch", "%.0f", c->v[C_EPOCH] ? c->v[C_EPOCH][best] : (double)(best + 1));
    if (c->v[C_Q50] && isfinite(c->v[C_Q50][best])) kv_num(p, "q-risk P50 at the best epoch", "%.4f", c->v[C_Q50][best]);
    if (c->v[C_N50] && isfinite(c->v[C_N50][best])) kv_num(p, "naive q-risk P50", "%.4f", c->v[C_N50][best]);
  }
  if (c->v[C_TRAIN]) kv_num(p, "last training loss", "%.5f", c->v[C_TRAIN][last]);
  if (c->v[C_VAL]) kv_num(p, "last validation loss", "%.5f", c->v[C_VAL][last]);
  kv_num(p, "time (s)", "%.2f", total);
  kv_num(p, "mean samples/s", "%.0f", n_sps ? sps / n_sps : NAN);
  rp_raw(p, "<div><dt>state</dt><dd>");
  rp_text(p, early == 1 ? "stopped early" : finished == 1 ? "finished" : finished == 0 ? "can be resumed" : "\xe2\x80\x93");
  rp_raw(p, "</dd></div></dl>\n");
  tg_json_free(doc);
}

static rp_chart chart(const char *id, const char *title, const char *ylabel) {
  rp_chart c;
  memset(&c, 0, sizeof c);
  c.id = id, c.title = title, c.xlabel = "epoch", c.ylabel = ylabel, c.x_int = 1;
  return c;
}

static void loss_charts(rp_page *p, const fc_cols *c, const rp_table *t) {
  const double *x = c->v[C_EPOCH];
  int classes = rp_is_classifier(t);
  rp_chart k = chart("loss", classes ? "Loss by epoch (cross-entropy; validation: log loss)"
                                     : "Loss by epoch (pinball, scaled targets)", "loss");
  rp_chart_add(&k, "training", x, c->v[C_TRAIN], c->n, 0, 0);
  rp_chart_add(&k, "validation", x, c->v[C_VAL], c->n, 1, 0);
  rp_svg_lines_or(p, &k, "metrics.csv has no loss values");
  if (classes) {
    rp_section_classes(p, t, x, best_row(c));
  } else {
    k = chart("qrisk", "Validation q-risk against the naive forecaster", "q-risk");
  rp_chart_add(&k, "model P50", x, c->v[C_Q50], c->n, 0, 0);
  rp_chart_add(&k, "naive P50", x, c->v[C_N50], c->n, 0, 1);
  rp_chart_add(&k, "model P90", x, c->v[C_Q90], c->n, 1, 0);
    rp_chart_add(&k, "naive P90", x, c->v[C_N90], c->n, 1, 1);
    rp_svg_lines_or(p, &k, "no q-risk values (quantiles 0.5 and 0.9 not configured)");
  }
  k = chart("lr", "Learning rate (after each epoch's last step)", "learning rate");
  rp_chart_add(&k, "learning rate", x, c->v[C_LR], c->n, 2, 0);
  rp_svg_lines_or(p, &k, "metrics.csv has no lr values");
  k = chart("grad_norm", "Gradient norm before clipping (mean over the epoch)", "global norm");
  rp_chart_add(&k, "grad norm", x, c->v[C_GRAD], c->n, 3, 0);
  rp_svg_lines_or(p, &k, c->v[C_GRAD] ? "grad_norm is blank in every row (epochs trained before it was recorded)"
                                      : "metrics.csv has no grad_norm column (a run from before it was recorded)");
}

/* Seconds per epoch by phase: data, forward, backward, optimizer, validation on the CPU; data, step,
 * validation where the step is one call (CUDA). */
static void time_chart(rp_page *p, const fc_cols *c) {
  rp_stack s;
  memset(&s, 0, sizeof s);
  s.id = "time_split", s.title = "Time per epoch by phase", s.xlabel = "epoch", s.ylabel = "seconds";
  s.x = c->v[C_EPOCH], s.n = c->n;
  int split = c->v[C_FWD] && rp_any_finite(c->v[C_FWD], c->n);
  int cols[5] = {C_DATA, C_FWD, C_BWD, C_OPT, C_VALS}, cols_step[3] = {C_DATA, C_STEP, C_VALS};
  const char *names[5] = {"data", "forward", "backward", "optimizer", "validation"};
  const char *names_step[3] = {"data", "step (one call)", "validation"};
  int n = split ? 5 : 3;
  for (int k = 0; k < n; k++) {
    const double *v = c->v[split ? cols[k] : cols_step[k]];
    if (!v) continue;
    s.names[s.n_parts] = split ? names[k] : names_step[k];
    s.v[s.n_parts++] = v;
  }
  if (s.n_parts == 0) {
    rp_chart none = chart("time_split", s.title, "seconds");
    rp_svg_lines_or(p, &none, "metrics.csv has no phase times");
    return;
  }
  rp_svg_stack(p, &s);
}

static void speed_chart(rp_page *p, const fc_cols *c) {
  rp_chart k = chart("samples_per_s", "Training samples per second", "samples/s");
  rp_chart_add(&k, "samples/s", c->v[C_EPOCH], c->v[C_SPS], c->n, 5, 0);
  k.y_zero = 1;
  rp_svg_lines_or(p, &k, "metrics.csv has no samples_per_s values");
}

static void forecaster(rp_page *p, const rp_table *t) {
  fc_cols c;
  memset(&c, 0, sizeof c);
  c.n = t->nrow;
  if (c.n == 0) {
    rp_unavailable(p, "metrics.csv has no epochs yet");
    return;
  }
  for (int k = 0; k < C_N; k++) c.v[k] = rp_table_numbers(t, COLS[k]);
  rp_raw(p, "<h3>Forecaster</h3>\n");
  summary(p, &c);
  rp_raw(p, "<div class=\"grid\">\n");
  loss_charts(p, &c, t);
  time_chart(p, &c);
  speed_chart(p, &c);
  rp_raw(p, "</div>\n");
  for (int k = 0; k < C_N; k++) tg_free(c.v[k]);
}

void rp_section_metrics(rp_page *p) {
  char path[RP_PATH_MAX];
  rp_raw(p, "<section id=\"training\"><h2>Training</h2>\n");
  rp_path(path, sizeof path, p->run, "metrics.csv");
  rp_table t;
  if (!rp_is_file(path)) {
    rp_unavailable(p, "no metrics.csv in %s (not a training run)", p->run);
  } else if (rp_table_read(path, NULL, &t) != TG_OK) {
    rp_unavailable(p, "%s", tg_last_error());
  } else {
    rp_table_skipped_note(p, &t, "metrics.csv");
    if (rp_table_col(&t, "epoch") >= 0 && rp_table_col(&t, "train_loss") >= 0) forecaster(p, &t);
    else if (rp_table_col(&t, "env_steps") >= 0) rp_section_rl(p, &t);
    else if (t.ncol == 0) rp_unavailable(p, "metrics.csv is empty");
    else rp_unavailable(p, "metrics.csv has columns this report does not know (the first is '%s')", t.names[0]);
    rp_table_free(&t);
  }
  rp_raw(p, "</section>\n");
}
