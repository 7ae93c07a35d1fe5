/* Seeded synthetic bars for the dataset and staging tests. */
#ifndef TG_TEST_BARS_H
#define TG_TEST_BARS_H

#include <stdint.h>
#include "tickgrad/data.h"

/* n bars of k instruments interleaved (k per 5-minute step, from 2022-01-03) on random walks drawn
 * from stream `stream` of seed (draw_stride draws per bar, at least 3); instrument j gets id
 * j * id_step. */
void tg_test_bars(tg_bars *b, int64_t n, int k, uint64_t seed, uint64_t stream, int draw_stride, uint32_t id_step);

#endif
