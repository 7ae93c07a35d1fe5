/* The extra columns of a bar series: lookup by name, adding, resetting and dropping, growth and append. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/bar_columns.h"

/* Every column holds room for cap + 1 values, so a series without bars still has a buffer to point at. */
static size_t elem_size(tg_column_kind kind) { return kind == TG_COLUMN_NUMERIC ? sizeof(double) : sizeof(uint32_t); }

void tg_bar_column_set_missing(tg_bar_column *c, int64_t from, int64_t to) {
  if (c->kind == TG_COLUMN_NUMERIC)
    for (int64_t i = from; i < to; i++) c->values[i] = NAN;
  else
    for (int64_t i = from; i < to; i++) c->codes[i] = TG_CATEGORY_MISSING;
}

/* A buffer of room for cap + 1 values of kind, every one of the first n missing. */
static void *new_values(tg_column_kind kind, int64_t n, int64_t cap) {
  void *p = tg_malloc(((size_t)cap + 1) * elem_size(kind));
  if (!p) return NULL;
  tg_bar_column tmp = {.kind = kind, .values = p, .codes = p};
  tg_bar_column_set_missing(&tmp, 0, n);
  return p;
}

static void free_column(tg_bar_column *c) {
  tg_free(c->name);
  tg_free(c->values);
  tg_free(c->codes);
  tg_categories_free(&c->cats);
}

int tg_bars_column_index(const tg_bars *b, const char *name) {
  for (int k = 0; k < b->n_cols; k++)
    if (strcmp(b->cols[k].name, name) == 0) return k;
  return -1;
}

const tg_bar_column *tg_bars_column(const tg_bars *b, const char *name) {
  int k = tg_bars_column_index(b, name);
  return k < 0 ? NULL : &b->cols[k];
}

tg_status tg_bars_add_column(tg_bars *b, const char *name, tg_column_kind kind) {
  if (!name || !*name) return tg_error(TG_ERR_INVALID, "bars: an extra column needs a name");
  if (tg_bars_column_index(b, name) >= 0) return tg_error(TG_ERR_INVALID, "bars: there is a column '%s' already", name);
  size_t len = strlen(name);
  tg_bar_column *cols = tg_malloc(((size_t)b->n_cols + 1) * sizeof *cols);
  char *copy = tg_malloc(len + 1);
  void *vals = new_values(kind, b->n, b->cap);
  if (!cols || !copy || !vals) {
    tg_free(cols);
    tg_free(copy);
    tg_free(vals);
    return tg_error(TG_ERR_NOMEM, "bars: out of memory for column '%s' of %lld bars", name, (long long)b->cap);
  }
  if (b->n_cols) memcpy(cols, b->cols, (size_t)b->n_cols * sizeof *cols);
  memcpy(copy, name, len + 1);
  tg_bar_column *c = &cols[b->n_cols];
  memset(c, 0, sizeof *c);
  c->name = copy;
  c->kind = kind;
  if (kind == TG_COLUMN_NUMERIC) c->values = vals;
  else c->codes = vals;
  tg_free(b->cols);
  b->cols = cols;
  b->n_cols++;
  return TG_OK;
}

tg_status tg_bars_reset_column(tg_bars *b, int k, tg_column_kind kind) {
  tg_bar_column *c = &b->cols[k];
  void *vals = new_values(kind, b->n, b->cap);
  if (!vals) return tg_error(TG_ERR_NOMEM, "bars: out of memory for column '%s' of %lld bars", c->name, (long long)b->cap);
  tg_free(c->values);
  tg_free(c->codes);
  tg_categories_free(&c->cats);
  c->values = NULL;
  c->codes = NULL;
  c->kind = kind;
  if (kind == TG_COLUMN_NUMERIC) c->values = vals;
  else c->codes = vals;
  return TG_OK;
}

void tg_bars_drop_column(tg_bars *b, int k) {
  free_column(&b->cols[k]);
  memmove(&b->cols[k], &b->cols[k + 1], (size_t)(b->n_cols - k - 1) * sizeof *b->cols);
  if (--b->n_cols == 0) {
    tg_free(b->cols);
    b->cols = NULL;
  }
}

void tg_bar_columns_truncate(tg_bars *b, int keep) {
  while (b->n_cols > keep) tg_bars_drop_column(b, b->n_cols - 1);
}

int tg_bar_columns_grow(tg_bars *b, int64_t n, int64_t cap) {
  for (int k = 0; k < b->n_cols; k++) {
    tg_bar_column *c = &b->cols[k];
    size_t es = elem_size(c->kind);
    void *old = c->kind == TG_COLUMN_NUMERIC ? (void *)c->values : (void *)c->codes;
    void *p = tg_malloc(((size_t)cap + 1) * es);
    if (!p) return 0;
    if (n) memcpy(p, old, (size_t)n * es);
    tg_free(old);
    if (c->kind == TG_COLUMN_NUMERIC) c->values = p;
    else c->codes = p;
  }
  return 1;
}

tg_status tg_bar_columns_match(tg_bars *dst, const tg_bars *src) {
  for (int k = 0; k < src->n_cols; k++) {
    const tg_bar_column *d = tg_bars_column(dst, src->cols[k].name);
    if (d && d->kind != src->cols[k].kind)
      return tg_error(TG_ERR_INVALID, "bars: column '%s' is %s in one series and %s in the other", d->name,
                      d->kind == TG_COLUMN_NUMERIC ? "numeric" : "a category",
                      d->kind == TG_COLUMN_NUMERIC ? "a category" : "numeric");
  }
  int keep = dst->n_cols;
  for (int k = 0; k < src->n_cols; k++) {
    if (tg_bars_column_index(dst, src->cols[k].name) >= 0) continue;
    tg_status st = tg_bars_add_column(dst, src->cols[k].name, src->cols[k].kind);
    if (st != TG_OK) {
      tg_bar_columns_truncate(dst, keep);
      return st;
    }
  }
  return TG_OK;
}

/* src's codes at dst's rows from `at`, through its names interned in dst's table. */
static tg_status copy_codes(tg_bar_column *d, const tg_bar_column *s, int64_t at, int64_t n) {
  uint32_t *map = tg_malloc(((size_t)s->cats.n + 1) * sizeof *map);
  if (!map) return tg_error(TG_ERR_NOMEM, "bars: out of memory merging the %u names of column '%s'", s->cats.n, s->name);
  tg_status st = TG_OK;
  for (uint32_t k = 0; k < s->cats.n && st == TG_OK; k++)
    st = tg_categories_intern(&d->cats, s->cats.text + s->cats.off[k], (size_t)(s->cats.off[k + 1] - s->cats.off[k] - 1),
                              &map[k]);
  if (st == TG_OK)
    for (int64_t i = 0; i < n; i++) {
      uint32_t c = s->codes[i];
      d->codes[at + i] = c == TG_CATEGORY_MISSING ? c : map[c];
    }
  tg_free(map);
  return st;
}

tg_status tg_bar_columns_copy(tg_bars *dst, const tg_bars *src) {
  for (int k = 0; k < dst->n_cols; k++) {
    tg_bar_column *d = &dst->cols[k];
    const tg_bar_column *s = tg_bars_column(src, d->name);
    if (!s) {
      tg_bar_column_set_missing(d, dst->n, dst->n + src->n);
    } else if (d->kind == TG_COLUMN_NUMERIC) {
      if (src->n) memcpy(d->values + dst->n, s->values, (size_t)src->n * sizeof(double));
    } else {
      tg_status st = copy_codes(d, s, dst->n, src->n);
      if (st != TG_OK) return st;
    }
  }
  return TG_OK;
}

void tg_bars_view(const tg_bars *bars, int64_t a, int64_t b, tg_bar_column *cols, tg_bars *view) {
  *view = *bars;
  view->n = view->cap = b - a;
  view->ts += a, view->open += a, view->close += a;
  if (view->high) view->high += a;
  if (view->low) view->low += a;
  if (view->volume) view->volume += a;
  if (view->instrument) view->instrument += a;
  view->n_cols = cols ? bars->n_cols : 0;
  view->cols = view->n_cols ? cols : NULL;
  for (int k = 0; k < view->n_cols; k++) {
    cols[k] = bars->cols[k];
    if (cols[k].values) cols[k].values += a;
    if (cols[k].codes) cols[k].codes += a;
  }
}

const char *tg_bars_column_names(const tg_bars *b, char *buf, size_t n) {
  size_t used = 0;
  snprintf(buf, n, "%s", b->n_cols ? "" : "none");
  for (int k = 0; k < b->n_cols; k++) {
    int w = snprintf(buf + used, n - used, "%s%s", k ? ", " : "", b->cols[k].name);
    if (w < 0 || (size_t)w >= n - used) { /* cut at the last whole name */
      snprintf(buf + used, n - used, "%s", n - used > 5 ? ", ..." : "");
      break;
    }
    used += (size_t)w;
  }
  return buf;
}

void tg_bars_move_row(tg_bars *b, int64_t i, int64_t k) {
  b->ts[k] = b->ts[i], b->open[k] = b->open[i], b->high[k] = b->high[i], b->low[k] = b->low[i];
  b->close[k] = b->close[i], b->volume[k] = b->volume[i];
  if (b->instrument) b->instrument[k] = b->instrument[i];
  for (int c = 0; c < b->n_cols; c++) {
    if (b->cols[c].values) b->cols[c].values[k] = b->cols[c].values[i];
    else b->cols[c].codes[k] = b->cols[c].codes[i];
  }
}
