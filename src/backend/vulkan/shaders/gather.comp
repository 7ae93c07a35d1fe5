// gather_rows: table w [V, d], idx [n] (i32 or i64: wide) -> out [n, d]. mode 0: out[i, c] = w[idx[i], c], a row of
// zeros (and a fault) for an index outside [0, V); over (i, c) with c < dt = max(d, 1), so that every index is checked
// even when d is 0. mode 1: gw[v, c] += gy[i, c] for the indices i in [i0, i1), in index order: invocation (b, c)
// owns the rows v with v % nb == b (nb a power of two), so no two invocations write one element and each element sums
// in the CPU's order; a bad index is reported by invocation 0 and takes no gradient.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 w; U32 idx; F32 out_; F32 gy; F32 gw; U32 fault;
  uint V; uint d; uint dt; uint n; uint mode; uint wide; uint op; uint nb; uint i0; uint i1;
} p;

void main() {
  uint lo, hi;
  if (p.mode == 0u) {
    for (uint e = gl_GlobalInvocationID.x; e < p.n * p.dt; e += TG_STRIDE) {
      uint i = e / p.dt, c = e % p.dt;
      bool ok = tg_index(p.idx, i, p.wide != 0u, p.V, lo, hi);
      if (!ok && c == 0u) tg_fault(p.fault, p.op, i, lo, hi);
      if (c < p.d) p.out_.v[i * p.d + c] = ok ? p.w.v[lo * p.d + c] : 0.0;
    }
    return;
  }
  for (uint e = gl_GlobalInvocationID.x; e < p.nb * p.dt; e += TG_STRIDE) {
    uint b = e / p.dt, c = e % p.dt;
    for (uint i = p.i0; i < p.i1; i++) {
      if (!tg_index(p.idx, i, p.wide != 0u, p.V, lo, hi)) {
        if (e == 0u) tg_fault(p.fault, p.op, i, lo, hi);
        continue;
      }
      if ((lo & (p.nb - 1u)) == b && c < p.d) p.gw.v[lo * p.d + c] += p.gy.v[i * p.d + c];
    }
  }
}
