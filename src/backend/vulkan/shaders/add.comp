// c[i] = a[i] + b[i] for i < n: the first kernel of the Vulkan backend, operands by buffer device address.
#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require

layout(local_size_x = 256) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32 { float v[]; };
layout(push_constant) uniform Args { F32 a; F32 b; F32 c; uint n; } p;

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x; // a grid-stride loop: any n with a capped group count
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) p.c.v[i] = p.a.v[i] + p.b.v[i];
}
