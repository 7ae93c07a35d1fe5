/* CSV extra columns: which header columns are kept by name, the category pass and the columns a file lacks. */
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/bar_columns.h"
#include "data/readers/csv/csv_internal.h"

/* The text of [p, e) with each doubled quote made one (quoted fields keep them doubled) into buf[e - p + 1]. */
static size_t unquote(const char *p, const char *e, char *buf) {
  size_t k = 0;
  for (; p < e; p++) {
    buf[k++] = *p;
    if (*p == '"' && p + 1 < e && p[1] == '"') p++;
  }
  buf[k] = '\0';
  return k;
}

typedef struct named {
  const char *p;
  size_t len;
  int64_t col;
} named;

static int cmp_named(const void *a, const void *b) {
  const named *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->p, y->p, n);
  if (c) return c;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  return (x->col > y->col) - (x->col < y->col);
}

/* TG_ERR_FORMAT when a name is given twice and one of the two would be an extra column (role[col] 0). */
static tg_status check_repeats(const char *path, int64_t line, const tg_csv_field *h, int64_t ncols,
                               const unsigned char *role) {
  named *v = tg_malloc(((size_t)ncols + 1) * sizeof *v);
  if (!v) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld header names", path, (long long)ncols);
  int64_t m = 0;
  for (int64_t i = 0; i < ncols; i++)
    if (h[i].e > h[i].p) v[m++] = (named){h[i].p, (size_t)(h[i].e - h[i].p), i};
  qsort(v, (size_t)m, sizeof *v, cmp_named);
  tg_status st = TG_OK;
  for (int64_t i = 1; i < m && st == TG_OK; i++) {
    if (v[i].len != v[i - 1].len || memcmp(v[i].p, v[i - 1].p, v[i].len) != 0) continue;
    if (role[v[i].col] && role[v[i - 1].col]) continue;
    char q[64];
    st = tg_error(TG_ERR_FORMAT, "%s: line %lld: the header names '%s' twice (columns %lld and %lld); extra columns are "
                  "kept by name, so rename one", path, (long long)line, tg_csv_quote(v[i].p, v[i].p + v[i].len, q, sizeof q),
                  (long long)v[i - 1].col + 1, (long long)v[i].col + 1);
  }
  tg_free(v);
  return st;
}

tg_status tg_csv_extras_setup(const char *path, int64_t line, const tg_csv_field *header, int64_t ncols,
                              const tg_csv_map *map, tg_bars *out, tg_csv_extras *x) {
  memset(x, 0, sizeof *x);
  x->cols0 = out->n_cols;
  if (!header) return TG_OK;
  unsigned char *role = tg_calloc((size_t)ncols + 1, 1);
  if (!role) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld columns", path, (long long)ncols);
  for (int r = 0; r < TG_CSV_ROLES; r++)
    if (map->col[r] >= 0) role[map->col[r]] = 1;
  size_t longest = 0;
  for (int64_t i = 0; i < ncols; i++) {
    size_t len = (size_t)(header[i].e - header[i].p);
    if (len && !role[i]) x->n++;
    if (len > longest) longest = len;
  }
  tg_status st = x->n ? check_repeats(path, line, header, ncols, role) : TG_OK;
  char *name = NULL;
  if (st == TG_OK && x->n) {
    x->col = tg_malloc((size_t)x->n * sizeof *x->col);
    x->out = tg_malloc((size_t)x->n * sizeof *x->out);
    x->text = tg_calloc((size_t)x->n, 1);
    x->of = tg_malloc((size_t)ncols * sizeof *x->of);
    name = tg_malloc(longest + 1);
    if (!x->col || !x->out || !x->text || !x->of || !name)
      st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %d extra columns", path, x->n);
  }
  for (int64_t i = 0, k = 0; st == TG_OK && x->n && i < ncols; i++) {
    x->of[i] = -1;
    if (header[i].e == header[i].p || role[i]) continue;
    unquote(header[i].p, header[i].e, name);
    int j = tg_bars_column_index(out, name);
    if (j < 0 && (st = tg_bars_add_column(out, name, TG_COLUMN_NUMERIC)) == TG_OK) j = out->n_cols - 1;
    if (st != TG_OK) break;
    x->text[k] = out->cols[j].kind == TG_COLUMN_CATEGORY; /* numbers join a category column as names */
    x->col[k] = i;
    x->out[k] = j;
    x->of[i] = (int32_t)k++;
  }
  tg_free(name);
  tg_free(role);
  return st;
}

/* The second pass: the category columns' values of bars [n0, out->n), one per data row from data. */
static tg_status read_categories(const char *path, const tg_csv_layout *lay, const char *data, const char *end,
                                 int64_t no, int64_t n0, tg_bars *out, const tg_csv_extras *x) {
  int64_t last = 0;
  for (int k = 0; k < x->n; k++)
    if (x->text[k] && x->col[k] > last) last = x->col[k];
  char *buf = tg_malloc(TG_CSV_MAX_LINE + 1);
  if (!buf) return tg_error(TG_ERR_NOMEM, "%s: out of memory for a line", path);
  tg_status st = TG_OK;
  int64_t i = n0;
  for (const char *pos = data; pos < end && st == TG_OK;) {
    tg_csv_line ln;
    if ((st = tg_csv_line_read(path, pos, end, no++, &ln)) != TG_OK) break;
    pos = ln.next;
    if (tg_csv_blank(ln.p, ln.e)) continue;
    if (i >= out->n) {
      st = tg_error(TG_ERR_FORMAT, "%s: line %lld: more rows than the first pass read", path, (long long)ln.no);
      break;
    }
    const char *p = ln.p;
    int more = 1;
    for (int64_t col = 0; more && col <= last && st == TG_OK; col++) {
      tg_csv_field f;
      p = tg_csv_field_next(p, ln.e, lay->delim, &f, &more);
      int32_t k = x->of[col];
      if (k < 0 || !x->text[k]) continue;
      tg_bar_column *c = &out->cols[x->out[k]];
      double v;
      if (tg_csv_number_parse(f.p, f.e, 0, &v) == TG_CSV_NUM_NULL) {
        c->codes[i] = TG_CATEGORY_MISSING;
      } else {
        size_t len = unquote(f.p, f.e, buf);
        st = tg_categories_intern(&c->cats, buf, len, &c->codes[i]);
      }
    }
    i++;
  }
  tg_free(buf);
  if (st == TG_OK && i != out->n)
    st = tg_error(TG_ERR_FORMAT, "%s: the second pass read %lld rows, the first %lld", path, (long long)(i - n0),
                  (long long)(out->n - n0));
  return st;
}

tg_status tg_csv_extras_finish(const char *path, const tg_csv_layout *lay, const char *data, const char *end,
                               int64_t no, int64_t n0, tg_bars *out, tg_csv_extras *x) {
  int any_text = 0;
  for (int k = 0; k < x->n; k++) {
    if (!x->text[k]) continue;
    tg_bar_column *c = &out->cols[x->out[k]];
    if (c->kind == TG_COLUMN_NUMERIC && x->out[k] < x->cols0)
      return tg_error(TG_ERR_FORMAT, "%s: column '%s' holds text in this file but numbers in the bars read before it",
                      path, c->name);
    if (c->kind == TG_COLUMN_NUMERIC) {
      tg_status st = tg_bars_reset_column(out, x->out[k], TG_COLUMN_CATEGORY);
      if (st != TG_OK) return st;
    }
    any_text = 1;
  }
  for (int j = 0; j < out->n_cols; j++) { /* the series' columns this file lacks */
    int fed = 0;
    for (int k = 0; k < x->n && !fed; k++) fed = x->out[k] == j;
    if (fed) continue;
    tg_bar_column_set_missing(&out->cols[j], n0, out->n);
  }
  return any_text ? read_categories(path, lay, data, end, no, n0, out, x) : TG_OK;
}

void tg_csv_extras_undo(tg_bars *out, const tg_csv_extras *x) {
  while (out->n_cols > x->cols0) tg_bars_drop_column(out, out->n_cols - 1);
}

void tg_csv_extras_free(tg_csv_extras *x) {
  tg_free(x->col);
  tg_free(x->out);
  tg_free(x->text);
  tg_free(x->of);
  x->col = NULL;
  x->out = NULL;
  x->text = NULL;
  x->of = NULL;
  x->n = 0;
}
