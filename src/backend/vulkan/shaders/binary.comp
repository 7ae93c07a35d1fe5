// add, sub, mul, div with suffix broadcasting (a [na], b [nb]: one has the output's n elements, the other divides n).
// mode 0: out = a op b; 1: the gradients of the operands of n elements (ga, gb where has_ga, has_gb); 2: the
// gradient of the smaller operand, one workgroup per its element, summed over the n / ns repetitions (tg_group_sum).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
// op: 0 add, 1 sub, 2 mul, 3 div; y: the forward's output (div's backward)
layout(push_constant) uniform Args {
  F32 a; F32 b; F32 o; F32 dy; F32 ga; F32 gb; F32 y;
  uint n; uint na; uint nb; uint op; uint mode; uint has_ga; uint has_gb;
} p;

float apply(uint op, float a, float b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default: return a / b;
  }
}

// d out / d a and d out / d b, times g, at one output element.
float grad_a(uint op, float g, float b) { return op == 2u ? g * b : op == 3u ? g / b : g; }
float grad_b(uint op, float g, float a, float b, float y) {
  return op == 0u ? g : op == 1u ? -g : op == 2u ? g * a : -(g * y / b);
}

// The operands at output element i, read only where the backward needs them (op_table.c: add and sub keep neither,
// so their memory may hold other values by now): a for mul, b for mul and div.
float operand_a(uint i) { return p.op == 2u ? p.a.v[i % p.na] : 0.0; }
float operand_b(uint i) { return p.op >= 2u ? p.b.v[i % p.nb] : 0.0; }

void main() {
  uint stride = TG_STRIDE;
  if (p.mode == 0u) {
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride)
      p.o.v[i] = apply(p.op, p.a.v[i % p.na], p.b.v[i % p.nb]);
  } else if (p.mode == 1u) {
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
      float g = p.dy.v[i], a = operand_a(i), b = operand_b(i);
      if (p.has_ga != 0u && p.na == p.n) p.ga.v[i] += grad_a(p.op, g, b);
      if (p.has_gb != 0u && p.nb == p.n) p.gb.v[i] += grad_b(p.op, g, a, b, p.op == 3u ? p.y.v[i] : 0.0);
    }
  } else {
    bool small_a = p.na < p.n;
    uint ns = small_a ? p.na : p.nb, reps = p.n / ns;
    for (uint j = gl_WorkGroupID.x; j < ns; j += gl_NumWorkGroups.x) { // uniform in the workgroup
      float acc = 0.0;
      for (uint r = gl_LocalInvocationID.x; r < reps; r += gl_WorkGroupSize.x) {
        uint i = r * ns + j;
        float g = p.dy.v[i], a = operand_a(i), b = operand_b(i);
        acc += small_a ? grad_a(p.op, g, b) : grad_b(p.op, g, a, b, p.op == 3u ? p.y.v[i] : 0.0);
      }
      float total = tg_group_sum(acc);
      if (gl_LocalInvocationID.x == 0u) {
        if (small_a) p.ga.v[j] += total; else p.gb.v[j] += total;
      }
    }
  }
}
