/* The rows a split's windows cover, each once: the union over its runs of [run_begin, run_end + L - 1), for the statistics fitted on the training windows. */
#ifndef TG_DATA_SPLIT_ROWS_H
#define TG_DATA_SPLIT_ROWS_H

#include "tickgrad/dataset.h"

/* Runs body with r set to every row the windows of split x (k instruments, windows of L bars) cover, in position
 * order, each row once although the windows of neighbouring runs overlap. Rows only windows in a hole would read
 * are left out. */
#define TG_FOR_SPLIT_ROWS(lay, x, k, L, r, body)                                   \
  do {                                                                             \
    int64_t to_ = 0; /* positions before to_ were visited */                       \
    for (int64_t q_ = 0; q_ < tg_split_n_runs((x), (k)); q_++) {                   \
      int64_t b_, e_;                                                              \
      tg_split_run((x), q_, &b_, &e_);                                             \
      if (e_ <= b_) continue;                                                      \
      for (int64_t p_ = b_ > to_ ? b_ : to_; p_ < e_ + (L) - 1; p_++) {            \
        int64_t r = (lay)->rows[p_];                                               \
        body                                                                       \
      }                                                                            \
      to_ = e_ + (L) - 1;                                                          \
    }                                                                              \
  } while (0)

/* How many rows TG_FOR_SPLIT_ROWS visits. */
static inline int64_t tg_split_rows_count(const tg_split *x, int k, int64_t L) {
  int64_t n = 0, to = 0;
  for (int64_t q = 0; q < tg_split_n_runs(x, k); q++) {
    int64_t b, e;
    tg_split_run(x, q, &b, &e);
    if (e <= b) continue;
    n += e + L - 1 - (b > to ? b : to);
    to = e + L - 1;
  }
  return n;
}

#endif
