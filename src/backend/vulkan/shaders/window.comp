// window_rows: each window's last row t [n] (f32, or i64 when wide) -> the rows of its window out (i64, as two words)
// [n, w]: t - w + 1 ... t. A t that is not an integer in [w - 1, rows) is a fault (its raw bits recorded; the host
// reads them back as the dtype's value), and its window is written as rows 0.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  U32 t; U32 out_; U32 fault;
  uint n; uint w; uint rows; uint wide; uint op;
} p;

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.n * p.w; e += TG_STRIDE) {
    uint i = e / p.w, k = e % p.w, lo, hi, row = 0u;
    bool ok;
    if (p.wide != 0u) {
      ok = tg_index(p.t, i, true, p.rows, lo, hi) && lo >= p.w - 1u;
      row = lo;
    } else {
      lo = p.t.v[i], hi = 0u;
      float v = uintBitsToFloat(lo);
      ok = v >= float(p.w - 1u) && v < float(p.rows) && v == floor(v); // rows <= 2^24: exact in a float
      row = ok ? uint(v) : 0u;
    }
    if (!ok && k == 0u) tg_fault(p.fault, p.op, i, lo, hi);
    p.out_.v[2u * e] = ok ? row - p.w + 1u + k : 0u;
    p.out_.v[2u * e + 1u] = 0u;
  }
}
