/* Philox4x32-10 counter-based generator: the same (seed, stream, offset) gives the same bits. */
#include <math.h>
#include "tickgrad/rng.h"

void tg_philox(uint64_t seed, uint64_t stream, uint64_t offset, uint32_t out[4]) {
  uint32_t c0 = (uint32_t)offset, c1 = (uint32_t)(offset >> 32);
  uint32_t c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = (uint32_t)p0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

float tg_u32_to_unit(uint32_t x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

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
