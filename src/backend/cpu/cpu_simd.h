/* TG_CPU_CLONES: compile a hot loop for AVX-512, AVX2 and the baseline, picked at load time; TG_CPU_INLINE. */
#ifndef TG_CPU_SIMD_H
#define TG_CPU_SIMD_H

/* ISO C mode keeps floating-point contraction off, so every clone computes the same bits. TG_CPU_MAX_ISA, a build-time
 * define for checking that claim on one machine (the clones are picked by the CPU, not by glibc's tunables): 2 leaves
 * out the AVX-512 clones (and Philox's AVX-512 path), 1 every clone (the baseline only); unset, all of them. */
#ifndef TG_CPU_MAX_ISA
#define TG_CPU_MAX_ISA 3
#endif
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_ADDRESS__)
#if TG_CPU_MAX_ISA >= 3
#define TG_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#elif TG_CPU_MAX_ISA == 2
#define TG_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#endif
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

/* Fixed-width vectors (GNU C vector extensions) for loops whose lanes the auto-vectoriser handles poorly (the double
 * lane sums of the row kernels). Every operation on them is lane-wise IEEE arithmetic, so a clone that lowers an
 * 8-wide vector to one AVX-512 register, two AVX2 registers or four SSE registers computes the same bits. They live
 * only inside always-inlined helpers: no vector crosses a call, so no calling convention depends on the clone. */
#if defined(__GNUC__)
#define TG_CPU_VEC 1
typedef float tg_vf8 __attribute__((vector_size(32)));
typedef float tg_vf16 __attribute__((vector_size(64)));
typedef double tg_vd8 __attribute__((vector_size(64)));
#else
#define TG_CPU_VEC 0
#endif

#endif
