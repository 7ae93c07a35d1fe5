/* Series diagnostics for `tickgrad inspect`: range, cadence, gaps, duplicates, bad prices, extra columns. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/intmath.h"
#include "tickgrad/data.h"

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Slot of id in the sorted distinct ids [n]. */
static int64_t slot_of(const uint32_t *ids, int64_t n, uint32_t id) {
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void count_prices(const tg_bars *b, tg_bars_report *r) {
  for (int64_t i = 0; i < b->n; i++) {
    double p[4] = {b->open[i], b->high[i], b->low[i], b->close[i]};
    int nan = 0;
    for (int k = 0; k < 4; k++) {
      nan |= isnan(p[k]);
      r->zero_prices += p[k] == 0.0;
      r->negative_prices += p[k] < 0.0;
    }
    r->nan_prices += nan;
    if (!nan && (p[2] > fmin(p[0], p[3]) || p[1] < fmax(p[0], p[3]) || p[2] > p[1])) r->ohlc_violations++;
    if (isnan(b->volume[i])) r->nan_volume++;
    else r->has_volume = 1;
    r->negative_volume += b->volume[i] < 0.0;
  }
}

/* Keeps the TG_INSPECT_MAX_GAPS longest gaps, longest first. */
static void note_gap(tg_bars_report *r, int64_t at, int64_t len) {
  r->gaps++;
  int k = (int)(r->gaps < TG_INSPECT_MAX_GAPS ? r->gaps : TG_INSPECT_MAX_GAPS) - 1;
  if (r->gaps > TG_INSPECT_MAX_GAPS && len <= r->gap_ns[k]) return;
  while (k > 0 && r->gap_ns[k - 1] < len) {
    r->gap_ns[k] = r->gap_ns[k - 1];
    r->gap_at[k] = r->gap_at[k - 1];
    k--;
  }
  r->gap_ns[k] = len;
  r->gap_at[k] = at;
}

tg_status tg_bars_inspect(const tg_bars *b, tg_bars_report *r) {
  memset(r, 0, sizeof *r);
  r->rows = b->n;
  r->reordered = b->reordered;
  if (b->n == 0) return TG_OK;
  r->first_ts = b->ts[0];
  r->last_ts = b->ts[b->n - 1];
  count_prices(b, r);
  /* distinct instruments and, per instrument, the previous timestamp */
  uint32_t *ids = tg_malloc((size_t)b->n * sizeof *ids);
  int64_t *last = tg_malloc((size_t)b->n * sizeof *last);
  int64_t *deltas = tg_malloc((size_t)b->n * sizeof *deltas);
  if (!ids || !last || !deltas) {
    tg_free(ids);
    tg_free(last);
    tg_free(deltas);
    return tg_error(TG_ERR_NOMEM, "inspect: out of memory for %lld bars", (long long)b->n);
  }
  int64_t n_ids = 1;
  if (b->instrument) {
    memcpy(ids, b->instrument, (size_t)b->n * sizeof *ids);
    qsort(ids, (size_t)b->n, sizeof *ids, cmp_u32);
    n_ids = 0;
    for (int64_t i = 0; i < b->n; i++)
      if (i == 0 || ids[i] != ids[n_ids - 1]) ids[n_ids++] = ids[i];
  } else {
    ids[0] = 0;
  }
  r->instruments = n_ids;
  for (int64_t k = 0; k < n_ids; k++) last[k] = INT64_MIN;
  int64_t n_deltas = 0;
  for (int64_t i = 0; i < b->n; i++) {
    int64_t k = b->instrument ? slot_of(ids, n_ids, b->instrument[i]) : 0;
    if (last[k] != INT64_MIN) {
      if (b->ts[i] == last[k]) r->duplicates++;
      else deltas[n_deltas++] = b->ts[i] - last[k];
    }
    last[k] = b->ts[i];
  }
  if (n_deltas) {
    int64_t *sorted = last; /* reuse: [n_deltas] */
    memcpy(sorted, deltas, (size_t)n_deltas * sizeof *sorted);
    qsort(sorted, (size_t)n_deltas, sizeof *sorted, tg_cmp_i64);
    r->median_interval_ns = sorted[n_deltas / 2];
    /* second pass for gaps, now that the cadence is known */
    for (int64_t k = 0; k < n_ids; k++) last[k] = INT64_MIN;
    for (int64_t i = 0; i < b->n; i++) {
      int64_t k = b->instrument ? slot_of(ids, n_ids, b->instrument[i]) : 0;
      if (last[k] != INT64_MIN && b->ts[i] - last[k] > 3 * r->median_interval_ns)
        note_gap(r, last[k], b->ts[i] - last[k]);
      last[k] = b->ts[i];
    }
  }
  tg_free(ids);
  tg_free(last);
  tg_free(deltas);
  return TG_OK;
}

tg_status tg_bars_inspect_columns(const tg_bars *b, tg_column_report *out) {
  for (int k = 0; k < b->n_cols; k++) {
    const tg_bar_column *c = &b->cols[k];
    tg_column_report *r = &out[k];
    memset(r, 0, sizeof *r);
    r->name = c->name;
    r->kind = c->kind;
    if (c->kind == TG_COLUMN_NUMERIC) {
      for (int64_t i = 0; i < b->n; i++) r->missing += isnan(c->values[i]);
      continue;
    }
    unsigned char *seen = tg_calloc((size_t)c->cats.n + 1, 1); /* names some bar holds */
    if (!seen) return tg_error(TG_ERR_NOMEM, "inspect: out of memory for the %u names of column '%s'", c->cats.n, c->name);
    for (int64_t i = 0; i < b->n; i++) {
      uint32_t code = c->codes[i];
      if (code == TG_CATEGORY_MISSING) r->missing++;
      else if (!seen[code]) seen[code] = 1, r->distinct++;
    }
    tg_free(seen);
  }
  return TG_OK;
}
