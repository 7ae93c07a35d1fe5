// The SSD scan backward's sums of its partials (ssd_bwd.comp): mode 0, per (b, t, g, n), dB and dC [B, L, G, N] += the
// group's heads' dBp / dCp, heads in order (flags 1 dB, 2 dC); mode 1, per head, dA and dD [H] += the batch's pair
// partials, in order (flags 4 dA, 8 dD).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 ws; F32 dB; F32 dC; F32 dA; F32 dD;
  uint B; uint L; uint H; uint P; uint G; uint N; uint Q; uint K; uint mode; uint flags;
} p;

#include "ssd.glsl"

void main() {
  if (p.mode == 0u) {
    uint hpg = p.H / p.G;
    for (uint i = gl_GlobalInvocationID.x; i < p.B * p.L * p.G * p.N; i += TG_STRIDE) {
      uint n = i % p.N, g = (i / p.N) % p.G, bt = i / p.N / p.G;
      float sb = 0.0, sc = 0.0;
      for (uint k = 0u; k < hpg; k++) {
        uint at = (bt * p.H + g * hpg + k) * p.N + n;
        sb += p.ws.v[ssd_b_dBp() + at];
        sc += p.ws.v[ssd_b_dCp() + at];
      }
      if ((p.flags & 1u) != 0u) p.dB.v[i] += sb;
      if ((p.flags & 2u) != 0u) p.dC.v[i] += sc;
    }
    return;
  }
  for (uint h = gl_GlobalInvocationID.x; h < p.H; h += TG_STRIDE) {
    float sa = 0.0, sd = 0.0;
    for (uint b = 0u; b < p.B; b++) {
      sa += p.ws.v[ssd_b_dAp() + b * p.H + h];
      sd += p.ws.v[ssd_b_dDp() + b * p.H + h];
    }
    if ((p.flags & 4u) != 0u) p.dA.v[h] += sa;
    if ((p.flags & 8u) != 0u) p.dD.v[h] += sd;
  }
}
