// layernorm over the last dim (x [rows, d], gamma and beta [d] each optional). mode 0: y = (x - mean) rstd gamma + beta,
// a workgroup per row; 1: per row, its (mean, rstd) into stats [rows, 2] and dx += rstd (gy - mean(gy) - xhat
// mean(gy xhat)) with gy = dy gamma (each where wanted); 2: per column j, dgamma[j] += sum over rows of dy xhat and
// dbeta[j] += sum of dy, from the stats mode 1 wrote. rstd = 1 / sqrt(var + eps), var the mean square deviation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; F32 gamma; F32 beta; F32 y; F32 dy; F32 dx; F32 dgamma; F32 dbeta; F32 stats;
  uint rows; uint d; uint mode; uint flags; float eps; // flags: 1 gamma, 2 beta, 4 dx, 8 dgamma, 16 dbeta, 32 stats
} p;

bool has(uint bit) { return (p.flags & bit) != 0u; }

// The row's mean and rstd over the whole workgroup.
vec2 row_stats(uint base, uint lane, uint width) {
  float s = 0.0;
  for (uint j = lane; j < p.d; j += width) s += p.x.v[base + j];
  float mean = tg_group_sum(s) / float(p.d);
  float q = 0.0;
  for (uint j = lane; j < p.d; j += width) {
    float e = p.x.v[base + j] - mean;
    q += e * e;
  }
  return vec2(mean, 1.0 / sqrt(tg_group_sum(q) / float(p.d) + p.eps));
}

void main() {
  uint lane = gl_LocalInvocationID.x, width = gl_WorkGroupSize.x;
  if (p.mode == 2u) {
    for (uint j = gl_WorkGroupID.x; j < p.d; j += gl_NumWorkGroups.x) { // uniform in the workgroup
      float sg = 0.0, sb = 0.0;
      for (uint r = lane; r < p.rows; r += width) {
        float g = p.dy.v[r * p.d + j];
        sg += g * ((p.x.v[r * p.d + j] - p.stats.v[2u * r]) * p.stats.v[2u * r + 1u]);
        sb += g;
      }
      sg = tg_group_sum(sg);
      sb = tg_group_sum(sb);
      if (lane == 0u) {
        if (has(8u)) p.dgamma.v[j] += sg;
        if (has(16u)) p.dbeta.v[j] += sb;
      }
    }
    return;
  }
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) { // uniform in the workgroup
    uint base = r * p.d;
    vec2 st = row_stats(base, lane, width);
    if (p.mode == 0u) {
      for (uint j = lane; j < p.d; j += width) {
        float v = (p.x.v[base + j] - st.x) * st.y;
        if (has(1u)) v *= p.gamma.v[j];
        if (has(2u)) v += p.beta.v[j];
        p.y.v[base + j] = v;
      }
      continue;
    }
    if (has(32u) && lane == 0u) {
      p.stats.v[2u * r] = st.x;
      p.stats.v[2u * r + 1u] = st.y;
    }
    if (!has(4u)) continue;
    float s1 = 0.0, s2 = 0.0;
    for (uint j = lane; j < p.d; j += width) {
      float gy = has(1u) ? p.dy.v[base + j] * p.gamma.v[j] : p.dy.v[base + j];
      s1 += gy;
      s2 += gy * ((p.x.v[base + j] - st.x) * st.y);
    }
    float m1 = tg_group_sum(s1) / float(p.d), m2 = tg_group_sum(s2) / float(p.d);
    for (uint j = lane; j < p.d; j += width) {
      float gy = has(1u) ? p.dy.v[base + j] * p.gamma.v[j] : p.dy.v[base + j];
      float xhat = (p.x.v[base + j] - st.x) * st.y;
      p.dx.v[base + j] += st.y * (gy - m1 - xhat * m2);
    }
  }
}
