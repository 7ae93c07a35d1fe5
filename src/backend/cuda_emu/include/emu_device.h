/* Emulated CUDA device code: qualifiers, dim3 and the built-in indices, barriers, warp shuffles and votes, atomics, intrinsics. */
#ifndef TG_EMU_DEVICE_H
#define TG_EMU_DEVICE_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <cmath>
#include <type_traits>

/* ---- qualifiers ---- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
/* Static shared memory: one object per OS thread. The emulator runs a block's threads as fibers on
 * one OS thread, one block after another, so the block's threads share it and no two blocks do. */
#define __shared__ static thread_local
#define __constant__ static

/* ---- dimensions and the built-in indices ---- */
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

/* Set by the launch model before a fiber runs (emu_block.cpp). */
extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;
static constexpr int warpSize = 32;

/* ---- barriers, warp exchange (emu_block.cpp) ---- */
void tg_emu_syncthreads(void);
/* This lane's 8 bytes in, every lane's 8 bytes of the warp (after all lanes of mask arrived) out:
 * all[lane]; returns this lane's index in the warp. Reports misuse (a mask that is not every live
 * lane of the warp) as a launch failure naming the kernel. */
int tg_emu_warp_exchange(unsigned mask, uint64_t mine, uint64_t all[32]);
void *tg_emu_dyn_smem(void);

static inline void __syncthreads(void) { tg_emu_syncthreads(); }
static inline int __syncthreads_count(int p);
static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  uint64_t all[32];
  tg_emu_warp_exchange(mask, 0, all);
}
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

template <typename T> static inline uint64_t tg_emu_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffles move values of at most 8 bytes");
  uint64_t b = 0;
  memcpy(&b, &v, sizeof v);
  return b;
}
template <typename T> static inline T tg_emu_from_bits(uint64_t b) {
  T v;
  memcpy(&v, &b, sizeof v);
  return v;
}

/* Lane src's value of v (src computed as CUDA does within segments of width lanes). */
template <typename T> static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  uint64_t all[32];
  int lane = tg_emu_warp_exchange(mask, tg_emu_bits(v), all);
  int from = (lane & ~(width - 1)) + (src & (width - 1));
  return tg_emu_from_bits<T>(all[from & 31]);
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  uint64_t all[32];
  int lane = tg_emu_warp_exchange(mask, tg_emu_bits(v), all);
  int from = lane ^ lane_mask;
  if ((from & ~(width - 1)) != (lane & ~(width - 1))) from = lane; /* outside the segment: own value */
  return tg_emu_from_bits<T>(all[from & 31]);
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  uint64_t all[32];
  int lane = tg_emu_warp_exchange(mask, tg_emu_bits(v), all);
  int from = lane + (int)delta;
  if ((from & ~(width - 1)) != (lane & ~(width - 1))) from = lane;
  return tg_emu_from_bits<T>(all[from & 31]);
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  uint64_t all[32];
  int lane = tg_emu_warp_exchange(mask, tg_emu_bits(v), all);
  int from = lane - (int)delta;
  if (from < (lane & ~(width - 1))) from = lane;
  return tg_emu_from_bits<T>(all[from & 31]);
}
static inline unsigned __ballot_sync(unsigned mask, int p) {
  uint64_t all[32];
  tg_emu_warp_exchange(mask, p != 0, all);
  unsigned r = 0;
  for (int l = 0; l < 32; l++)
    if ((mask >> l) & 1u) r |= (all[l] ? 1u : 0u) << l;
  return r;
}
static inline int __any_sync(unsigned mask, int p) { return __ballot_sync(mask, p) != 0; }
static inline int __all_sync(unsigned mask, int p) { return __ballot_sync(mask, p) == __ballot_sync(mask, 1); }

/* ---- atomics (real atomics, so blocks may also run on several OS threads) ---- */
static inline int atomicCAS(int *p, int cmp, int val) {
  __atomic_compare_exchange_n(p, &cmp, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
static inline unsigned atomicCAS(unsigned *p, unsigned cmp, unsigned val) {
  __atomic_compare_exchange_n(p, &cmp, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp, unsigned long long val) {
  __atomic_compare_exchange_n(p, &cmp, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
template <typename T> static inline T atomicExch(T *p, T v) {
  static_assert(std::is_integral<T>::value || std::is_floating_point<T>::value, "atomicExch type");
  T old;
  __atomic_exchange(p, &v, &old, __ATOMIC_SEQ_CST);
  return old;
}
template <typename T> static inline T tg_emu_atomic_rmw(T *p, T (*f)(T, T), T v) { /* CAS loop on the bits */
  T old = *p, want;
  do {
    want = f(old, v);
  } while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  return old;
}
template <typename T> static inline T atomicAdd(T *p, T v) {
  if constexpr (std::is_integral<T>::value) return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  else return tg_emu_atomic_rmw<T>(p, [](T a, T b) { return a + b; }, v);
}
template <typename T> static inline T atomicSub(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static inline T atomicMax(T *p, T v) {
  return tg_emu_atomic_rmw<T>(p, [](T a, T b) { return a < b ? b : a; }, v);
}
template <typename T> static inline T atomicMin(T *p, T v) {
  return tg_emu_atomic_rmw<T>(p, [](T a, T b) { return b < a ? b : a; }, v);
}
template <typename T> static inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }

static inline int __syncthreads_count(int p) { /* not used by the backend; a barrier plus a block-wide count */
  static thread_local int count;
  tg_emu_syncthreads();
  count = 0;
  tg_emu_syncthreads();
  if (p) count++;
  tg_emu_syncthreads();
  int r = count;
  tg_emu_syncthreads();
  return r;
}

/* ---- arithmetic intrinsics: IEEE round-to-nearest, never contracted (the build passes
 * -ffp-contract=off, and each is a separate rounded operation) ---- */
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
/* The fast approximations (__expf, __logf, ...) clash with glibc names and are not used by the backend: not provided. */
static inline float __fdividef(float a, float b) { return a / b; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline float __int2float_rn(int x) { return (float)x; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }

/* CUDA's device min/max overloads. */
template <typename T> static inline T min(T a, T b) { return b < a ? b : a; }
template <typename T> static inline T max(T a, T b) { return a < b ? b : a; }

using std::isfinite;
using std::isinf;
using std::isnan;

#endif
