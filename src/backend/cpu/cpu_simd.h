/* TG_CPU_CLONES: compile a hot loop for AVX-512, AVX2 and the baseline, picked at load time; TG_CPU_INLINE. */
#ifndef TG_CPU_SIMD_H
#define TG_CPU_SIMD_H

/* ISO C mode keeps floating-point contraction off, so every clone computes the same bits. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_ADDRESS__)
#define TG_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef TG_CPU_CLONES
#define TG_CPU_CLONES
#endif

/* A loop body helper that must be inlined into each clone's loop for that loop to vectorise. */
#if defined(__GNUC__)
#define TG_CPU_INLINE static inline __attribute__((always_inline))
#else
#define TG_CPU_INLINE static inline
#endif

#endif
