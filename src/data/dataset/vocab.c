/* Vocabularies of cat: feature columns: built from names, fitted on the training rows, looked up, and cat: ids recoded. */
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/dataset/features_internal.h"
#include "data/dataset/split_rows.h"

int tg_vocab_id(const tg_vocab *v, const char *name) {
  if (!v || !name) return 0;
  int lo = 0, hi = v->n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(v->names[mid], name);
    if (c == 0) return mid + 1;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return 0;
}

void tg_vocab_free(tg_vocab *v) {
  if (!v) return;
  tg_free(v->names);
  memset(v, 0, sizeof *v);
}

void tg_vocabs_free(tg_vocab *v, int n) {
  if (!v) return;
  for (int i = 0; i < n; i++) tg_vocab_free(&v[i]);
  tg_free(v);
}

const tg_vocab *tg_vocab_find(const tg_vocab *v, int n, const char *name) {
  for (int i = 0; v && i < n; i++)
    if (strcmp(v[i].column, name) == 0) return &v[i];
  return NULL;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

tg_status tg_vocab_from_codes(const tg_bar_column *c, const uint8_t *used, tg_vocab *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->column, sizeof out->column, "%s", c->name);
  uint32_t m = 0;
  for (uint32_t k = 0; k < c->cats.n; k++) m += used[k] != 0;
  const char **names = tg_malloc(((size_t)m + 1) * sizeof *names);
  if (!names) return tg_error(TG_ERR_NOMEM, "vocabulary: out of memory for the %u names of column '%s'", m, c->name);
  m = 0;
  for (uint32_t k = 0; k < c->cats.n; k++) {
    if (!used[k]) continue;
    const char *name = tg_categories_name(&c->cats, k);
    if (strlen(name) >= TG_NAME_MAX) {
      tg_free(names);
      return tg_error(TG_ERR_INVALID, "vocabulary: column '%s' holds the name \"%.40s...\" of %zu bytes; a cat: "
                      "column's names must be under %d bytes", c->name, name, strlen(name), TG_NAME_MAX);
    }
    names[m++] = name;
  }
  qsort(names, m, sizeof *names, cmp_name);
  out->names = tg_calloc((size_t)m + 1, sizeof *out->names);
  if (!out->names) {
    tg_free(names);
    return tg_error(TG_ERR_NOMEM, "vocabulary: out of memory for the %u names of column '%s'", m, c->name);
  }
  for (uint32_t k = 0; k < m; k++) /* names holding a NUL byte may read alike: once each */
    if (out->n == 0 || strcmp(out->names[out->n - 1], names[k]) != 0) strcpy(out->names[out->n++], names[k]);
  tg_free(names);
  return TG_OK;
}

tg_status tg_vocab_code_map(const tg_bar_column *c, const tg_vocab *v, int32_t **map) {
  *map = tg_malloc(((size_t)c->cats.n + 1) * sizeof **map);
  if (!*map) return tg_error(TG_ERR_NOMEM, "vocabulary: out of memory for the %u names of column '%s'", c->cats.n, c->name);
  for (uint32_t k = 0; k < c->cats.n; k++) (*map)[k] = tg_vocab_id(v, tg_categories_name(&c->cats, k));
  return TG_OK;
}

tg_status tg_vocabs_copy(const tg_vocab *v, int n, tg_vocab **out) {
  *out = NULL;
  if (n <= 0) return TG_OK;
  tg_vocab *c = tg_calloc((size_t)n, sizeof *c);
  if (!c) return tg_error(TG_ERR_NOMEM, "vocabulary: out of memory");
  for (int i = 0; i < n; i++) {
    c[i] = v[i];
    c[i].names = tg_malloc(((size_t)v[i].n + 1) * sizeof *c[i].names);
    if (!c[i].names) {
      tg_vocabs_free(c, i);
      return tg_error(TG_ERR_NOMEM, "vocabulary: out of memory for %d names", v[i].n);
    }
    if (v[i].n) memcpy(c[i].names, v[i].names, (size_t)v[i].n * sizeof *c[i].names);
  }
  *out = c;
  return TG_OK;
}

/* The category column of feature column c (a cat: column), or NULL after setting the error. */
static const tg_bar_column *cat_column(const tg_bars *bars, const tg_features *fx, int c, const char *who) {
  const tg_bar_column *col = tg_bars_column(bars, fx->names[c]);
  if (!col || col->kind != TG_COLUMN_CATEGORY)
    tg_error(TG_ERR_INVALID, "%s: the bars have no category column '%s' (feature column %d)", who, fx->names[c], c);
  return col && col->kind == TG_COLUMN_CATEGORY ? col : NULL;
}

tg_status tg_vocab_fit(const tg_bars *bars, const tg_features *fx, const tg_layout *lay, const tg_splits *sp,
                       tg_vocab **out, int *n_out) {
  *out = NULL;
  *n_out = 0;
  if (!bars || !fx || !lay || !sp || fx->n != lay->n || bars->n != lay->n || sp->k != lay->k)
    return tg_error(TG_ERR_INVALID, "vocabulary: bars, features, layout and splits do not belong together");
  if (fx->n_cat == 0) return TG_OK;
  const tg_split *tr = &sp->s[TG_TRAIN];
  int64_t L = sp->window, rows = 0;
  rows = tg_split_rows_count(tr, lay->k, L);
  if (rows == 0) return tg_error(TG_ERR_INVALID, "vocabulary: the training split has no windows to fit on");
  tg_vocab *v = tg_calloc((size_t)fx->n_cat, sizeof *v);
  if (!v) return tg_error(TG_ERR_NOMEM, "vocabulary: out of memory");
  tg_status st = TG_OK;
  int n = 0;
  for (int c = 0; c < fx->f && st == TG_OK; c++) {
    if (fx->role[c] != TG_FEATURE_CATEGORY) continue;
    const tg_bar_column *col = cat_column(bars, fx, c, "vocabulary");
    if (!col) {
      st = TG_ERR_INVALID;
      break;
    }
    uint8_t *used = tg_calloc((size_t)col->cats.n + 1, 1);
    if (!used) {
      st = tg_error(TG_ERR_NOMEM, "vocabulary: out of memory for the names of column '%s'", col->name);
      break;
    }
    TG_FOR_SPLIT_ROWS(lay, tr, lay->k, L, r, { /* the rows the training windows cover, as tg_norm_fit's */
      uint32_t code = col->codes[r];
      if (code != TG_CATEGORY_MISSING) used[code] = 1;
    });
    st = tg_vocab_from_codes(col, used, &v[n]);
    tg_free(used);
    if (st == TG_OK) n++;
  }
  if (st != TG_OK) {
    tg_vocabs_free(v, n);
    return st;
  }
  *out = v;
  *n_out = n;
  return TG_OK;
}

tg_status tg_features_recode(tg_features *fx, const tg_bars *bars, const tg_vocab *v, int n_vocab) {
  if (!fx || !bars || fx->n != bars->n || (fx->n_cat > 0 && !fx->role))
    return tg_error(TG_ERR_INVALID, "recode: the features do not belong to these bars");
  int64_t f = fx->f;
  for (int c = 0; c < fx->f && fx->n_cat > 0; c++) /* every column and vocabulary first: on failure nothing changes */
    if (fx->role[c] == TG_FEATURE_CATEGORY) {
      if (!cat_column(bars, fx, c, "recode")) return TG_ERR_INVALID;
      if (!tg_vocab_find(v, n_vocab, fx->names[c]))
        return tg_error(TG_ERR_INVALID, "recode: no vocabulary of column '%s' among the %d given", fx->names[c],
                        n_vocab);
    }
  for (int c = 0; c < fx->f && fx->n_cat > 0; c++) {
    if (fx->role[c] != TG_FEATURE_CATEGORY) continue;
    const tg_bar_column *col = tg_bars_column(bars, fx->names[c]);
    const tg_vocab *vv = tg_vocab_find(v, n_vocab, fx->names[c]);
    int32_t *map;
    tg_status st = tg_vocab_code_map(col, vv, &map);
    if (st != TG_OK) return st;
    for (int64_t r = 0; r < fx->n; r++) {
      uint32_t code = col->codes[r];
      fx->x[r * f + c] = (float)(code == TG_CATEGORY_MISSING ? 0 : map[code]);
    }
    fx->card[c] = vv->n + 1;
    tg_free(map);
  }
  return TG_OK;
}
