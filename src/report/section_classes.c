/* The report's classifier part of the training section: accuracy against the majority class, and the confusion matrix. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "report/report_internal.h"

/* config.json's class names (NULL when absent): the document owns them. */
static const tg_json *class_names(const rp_page *p, tg_json_doc **doc) {
  if (rp_read_json(p->run, "config.json", doc) != TG_OK) {
    *doc = NULL;
    return NULL;
  }
  const tg_json *c = tg_json_get(tg_json_root(*doc), "classes");
  return c && c->type == TG_JSON_ARRAY ? c : NULL;
}

static const char *nth_name(const tg_json *names, int k, char *buf, size_t n) {
  int i = 0;
  for (const tg_json *e = names ? names->first : NULL; e; e = e->next, i++)
    if (i == k && e->type == TG_JSON_STRING) return e->str;
  snprintf(buf, n, "class %d", k);
  return buf;
}

/* The confusion counts of row `row` (columns cm_T_P) as a table with class names. */
static void confusion(rp_page *p, const rp_table *t, int64_t row, int epoch) {
  int C = 0;
  char col[48];
  for (;; C++) {
    snprintf(col, sizeof col, "cm_%d_%d", C, C);
    if (rp_table_col(t, col) < 0) break;
  }
  if (C == 0) {
    rp_unavailable(p, "metrics.csv has no confusion counts (a classifier of many classes keeps none per epoch)");
    return;
  }
  tg_json_doc *doc = NULL;
  const tg_json *names = class_names(p, &doc);
  char buf[32];
  rp_rawf(p, "<table class=\"stats\"><caption>");
  rp_textf(p, "Validation confusion matrix at the best epoch (%d): rows are the true class, columns the predicted", epoch);
  rp_raw(p, "</caption><thead><tr><th>true \\ predicted</th>");
  for (int k = 0; k < C; k++) {
    rp_raw(p, "<th>");
    rp_text(p, nth_name(names, k, buf, sizeof buf));
    rp_raw(p, "</th>");
  }
  rp_raw(p, "</tr></thead><tbody>");
  for (int i = 0; i < C; i++) {
    rp_raw(p, "<tr><th>");
    rp_text(p, nth_name(names, i, buf, sizeof buf));
    rp_raw(p, "</th>");
    for (int j = 0; j < C; j++) {
      snprintf(col, sizeof col, "cm_%d_%d", i, j);
      rp_raw(p, "<td>");
      rp_text(p, rp_table_cell(t, row, rp_table_col(t, col)));
      rp_raw(p, "</td>");
    }
    rp_raw(p, "</tr>");
  }
  rp_raw(p, "</tbody></table>\n");
  tg_json_free(doc);
}

int rp_is_classifier(const rp_table *t) {
  double *acc = rp_table_numbers(t, "val_acc");
  int yes = acc && rp_any_finite(acc, t->nrow);
  tg_free(acc);
  return yes;
}

void rp_section_classes(rp_page *p, const rp_table *t, const double *epoch, int64_t best) {
  static const char *const cols[4] = {"val_acc", "base_acc", "val_bal_acc", "base_bal_acc"};
  static const char *const names[4] = {"accuracy", "majority class", "balanced accuracy", "majority (balanced)"};
  double *v[4];
  for (int k = 0; k < 4; k++) v[k] = rp_table_numbers(t, cols[k]);
  rp_chart c;
  memset(&c, 0, sizeof c);
  c.id = "accuracy", c.title = "Validation accuracy against the majority-class baseline", c.xlabel = "epoch";
  c.ylabel = "share", c.x_int = 1;
  for (int k = 0; k < 4; k++) rp_chart_add(&c, names[k], epoch, v[k], t->nrow, k / 2, k % 2);
  rp_svg_lines_or(p, &c, "metrics.csv has no accuracy values");
  for (int k = 0; k < 4; k++) tg_free(v[k]);
  if (best >= 0) confusion(p, t, best, epoch ? (int)epoch[best] : (int)best + 1);
}
