/* Batches of window starts from one split: in order, or a per-epoch Fisher-Yates shuffle on Philox draws, resumable from (seed, epoch, cursor). */
#include <string.h>
#include "backend/backend.h"
#include "tickgrad/dataset.h"
#include "tickgrad/rng.h"

/* Shuffle draws use streams from here on, apart from parameter initialisation (stream = parameter
 * index) and dropout (small streams). */
#define SAMPLER_STREAM (1ull << 62)

void tg_sampler_free(tg_sampler *s) {
  tg_free(s->prefix);
  tg_free(s->begin);
  tg_free(s->perm);
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
  s->perm_epoch = UINT64_MAX;
  s->prefix = tg_malloc(((size_t)sp->k + 1) * sizeof *s->prefix);
  s->begin = tg_malloc((size_t)sp->k * sizeof *s->begin);
  s->perm = s->shuffle ? tg_malloc((size_t)s->count * sizeof *s->perm) : NULL;
  if (!s->prefix || !s->begin || (s->shuffle && !s->perm)) {
    tg_sampler_free(s);
    return tg_error(TG_ERR_NOMEM, "sampler: out of memory for %lld starts", (long long)x->count);
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

/* perm = a uniform shuffle of 0..count-1 for this epoch: step t swaps element count-1-t with one
 * drawn from 64 bits of counter t/2 of stream SAMPLER_STREAM + epoch. */
static void shuffle_epoch(tg_sampler *s) {
  int64_t n = s->count;
  for (int64_t i = 0; i < n; i++) s->perm[i] = i;
  uint32_t w[4];
  for (int64_t t = 0; t + 1 < n; t++) {
    if ((t & 1) == 0) tg_philox(s->seed, SAMPLER_STREAM + s->epoch, (uint64_t)t >> 1, w);
    uint64_t u = (uint64_t)w[(t & 1) * 2] | (uint64_t)w[(t & 1) * 2 + 1] << 32;
    int64_t i = n - 1 - t, j = (int64_t)(u % (uint64_t)(i + 1));
    int64_t tmp = s->perm[i];
    s->perm[i] = s->perm[j];
    s->perm[j] = tmp;
  }
  s->perm_epoch = s->epoch;
}

/* Element e of the split (0..count-1) -> window start position. */
static int64_t start_of(const tg_sampler *s, int64_t e) {
  int lo = 0, hi = s->k - 1; /* last j with prefix[j] <= e */
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (s->prefix[mid] <= e) lo = mid;
    else hi = mid - 1;
  }
  return s->begin[lo] + (e - s->prefix[lo]);
}

tg_status tg_sampler_next(tg_sampler *s, int64_t *starts, int64_t b, int64_t *got) {
  if (!s || !s->prefix || b < 0 || (b > 0 && !starts) || !got)
    return tg_error(TG_ERR_INVALID, "sampler: bad arguments (batch %lld)", (long long)b);
  if (s->cursor >= (uint64_t)s->count) {
    s->epoch++;
    s->cursor = 0;
  }
  if (s->shuffle && s->perm_epoch != s->epoch) shuffle_epoch(s);
  int64_t left = s->count - (int64_t)s->cursor, take = b < left ? b : left;
  for (int64_t i = 0; i < take; i++) {
    int64_t e = (int64_t)s->cursor + i;
    starts[i] = start_of(s, s->shuffle ? s->perm[e] : e);
  }
  s->cursor += (uint64_t)take;
  *got = take;
  return TG_OK;
}
