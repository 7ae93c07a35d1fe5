// The SSD scan's exact backward (ops/ssd_ref.h's adjoint recurrence), a workgroup per pair. Pass A runs the state
// forward and keeps the state entering every block of K steps (bnd); pass B walks the blocks from the last, recomputes
// the block's states (hs) and carries the adjoint dh back through them: dx (flag 2) and ddt (flag 4) get +=, the
// per-head dBp (flag 8) and dCp (flag 16) rows and the pair's dAp, dDp partials go to the workspace (ssd_sum.comp adds
// them up). State and adjoint element e = n P + p belongs to invocation e % 256; the reductions over n, over p and over
// (n, p) are done by fixed invocations and a fixed tree. Flag 1: D.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 x; F32 dt; F32 A; F32 Bm; F32 Cm; F32 D; F32 dy; F32 dx; F32 ddt; F32 ws;
  uint B; uint L; uint H; uint P; uint G; uint N; uint Q; uint K; uint flags;
} p;

#include "ssd.glsl"

shared float red[256];

bool has(uint bit) { return (p.flags & bit) != 0u; }

void main() {
  uint tid = gl_LocalInvocationID.x, P = p.P, N = p.N, np = ssd_np(), K = p.K;
  for (uint pair = gl_WorkGroupID.x; pair < ssd_pairs(); pair += gl_NumWorkGroups.x) { // uniform in the workgroup
    uint bnd = pair * ssd_b_pair_len(), hs = bnd + ssd_b_hs(), dh = bnd + ssd_b_dh(), u = bnd + ssd_b_u();
    float Ah = p.A.v[ssd_h(pair)], Dh = has(1u) ? p.D.v[ssd_h(pair)] : 0.0;
    // pass A: dh is the running state; bnd[j] = the state entering block j
    for (uint e = tid; e < np; e += 256u) p.ws.v[dh + e] = 0.0;
    for (uint t = 0u; t < p.L; t++) {
      float dtt = p.dt.v[ssd_dtix(pair, t)], a = exp(dtt * Ah);
      uint xt = ssd_xrow(pair, t), bt = ssd_brow(pair, t);
      for (uint e = tid; e < np; e += 256u) {
        if (t % K == 0u) p.ws.v[bnd + (t / K) * np + e] = p.ws.v[dh + e];
        p.ws.v[dh + e] = a * p.ws.v[dh + e] + dtt * p.Bm.v[bt + e / P] * p.x.v[xt + e % P];
      }
    }
    // pass B: dh is the adjoint carried from the step after
    float dA = 0.0, dD = 0.0; // invocation 0's sums
    for (uint e = tid; e < np; e += 256u) p.ws.v[dh + e] = 0.0;
    for (int j = int(ssd_nk()) - 1; j >= 0; j--) {
      uint t0 = uint(j) * K, t1 = min(t0 + K, p.L);
      for (uint t = t0; t < t1; t++) {
        float dtt = p.dt.v[ssd_dtix(pair, t)], a = exp(dtt * Ah);
        uint xt = ssd_xrow(pair, t), bt = ssd_brow(pair, t);
        uint prev = t == t0 ? bnd + uint(j) * np : hs + (t - t0 - 1u) * np;
        for (uint e = tid; e < np; e += 256u)
          p.ws.v[hs + (t - t0) * np + e] = a * p.ws.v[prev + e] + dtt * p.Bm.v[bt + e / P] * p.x.v[xt + e % P];
      }
      ssd_sync(); // the block's states are read across invocations below
      for (int ti = int(t1) - 1; ti >= int(t0); ti--) {
        uint t = uint(ti);
        uint hp = t == t0 ? bnd + uint(j) * np : hs + (t - t0 - 1u) * np, ht = hs + (t - t0) * np;
        uint xt = ssd_xrow(pair, t), bt = ssd_brow(pair, t);
        float dtt = p.dt.v[ssd_dtix(pair, t)], ea = exp(dtt * Ah);
        float part = 0.0;
        for (uint e = tid; e < np; e += 256u) {
          p.ws.v[dh + e] += p.Cm.v[bt + e / P] * p.dy.v[xt + e % P];
          part += p.ws.v[hp + e] * p.ws.v[dh + e];
        }
        red[tid] = part;
        ssd_sync(); // dh_t and red complete
        for (uint q = tid; q < P; q += 256u) {
          float s = 0.0;
          for (uint n = 0u; n < N; n++) s += p.ws.v[dh + n * P + q] * p.Bm.v[bt + n];
          p.ws.v[u + q] = s;
          if (has(2u)) p.dx.v[xt + q] += has(1u) ? dtt * s + Dh * p.dy.v[xt + q] : dtt * s;
        }
        for (uint n = tid; n < N; n += 256u) {
          if (has(8u)) {
            float s = 0.0;
            for (uint q = 0u; q < P; q++) s += p.ws.v[dh + n * P + q] * p.x.v[xt + q];
            p.ws.v[ssd_b_dBp() + ssd_hrow(pair, t) + n] = dtt * s;
          }
          if (has(16u)) {
            float s = 0.0;
            for (uint q = 0u; q < P; q++) s += p.ws.v[ht + n * P + q] * p.dy.v[xt + q];
            p.ws.v[ssd_b_dCp() + ssd_hrow(pair, t) + n] = s;
          }
        }
        for (uint half_ = 128u; half_ > 0u; half_ >>= 1) {
          barrier();
          if (tid < half_) red[tid] += red[tid + half_];
        }
        ssd_sync(); // u and red[0] complete; nobody reads dh any more this step
        if (tid == 0u) {
          float r = red[0], xu = 0.0;
          for (uint q = 0u; q < P; q++) xu += p.x.v[xt + q] * p.ws.v[u + q];
          if (has(4u)) p.ddt.v[ssd_dtix(pair, t)] += xu + Ah * ea * r;
          dA += dtt * ea * r;
          if (has(1u)) {
            float s = 0.0;
            for (uint q = 0u; q < P; q++) s += p.x.v[xt + q] * p.dy.v[xt + q];
            dD += s;
          }
        }
        for (uint e = tid; e < np; e += 256u) p.ws.v[dh + e] *= ea;
        ssd_sync(); // invocation 0 is done with u and red before the next step rewrites them
      }
    }
    if (tid == 0u) {
      p.ws.v[ssd_b_dAp() + pair] = dA;
      p.ws.v[ssd_b_dDp() + pair] = dD;
    }
  }
}
