// The normalisations over the last dim: layernorm, rmsnorm (flag 64: no mean) and gate_add_norm (flag 128: the row is
// z = x + a[:, :d] * sigmoid(a[:, d:]), x the skip [rows, d], a [rows, 2d]); gamma and beta [slots, d] each optional,
// row r using slot r % slots. mode 0: y = (z - mean) rstd gamma + beta, a workgroup per row; 1: per row, its (mean,
// rstd) into stats [rows, 2] where asked and dz = rstd (gy - mean(gy) - zhat mean(gy zhat)) with gy = dy gamma (no
// mean(gy) for rmsnorm), added to dx and passed through the gate to da; 2: per (slot, column), dgamma += sum of dy zhat
// and dbeta += sum of dy over the slot's rows, from the stats mode 1 wrote. rstd = 1 / sqrt(var + eps), var the mean
// square deviation (rmsnorm: the mean square).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; F32 a; F32 gamma; F32 beta; F32 y; F32 dy; F32 dx; F32 da; F32 dgamma; F32 dbeta; F32 stats;
  uint rows; uint d; uint slots; uint mode; uint flags; float eps;
} p;
// flags: 1 gamma, 2 beta, 4 dx, 8 dgamma, 16 dbeta, 32 stats, 64 rms, 128 gated (z from x and a), 256 da

bool has(uint bit) { return (p.flags & bit) != 0u; }

// Element j of row r's z.
float z_at(uint r, uint j) {
  float v = p.x.v[r * p.d + j];
  if (has(128u)) v += p.a.v[2u * r * p.d + j] * tg_sigmoid(p.a.v[2u * r * p.d + p.d + j]);
  return v;
}

// The row's mean (0 for rmsnorm) and rstd over the whole workgroup.
vec2 row_stats(uint r, uint lane, uint width) {
  float mean = 0.0;
  if (!has(64u)) {
    float s = 0.0;
    for (uint j = lane; j < p.d; j += width) s += z_at(r, j);
    mean = tg_group_sum(s) / float(p.d);
  }
  float q = 0.0;
  for (uint j = lane; j < p.d; j += width) {
    float e = z_at(r, j) - mean;
    q += e * e;
  }
  return vec2(mean, 1.0 / sqrt(tg_group_sum(q) / float(p.d) + p.eps));
}

void main() {
  uint lane = gl_LocalInvocationID.x, width = gl_WorkGroupSize.x;
  if (p.mode == 2u) {
    for (uint q = gl_WorkGroupID.x; q < p.slots * p.d; q += gl_NumWorkGroups.x) { // uniform in the workgroup
      uint s = q / p.d, j = q % p.d;
      float sg = 0.0, sb = 0.0;
      for (uint r = s + lane * p.slots; r < p.rows; r += width * p.slots) {
        float g = p.dy.v[r * p.d + j];
        sg += g * ((z_at(r, j) - p.stats.v[2u * r]) * p.stats.v[2u * r + 1u]);
        sb += g;
      }
      sg = tg_group_sum(sg);
      sb = tg_group_sum(sb);
      if (lane == 0u) {
        if (has(8u)) p.dgamma.v[q] += sg;
        if (has(16u)) p.dbeta.v[q] += sb;
      }
    }
    return;
  }
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) { // uniform in the workgroup
    uint base = r * p.d, gbase = (r % p.slots) * p.d;
    vec2 st = row_stats(r, lane, width);
    if (p.mode == 0u) {
      for (uint j = lane; j < p.d; j += width) {
        float v = (z_at(r, j) - st.x) * st.y;
        if (has(1u)) v *= p.gamma.v[gbase + j];
        if (has(2u)) v += p.beta.v[gbase + j];
        p.y.v[base + j] = v;
      }
      continue;
    }
    if (has(32u) && lane == 0u) {
      p.stats.v[2u * r] = st.x;
      p.stats.v[2u * r + 1u] = st.y;
    }
    if (!has(4u) && !has(256u)) continue;
    float s1 = 0.0, s2 = 0.0;
    for (uint j = lane; j < p.d; j += width) {
      float gy = has(1u) ? p.dy.v[base + j] * p.gamma.v[gbase + j] : p.dy.v[base + j];
      s1 += gy;
      s2 += gy * ((z_at(r, j) - st.x) * st.y);
    }
    float m1 = has(64u) ? 0.0 : tg_group_sum(s1) / float(p.d), m2 = tg_group_sum(s2) / float(p.d);
    for (uint j = lane; j < p.d; j += width) {
      float gy = has(1u) ? p.dy.v[base + j] * p.gamma.v[gbase + j] : p.dy.v[base + j];
      float zhat = (z_at(r, j) - st.x) * st.y;
      float dz = st.y * (gy - m1 - zhat * m2);
      if (has(4u)) p.dx.v[base + j] += dz;
      if (has(256u)) {
        uint v = 2u * r * p.d + j;
        float sg = tg_sigmoid(p.a.v[v + p.d]);
        p.da.v[v] += dz * sg;
        p.da.v[v + p.d] += dz * p.a.v[v] * sg * (1.0 - sg);
      }
    }
  }
}
