/* The report's evaluation section: every split's scores from evaluation.json and a calibration chart. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "report/report_internal.h"

static const char *SPLITS[3] = {"train", "val", "test"};

static double num(const tg_json *o, const char *key) {
  const tg_json *v = tg_json_get(o, key);
  return v && (v->type == TG_JSON_INT || v->type == TG_JSON_REAL) ? v->num : NAN;
}

/* Up to cap numbers of the array o[key] into v (null or missing: NaN); how many the array holds. */
static int nums(const tg_json *o, const char *key, double *v, int cap) {
  const tg_json *a = tg_json_get(o, key);
  int n = 0;
  for (const tg_json *e = a && a->type == TG_JSON_ARRAY ? a->first : NULL; e && n < cap; e = e->next, n++)
    v[n] = e->type == TG_JSON_INT || e->type == TG_JSON_REAL ? e->num : NAN;
  return n;
}

static void cell(rp_page *p, double v) {
  char b[32];
  rp_raw(p, "<td>");
  rp_text(p, rp_num(v, b, sizeof b));
  rp_raw(p, "</td>");
}

/* "v (base)" in one cell */
static void cell2(rp_page *p, double v, double base) {
  char a[32], b[32];
  rp_raw(p, "<td>");
  rp_textf(p, "%s (%s)", rp_num(v, a, sizeof a), rp_num(base, b, sizeof b));
  rp_raw(p, "</td>");
}

static int quantile_index(const double *q, int nq, double want) {
  for (int k = 0; k < nq; k++)
    if (fabs(q[k] - want) < 1e-6) return k;
  return -1;
}

/* The date of a bound (evaluation.json has the time too), or what an open one is. */
static const char *bound(const tg_json *v, const char *open, char *buf, size_t n) {
  if (!v || v->type != TG_JSON_STRING) return open;
  snprintf(buf, n, "%.10s", v->str);
  return buf;
}

static void period(rp_page *p, const tg_json *s) {
  char a[24], b[24];
  rp_raw(p, "<td>");
  rp_textf(p, "%s .. %s", bound(tg_json_get(s, "from"), "start", a, sizeof a), bound(tg_json_get(s, "to"), "end", b, sizeof b));
  rp_raw(p, "</td>");
}

static void quantile_table(rp_page *p, const tg_json *splits, const double *q, int nq) {
  int k50 = quantile_index(q, nq, 0.5), k90 = quantile_index(q, nq, 0.9);
  rp_note(p, "Pinball: the mean pinball loss in target-std units, against the naive forecast (the training split's "
            "quantiles) in brackets and the zero forecast. P50, P90: q-risk 2 sum QL / sum |y| in original units. Coverage: the "
            "share of targets inside the widest central interval, against its nominal width.");
  rp_raw(p, "<div class=\"scroll\"><table class=\"stats\"><thead><tr><th>split</th><th>period</th><th>windows</th><th>pinball "
            "(naive)</th><th>zero</th><th>P50 (naive)</th><th>P90 (naive)</th><th>coverage "
            "(nominal)</th></tr></thead><tbody>");
  for (int i = 0; i < 3; i++) {
    const tg_json *s = tg_json_get(splits, SPLITS[i]);
    if (!s) continue;
    double qr[32], nqr[32];
    int n1 = nums(s, "qrisk", qr, 32), n2 = nums(s, "naive_qrisk", nqr, 32);
    rp_rawf(p, "<tr><th>%s</th>", SPLITS[i]);
    period(p, s);
    cell(p, num(s, "windows"));
    cell2(p, num(s, "loss"), num(s, "naive_loss"));
    cell(p, num(s, "zero_loss"));
    cell2(p, k50 >= 0 && k50 < n1 ? qr[k50] : NAN, k50 >= 0 && k50 < n2 ? nqr[k50] : NAN);
    cell2(p, k90 >= 0 && k90 < n1 ? qr[k90] : NAN, k90 >= 0 && k90 < n2 ? nqr[k90] : NAN);
    const tg_json *iv = tg_json_get(s, "intervals");
    const tg_json *w = iv && iv->type == TG_JSON_ARRAY ? iv->first : NULL;
    if (w) cell2(p, num(w, "coverage"), num(w, "nominal"));
    else cell(p, NAN);
    rp_raw(p, "</tr>");
  }
  rp_raw(p, "</tbody></table></div>\n");
}

/* The share of targets below each forecast quantile against the quantile, per split, and the ideal diagonal. */
static void calibration_chart(rp_page *p, const tg_json *splits, const double *q, int nq) {
  double below[3][32];
  rp_chart c;
  memset(&c, 0, sizeof c);
  c.id = "calibration", c.title = "Calibration: the share of targets below each forecast quantile";
  c.xlabel = "quantile", c.ylabel = "share below";
  for (int i = 0; i < 3; i++) {
    const tg_json *s = tg_json_get(splits, SPLITS[i]);
    int n = s ? nums(s, "below", below[i], 32) : 0;
    if (n == nq) rp_chart_add(&c, SPLITS[i], q, below[i], nq, i == 2 ? 0 : i == 1 ? 1 : 7, i == 0);
  }
  if (c.n_series) rp_chart_add(&c, "ideal", q, q, nq, 6, 1);
  rp_svg_lines_or(p, &c, "evaluation.json has no calibration (a split without windows)");
}

static void class_table(rp_page *p, const tg_json *splits) {
  rp_note(p, "In brackets: always the training split's majority class.");
  rp_raw(p, "<div class=\"scroll\"><table class=\"stats\"><thead><tr><th>split</th><th>period</th><th>windows</th><th>log loss</th>"
            "<th>accuracy</th><th>balanced accuracy</th></tr></thead><tbody>");
  for (int i = 0; i < 3; i++) {
    const tg_json *s = tg_json_get(splits, SPLITS[i]);
    if (!s) continue;
    rp_rawf(p, "<tr><th>%s</th>", SPLITS[i]);
    period(p, s);
    cell(p, num(s, "windows"));
    cell2(p, num(s, "log_loss"), num(s, "base_log_loss"));
    cell2(p, num(s, "accuracy"), num(s, "base_accuracy"));
    cell2(p, num(s, "balanced_accuracy"), num(s, "base_balanced_accuracy"));
    rp_raw(p, "</tr>");
  }
  rp_raw(p, "</tbody></table></div>\n");
}

void rp_section_eval(rp_page *p) {
  char path[RP_PATH_MAX];
  if (rp_path(path, sizeof path, p->run, "env.json") && rp_is_file(path)) return; /* a policy: no splits to score */
  rp_raw(p, "<section id=\"evaluation\"><h2>Evaluation out of sample</h2>\n");
  tg_json_doc *doc = NULL;
  if (rp_read_json(p->run, "evaluation.json", &doc) != TG_OK) {
    rp_unavailable(p, "no evaluation.json in %s (training writes it at the end of a run; `tickgrad evaluate --run %s` "
                   "writes it again)", p->run, p->run);
    rp_raw(p, "</section>\n");
    return;
  }
  const tg_json *root = tg_json_root(doc), *splits = tg_json_get(root, "splits"), *w = tg_json_get(root, "weights");
  rp_note(p, "The %s weights, every window of each split once.", w && w->type == TG_JSON_STRING ? w->str : "?");
  double q[32];
  int nq = nums(root, "quantiles", q, 32);
  if (!splits || splits->type != TG_JSON_OBJECT) rp_unavailable(p, "evaluation.json has no splits");
  else if (tg_json_get(root, "classes")) class_table(p, splits);
  else {
    quantile_table(p, splits, q, nq);
    rp_raw(p, "<div class=\"grid\">\n"); /* the chart at the size of the other sections' */
    calibration_chart(p, splits, q, nq);
    rp_raw(p, "</div>\n");
  }
  tg_json_free(doc);
  rp_raw(p, "</section>\n");
}
