/* The instrument layout: dense instrument indices and the position order that groups each instrument's bars. */
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "tickgrad/dataset.h"

void tg_layout_free(tg_layout *l) {
  tg_free(l->ids);
  tg_free(l->inst);
  tg_free(l->rows);
  tg_free(l->seg);
  memset(l, 0, sizeof *l);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

tg_status tg_layout_build(const tg_bars *bars, tg_layout *out) {
  memset(out, 0, sizeof *out);
  if (!bars || bars->n < 0) return tg_error(TG_ERR_INVALID, "layout: no bars");
  int64_t n = bars->n;
  for (int64_t i = 1; i < n; i++)
    if (bars->ts[i] < bars->ts[i - 1]) {
      char t0[TG_TIME_TEXT], t1[TG_TIME_TEXT];
      return tg_error(TG_ERR_INVALID, "layout: bars are not in time order (row %lld, %s, is earlier than row %lld, %s); "
                      "sort them first (tg_bars_sort)", (long long)i, tg_format_time(bars->ts[i], t1, sizeof t1),
                      (long long)(i - 1), tg_format_time(bars->ts[i - 1], t0, sizeof t0));
    }
  out->n = n;
  uint32_t *sorted = NULL; /* [n] instrument ids, sorted, then unique in place */
  int64_t k = 1;
  if (bars->instrument && n > 0) {
    sorted = tg_malloc((size_t)n * sizeof *sorted);
    if (!sorted) return tg_error(TG_ERR_NOMEM, "layout: out of memory for %lld ids", (long long)n);
    memcpy(sorted, bars->instrument, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_u32);
    k = 0;
    for (int64_t i = 0; i < n; i++)
      if (i == 0 || sorted[i] != sorted[i - 1]) sorted[k++] = sorted[i];
  }
  out->k = (int)k;
  out->ids = tg_calloc((size_t)k, sizeof *out->ids);
  out->inst = tg_calloc((size_t)n, sizeof *out->inst);
  out->rows = tg_malloc((size_t)n * sizeof *out->rows);
  out->seg = tg_calloc((size_t)k + 1, sizeof *out->seg);
  if (!out->ids || !out->inst || !out->rows || !out->seg) {
    tg_free(sorted);
    tg_layout_free(out);
    return tg_error(TG_ERR_NOMEM, "layout: out of memory for %lld rows", (long long)n);
  }
  if (sorted) memcpy(out->ids, sorted, (size_t)k * sizeof *sorted);
  tg_free(sorted);
  if (bars->instrument) {
    for (int64_t i = 0; i < n; i++) { /* binary search for the dense index */
      uint32_t id = bars->instrument[i];
      int64_t lo = 0, hi = k - 1;
      while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (out->ids[mid] < id) lo = mid + 1;
        else hi = mid;
      }
      out->inst[i] = (int32_t)lo;
    }
  }
  for (int64_t i = 0; i < n; i++) out->seg[out->inst[i] + 1]++;
  for (int64_t j = 0; j < k; j++) out->seg[j + 1] += out->seg[j];
  int64_t *fill = tg_malloc((size_t)k * sizeof *fill); /* [k] next free position per instrument */
  if (!fill) {
    tg_layout_free(out);
    return tg_error(TG_ERR_NOMEM, "layout: out of memory");
  }
  memcpy(fill, out->seg, (size_t)k * sizeof *fill);
  for (int64_t i = 0; i < n; i++) out->rows[fill[out->inst[i]]++] = i;
  tg_free(fill);
  return TG_OK;
}
