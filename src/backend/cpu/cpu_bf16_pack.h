/* The CPU's fast f32 -> bf16 rounding for GEMM operands and the bf16 mirror, bit for bit base/bf16's results. */
#ifndef TG_CPU_BF16_PACK_H
#define TG_CPU_BF16_PACK_H

#include <stddef.h>
#include <stdint.h>

/* dst [n] = tg_bf16_from_f32(src [n]); the arrays must not overlap. AVX512-BF16's VCVTNEPS2BF16 where the CPU has it
 * (several times faster than base/bf16's loops), those loops compiled for AVX-512 or AVX2 elsewhere. */
void tg_cpu_bf16_pack(uint16_t *dst, const float *src, size_t n);
/* tg_cpu_bf16_pack in blocks of 64 Ki elements on the OpenMP threads when there are several (the same bits). */
void tg_cpu_bf16_pack_par(uint16_t *dst, const float *src, size_t n);
/* dst [n] = src [n] rounded to the nearest bf16 value, kept as float (tg_f32_round_bf16); dst may equal src. */
void tg_cpu_f32_round_bf16(float *dst, const float *src, size_t n);

#endif
