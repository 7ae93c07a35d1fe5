// softmax and log_softmax over the last dim, one workgroup per row of d. mode 0: y = exp(x - max) / sum; 1: y = x - max
// - log(sum); 2: softmax's backward, dx += y (dy - sum(dy y)); 3: log_softmax's, dx += dy - exp(y) sum(dy). The
// backwards read only the output, as op_table.c says. causal 1 (modes 0 and 2, causal_softmax): row r is query r % tq
// and sees keys j < clamp(r % tq + offset + 1, 0, d); the hidden keys' outputs are +0 and their gradients untouched.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; F32 y; F32 dy; F32 dx; uint rows; uint d; uint mode; uint causal; uint tq; int offset;
} p;

// The keys row r sees.
uint visible(uint r) {
  if (p.causal == 0u) return p.d;
  int n = int(r % p.tq) + p.offset + 1; // offset is clamped to [-tq - 1, d] by the host
  return uint(clamp(n, 0, int(p.d)));
}

void main() {
  uint lane = gl_LocalInvocationID.x, width = gl_WorkGroupSize.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) { // uniform in the workgroup
    uint base = r * p.d, n = visible(r);
    if (p.mode < 2u) {
      float m = uintBitsToFloat(0xff800000u); // -infinity
      for (uint j = lane; j < n; j += width) m = max(m, p.x.v[base + j]);
      m = tg_group_max(m);
      float s = 0.0;
      for (uint j = lane; j < n; j += width) s += exp(p.x.v[base + j] - m);
      s = tg_group_sum(s);
      if (p.mode == 0u) {
        float inv = 1.0 / s;
        for (uint j = lane; j < p.d; j += width) p.y.v[base + j] = j < n ? exp(p.x.v[base + j] - m) * inv : 0.0;
      } else {
        float lse = log(s);
        for (uint j = lane; j < p.d; j += width) p.y.v[base + j] = (p.x.v[base + j] - m) - lse;
      }
    } else {
      float s = 0.0;
      for (uint j = lane; j < n; j += width) s += p.mode == 2u ? p.dy.v[base + j] * p.y.v[base + j] : p.dy.v[base + j];
      s = tg_group_sum(s);
      for (uint j = lane; j < n; j += width) {
        float y = p.y.v[base + j], g = p.dy.v[base + j];
        p.dx.v[base + j] += p.mode == 2u ? y * (g - s) : g - exp(y) * s;
      }
    }
  }
}
