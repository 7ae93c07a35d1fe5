// max_last and argmax_last over x [rows, d], a workgroup per row: each row's first maximum, a NaN counting as the
// maximum (the first NaN wins), as the CPU's. mode 0: y[r] = x[r, best]; 1: y (i64, as two words) = best; 2: the
// backward of max_last, gx[r, best] += gy[r].
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; U32 y; F32 gy; F32 gx;
  uint rows; uint d; uint mode;
} p;

shared float best_v[256];
shared uint best_i[256];

// 1 when candidate (va, ia) comes before (vb, ib): a NaN before a number, a larger number first, the lower index on a
// tie (two NaNs included).
bool before(float va, uint ia, float vb, uint ib) {
  bool na = isnan(va), nb = isnan(vb);
  if (na != nb) return na;
  if (!na && va != vb) return va > vb;
  return ia < ib;
}

void main() {
  uint lane = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) { // uniform in the workgroup
    uint base = r * p.d, bi = 0xFFFFFFFFu;
    float bv = 0.0;
    for (uint j = lane; j < p.d; j += 256u) {
      float v = p.x.v[base + j];
      if (bi == 0xFFFFFFFFu || before(v, j, bv, bi)) bv = v, bi = j;
    }
    best_v[lane] = bv;
    best_i[lane] = bi;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
      if (lane < s && best_i[lane + s] != 0xFFFFFFFFu &&
          (best_i[lane] == 0xFFFFFFFFu || before(best_v[lane + s], best_i[lane + s], best_v[lane], best_i[lane]))) {
        best_v[lane] = best_v[lane + s];
        best_i[lane] = best_i[lane + s];
      }
      barrier();
    }
    if (lane == 0u) {
      uint b = best_i[0];
      if (p.mode == 0u) p.y.v[r] = floatBitsToUint(p.x.v[base + b]);
      else if (p.mode == 1u) p.y.v[2u * r] = b, p.y.v[2u * r + 1u] = 0u;
      else p.gx.v[base + b] += p.gy.v[r];
    }
    barrier(); // before the next row overwrites the candidates
  }
}
