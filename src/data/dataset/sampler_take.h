/* The sampler's batch reservation that staging builds batches from (sampler.c). */
#ifndef TG_DATA_SAMPLER_TAKE_H
#define TG_DATA_SAMPLER_TAKE_H

#include <stdint.h>
#include "tickgrad/dataset.h"

/* Takes up to b elements of s's order as tg_sampler_next does (a call at the end of an epoch first
 * moves to the next), without evaluating them: *epoch and *first receive the epoch and the position
 * in it of the first of the *got elements taken. */
tg_status tg_sampler_take(tg_sampler *s, int64_t b, uint64_t *epoch, uint64_t *first, int64_t *got);

#endif
