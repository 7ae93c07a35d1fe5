// out[r] = scale * the sum over j < d of term(r * d + j), one workgroup per row: the row sums (sum, mean, sum_last,
// mean_last: term x) and the mean losses over all elements (one row): mse (p - t)^2, huber (delta = q[0]), pinball
// (p [m, nq], t [m]: max(q e, (q - 1) e) with e = t - p and q the element's quantile).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
// mode: 0 x, 1 mse, 2 huber, 3 pinball
layout(push_constant) uniform Args { F32 x; F32 t; F32 o; uint rows; uint d; uint mode; float scale; uint nq; float q[16]; } p;

float term(uint i) {
  if (p.mode == 0u) return p.x.v[i];
  if (p.mode == 3u) {
    float e = p.t.v[i / p.nq] - p.x.v[i], qk = p.q[i % p.nq];
    return max(qk * e, (qk - 1.0) * e);
  }
  float e = p.x.v[i] - p.t.v[i], ae = abs(e), delta = p.q[0];
  if (p.mode == 1u) return e * e;
  return ae < delta ? 0.5 * e * e : delta * (ae - 0.5 * delta);
}

void main() {
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) { // uniform in the workgroup
    float acc = 0.0;
    for (uint j = gl_LocalInvocationID.x; j < p.d; j += gl_WorkGroupSize.x) acc += term(r * p.d + j);
    float total = tg_group_sum(acc);
    if (gl_LocalInvocationID.x == 0u) p.o.v[r] = total * p.scale;
  }
}
