// Shared by the Vulkan backend's shaders: f32 buffers by device address, grid-stride loops, a workgroup's sum, and math
// GLSL lacks (log1p, expm1, the normal CDF, a tanh accurate near 0). No invocation loops more than 65535 times in all:
// lavapipe (llvmpipe) counts the iterations of all of an invocation's loops together and ends them there, so a long
// reduction is spread over a workgroup (tg_group_sum) and a long GEMM over several dispatches.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32 { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32 { uint v[]; }; // any dtype, as 32-bit words

// The invocations of the whole dispatch, for grid-stride loops (dispatches are capped at 65535 workgroups). A macro,
// expanded where it is used: gl_WorkGroupSize in a function defined before the shader's local_size layout is 1.
#define TG_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)

// The sum of v over a workgroup of 256 invocations, by the same tree every time. Every invocation of the workgroup
// must call it (it holds barriers); each gets the sum.
shared float tg_partial[256];
float tg_group_sum(float v) {
  uint t = gl_LocalInvocationIndex;
  tg_partial[t] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) tg_partial[t] += tg_partial[t + s];
    barrier();
  }
  float total = tg_partial[0];
  barrier(); // before a next call overwrites the partial sums
  return total;
}

// The largest v over a workgroup of 256 invocations (as tg_group_sum: every invocation calls it, each gets the result).
float tg_group_max(float v) {
  uint t = gl_LocalInvocationIndex;
  tg_partial[t] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) tg_partial[t] = max(tg_partial[t], tg_partial[t + s]);
    barrier();
  }
  float m = tg_partial[0];
  barrier();
  return m;
}

// log(1 + u) without losing a small u to the rounding of 1 + u (the error of 1 + u cancels in the ratio).
float tg_log1p(float u) {
  float w = 1.0 + u;
  return w == 1.0 ? u : log(w) * (u / (w - 1.0));
}

// exp(x) - 1 without the cancellation near 0 (Kahan: the rounding of exp(x) cancels in (u - 1) / log(u)).
float tg_expm1(float x) {
  float u = exp(x);
  if (u == 1.0) return x;
  float um1 = u - 1.0;
  if (um1 == -1.0) return -1.0;
  return isinf(u) ? u : um1 * (x / log(u));
}

// tanh from expm1 (no cancellation near 0), its argument's magnitude capped at 10, where float's tanh is 1 already
// (past 44, exp(2|x|) would overflow and give inf / inf); NaN passes.
float tg_tanh(float x) {
  float e = tg_expm1(2.0 * (abs(x) > 10.0 ? 10.0 : abs(x)));
  return sign(x) * (e / (e + 2.0));
}

// Logistic function with exp of a non-positive argument only.
float tg_sigmoid(float x) {
  float e = exp(-abs(x));
  float s = 1.0 / (1.0 + e);
  return x >= 0.0 ? s : e * s;
}

// Standard normal CDF from erfc (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7, as the CPU kernels);
// e is exp(-x^2 / 2), which the caller shares with the density.
float tg_normcdf(float x, float e) {
  float z = abs(x) * 0.707106781186547524;
  float t = 1.0 / (1.0 + 0.3275911 * z);
  float p = (((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592;
  float half_erfc = 0.5 * (t * p) * e;
  return x < 0.0 ? half_erfc : 1.0 - half_erfc;
}

// Records a kernel fault (vk_fault.h) in the record at f unless one is recorded: the op, the bad value's flat position
// and the value as two words (low, high). The host raises it after the dispatch.
void tg_fault(U32 f, uint op, uint pos, uint lo, uint hi) {
  if (atomicCompSwap(f.v[0], 0xFFFFFFFFu, op) == 0xFFFFFFFFu) {
    f.v[1] = pos;
    f.v[2] = lo;
    f.v[3] = hi;
  }
}

// Element i of an index tensor (i32, or i64 when wide) as its low and high words (an i32's high word is its sign),
// and whether it lies in [0, bound).
bool tg_index(U32 idx, uint i, bool wide, uint bound, out uint lo, out uint hi) {
  lo = wide ? idx.v[2u * i] : idx.v[i];
  hi = wide ? idx.v[2u * i + 1u] : ((lo & 0x80000000u) != 0u ? 0xFFFFFFFFu : 0u);
  return hi == 0u && lo < bound;
}
