// softmax_cross_entropy over logits x [rows, c] and labels [rows] (i32 or i64: wide), a workgroup per row. mode 0: the
// row's loss logsumexp(x[r]) - x[r, label] into t[r] (the host then takes their mean); 1: dx[r, j] += g (softmax(x[r])[j]
// - [j == label]) with g = gy[0] * scale (scale = 1 / rows). A label outside [0, c) is a fault: its row's loss is NaN
// and it takes no label term.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; U32 labels; F32 t; F32 gy; F32 dx; U32 fault;
  uint rows; uint c; uint mode; uint wide; uint op; float scale;
} p;

void main() {
  uint lane = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) { // uniform in the workgroup
    uint base = r * p.c, lo, hi;
    float m = -1.0 / 0.0;
    for (uint j = lane; j < p.c; j += 256u) m = max(m, p.x.v[base + j]);
    m = tg_group_max(m);
    float s = 0.0;
    for (uint j = lane; j < p.c; j += 256u) s += exp(p.x.v[base + j] - m);
    s = tg_group_sum(s);
    bool ok = tg_index(p.labels, r, p.wide != 0u, p.c, lo, hi);
    if (!ok && lane == 0u) tg_fault(p.fault, p.op, r, lo, hi);
    if (p.mode == 0u) {
      if (lane == 0u) p.t.v[r] = ok ? m + log(s) - p.x.v[base + lo] : 0.0 / 0.0;
      continue;
    }
    float g = p.gy.v[0] / float(p.rows), inv = 1.0 / s; // g as the CPU rounds it
    for (uint j = lane; j < p.c; j += 256u) {
      float v = p.dx.v[base + j] + g * exp(p.x.v[base + j] - m) * inv;
      p.dx.v[base + j] = ok && j == lo ? v - g : v; // two roundings, as the CPU's
    }
  }
}
