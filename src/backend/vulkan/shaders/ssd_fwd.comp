// The SSD scan's chunked forward (ops/ssd_ref.h, section 2.4 of the spec), four dispatches. mode 0: per (pair, chunk),
// the decays din, wout, tot (exponents are sums of a_k = dt_k A <= 0); 1: per (pair, chunk, n, p), the chunk's local
// state sum over s from the chunk's end of wout_s B_s[n] x_s[p]; 2: per (pair, n, p), the inter-chunk recurrence, after
// which states[c] is the state entering chunk c; 3: a workgroup per (pair, t): y_t = din_t (C_t S_c) + sum over s <= t
// in the chunk of exp(seg(t, s)) dt_s (C_t . B_s) x_s + D x_t (flag 1: D), in tiles of 256 steps.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; F32 dt; F32 A; F32 Bm; F32 Cm; F32 D; F32 y; F32 ws;
  uint B; uint L; uint H; uint P; uint G; uint N; uint Q; uint K; uint mode; uint flags;
} p;

#include "ssd.glsl"

shared float ex[256], coef[256];

void rows() {
  uint tid = gl_LocalInvocationID.x, P = p.P, N = p.N;
  for (uint r = gl_WorkGroupID.x; r < ssd_pairs() * p.L; r += gl_NumWorkGroups.x) { // uniform in the workgroup
    uint pair = r / p.L, t = r % p.L, c = t / p.Q, t0 = c * p.Q;
    uint sc = (pair * ssd_nc() + c) * ssd_np(), ct = ssd_brow(pair, t), yt = ssd_xrow(pair, t);
    float din = p.ws.v[ssd_f_din() + pair * p.L + t], Ah = p.A.v[ssd_h(pair)];
    for (uint q = tid; q < P; q += 256u) {
      float s = 0.0;
      for (uint n = 0u; n < N; n++) s += din * p.Cm.v[ct + n] * p.ws.v[sc + n * P + q];
      p.y.v[yt + q] = s;
    }
    float seg = 0.0; // invocation 0: seg(t, s) for the next s
    for (int hi = int(t); hi >= int(t0); hi -= 256) {
      uint cnt = min(256u, uint(hi) - t0 + 1u);
      if (tid < cnt) {
        uint bs = ssd_brow(pair, uint(hi) - tid);
        float cb = 0.0;
        for (uint n = 0u; n < N; n++) cb += p.Cm.v[ct + n] * p.Bm.v[bs + n];
        coef[tid] = cb;
      }
      if (tid == 0u)
        for (uint k = 0u; k < cnt; k++) {
          ex[k] = seg;
          seg += p.dt.v[ssd_dtix(pair, uint(hi) - k)] * Ah;
        }
      ssd_sync();
      if (tid < cnt) coef[tid] = exp(ex[tid]) * p.dt.v[ssd_dtix(pair, uint(hi) - tid)] * coef[tid];
      ssd_sync();
      for (uint q = tid; q < P; q += 256u) {
        float s = p.y.v[yt + q];
        for (uint k = 0u; k < cnt; k++) s += coef[k] * p.x.v[ssd_xrow(pair, uint(hi) - k) + q];
        p.y.v[yt + q] = s;
      }
      ssd_sync(); // ex and coef are rewritten by the next tile
    }
    if ((p.flags & 1u) != 0u) {
      float Dh = p.D.v[ssd_h(pair)];
      for (uint q = tid; q < P; q += 256u) p.y.v[yt + q] += Dh * p.x.v[ssd_xrow(pair, t) + q];
    }
  }
}

void main() {
  if (p.mode == 3u) {
    rows();
    return;
  }
  uint np = ssd_np(), nc = ssd_nc();
  if (p.mode == 0u) {
    for (uint i = gl_GlobalInvocationID.x; i < ssd_pairs() * nc; i += TG_STRIDE) {
      uint pair = i / nc, c = i % nc, t0 = c * p.Q, q = min(p.Q, p.L - t0);
      uint din = ssd_f_din() + pair * p.L, wout = ssd_f_wout() + pair * p.L;
      float Ah = p.A.v[ssd_h(pair)], cum = 0.0, rs = 0.0;
      for (uint l = 0u; l < q; l++) {
        cum += p.dt.v[ssd_dtix(pair, t0 + l)] * Ah;
        p.ws.v[din + t0 + l] = exp(cum);
      }
      p.ws.v[ssd_f_tot() + pair * nc + c] = exp(cum);
      for (int l = int(q) - 1; l >= 0; l--) {
        float dtt = p.dt.v[ssd_dtix(pair, t0 + uint(l))];
        p.ws.v[wout + t0 + uint(l)] = exp(rs) * dtt;
        rs += dtt * Ah;
      }
    }
  } else if (p.mode == 1u) {
    for (uint i = gl_GlobalInvocationID.x; i < ssd_pairs() * nc * np; i += TG_STRIDE) {
      uint e = i % np, pc = i / np, pair = pc / nc, c = pc % nc, n = e / p.P, q = e % p.P;
      uint t0 = c * p.Q, len = min(p.Q, p.L - t0), wout = ssd_f_wout() + pair * p.L;
      float acc = 0.0;
      for (int s = int(len) - 1; s >= 0; s--) {
        uint ts = t0 + uint(s);
        acc += p.ws.v[wout + ts] * p.Bm.v[ssd_brow(pair, ts) + n] * p.x.v[ssd_xrow(pair, ts) + q];
      }
      p.ws.v[pc * np + e] = acc;
    }
  } else {
    for (uint i = gl_GlobalInvocationID.x; i < ssd_pairs() * np; i += TG_STRIDE) {
      uint pair = i / np, e = i % np, st = pair * nc * np, tot = ssd_f_tot() + pair * nc;
      float s = 0.0;
      for (uint c = 0u; c < nc; c++) {
        float loc = p.ws.v[st + c * np + e];
        p.ws.v[st + c * np + e] = s;
        s = p.ws.v[tot + c] * s + loc;
      }
    }
  }
}
