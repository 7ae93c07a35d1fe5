// The ops that draw from the counter-based random numbers (philox.glsl), with the CPU's bits. mode 0, dropout: dst[e]
// (+)= keep(e) ? src[e] * scale : 0 (flags 1: active, else dst (+)= src; 2: add), keep(e) when word e % 4 of counter
// e / 4 under the run's key, as a uniform of its top 24 bits, is at least p; an invocation per counter. mode 1,
// sample_rows: out (i64, as two words) [n] = the 64 bits of draw e (words 2 (e % 2), + 1 of counter e / 2) modulo rows.
// The run counter (offset) is read from offset_dev where given (flag 4), so a replayed step draws afresh.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "philox.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 src; F32 dst; U32 out_; U32 offset_dev;
  uint n; uint mode; uint flags; float p; float scale; uint rows;
  uvec2 seed; uvec2 stream; uvec2 offset;
} p;

// u mod r for u = (lo, hi) and r > 0, bit by bit (no 64-bit integers needed).
uint mod64(uint lo, uint hi, uint r) {
  uint rem = 0u;
  for (int b = 63; b >= 0; b--) {
    uint bit = b >= 32 ? (hi >> uint(b - 32)) & 1u : (lo >> uint(b)) & 1u;
    bool carry = (rem & 0x80000000u) != 0u; // rem << 1 would leave 32 bits: it is then above r
    rem = (rem << 1) | bit;
    if (carry || rem >= r) rem -= r;
  }
  return rem;
}

void main() {
  uvec2 off = (p.flags & 4u) != 0u ? uvec2(p.offset_dev.v[0], p.offset_dev.v[1]) : p.offset;
  uvec2 key = tg_philox_key(off, p.stream);
  if (p.mode == 1u) {
    for (uint e = gl_GlobalInvocationID.x; e < p.n; e += TG_STRIDE) {
      uvec4 w = tg_philox(p.seed, key, uvec2(e >> 1, 0u));
      uint h = (e & 1u) * 2u;
      p.out_.v[2u * e] = mod64(w[h], w[h + 1u], p.rows);
      p.out_.v[2u * e + 1u] = 0u;
    }
    return;
  }
  bool on = (p.flags & 1u) != 0u, add = (p.flags & 2u) != 0u;
  for (uint q = gl_GlobalInvocationID.x; q < (p.n + 3u) / 4u; q += TG_STRIDE) {
    uvec4 w = on ? tg_philox(p.seed, key, uvec2(q, 0u)) : uvec4(0u);
    for (uint j = 0u; j < 4u && 4u * q + j < p.n; j++) {
      uint e = 4u * q + j;
      precise float v = p.src.v[e];
      if (on) v = float(w[j] >> 8) * (1.0 / 16777216.0) >= p.p ? v * p.scale : 0.0;
      if (add) v += p.dst.v[e];
      p.dst.v[e] = v;
    }
  }
}
