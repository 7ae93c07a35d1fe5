// The backward of rows_sum.comp: g0[i] += scale gy[i / d] (mode 0: the row sums); for the losses (one row, gy the
// loss's gradient, s = scale gy[0]) g0 += s term'(i) on the prediction and g1 -= the same on the target (mse 2 (p - t),
// huber clamp(p - t, -delta, delta) with delta = q[0]); pinball (mode 3): invocation i < n takes target i and its nq
// predictions, dp[i, k] += s (e > 0 ? -q[k] : 1 - q[k]) with e = t[i] - p[i, k], and dt[i] -= their sum.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
// flags: 1 g0 wanted, 2 g1 wanted
layout(push_constant) uniform Args {
  F32 x; F32 t; F32 gy; F32 g0; F32 g1; uint n; uint d; uint mode; uint flags; float scale; uint nq; float q[16];
} p;

void main() {
  bool want0 = (p.flags & 1u) != 0u, want1 = (p.flags & 2u) != 0u;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += TG_STRIDE) {
    if (p.mode == 0u) {
      p.g0.v[i] += p.scale * p.gy.v[i / p.d];
      continue;
    }
    float s = p.scale * p.gy.v[0];
    if (p.mode == 3u) {
      float t = p.t.v[i], st = 0.0;
      for (uint k = 0u; k < p.nq; k++) {
        float e = t - p.x.v[i * p.nq + k];
        float g = s * (e > 0.0 ? -p.q[k] : 1.0 - p.q[k]);
        if (want0) p.g0.v[i * p.nq + k] += g;
        st -= g;
      }
      if (want1) p.g1.v[i] += st;
      continue;
    }
    float e = p.x.v[i] - p.t.v[i];
    float g = s * (p.mode == 1u ? 2.0 * e : clamp(e, -p.q[0], p.q[0]));
    if (want0) p.g0.v[i] += g;
    if (want1) p.g1.v[i] -= g;
  }
}
