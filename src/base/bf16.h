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
float tg_f32_from_bf16(uint16_t b);

/* dst [n] = tg_bf16_from_f32(src [n]); the arrays must not overlap. */
void tg_bf16_pack(uint16_t *dst, const float *src, size_t n);
/* dst [n] = tg_f32_from_bf16(src [n]); the arrays must not overlap. */
void tg_bf16_unpack(float *dst, const uint16_t *src, size_t n);
/* dst [n] = src [n] rounded to the nearest bf16 value, kept as float; dst may equal src (not overlap otherwise). */
void tg_f32_round_bf16(float *dst, const float *src, size_t n);

#endif
