/* TEMP stand-in until the bf16 branch merges. */
#include <string.h>
#include "base/bf16.h"
static uint32_t rne(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u | 0x00400000u) & 0xffff0000u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
}
void tg_bf16_pack(uint16_t *dst, const float *src, size_t n) {
  for (size_t i = 0; i < n; i++) { uint32_t u; memcpy(&u, src + i, 4); dst[i] = (uint16_t)(rne(u) >> 16); }
}
void tg_f32_round_bf16(float *dst, const float *src, size_t n) {
  for (size_t i = 0; i < n; i++) { uint32_t u; memcpy(&u, src + i, 4); u = rne(u); memcpy(dst + i, &u, 4); }
}
