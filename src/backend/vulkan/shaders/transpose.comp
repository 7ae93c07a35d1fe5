// dst as [A, X, B, Y, C] (C in 32-bit words) from src as [A, Y, B, X, C]: element e of dst is src's element with X and
// Y swapped. transpose's forward (dst the output: X = Q, Y = P) copies words; its backward (dst the input's gradient:
// X = P, Y = Q) adds f32 (add 1).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args { U32 src; U32 dst; uint a; uint x; uint b; uint y; uint c; uint add; } p;

void main() {
  uint n = p.a * p.x * p.b * p.y * p.c;
  for (uint e = gl_GlobalInvocationID.x; e < n; e += TG_STRIDE) {
    uint c = e % p.c, r = e / p.c;
    uint yy = r % p.y; r /= p.y;
    uint bb = r % p.b; r /= p.b;
    uint xx = r % p.x, aa = r / p.x;
    uint s = (((aa * p.y + yy) * p.b + bb) * p.x + xx) * p.c + c;
    if (p.add == 0u) p.dst.v[e] = p.src.v[s];
    else p.dst.v[e] = floatBitsToUint(uintBitsToFloat(p.dst.v[e]) + uintBitsToFloat(p.src.v[s]));
  }
}
