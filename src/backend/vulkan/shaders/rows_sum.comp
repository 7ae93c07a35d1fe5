// out[r] = scale * the sum over j < d of term(r * d + j), one workgroup per row: the row sums (sum, mean, sum_last,
// mean_last: term x) and the mean losses over all elements (one row: mse (p - t)^2, huber).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
// mode: 0 x, 1 mse, 2 huber (delta)
layout(push_constant) uniform Args { F32 x; F32 t; F32 o; uint rows; uint d; uint mode; float scale; float delta; } p;

float term(uint i) {
  if (p.mode == 0u) return p.x.v[i];
  float e = p.x.v[i] - p.t.v[i], ae = abs(e);
  if (p.mode == 1u) return e * e;
  return ae < p.delta ? 0.5 * e * e : p.delta * (ae - 0.5 * p.delta);
}

void main() {
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) { // uniform in the workgroup
    float acc = 0.0;
    for (uint j = gl_LocalInvocationID.x; j < p.d; j += gl_WorkGroupSize.x) acc += term(r * p.d + j);
    float total = tg_group_sum(acc);
    if (gl_LocalInvocationID.x == 0u) p.o.v[r] = total * p.scale;
  }
}
