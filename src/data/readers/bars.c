/* The columnar bar series: growth, append and a stable sort by time, its extra columns kept in step. */
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/hash.h"
#include "data/readers/bar_columns.h"
#include "tickgrad/data.h"

void tg_bars_init(tg_bars *b) { memset(b, 0, sizeof *b); }

void tg_bars_free(tg_bars *b) {
  tg_free(b->ts);
  tg_free(b->open);
  tg_free(b->high);
  tg_free(b->low);
  tg_free(b->close);
  tg_free(b->volume);
  tg_free(b->instrument);
  tg_bar_columns_truncate(b, 0);
  tg_bars_init(b);
}

static int grow(void **col, int64_t n, int64_t cap, size_t elem) {
  void *p = tg_malloc((size_t)cap * elem);
  if (!p) return 0;
  if (n) memcpy(p, *col, (size_t)n * elem);
  tg_free(*col);
  *col = p;
  return 1;
}

tg_status tg_bars_reserve(tg_bars *b, int64_t cap, int with_instrument) {
  if (cap < 0) return tg_error(TG_ERR_INVALID, "bars: negative capacity %lld", (long long)cap);
  if (with_instrument && !b->instrument) {
    uint32_t *ids = tg_calloc((size_t)(b->cap > cap ? b->cap : cap) + 1, sizeof *ids);
    if (!ids) return tg_error(TG_ERR_NOMEM, "bars: out of memory for %lld instrument ids", (long long)cap);
    b->instrument = ids;
  }
  if (cap <= b->cap) return TG_OK;
  int ok = grow((void **)&b->ts, b->n, cap, sizeof(int64_t)) && grow((void **)&b->open, b->n, cap, sizeof(double)) &&
           grow((void **)&b->high, b->n, cap, sizeof(double)) && grow((void **)&b->low, b->n, cap, sizeof(double)) &&
           grow((void **)&b->close, b->n, cap, sizeof(double)) &&
           grow((void **)&b->volume, b->n, cap, sizeof(double)) &&
           (!b->instrument || grow((void **)&b->instrument, b->n, cap, sizeof(uint32_t))) &&
           tg_bar_columns_grow(b, b->n, cap);
  if (!ok) return tg_error(TG_ERR_NOMEM, "bars: out of memory for %lld bars", (long long)cap);
  b->cap = cap;
  return TG_OK;
}

tg_status tg_bars_push(tg_bars *b, int64_t ts, double open, double high, double low, double close,
                       double volume, uint32_t instrument) {
  if (b->n == b->cap) {
    tg_status st = tg_bars_reserve(b, b->cap ? b->cap * 2 : 1024, 0);
    if (st != TG_OK) return st;
  }
  int64_t i = b->n++;
  b->ts[i] = ts;
  b->open[i] = open;
  b->high[i] = high;
  b->low[i] = low;
  b->close[i] = close;
  b->volume[i] = volume;
  if (b->instrument) b->instrument[i] = instrument;
  for (int k = 0; k < b->n_cols; k++) tg_bar_column_set_missing(&b->cols[k], i, i + 1);
  return TG_OK;
}

tg_status tg_bars_append(tg_bars *dst, const tg_bars *src) {
  int keep = dst->n_cols;
  tg_status st = tg_bar_columns_match(dst, src);
  if (st == TG_OK) st = tg_bars_reserve(dst, dst->n + src->n, src->instrument != NULL);
  if (st == TG_OK) st = tg_bar_columns_copy(dst, src);
  if (st != TG_OK) {
    tg_bar_columns_truncate(dst, keep);
    return st;
  }
  size_t n = (size_t)src->n;
  memcpy(dst->ts + dst->n, src->ts, n * sizeof(int64_t));
  memcpy(dst->open + dst->n, src->open, n * sizeof(double));
  memcpy(dst->high + dst->n, src->high, n * sizeof(double));
  memcpy(dst->low + dst->n, src->low, n * sizeof(double));
  memcpy(dst->close + dst->n, src->close, n * sizeof(double));
  memcpy(dst->volume + dst->n, src->volume, n * sizeof(double));
  if (dst->instrument) {
    if (src->instrument) memcpy(dst->instrument + dst->n, src->instrument, n * sizeof(uint32_t));
    else memset(dst->instrument + dst->n, 0, n * sizeof(uint32_t));
  }
  dst->n += src->n;
  return TG_OK;
}

/* Sort keys: row index ordered by (ts, instrument, original position). */
typedef struct sort_key {
  int64_t ts;
  uint32_t instrument;
  int64_t row;
} sort_key;

static int key_cmp(const void *pa, const void *pb) {
  const sort_key *a = pa, *b = pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  if (a->instrument != b->instrument) return a->instrument < b->instrument ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

static int permute(void *col, const sort_key *keys, int64_t n, size_t elem) {
  char *tmp = tg_malloc((size_t)n * elem + 1), *c = col;
  if (!tmp) return 0;
  for (int64_t i = 0; i < n; i++) memcpy(tmp + (size_t)i * elem, c + (size_t)keys[i].row * elem, elem);
  memcpy(c, tmp, (size_t)n * elem);
  tg_free(tmp);
  return 1;
}

/* 1 when the bars are already in (ts, instrument) order: one pass, nothing allocated. */
static int in_order(const tg_bars *b) {
  int64_t out_of_order = 0;
  if (b->instrument)
    for (int64_t i = 1; i < b->n; i++)
      out_of_order += b->ts[i] < b->ts[i - 1] || (b->ts[i] == b->ts[i - 1] && b->instrument[i] < b->instrument[i - 1]);
  else
    for (int64_t i = 1; i < b->n; i++) out_of_order += b->ts[i] < b->ts[i - 1];
  return out_of_order == 0;
}

tg_status tg_bars_sort(tg_bars *b, int64_t *moved) {
  if (moved) *moved = 0;
  if (b->n < 2 || in_order(b)) return TG_OK;
  sort_key *keys = tg_malloc((size_t)b->n * sizeof *keys);
  if (!keys) return tg_error(TG_ERR_NOMEM, "bars: out of memory sorting %lld bars", (long long)b->n);
  for (int64_t i = 0; i < b->n; i++) keys[i] = (sort_key){b->ts[i], b->instrument ? b->instrument[i] : 0, i};
  qsort(keys, (size_t)b->n, sizeof *keys, key_cmp);
  int64_t count = 0;
  for (int64_t i = 0; i < b->n; i++) count += keys[i].row != i;
  int ok = permute(b->ts, keys, b->n, sizeof(int64_t)) && permute(b->open, keys, b->n, sizeof(double)) &&
           permute(b->high, keys, b->n, sizeof(double)) && permute(b->low, keys, b->n, sizeof(double)) &&
           permute(b->close, keys, b->n, sizeof(double)) && permute(b->volume, keys, b->n, sizeof(double)) &&
           (!b->instrument || permute(b->instrument, keys, b->n, sizeof(uint32_t)));
  for (int k = 0; k < b->n_cols && ok; k++) {
    tg_bar_column *c = &b->cols[k];
    ok = c->kind == TG_COLUMN_NUMERIC ? permute(c->values, keys, b->n, sizeof(double))
                                      : permute(c->codes, keys, b->n, sizeof(uint32_t));
  }
  tg_free(keys);
  if (!ok) return tg_error(TG_ERR_NOMEM, "bars: out of memory sorting %lld bars", (long long)b->n);
  if (moved) *moved = count;
  return TG_OK;
}

uint64_t tg_bars_hash(const tg_bars *b) {
  uint64_t h = TG_FNV64_BASIS;
  size_t n = (size_t)b->n;
  h = tg_fnv1a64_more(h, &b->n, sizeof b->n);
  h = tg_fnv1a64_more(h, b->ts, n * sizeof *b->ts);
  const double *f[5] = {b->open, b->high, b->low, b->close, b->volume};
  for (int k = 0; k < 5; k++) h = tg_fnv1a64_more(h, f[k], n * sizeof(double));
  if (b->instrument) h = tg_fnv1a64_more(h, b->instrument, n * sizeof *b->instrument);
  for (int k = 0; k < b->n_cols; k++) {
    const tg_bar_column *c = &b->cols[k];
    h = tg_fnv1a64_more(h, c->name, strlen(c->name) + 1);
    h = tg_fnv1a64_more(h, &c->kind, sizeof c->kind);
    if (c->values) h = tg_fnv1a64_more(h, c->values, n * sizeof *c->values);
    if (c->codes) h = tg_fnv1a64_more(h, c->codes, n * sizeof *c->codes);
    if (c->codes && c->cats.n) h = tg_fnv1a64_more(h, c->cats.text, (size_t)c->cats.off[c->cats.n]);
  }
  return h;
}
