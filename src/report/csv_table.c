/* CSV files of the run folder as tables: a header of names, rows of cells, malformed lines skipped and counted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "report/report_internal.h"

/* The whole of s is a number. */
static int is_number(const char *s) {
  char *end = NULL;
  strtod(s, &end);
  return end != s && *end == '\0';
}

static int is_text_col(const char *name, const char *const *text_cols) {
  for (int i = 0; text_cols && text_cols[i]; i++)
    if (strcmp(name, text_cols[i]) == 0) return 1;
  return 0;
}

/* Splits line (modified) at commas into at most max cells; returns the number of fields. */
static int split(char *line, char **cells, int max) {
  int n = 0;
  for (char *s = line;;) {
    char *c = strchr(s, ',');
    if (c) *c = '\0';
    if (n < max) cells[n] = s;
    n++;
    if (!c) return n;
    s = c + 1;
  }
}

/* The next line of *s (NUL-terminated, '\r' dropped), or NULL at the end. */
static char *next_line(char **s) {
  if (!*s || !**s) return NULL;
  char *line = *s, *nl = strchr(line, '\n');
  if (nl) {
    *nl = '\0';
    *s = nl + 1;
  } else {
    *s = NULL;
  }
  size_t n = strlen(line);
  if (n && line[n - 1] == '\r') line[n - 1] = '\0';
  return line;
}

static void bad_line(rp_table *t, int64_t line, const char *fmt, const char *what, int a, int b) {
  if (t->skipped++ > 0) return;
  char why[128];
  snprintf(why, sizeof why, fmt, what, a, b);
  snprintf(t->first_bad, sizeof t->first_bad, "line %lld: %s", (long long)line, why);
}

/* Checks and keeps one data line (already split into cells at row nrow). */
static void take_row(rp_table *t, char *line, int64_t lineno, const int *text) {
  char **cells = t->cells + t->nrow * t->ncol;
  int n = split(line, cells, t->ncol);
  if (n != t->ncol) {
    bad_line(t, lineno, "%s%d fields, want %d", "", n, t->ncol);
    return;
  }
  for (int k = 0; k < n; k++)
    if (!text[k] && cells[k][0] && !is_number(cells[k])) {
      bad_line(t, lineno, "%s is not a number (column %d of %d)", t->names[k], k + 1, n);
      return;
    }
  t->nrow++;
}

tg_status rp_table_read(const char *path, const char *const *text_cols, rp_table *t) {
  memset(t, 0, sizeof *t);
  size_t len = 0;
  tg_status st = tg_read_file(path, &t->text, &len);
  if (st != TG_OK) return st;
  int64_t lines = 1;
  for (size_t i = 0; i < len; i++) lines += t->text[i] == '\n';
  char *s = t->text, *head = next_line(&s);
  if (!head || !head[0]) return TG_OK; /* empty: no columns */
  int ncol = split(head, NULL, 0);
  t->names = tg_malloc((size_t)ncol * sizeof *t->names);
  int *text = tg_calloc((size_t)ncol, sizeof *text);
  t->cells = tg_malloc((size_t)lines * (size_t)ncol * sizeof *t->cells);
  if (!t->names || !text || !t->cells) {
    tg_free(text);
    rp_table_free(t);
    return tg_error(TG_ERR_NOMEM, "report: out of memory reading '%s'", path);
  }
  /* split put NULs in head already: walk its ncol strings */
  char *name = head;
  for (int k = 0; k < ncol; k++, name += strlen(name) + 1) {
    t->names[k] = name;
    text[k] = is_text_col(name, text_cols);
  }
  t->ncol = ncol;
  char *line;
  for (int64_t lineno = 2; (line = next_line(&s)) != NULL; lineno++)
    if (line[0]) take_row(t, line, lineno, text);
  tg_free(text);
  return TG_OK;
}

void rp_table_free(rp_table *t) {
  tg_free(t->text);
  tg_free(t->names);
  tg_free(t->cells);
  memset(t, 0, sizeof *t);
}

int rp_table_col(const rp_table *t, const char *name) {
  for (int k = 0; k < t->ncol; k++)
    if (strcmp(t->names[k], name) == 0) return k;
  return -1;
}

const char *rp_table_cell(const rp_table *t, int64_t row, int col) { return t->cells[row * t->ncol + col]; }

double *rp_table_numbers(const rp_table *t, const char *name) {
  int k = rp_table_col(t, name);
  if (k < 0) return NULL;
  double *v = tg_malloc((size_t)(t->nrow > 0 ? t->nrow : 1) * sizeof *v);
  if (!v) return NULL;
  for (int64_t r = 0; r < t->nrow; r++) {
    const char *c = rp_table_cell(t, r, k);
    char *end = NULL;
    double x = c[0] ? strtod(c, &end) : NAN;
    v[r] = c[0] && *end == '\0' ? x : NAN;
  }
  return v;
}

int rp_any_finite(const double *v, int64_t n) {
  for (int64_t i = 0; v && i < n; i++)
    if (isfinite(v[i])) return 1;
  return 0;
}

void rp_table_skipped_note(rp_page *p, const rp_table *t, const char *file) {
  if (t->skipped == 0) return;
  rp_note(p, "%s: %lld malformed line%s skipped (the first: %s)", file, (long long)t->skipped,
          t->skipped == 1 ? "" : "s", t->first_bad);
}
