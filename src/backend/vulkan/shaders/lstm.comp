// lstm's cell math (ops/lstm_args.h) for one step t, an invocation per (batch row b, hidden unit j): y [B, T, 6H] holds
// per step h | c | i | f | g | o, c0 [B, H] (flag 1; else zeros), bias [4H] (flag 2). mode 0 (forward): the gate slots
// of step t hold the pre-activations without bias (the GEMMs' sums); adds the bias, activates them, writes c and h.
// mode 1 (backward): from the output's gradient dy [B, T, 6H] and the gradients carried from step t + 1, dh and dc
// [B, H] (not read at the last step: flag 4), writes the gate pre-activations' gradients dG [B, T, 4H] at step t and
// the gradient reaching c_{t-1} into dc, or adds it into dc0 [B, H] (flag 8: step 0 with dc0 wanted).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 y; F32 dy; F32 c0; F32 bias; F32 dG; F32 dh; F32 dc; F32 dc0;
  uint B; uint T; uint H; uint t; uint mode; uint flags;
} p;

bool has(uint bit) { return (p.flags & bit) != 0u; }

// c_{t-1}[b, j] for element e = b H + j of the step whose row starts at r.
float c_prev(uint r, uint e, uint j) {
  if (p.t > 0u) return p.y.v[r - 5u * p.H + j]; // the previous step's c slot
  return has(1u) ? p.c0.v[e] : 0.0;
}

void cell_fwd(uint r, uint e, uint j) {
  uint H = p.H;
  float pi = p.y.v[r + 2u * H + j], pf = p.y.v[r + 3u * H + j], pg = p.y.v[r + 4u * H + j], po = p.y.v[r + 5u * H + j];
  if (has(2u)) {
    pi += p.bias.v[j];
    pf += p.bias.v[H + j];
    pg += p.bias.v[2u * H + j];
    po += p.bias.v[3u * H + j];
  }
  float i = tg_sigmoid(pi), f = tg_sigmoid(pf), g = tg_tanh(pg), o = tg_sigmoid(po);
  float c = f * c_prev(r, e, j) + i * g;
  p.y.v[r + 2u * H + j] = i;
  p.y.v[r + 3u * H + j] = f;
  p.y.v[r + 4u * H + j] = g;
  p.y.v[r + 5u * H + j] = o;
  p.y.v[r + H + j] = c;
  p.y.v[r + j] = o * tg_tanh(c);
}

// tg_lstm_cell_bwd's math; q: where the step's dG row starts.
void cell_bwd(uint r, uint q, uint e, uint j) {
  uint H = p.H;
  float c = p.y.v[r + H + j];
  float i = p.y.v[r + 2u * H + j], f = p.y.v[r + 3u * H + j], g = p.y.v[r + 4u * H + j], o = p.y.v[r + 5u * H + j];
  float tc = tg_tanh(c);
  bool last = has(4u);
  float dh = p.dy.v[r + j] + (last ? 0.0 : p.dh.v[e]);
  float d_o = p.dy.v[r + 5u * H + j] + dh * tc;
  float dc = ((last ? 0.0 : p.dc.v[e]) + p.dy.v[r + H + j]) + (dh * o) * (1.0 - tc * tc);
  float d_i = p.dy.v[r + 2u * H + j] + dc * g;
  float d_f = p.dy.v[r + 3u * H + j] + dc * c_prev(r, e, j);
  float d_g = p.dy.v[r + 4u * H + j] + dc * i;
  p.dG.v[q + j] = d_i * i * (1.0 - i);
  p.dG.v[q + H + j] = d_f * f * (1.0 - f);
  p.dG.v[q + 2u * H + j] = d_g * (1.0 - g * g);
  p.dG.v[q + 3u * H + j] = d_o * o * (1.0 - o);
  if (has(8u)) p.dc0.v[e] += dc * f;
  else p.dc.v[e] = dc * f;
}

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.B * p.H; e += TG_STRIDE) {
    uint b = e / p.H, j = e % p.H, bt = b * p.T + p.t;
    if (p.mode == 0u) cell_fwd(bt * 6u * p.H, e, j);
    else cell_bwd(bt * 6u * p.H, bt * 4u * p.H, e, j);
  }
}
