// The optimizer update on the device (graph/backend.h's tg_optim_update, as the CPU's cpu_optim.c computes it, in
// float: GPUs without fp64 run it). mode 0: 256 workgroups, partial sums of g^2 over a fixed stride into part [256];
// 1 (one workgroup): their total by a fixed tree, then the step's scalars into sc (tg_optim_scalars: step, sumsq, norm,
// lr, gscale, bc1, bc2, skipped; its doubles written as their bits) and bc1, bc2 as floats into part[256..258); 2: the
// SGD (kind 0) or Adam/AdamW (1, 2) update of one segment, nothing when the step was skipped, the new values rounded
// into the bf16 mirror where given (flag 1: bf16 is the mirror's start, bf16_off the segment's first element); 3: the dropout run counter, c[1] = c[0]; c[0] += 1 (64-bit words).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 values; F32 grads; F32 m; F32 v; U32 bf16; U32 sc; F32 part;
  uint n; uint mode; uint kind; uint flags; uint sched; float lr; float momentum; float beta1; float beta2; float eps;
  float wd; float clip; uint warmup; uint total; float final_frac; uint bf16_off;
} p;

// Words of tg_optim_scalars (vk_optim.c checks the offsets).
const uint SC_STEP = 0u, SC_SUMSQ = 2u, SC_NORM = 4u, SC_LR = 5u, SC_GSCALE = 6u, SC_BC1 = 8u, SC_BC2 = 10u,
           SC_SKIPPED = 12u;

shared float tree[256];

float tree_sum(float v) { // the workgroup's sum by a fixed halving tree
  uint t = gl_LocalInvocationID.x;
  tree[t] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) tree[t] += tree[t + s];
    barrier();
  }
  return tree[0];
}

// The bits of the double equal to f, as (low, high) words.
uvec2 f64_bits(float f) {
  uint b = floatBitsToUint(f), s = b & 0x80000000u, e = (b >> 23) & 0xFFu, m = b & 0x7FFFFFu;
  if (e == 0xFFu) return uvec2(m << 29, s | 0x7FF00000u | (m >> 3)); // infinity, NaN
  if (e == 0u) {
    if (m == 0u) return uvec2(0u, s);
    int k = findMSB(m); // a subnormal: m 2^-149 = 1.f 2^(k - 149)
    m = (m << uint(23 - k)) & 0x7FFFFFu;
    return uvec2(m << 29, s | (uint(k + 874) << 20) | (m >> 3));
  }
  return uvec2(m << 29, s | ((e + 896u) << 20) | (m >> 3));
}

// The schedule at 0-based step (ops/lr_schedule.h): warm-up, then constant (0), linear (1) or half-cosine (2) decay.
float lr_at(float step) {
  if (p.warmup > 0u && step < float(p.warmup)) return p.lr * (step + 1.0) / float(p.warmup);
  if (p.sched != 1u && p.sched != 2u) return p.lr;
  float span = float(p.total) - float(p.warmup);
  float progress = span > 0.0 ? clamp((step - float(p.warmup)) / span, 0.0, 1.0) : 1.0;
  if (p.sched == 1u) return p.lr * (1.0 - (1.0 - p.final_frac) * progress);
  return p.lr * (p.final_frac + (1.0 - p.final_frac) * 0.5 * (1.0 + cos(3.14159265358979 * progress)));
}

// bf16 bits nearest f, ties to even; a NaN keeps its sign and top payload with the quiet bit (base/bf16.c).
uint bf16_of(float f) {
  uint u = floatBitsToUint(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

void main() {
  uint lane = gl_LocalInvocationID.x;
  if (p.mode == 0u) {
    float acc = 0.0;
    for (uint i = gl_WorkGroupID.x * 256u + lane; i < p.n; i += 65536u) acc += p.grads.v[i] * p.grads.v[i];
    float s = tree_sum(acc);
    if (lane == 0u) p.part.v[gl_WorkGroupID.x] = s;
    return;
  }
  if (p.mode == 1u) {
    float ss = tree_sum(p.part.v[lane]);
    if (lane != 0u) return;
    float norm = sqrt(ss);
    uvec2 b = f64_bits(ss);
    p.sc.v[SC_SUMSQ] = b.x, p.sc.v[SC_SUMSQ + 1u] = b.y;
    p.sc.v[SC_NORM] = floatBitsToUint(norm);
    bool skipped = isnan(norm) || isinf(norm);
    p.sc.v[SC_SKIPPED] = skipped ? 1u : 0u;
    if (skipped) return;
    float gscale = p.clip > 0.0 && norm > p.clip ? p.clip / norm : 1.0;
    uint lo = p.sc.v[SC_STEP], hi = p.sc.v[SC_STEP + 1u];
    float lr = lr_at(float(lo) + 4294967296.0 * float(hi)), t = float(lo) + 4294967296.0 * float(hi) + 1.0;
    float bc1 = 1.0 - pow(p.beta1, t), bc2 = 1.0 - pow(p.beta2, t);
    p.sc.v[SC_LR] = floatBitsToUint(lr);
    p.sc.v[SC_GSCALE] = floatBitsToUint(gscale);
    b = f64_bits(bc1);
    p.sc.v[SC_BC1] = b.x, p.sc.v[SC_BC1 + 1u] = b.y;
    b = f64_bits(bc2);
    p.sc.v[SC_BC2] = b.x, p.sc.v[SC_BC2 + 1u] = b.y;
    p.part.v[256] = bc1, p.part.v[257] = bc2;
    p.sc.v[SC_STEP] = lo + 1u, p.sc.v[SC_STEP + 1u] = lo == 0xFFFFFFFFu ? hi + 1u : hi;
    return;
  }
  if (p.mode == 3u) {
    if (gl_GlobalInvocationID.x != 0u) return;
    uint lo = p.sc.v[0], hi = p.sc.v[1];
    p.sc.v[2] = lo, p.sc.v[3] = hi;
    p.sc.v[0] = lo + 1u, p.sc.v[1] = lo == 0xFFFFFFFFu ? hi + 1u : hi;
    return;
  }
  if (p.sc.v[SC_SKIPPED] != 0u) return;
  float lr = uintBitsToFloat(p.sc.v[SC_LR]), gscale = uintBitsToFloat(p.sc.v[SC_GSCALE]);
  float step_size = lr / p.part.v[256], bc2_sqrt = sqrt(p.part.v[257]);
  float decay = p.kind == 2u ? 1.0 - lr * p.wd : 1.0, l2 = p.kind == 2u ? 0.0 : p.wd;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += TG_STRIDE) {
    precise float pi = p.values.v[i], gi;
    if (p.kind == 0u) {
      gi = p.grads.v[i] * gscale + p.wd * pi;
      if (p.momentum != 0.0) {
        float b = p.momentum * p.m.v[i] + gi;
        p.m.v[i] = b;
        pi -= lr * b;
      } else {
        pi -= lr * gi;
      }
    } else {
      gi = p.grads.v[i] * gscale + l2 * pi;
      pi *= decay;
      precise float mi = p.beta1 * p.m.v[i] + (1.0 - p.beta1) * gi;
      precise float vi = p.beta2 * p.v.v[i] + (1.0 - p.beta2) * gi * gi;
      p.m.v[i] = mi;
      p.v.v[i] = vi;
      pi -= step_size * (mi / (sqrt(vi) / bc2_sqrt + p.eps));
    }
    p.values.v[i] = pi;
    if ((p.flags & 1u) != 0u) { // the mirror's 16-bit element bf16_off + i, a half of a word
      uint j = p.bf16_off + i, sh = (j & 1u) * 16u;
      atomicAnd(p.bf16.v[j / 2u], ~(0xFFFFu << sh));
      atomicOr(p.bf16.v[j / 2u], bf16_of(pi) << sh);
    }
  }
}
