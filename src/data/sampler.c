/* Batches of window starts from one split: in order, or a keyed per-epoch permutation evaluated per element, resumable from (seed, epoch, cursor). */
#include <string.h>
#include "base/alloc.h"
#include "base/shuffle.h"
#include "data/sampler_take.h"
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
  s->seed = seed;
  s->shuffle = shuffle != 0;
  s->count = x->count;
  s->k = sp->k;
  s->prefix = tg_malloc(((size_t)sp->k + 1) * sizeof *s->prefix);
  s->begin = tg_malloc((size_t)sp->k * sizeof *s->begin);
  if (!s->prefix || !s->begin) {
    tg_sampler_free(s);
    return tg_error(TG_ERR_NOMEM, "sampler: out of memory for the offsets of %d instruments", sp->k);
  }
  s->prefix[0] = 0;
  for (int j = 0; j < sp->k; j++) {
    s->begin[j] = x->begin[j];
    s->prefix[j + 1] = s->prefix[j] + (x->end[j] - x->begin[j]);
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
    starts[i] = tg_split_start(s->prefix, s->begin, s->k, e);
  }
  return TG_OK;
}
