/* Philox4x32-10 words of 16 consecutive counters at once on the CPU (SIMD where the CPU has it). */
#ifndef TG_CPU_PHILOX_H
#define TG_CPU_PHILOX_H

#include <stdint.h>

/* Counters per call. */
#define TG_PHILOX_BLOCK 16

/* w[4 l + k] = word k of tg_philox4x32(seed, stream, q0 + l) for l < 16: exactly the scalar
 * function's bits on every CPU. q0 must be a multiple of 16. */
typedef void (*tg_philox16_fn)(uint64_t seed, uint64_t stream, uint64_t q0, uint32_t *w);

/* The fastest implementation this CPU runs (AVX-512, AVX2 or portable C). */
tg_philox16_fn tg_cpu_philox16(void);

#endif
