/* bfloat16 conversions as branch-free bit arithmetic on uint32, in blocks that gcc -O2 vectorises. */
#include <string.h>
#include "base/bf16.h"

/* Elements per block: a constant trip count lets gcc's -O2 (very cheap) cost model vectorise the block loops,
 * and going through local copies makes dst == src safe without a runtime overlap check. */
#define BF16_BLOCK 16

uint16_t tg_bf16_from_f32(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return (uint16_t)tg_bf16_round_bits(u);
}

float tg_f32_from_bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

void tg_bf16_pack(uint16_t *dst, const float *src, size_t n) {
  size_t i = 0;
  for (; i + BF16_BLOCK <= n; i += BF16_BLOCK) {
    uint32_t u[BF16_BLOCK];  /* [BF16_BLOCK] float bits */
    uint16_t h[BF16_BLOCK];  /* [BF16_BLOCK] bf16 bits */
    memcpy(u, src + i, sizeof u);
    for (int k = 0; k < BF16_BLOCK; k++) h[k] = (uint16_t)tg_bf16_round_bits(u[k]);
    memcpy(dst + i, h, sizeof h);
  }
  for (; i < n; i++) dst[i] = tg_bf16_from_f32(src[i]);
}

void tg_bf16_unpack(float *dst, const uint16_t *src, size_t n) {
  size_t i = 0;
  for (; i + BF16_BLOCK <= n; i += BF16_BLOCK) {
    uint16_t h[BF16_BLOCK];  /* [BF16_BLOCK] bf16 bits */
    uint32_t u[BF16_BLOCK];  /* [BF16_BLOCK] float bits */
    memcpy(h, src + i, sizeof h);
    for (int k = 0; k < BF16_BLOCK; k++) u[k] = (uint32_t)h[k] << 16;
    memcpy(dst + i, u, sizeof u);
  }
  for (; i < n; i++) dst[i] = tg_f32_from_bf16(src[i]);
}

void tg_f32_round_bf16(float *dst, const float *src, size_t n) {
  size_t i = 0;
  for (; i + BF16_BLOCK <= n; i += BF16_BLOCK) {
    uint32_t u[BF16_BLOCK];  /* [BF16_BLOCK] float bits, rounded in place */
    memcpy(u, src + i, sizeof u);
    for (int k = 0; k < BF16_BLOCK; k++) u[k] = tg_bf16_round_bits(u[k]) << 16;
    memcpy(dst + i, u, sizeof u);
  }
  for (; i < n; i++) dst[i] = tg_f32_from_bf16(tg_bf16_from_f32(src[i]));
}
