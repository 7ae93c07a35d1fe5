/* Batches of window starts from one split: in order, or a keyed per-epoch permutation evaluated per element, resumable from (seed, epoch, cursor). */
#include <stdint.h>
#include <string.h>
#include "base/alloc.h"
#include "base/shuffle.h"
#include "data/dataset/sampler_take.h"
#include "tickgrad/dataset.h"

void tg_sampler_free(tg_sampler *s) {
  tg_free(s->prefix);
  tg_free(s->begin);
  memset(s, 0, sizeof *s);
}

tg_status tg_sampler_init(tg_sampler *s, const tg_splits *sp, int split, uint64_t seed, int shuffle) {
  memset(s, 0, sizeof *s);
  if (!sp || split < 0 || split >= TG_SPLIT_COUNT || !sp->s[split].begin)
    return tg_error(TG_ERR_INVALID, "sampler: no split %d", split);
  const tg_split *x = &sp->s[split];
  if (x->count <= 0) return tg_error(TG_ERR_INVALID, "sampler: split %d has no windows", split);
  int64_t runs = tg_split_n_runs(x, sp->k);
  if (runs > INT32_MAX)
    return tg_error(TG_ERR_INVALID, "sampler: split %d has %lld runs of window starts (at most %d)", split,
                    (long long)runs, INT32_MAX);
  s->seed = seed;
  s->shuffle = shuffle != 0;
  s->count = x->count;
  s->runs = (int)runs;
  s->prefix = tg_malloc(((size_t)runs + 1) * sizeof *s->prefix);
  s->begin = tg_malloc(((size_t)runs + 1) * sizeof *s->begin);
  if (!s->prefix || !s->begin) {
    tg_sampler_free(s);
    return tg_error(TG_ERR_NOMEM, "sampler: out of memory for the offsets of %lld runs of window starts",
                    (long long)runs);
  }
  s->prefix[0] = 0;
  for (int64_t r = 0; r < runs; r++) { /* element e lies in the last run with prefix <= e, so holes are skipped */
    int64_t b, e;
    tg_split_run(x, r, &b, &e);
    s->begin[r] = b;
    s->prefix[r + 1] = s->prefix[r] + (e > b ? e - b : 0);
  }
  if (s->prefix[runs] != s->count) {
    int64_t sum = s->prefix[runs];
    tg_sampler_free(s);
    return tg_error(TG_ERR_INVALID, "sampler: split %d counts %lld windows but its runs hold %lld", split,
                    (long long)x->count, (long long)sum);
  }
  return TG_OK;
}

tg_status tg_sampler_seek(tg_sampler *s, uint64_t epoch, uint64_t cursor) {
  if (!s || !s->prefix) return tg_error(TG_ERR_INVALID, "sampler: not initialised");
  if (cursor > (uint64_t)s->count)
    return tg_error(TG_ERR_INVALID, "sampler: cursor %llu is past the %lld starts of an epoch",
                    (unsigned long long)cursor, (long long)s->count);
  s->epoch = epoch;
  s->cursor = cursor;
  return TG_OK;
}

tg_status tg_sampler_take(tg_sampler *s, int64_t b, uint64_t *epoch, uint64_t *first, int64_t *got) {
  if (!s || !s->prefix || b < 0 || !epoch || !first || !got)
    return tg_error(TG_ERR_INVALID, "sampler: bad arguments (batch %lld)", (long long)b);
  if (s->cursor >= (uint64_t)s->count) {
    s->epoch++;
    s->cursor = 0;
  }
  int64_t left = s->count - (int64_t)s->cursor;
  *epoch = s->epoch;
  *first = s->cursor;
  *got = b < left ? b : left;
  s->cursor += (uint64_t)*got;
  return TG_OK;
}

tg_status tg_sampler_next(tg_sampler *s, int64_t *starts, int64_t b, int64_t *got) {
  uint64_t epoch = 0, first = 0;
  if (b > 0 && !starts) return tg_error(TG_ERR_INVALID, "sampler: no buffer for %lld starts", (long long)b);
  tg_status st = tg_sampler_take(s, b, &epoch, &first, got);
  if (st != TG_OK) return st;
  for (int64_t i = 0; i < *got; i++) {
    int64_t e = (int64_t)first + i;
    if (s->shuffle) e = tg_shuffle_index(s->seed, epoch, s->count, e);
    starts[i] = tg_split_start(s->prefix, s->begin, s->runs, e);
  }
  return TG_OK;
}
