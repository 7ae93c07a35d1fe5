/* Philox4x32-10 counter-based generator: the same (seed, stream, offset) gives the same bits. */
#include <math.h>
#include "base/philox.h"
#include "tickgrad/rng.h"

void tg_philox(uint64_t seed, uint64_t stream, uint64_t offset, uint32_t out[4]) {
  tg_philox4x32(seed, stream, offset, out);
}

float tg_u32_to_unit(uint32_t x) { return tg_unit_of_u32(x); }

float tg_rng_uniform(uint64_t seed, uint64_t stream, uint64_t i) {
  uint32_t w[4];
  tg_philox(seed, stream, i >> 2, w);
  return tg_u32_to_unit(w[i & 3]);
}

float tg_rng_normal(uint64_t seed, uint64_t stream, uint64_t i) {
  uint32_t w[4];
  tg_philox(seed, stream, i, w);
  double u1 = ((double)(w[0] >> 8) + 1.0) / 16777217.0; /* (0, 1] */
  double u2 = (double)(w[1] >> 8) / 16777216.0;
  return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}
