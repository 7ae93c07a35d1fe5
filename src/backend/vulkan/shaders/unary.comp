// The unary elementwise ops (scale and the activations): out = f(x) forward, dx += dy f'(x) backward.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
// op: the TG_VK_UN_* number (vk_kernels.h); bwd 1: the backward; s: scale's factor, elu's alpha
layout(push_constant) uniform Args { F32 x; F32 y; F32 dy; F32 o; uint n; uint op; uint bwd; float s; } p;

float fwd(uint op, float x, float s) {
  switch (op) {
    case 0: return x * s;
    case 1: return x < 0.0 ? 0.0 : x; // NaN passes
    case 2: return tg_tanh(x);
    case 3: return tg_sigmoid(x);
    case 4: return x > 0.0 ? x : s * tg_expm1(x);
    case 5: return x * tg_sigmoid(x);
    case 6: return x > 20.0 ? x : tg_log1p(exp(x));
    case 7: return exp(x);
    case 8: return log(x);
    case 9: return sqrt(x);
    default: return x * tg_normcdf(x, exp(-0.5 * x * x)); // gelu, exact (erf) form
  }
}

// d out / d x from the input x and the output y (each op reads what op_table.c's bwd_needs names).
float slope(uint op, float x, float y, float s) {
  switch (op) {
    case 0: return s;
    case 1: return y > 0.0 ? 1.0 : 0.0;
    case 2: return 1.0 - y * y;
    case 3: return y * (1.0 - y);
    case 4: return x > 0.0 ? 1.0 : y + s;
    case 5: { float g = tg_sigmoid(x); return g * (1.0 + x * (1.0 - g)); }
    case 6: return x > 20.0 ? 1.0 : tg_sigmoid(x);
    case 7: return y;
    case 8: return 1.0 / x;
    case 9: return 0.5 / y;
    default: { float e = exp(-0.5 * x * x); return tg_normcdf(x, e) + x * (0.398942280401432678 * e); }
  }
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += TG_STRIDE) {
    if (p.bwd == 0u) {
      p.o.v[i] = fwd(p.op, p.x.v[i], p.s);
    } else {
      // read only the operands the op's backward has (the others may be absent: address 0)
      bool wants_x = p.op == 4u || p.op == 5u || p.op == 6u || p.op == 8u || p.op == 10u;
      bool wants_y = p.op == 1u || p.op == 2u || p.op == 3u || p.op == 4u || p.op == 7u || p.op == 9u;
      float x = wants_x ? p.x.v[i] : 0.0, y = wants_y ? p.y.v[i] : 0.0;
      p.o.v[i] += p.dy.v[i] * slope(p.op, x, y, p.s);
    }
  }
}
