/* f32 rounded to bf16 for the GEMM kernels and the bf16 mirror: AVX512-BF16's conversion where the CPU has it, else
 * base/bf16's bit arithmetic compiled for the widest vectors the CPU has; the same bits either way. */
#include <string.h>
#include "backend/cpu/cpu_bf16_pack.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_simd.h"
#include "base/bf16.h"

/* Elements per block of the portable loops: a constant trip count that every clone vectorises. */
#define PACK_BLOCK 16

TG_CPU_CLONES static void pack_bits(uint16_t *dst, const float *src, size_t n) {
  size_t i = 0;
  for (; i + PACK_BLOCK <= n; i += PACK_BLOCK) {
    uint32_t u[PACK_BLOCK]; /* [PACK_BLOCK] float bits */
    uint16_t h[PACK_BLOCK]; /* [PACK_BLOCK] bf16 bits */
    memcpy(u, src + i, sizeof u);
    for (int k = 0; k < PACK_BLOCK; k++) h[k] = (uint16_t)tg_bf16_round_bits(u[k]);
    memcpy(dst + i, h, sizeof h);
  }
  if (i < n) tg_bf16_pack(dst + i, src + i, n - i);
}

TG_CPU_CLONES static void round_bits(float *dst, const float *src, size_t n) {
  size_t i = 0;
  for (; i + PACK_BLOCK <= n; i += PACK_BLOCK) {
    uint32_t u[PACK_BLOCK]; /* [PACK_BLOCK] float bits, rounded in place */
    memcpy(u, src + i, sizeof u);
    for (int k = 0; k < PACK_BLOCK; k++) u[k] = tg_bf16_round_bits(u[k]) << 16;
    memcpy(dst + i, u, sizeof u);
  }
  if (i < n) tg_f32_round_bf16(dst + i, src + i, n - i);
}

#if defined(__x86_64__) && defined(__GNUC__) && TG_CPU_MAX_ISA >= 3 && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#define TG_PACK_NATIVE 1
#define TG_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/* 16 floats at a time with VCVTNEPS2BF16, which rounds to nearest even and quiets NaNs as tg_bf16_from_f32 does but
 * reads a subnormal as zero; *sub is set to the lanes holding a subnormal (rare), for the caller to redo. */
TG_AVX512_BF16 static inline __m256i cvt16(const float *src, __mmask16 *sub) {
  __m512 x = _mm512_loadu_ps(src);
  /* |bits| - 1 below 0x7FFFFF, unsigned: nonzero with a zero exponent */
  __m512i mag = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7FFFFFFF));
  *sub = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(mag, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x007FFFFF));
  return (__m256i)_mm512_cvtneps_pbh(x);
}

TG_AVX512_BF16 static void pack_native(uint16_t *dst, const float *src, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __mmask16 sub;
    _mm256_storeu_si256((__m256i *)(dst + i), cvt16(src + i, &sub));
    if (sub) pack_bits(dst + i, src + i, 16);
  }
  if (i < n) pack_bits(dst + i, src + i, n - i);
}

TG_AVX512_BF16 static void round_native(float *dst, const float *src, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __mmask16 sub;
    __m512i wide = _mm512_slli_epi32(_mm512_cvtepu16_epi32(cvt16(src + i, &sub)), 16);
    if (sub) round_bits(dst + i, src + i, 16); /* dst may be src: redo from the source before storing */
    else _mm512_storeu_si512(dst + i, wide);
  }
  if (i < n) round_bits(dst + i, src + i, n - i);
}

static int has_native(void) {
  static int cached = -1; /* racy but idempotent: every thread stores the same answer */
  if (cached < 0) {
    __builtin_cpu_init();
    cached = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
  }
  return cached;
}
#endif

void tg_cpu_bf16_pack(uint16_t *dst, const float *src, size_t n) {
#ifdef TG_PACK_NATIVE
  if (has_native()) {
    pack_native(dst, src, n);
    return;
  }
#endif
  pack_bits(dst, src, n);
}

/* Elements per block of tg_cpu_bf16_pack_par. */
#define BF16_PACK_BLOCK ((size_t)1 << 16)

void tg_cpu_bf16_pack_par(uint16_t *dst, const float *src, size_t n) {
  long nb = (long)((n + BF16_PACK_BLOCK - 1) / BF16_PACK_BLOCK);
  TG_PAR_FOR(nb > 1, schedule(static),
  for (long b = 0; b < nb; b++) {
    size_t lo = (size_t)b * BF16_PACK_BLOCK, len = n - lo < BF16_PACK_BLOCK ? n - lo : BF16_PACK_BLOCK;
    tg_cpu_bf16_pack(dst + lo, src + lo, len);
  });
}

void tg_cpu_f32_round_bf16(float *dst, const float *src, size_t n) {
#ifdef TG_PACK_NATIVE
  if (has_native()) {
    round_native(dst, src, n);
    return;
  }
#endif
  round_bits(dst, src, n);
}
