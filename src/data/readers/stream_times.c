/* Duplicate times in streamed bars: each instrument's last time, and the duplicates rule as a file read applies it. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "tickgrad/data.h"

tg_status tg_stream_times_check(tg_stream_times *t, uint32_t instrument, int64_t ts, const tg_read_opts *opts,
                                const char *src, int64_t line, int *skip) {
  *skip = 0;
  int k = 0;
  while (k < t->n && t->ids[k] != instrument) k++;
  if (k < t->n && t->last[k] == ts && !(opts && opts->no_checks)) {
    tg_dup_policy p = opts ? opts->duplicates : TG_DUPS_ERROR;
    char tx[48];
    tg_format_time(ts, tx, sizeof tx);
    if (p == TG_DUPS_FIRST) return *skip = 1, TG_OK;
    if (p == TG_DUPS_LAST)
      return tg_error(TG_ERR_INVALID, "%s: line %lld (%s, instrument %u) repeats an earlier line's time; a stream cannot "
                      "keep the last of them (the first one's forecast is written): give --duplicates first", src,
                      (long long)line, tx, instrument);
    return tg_error(TG_ERR_FORMAT, "%s: line %lld (%s, instrument %u) repeats an earlier line's time; duplicate times "
                    "are an error (give --duplicates first to keep the first)", src, (long long)line, tx, instrument);
  }
  if (k == t->n) {
    if (t->n == t->cap) {
      int cap = t->cap ? t->cap * 2 : 8;
      uint32_t *ids = tg_malloc((size_t)cap * sizeof *ids);
      int64_t *last = tg_malloc((size_t)cap * sizeof *last);
      if (!ids || !last) {
        tg_free(ids);
        tg_free(last);
        return tg_error(TG_ERR_NOMEM, "%s: out of memory for %d instruments", src, cap);
      }
      if (t->n) memcpy(ids, t->ids, (size_t)t->n * sizeof *ids), memcpy(last, t->last, (size_t)t->n * sizeof *last);
      tg_free(t->ids);
      tg_free(t->last);
      t->ids = ids, t->last = last, t->cap = cap;
    }
    t->ids[t->n++] = instrument;
  }
  t->last[k] = ts;
  return TG_OK;
}

void tg_stream_times_free(tg_stream_times *t) {
  tg_free(t->ids);
  tg_free(t->last);
  memset(t, 0, sizeof *t);
}
