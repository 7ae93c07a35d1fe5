/* Emulated CUDA: stands in for the toolkit's cuda_bf16.h: __nv_bfloat16 and its float conversions, rounding as the toolkit's do. */
#ifndef TG_EMU_CUDA_BF16_H
#define TG_EMU_CUDA_BF16_H

#include <stdint.h>
#include <string.h>

/* bfloat16: the upper half of an IEEE float's bits (sign, 8 exponent bits, 7 fraction bits); 2 bytes, 2-aligned, as
 * the toolkit's type (whose storage member has this name too). */
struct alignas(2) __nv_bfloat16 {
  unsigned short __x;
};
static_assert(sizeof(__nv_bfloat16) == 2, "__nv_bfloat16 is 2 bytes");

/* f rounded to the nearest bfloat16, ties to even; past the largest finite bfloat16 it rounds to infinity. Every NaN
 * becomes the canonical quiet NaN 0x7fff (sign dropped), as the toolkit's conversion does (its host code, written to
 * match the device's cvt.rn.bf16.f32). */
static inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  __nv_bfloat16 r;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    r.__x = 0x7fffu;
    return r;
  }
  uint32_t rest = u << 16; /* the dropped low half, as a fraction of one bfloat16 step (0x80000000: a tie) */
  unsigned short hi = (unsigned short)(u >> 16);
  if (rest > 0x80000000u || (rest == 0x80000000u && (hi & 1u))) hi++; /* a carry into the exponent is right */
  r.__x = hi;
  return r;
}

/* The float with h's bits as its upper half: exact. */
static inline float __bfloat162float(__nv_bfloat16 h) {
  uint32_t u = (uint32_t)h.__x << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

#endif
