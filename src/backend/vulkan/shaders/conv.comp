// conv1d_causal, depthwise: x [b, l, c], w [c, k], bias [c] (flag 1) -> y [b, l, c], y[r, ch] = bias[ch] + sum over
// taps j of w[ch, j] x[r - k + 1 + j, ch] for the taps inside the sequence (row r = b l + t: t - k + 1 + j >= 0).
// mode 0: y, an invocation per (r, ch); 1: dx[r, ch] += sum over j of w[ch, j] dy[r + k - 1 - j, ch] for the outputs
// inside the sequence; 2: a workgroup per (ch, j), j = k meaning the bias: dw[ch, j] += sum over rows of dy[r, ch]
// x[r - k + 1 + j, ch] (taps inside the sequence), dbias[ch] += sum of dy[r, ch] (flags 2 dw, 4 dbias).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; F32 w; F32 bias; F32 y; F32 dy; F32 dx; F32 dw; F32 dbias;
  uint rows; uint l; uint c; uint k; uint mode; uint flags;
} p;

void main() {
  if (p.mode == 2u) {
    uint lane = gl_LocalInvocationID.x;
    for (uint q = gl_WorkGroupID.x; q < p.c * (p.k + 1u); q += gl_NumWorkGroups.x) { // uniform in the workgroup
      uint ch = q / (p.k + 1u), j = q % (p.k + 1u);
      if (j == p.k ? (p.flags & 4u) == 0u : (p.flags & 2u) == 0u) continue;
      float s = 0.0;
      for (uint r = lane; r < p.rows; r += 256u) {
        if (j == p.k) s += p.dy.v[r * p.c + ch];
        else if (r % p.l + j >= p.k - 1u) s += p.dy.v[r * p.c + ch] * p.x.v[(r + j + 1u - p.k) * p.c + ch];
      }
      s = tg_group_sum(s);
      if (lane == 0u) {
        if (j == p.k) p.dbias.v[ch] += s;
        else p.dw.v[ch * p.k + j] += s;
      }
    }
    return;
  }
  for (uint e = gl_GlobalInvocationID.x; e < p.rows * p.c; e += TG_STRIDE) {
    uint r = e / p.c, ch = e % p.c, t = r % p.l;
    if (p.mode == 0u) {
      float acc = (p.flags & 1u) != 0u ? p.bias.v[ch] : 0.0;
      for (uint j = t + 1u >= p.k ? 0u : p.k - 1u - t; j < p.k; j++)
        acc += p.w.v[ch * p.k + j] * p.x.v[(r + j + 1u - p.k) * p.c + ch];
      p.y.v[e] = acc;
    } else {
      float acc = 0.0;
      for (uint j = t + p.k >= p.l ? t + p.k - p.l : 0u; j < p.k; j++)
        acc += p.w.v[ch * p.k + j] * p.dy.v[(r + p.k - 1u - j) * p.c + ch];
      p.dx.v[e] += acc;
    }
  }
}
