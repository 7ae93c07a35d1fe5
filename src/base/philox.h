/* Philox4x32-10 as one inline function, compiled for the host and (under nvcc) for the device. */
#ifndef TG_PHILOX_H
#define TG_PHILOX_H

#include <stdint.h>

#ifdef __CUDACC__
#define TG_HD __host__ __device__
#else
#define TG_HD
#endif

/* Four 32-bit words for the counter (stream, offset) under key seed. */
static inline TG_HD void tg_philox4x32(uint64_t seed, uint64_t stream, uint64_t offset, uint32_t out[4]) {
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

/* Uniform in [0, 1) from one word (its top 24 bits), exactly as tg_u32_to_unit. */
static inline TG_HD float tg_unit_of_u32(uint32_t x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

#endif
