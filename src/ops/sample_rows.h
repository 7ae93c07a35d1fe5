/* The sample_rows draw as one inline function shared by the CPU and CUDA kernels (same bits on both). */
#ifndef TG_SAMPLE_ROWS_H
#define TG_SAMPLE_ROWS_H

#include "base/philox.h"

/* Draw e of a run: 64 bits (two words of Philox counter e/2 under key (offset << 20) | stream)
 * reduced modulo rows (bias below rows / 2^64). */
static inline TG_HD int64_t tg_sample_row(uint64_t seed, uint64_t stream, uint64_t offset, int64_t e, int64_t rows) {
  uint32_t w[4];
  tg_philox4x32(seed, (offset << 20) | stream, (uint64_t)e >> 1, w);
  int h = (int)(e & 1) * 2;
  uint64_t u = (uint64_t)w[h] | (uint64_t)w[h + 1] << 32;
  return (int64_t)(u % (uint64_t)rows);
}

#endif
