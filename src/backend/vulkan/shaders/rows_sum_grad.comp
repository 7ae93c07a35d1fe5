// The backward of rows_sum.comp: g0[i] += scale gy[i / d] (mode 0: the row sums); for the losses (one row, gy the
// loss's gradient) g0 += scale gy[0] term'(i) on the prediction and g1 -= the same on the target (mse 2 (p - t), huber
// clamp(p - t, -delta, delta)).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; F32 t; F32 gy; F32 g0; F32 g1; uint n; uint d; uint mode; uint has_g0; uint has_g1; float scale; float delta;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += TG_STRIDE) {
    if (p.mode == 0u) {
      p.g0.v[i] += p.scale * p.gy.v[i / p.d];
      continue;
    }
    float e = p.x.v[i] - p.t.v[i];
    float g = p.scale * p.gy.v[0] * (p.mode == 1u ? 2.0 * e : clamp(e, -p.delta, p.delta));
    if (p.has_g0 != 0u) p.g0.v[i] += g;
    if (p.has_g1 != 0u) p.g1.v[i] -= g;
  }
}
