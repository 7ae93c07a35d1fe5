// Strided rows of 32-bit words (any dtype): dst[i * dst_stride + dst_off + j] = src[i * src_stride + src_off + j] for
// i < rows, j < len (concat's and slice's forwards); add 1: the same as f32 adds, dst += src (their backwards).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  U32 src; U32 dst; uint rows; uint len; uint src_stride; uint src_off; uint dst_stride; uint dst_off; uint add;
} p;

void main() {
  uint n = p.rows * p.len;
  for (uint e = gl_GlobalInvocationID.x; e < n; e += TG_STRIDE) {
    uint i = e / p.len, j = e % p.len;
    uint s = i * p.src_stride + p.src_off + j, d = i * p.dst_stride + p.dst_off + j;
    if (p.add == 0u) p.dst.v[d] = p.src.v[s];
    else p.dst.v[d] = floatBitsToUint(uintBitsToFloat(p.dst.v[d]) + uintBitsToFloat(p.src.v[s]));
  }
}
