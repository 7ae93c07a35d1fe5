/* The sampler's order as a keyed permutation evaluated per element, and one window's batch entry: shared by the host and the CUDA stage kernel. */
#ifndef TG_BASE_SHUFFLE_H
#define TG_BASE_SHUFFLE_H

#include <stdint.h>
#include "base/philox.h"

/* Shuffle draws use streams from here on, apart from parameter initialisation (stream = parameter
 * index) and dropout (small streams). Epoch e draws from stream TG_SAMPLER_STREAM + e. */
#define TG_SAMPLER_STREAM (1ull << 62)
#define TG_SHUFFLE_ROUNDS 8 /* 4 already mixes large splits; small ones (a few windows) need about 8 to look uniform */

/* The smallest bits with 2^bits >= count (0 for count <= 1). */
static inline TG_HD int tg_shuffle_bits(int64_t count) {
  int bits = 0;
  while (bits < 63 && ((int64_t)1 << bits) < count) bits++;
  return bits;
}

/* One Feistel round on a bits-wide x: the high `a` bits and the low `bits - a` bits are the halves
 * (a = bits / 2 on even rounds, bits - bits / 2 on odd ones, so the widths trade places and the
 * network is balanced whenever bits is even). x -> (lo, hi ^ F(lo)), F the first Philox word of
 * counter (round << 56 | lo) in stream TG_SAMPLER_STREAM + epoch under key seed. A bijection of
 * [0, 2^bits) for any F. */
static inline TG_HD uint64_t tg_feistel_round(uint64_t seed, uint64_t epoch, int bits, int round, uint64_t x) {
  int a = (round & 1) ? bits - bits / 2 : bits / 2, b = bits - a;
  uint64_t lo = x & ((1ull << b) - 1), hi = x >> b;
  uint32_t w[4];
  tg_philox4x32(seed, TG_SAMPLER_STREAM + epoch, (uint64_t)round << 56 | lo, w);
  return lo << a | ((hi ^ w[0]) & ((1ull << a) - 1));
}

/* Element e (0 <= e < count) of epoch `epoch`'s order under seed: the Feistel network over
 * [0, 2^bits), re-applied until the value falls below count (cycle walking keeps it a permutation
 * of 0..count-1; fewer than 2 passes on average since 2^bits < 2 * count). */
static inline TG_HD int64_t tg_shuffle_index(uint64_t seed, uint64_t epoch, int64_t count, int64_t e) {
  int bits = tg_shuffle_bits(count);
  uint64_t x = (uint64_t)e;
  do {
    for (int r = 0; r < TG_SHUFFLE_ROUNDS; r++) x = tg_feistel_round(seed, epoch, bits, r, x);
  } while (x >= (uint64_t)count);
  return (int64_t)x;
}

/* Element e of a split (0..count-1, runs of valid starts in position order) -> its window start position: r is the
 * last run with prefix[r] <= e. prefix [k+1] counts the starts before run r, begin [k] is run r's first start
 * (an empty run has prefix[r] == prefix[r+1] and is never chosen). */
static inline TG_HD int64_t tg_split_start(const int64_t *prefix, const int64_t *begin, int k, int64_t e) {
  int lo = 0, hi = k - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (prefix[mid] <= e) lo = mid;
    else hi = mid - 1;
  }
  return begin[lo] + (e - prefix[lo]);
}

/* What a batch is made from: the dataset's index tables and the sampler's split, in the memory of
 * the device that evaluates tg_batch_entry. */
typedef struct tg_window_tables {
  const int64_t *rows;   /* [n] layout position -> row */
  const int32_t *inst;   /* [n] row -> dense instrument index */
  const int32_t *cls;    /* [n] row -> direction class */
  const int64_t *prefix; /* [k+1] the split's starts before run j (tg_sampler.prefix) */
  const int64_t *begin;  /* [k] the first start of run j (tg_sampler.begin) */
  int k;                 /* runs of valid starts (tg_sampler.runs) */
  int shuffle;
  int64_t count;         /* starts in the split */
  uint64_t seed;
  int64_t L;             /* window */
} tg_window_tables;

/* A batch's buffers (on the same device). */
typedef struct tg_batch_bufs {
  int64_t *idx;    /* [b, L] rows of each window */
  int64_t *rows;   /* [b] each window's last row */
  int32_t *labels; /* [b] its direction class */
  int64_t *inst;   /* [b] its instrument index */
} tg_batch_bufs;

/* Batch element i: the window of element cursor + i of epoch `epoch`'s order; the same values as
 * tg_sampler_next, tg_window_index and tg_stage_batch give it. */
static inline TG_HD void tg_batch_entry(const tg_window_tables *t, uint64_t epoch, uint64_t cursor, int64_t i,
                                        const tg_batch_bufs *o) {
  int64_t e = (int64_t)cursor + i;
  if (t->shuffle) e = tg_shuffle_index(t->seed, epoch, t->count, e);
  const int64_t *rows = t->rows + tg_split_start(t->prefix, t->begin, t->k, e); /* [L] */
  int64_t *idx = o->idx + i * t->L;                                              /* [L] */
  for (int64_t l = 0; l < t->L; l++) idx[l] = rows[l];
  int64_t last = rows[t->L - 1];
  o->rows[i] = last;
  o->labels[i] = t->cls[last];
  o->inst[i] = t->inst[last];
}

#endif
