/* bfloat16 <-> float32 conversions: round to nearest even, NaN kept quiet and signed; scalar and array forms. */
#ifndef TG_BASE_BF16_H
#define TG_BASE_BF16_H

#include <stddef.h>
#include <stdint.h>

/* A bf16 value is the top 16 bits of a float32 (sign, 8 exponent bits, 7 mantissa bits), held as uint16_t.
 * Narrowing rounds to nearest, ties to even; a NaN stays a NaN (quiet bit set, sign and top payload bits kept),
 * infinities stay infinite, a finite value that rounds past the largest bf16 (0x7F7F, about 3.39e38) becomes
 * infinity with its sign, and subnormals round like any other value. Widening is exact. */
uint16_t tg_bf16_from_f32(float x);
/* The bf16 bits (in the low 16 bits) nearest the float whose bits are u, as tg_bf16_from_f32 rounds: adding 0x7FFF plus
 * the lowest kept bit rounds to nearest, ties to even; a carry into the exponent is the right answer, up to infinity. A
 * NaN instead keeps its sign and top payload bits with the quiet bit set, so it never becomes infinity. Inline, so
 * that loops compiled for wider vectors (the CPU backend's clones) vectorise it. */
static inline uint32_t tg_bf16_round_bits(uint32_t u) {
  uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  uint32_t quiet = (u >> 16) | 0x0040u;
  uint32_t nan = 0u - (uint32_t)((int32_t)(u & 0x7FFFFFFFu) > (int32_t)0x7F800000); /* all ones for a NaN */
  return (rounded & ~nan) | (quiet & nan);
}
float tg_f32_from_bf16(uint16_t b);

/* dst [n] = tg_bf16_from_f32(src [n]); the arrays must not overlap. */
void tg_bf16_pack(uint16_t *dst, const float *src, size_t n);
/* dst [n] = tg_f32_from_bf16(src [n]); the arrays must not overlap. */
void tg_bf16_unpack(float *dst, const uint16_t *src, size_t n);
/* dst [n] = src [n] rounded to the nearest bf16 value, kept as float; dst may equal src (not overlap otherwise). */
void tg_f32_round_bf16(float *dst, const float *src, size_t n);

#endif
