// s[j] += the sum over rows r of x[r * ncol + j] (a bias's gradient): one workgroup per column, its invocations over
// every 256th row, then their sum. The host gives a dispatch few enough rows for lavapipe's loop limit (vk_k_gemm.c).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args { F32 x; F32 s; uint rows; uint ncol; } p;

void main() {
  for (uint j = gl_WorkGroupID.x; j < p.ncol; j += gl_NumWorkGroups.x) { // uniform in the workgroup
    float acc = 0.0;
    for (uint r = gl_LocalInvocationID.x; r < p.rows; r += gl_WorkGroupSize.x) acc += p.x.v[r * p.ncol + j];
    float total = tg_group_sum(acc);
    if (gl_LocalInvocationID.x == 0u) p.s.v[j] += total;
  }
}
