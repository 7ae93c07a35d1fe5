// attention's input gradients from the statistics attention_stats.comp left (slot 0 the row max m, 1 the inverse
// sum, 2 D = dO . o), the probabilities recomputed: p_ij = exp(scale q_i . k_j - m_i) / l_i, dS_ij = p_ij (dO_i . v_j
// - D_i).
// mode 0: an invocation per query row i, dq_i += scale sum_j dS_ij k_j over the keys [lo, hi) it sees; mode 1: an
// invocation per key j, dk_j += scale sum_i dS_ij q_i (flag 32) and dv_j += sum_i p_ij dO_i (flag 64) over the rows
// [lo, hi) that see it. Each over the column chunks [c0, c1) of ATTN_W columns, adding into the gradient: every
// element is written by one invocation, in a fixed order (no atomics).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "attention.glsl"

void dq_rows() {
  uint R = attn_rows();
  for (uint r = gl_GlobalInvocationID.x; r < R; r += TG_STRIDE) {
    uint qr = attn_qrow(r), bh = r / p.Tq, end = min(p.hi, attn_visible(r % p.Tq));
    if (p.lo >= end) continue; // sees no key of the chunk
    float m = p.ws.v[r], inv = p.ws.v[R + r], D = p.ws.v[2u * R + r];
    for (uint cc = p.c0; cc < p.c1; cc++) {
      uint c = cc * ATTN_W;
      float acc[ATTN_W];
      [[unroll]] for (uint t = 0u; t < ATTN_W; t++) acc[t] = 0.0;
      for (uint j = p.lo; j < end; j++) {
        uint kr = attn_krow(bh, j);
        float pr = exp(p.scale * attn_dot(p.q, qr, p.k, kr) - m) * inv;
        float ds = pr * (attn_dot(p.dO, qr, p.v, kr) - D);
        [[unroll]] for (uint t = 0u; t < ATTN_W; t++)
          if (c + t < p.dh) acc[t] += ds * p.k.v[kr + c + t];
      }
      [[unroll]] for (uint t = 0u; t < ATTN_W; t++)
        if (c + t < p.dh) p.dq.v[qr + c + t] += p.scale * acc[t];
    }
  }
}

void dkv_keys() {
  uint R = attn_rows(), K = attn_keys();
  bool want_k = attn_has(ATTN_DK), want_v = attn_has(ATTN_DV);
  for (uint rk = gl_GlobalInvocationID.x; rk < K; rk += TG_STRIDE) {
    uint bh = rk / p.Tk, j = rk % p.Tk, kr = attn_krow(bh, j), i0 = max(p.lo, attn_first_row(j));
    if (i0 >= p.hi) continue; // no row of the chunk sees the key
    for (uint cc = p.c0; cc < p.c1; cc++) {
      uint c = cc * ATTN_W;
      float ak[ATTN_W], av[ATTN_W];
      [[unroll]] for (uint t = 0u; t < ATTN_W; t++) {
        ak[t] = 0.0;
        av[t] = 0.0;
      }
      for (uint i = i0; i < p.hi; i++) {
        uint r = bh * p.Tq + i, qr = attn_qrow(r);
        float pr = exp(p.scale * attn_dot(p.q, qr, p.k, kr) - p.ws.v[r]) * p.ws.v[R + r];
        if (want_v) {
          [[unroll]] for (uint t = 0u; t < ATTN_W; t++)
            if (c + t < p.dh) av[t] += pr * p.dO.v[qr + c + t];
        }
        if (want_k) {
          float ds = pr * (attn_dot(p.dO, qr, p.v, kr) - p.ws.v[2u * R + r]);
          [[unroll]] for (uint t = 0u; t < ATTN_W; t++)
            if (c + t < p.dh) ak[t] += ds * p.q.v[qr + c + t];
        }
      }
      [[unroll]] for (uint t = 0u; t < ATTN_W; t++) {
        if (want_k && c + t < p.dh) p.dk.v[kr + c + t] += p.scale * ak[t];
        if (want_v && c + t < p.dh) p.dv.v[kr + c + t] += av[t];
      }
    }
  }
}

void main() {
  if (p.mode == 0u) dq_rows();
  else dkv_keys();
}
