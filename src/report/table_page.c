/* tg_report_table_write: one table (rows of runs or folds, linked to their reports) on a page in the report's style. */
#include <stdio.h>
#include <string.h>
#include "report/report_internal.h"
#include "tickgrad/report.h"

static void row(rp_page *p, const tg_report_table *t, int r) {
  rp_raw(p, t->strong && t->strong[r] ? "<tr style=\"font-weight:bold\">" : "<tr>");
  const char *const *c = t->cells + (size_t)r * (size_t)t->ncol;
  const char *link = t->links ? t->links[r] : NULL;
  for (int j = 0; j < t->ncol;) {
    int span = 1;
    while (j + span < t->ncol && !c[j + span]) span++;
    if (span > 1) rp_rawf(p, "<td colspan=\"%d\">", span);
    else rp_raw(p, "<td>");
    if (link && j == t->link_col) {
      rp_raw(p, "<a href=\"");
      rp_text(p, link);
      rp_raw(p, "\">");
    }
    rp_text(p, c[j]);
    if (link && j == t->link_col) rp_raw(p, "</a>");
    rp_raw(p, "</td>");
    j += span;
  }
  rp_raw(p, "</tr>\n");
}

tg_status tg_report_table_write(const char *path, const tg_report_table *t, FILE *log) {
  if (t->ncol < 1) return tg_error(TG_ERR_INVALID, "report: table page %s: no columns", path);
  for (int r = 0; r < t->nrow; r++)
    if (!t->cells[(size_t)r * (size_t)t->ncol])
      return tg_error(TG_ERR_INVALID, "report: table page %s: row %d has no first cell", path, r + 1);
  rp_page p;
  memset(&p, 0, sizeof p);
  p.run = "";
  rp_page_begin(&p, t->title ? t->title : "");
  rp_raw(&p, "<header class=\"top\"><h1>");
  rp_text(&p, t->title ? t->title : "");
  rp_raw(&p, "</h1></header>\n<section>\n");
  if (t->intro) {
    rp_raw(&p, "<p>");
    rp_text(&p, t->intro);
    rp_raw(&p, "</p>\n");
  }
  rp_raw(&p, "<div class=\"scroll\"><table>\n<tr>");
  for (int j = 0; j < t->ncol; j++) {
    rp_raw(&p, "<th>");
    rp_text(&p, t->head[j]);
    rp_raw(&p, "</th>");
  }
  rp_raw(&p, "</tr>\n");
  for (int r = 0; r < t->nrow; r++) row(&p, t, r);
  rp_raw(&p, "</table></div>\n");
  if (t->outro) rp_note(&p, "%s", t->outro);
  rp_raw(&p, "</section>\n");
  rp_page_end(&p, NULL);
  tg_status st = p.b.oom ? tg_error(TG_ERR_NOMEM, "report: out of memory building %s", path)
                         : tg_write_atomic(path, p.b.data, p.b.len);
  tg_text_free(&p.b);
  if (st == TG_OK && log) {
    fprintf(log, "report: %s\n", path);
    fflush(log);
  }
  return st;
}
