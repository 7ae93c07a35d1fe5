/* Philox4x32-10 for 16 counters per call, in AVX-512, AVX2 and portable C, all giving core/philox.h's bits. */
#include "backend/cpu/cpu_philox.h"
#include "base/philox.h"
#include "backend/cpu/cpu_simd.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static void philox16_c(uint64_t seed, uint64_t stream, uint64_t q0, uint32_t *w) {
  for (int l = 0; l < TG_PHILOX_BLOCK; l++) tg_philox4x32(seed, stream, q0 + (uint64_t)l, w + 4 * l);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TG_PHILOX_X86 1

/* (hi, lo) of the 32 x 32 -> 64-bit products M * c over 16 lanes (the rounds' multiplies for c0 with M0 and c2 with
 * M1). _mm512_mul_epu32 multiplies the even 32-bit lanes; the odd ones are moved down by a dword shuffle, and the
 * halves are put in place by masked dword shuffles: the shifts and blends this needed otherwise all queue for the
 * port that also does the multiplies (the shuffles go to another). */
__attribute__((target("avx512f"))) static inline void mulhilo16(__m512i c, __m512i m, __m512i *hi, __m512i *lo) {
  __m512i pe = _mm512_mul_epu32(c, m);                                        /* even lanes' 64-bit products */
  __m512i po = _mm512_mul_epu32(_mm512_shuffle_epi32(c, _MM_PERM_DDBB), m);  /* odd lanes' 64-bit products */
  *hi = _mm512_mask_shuffle_epi32(po, 0x5555, pe, _MM_PERM_DDBB); /* even lanes: pe's high dwords */
  *lo = _mm512_mask_shuffle_epi32(pe, 0xAAAA, po, _MM_PERM_CCAA); /* odd lanes: po's low dwords */
}

__attribute__((target("avx512f"))) static void philox16_avx512(uint64_t seed, uint64_t stream, uint64_t q0,
                                                                 uint32_t *w) {
  /* q0 % 16 == 0: the low words q0 + l never carry into the high word */
  __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)q0),
                                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  __m512i c1 = _mm512_set1_epi32((int)(uint32_t)(q0 >> 32));
  __m512i c2 = _mm512_set1_epi32((int)(uint32_t)stream);
  __m512i c3 = _mm512_set1_epi32((int)(uint32_t)(stream >> 32));
  __m512i m0 = _mm512_set1_epi32((int)PHILOX_M0), m1 = _mm512_set1_epi32((int)PHILOX_M1);
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; round++) {
    __m512i hi0, lo0, hi1, lo1;
    mulhilo16(c0, m0, &hi0, &lo0);
    mulhilo16(c2, m1, &hi1, &lo1);
    c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32((int)k0));
    c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32((int)k1));
    c1 = lo1;
    c3 = lo0;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  /* 4 x 16 -> 16 x 4: r_j holds counters j, 4 + j, 8 + j, 12 + j in its 128-bit lanes */
  __m512i a = _mm512_unpacklo_epi32(c0, c1), b = _mm512_unpackhi_epi32(c0, c1);
  __m512i c = _mm512_unpacklo_epi32(c2, c3), d = _mm512_unpackhi_epi32(c2, c3);
  __m512i r0 = _mm512_unpacklo_epi64(a, c), r1 = _mm512_unpackhi_epi64(a, c);
  __m512i r2 = _mm512_unpacklo_epi64(b, d), r3 = _mm512_unpackhi_epi64(b, d);
  __m512i t0 = _mm512_shuffle_i32x4(r0, r1, 0x44); /* counters 0, 4, 1, 5 */
  __m512i t1 = _mm512_shuffle_i32x4(r2, r3, 0x44); /* 2, 6, 3, 7 */
  __m512i t2 = _mm512_shuffle_i32x4(r0, r1, 0xEE); /* 8, 12, 9, 13 */
  __m512i t3 = _mm512_shuffle_i32x4(r2, r3, 0xEE); /* 10, 14, 11, 15 */
  _mm512_storeu_si512((void *)w, _mm512_shuffle_i32x4(t0, t1, 0x88));        /* 0, 1, 2, 3 */
  _mm512_storeu_si512((void *)(w + 16), _mm512_shuffle_i32x4(t0, t1, 0xDD)); /* 4, 5, 6, 7 */
  _mm512_storeu_si512((void *)(w + 32), _mm512_shuffle_i32x4(t2, t3, 0x88)); /* 8 .. 11 */
  _mm512_storeu_si512((void *)(w + 48), _mm512_shuffle_i32x4(t2, t3, 0xDD)); /* 12 .. 15 */
}

__attribute__((target("avx2"))) static inline void mulhilo8(__m256i c, __m256i m, __m256i *hi, __m256i *lo) {
  __m256i pe = _mm256_mul_epu32(c, m);
  __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
  *lo = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
}

/* 8 counters q0 .. q0 + 7 (q0 % 8 == 0) into w [32]. */
__attribute__((target("avx2"))) static void philox8_avx2(uint64_t seed, uint64_t stream, uint64_t q0, uint32_t *w) {
  __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)q0), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256i c1 = _mm256_set1_epi32((int)(uint32_t)(q0 >> 32));
  __m256i c2 = _mm256_set1_epi32((int)(uint32_t)stream);
  __m256i c3 = _mm256_set1_epi32((int)(uint32_t)(stream >> 32));
  __m256i m0 = _mm256_set1_epi32((int)PHILOX_M0), m1 = _mm256_set1_epi32((int)PHILOX_M1);
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; round++) {
    __m256i hi0, lo0, hi1, lo1;
    mulhilo8(c0, m0, &hi0, &lo0);
    mulhilo8(c2, m1, &hi1, &lo1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
    c1 = lo1;
    c3 = lo0;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  /* r_j holds counters j and 4 + j in its two 128-bit lanes */
  __m256i a = _mm256_unpacklo_epi32(c0, c1), b = _mm256_unpackhi_epi32(c0, c1);
  __m256i c = _mm256_unpacklo_epi32(c2, c3), d = _mm256_unpackhi_epi32(c2, c3);
  __m256i r0 = _mm256_unpacklo_epi64(a, c), r1 = _mm256_unpackhi_epi64(a, c);
  __m256i r2 = _mm256_unpacklo_epi64(b, d), r3 = _mm256_unpackhi_epi64(b, d);
  _mm256_storeu_si256((__m256i *)w, _mm256_permute2x128_si256(r0, r1, 0x20));        /* 0, 1 */
  _mm256_storeu_si256((__m256i *)(w + 8), _mm256_permute2x128_si256(r2, r3, 0x20));  /* 2, 3 */
  _mm256_storeu_si256((__m256i *)(w + 16), _mm256_permute2x128_si256(r0, r1, 0x31)); /* 4, 5 */
  _mm256_storeu_si256((__m256i *)(w + 24), _mm256_permute2x128_si256(r2, r3, 0x31)); /* 6, 7 */
}

static void philox16_avx2(uint64_t seed, uint64_t stream, uint64_t q0, uint32_t *w) {
  philox8_avx2(seed, stream, q0, w);
  philox8_avx2(seed, stream, q0 + 8, w + 32);
}
#endif

tg_philox16_fn tg_cpu_philox16(void) {
#ifdef TG_PHILOX_X86
  if (TG_CPU_MAX_ISA >= 3 && __builtin_cpu_supports("avx512f")) return philox16_avx512;
  if (TG_CPU_MAX_ISA >= 2 && __builtin_cpu_supports("avx2")) return philox16_avx2;
#endif
  return philox16_c;
}
