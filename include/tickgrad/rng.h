/* Counter-based random numbers (Philox4x32-10): a value depends only on (seed, stream, offset). */
#ifndef TICKGRAD_RNG_H
#define TICKGRAD_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Four independent 32-bit words for the counter (stream, offset) under key seed. */
void tg_philox(uint64_t seed, uint64_t stream, uint64_t offset, uint32_t out[4]);
/* Uniform in [0, 1) from one 32-bit word (24 bits of mantissa). */
float tg_u32_to_unit(uint32_t x);
/* The i-th uniform [0,1) of a stream: word i%4 of counter i/4. */
float tg_rng_uniform(uint64_t seed, uint64_t stream, uint64_t i);
/* The i-th standard normal of a stream (Box-Muller on the words of counter i). */
float tg_rng_normal(uint64_t seed, uint64_t stream, uint64_t i);

#ifdef __cplusplus
}
#endif
#endif
