// attention's output, an invocation per query row r, over the keys [lo, hi) of one key chunk and the column chunks
// [c0, c1) of ATTN_W columns, after attention_stats.comp has folded the chunk into the row's statistics: o_r (the
// unnormalised sum of the chunks before, flag 2: none) rescaled from the previous max to the new one, plus
// exp(s_j - m) v_j over the keys it sees in the chunk; at the last chunk (flag 4) divided by the sum, exactly 0 for a
// row that sees no key. Keys past those a row sees are never read.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "attention.glsl"

void main() {
  uint R = attn_rows();
  bool first = attn_has(ATTN_FIRST), last = attn_has(ATTN_LAST), swap = attn_has(ATTN_SWAP);
  for (uint r = gl_GlobalInvocationID.x; r < R; r += TG_STRIDE) {
    float m = p.ws.v[(swap ? 0u : 2u) * R + r], l = p.ws.v[R + r];
    // exp(old - new) <= 1; 1 while the row has seen no key (both ATTN_NO_KEY), and then its output is 0
    float rescale = first ? 0.0 : exp(p.ws.v[(swap ? 2u : 0u) * R + r] - m);
    float inv = last ? (l > 0.0 ? 1.0 / l : 0.0) : 1.0;
    uint qr = attn_qrow(r), bh = r / p.Tq, end = min(p.hi, attn_visible(r % p.Tq));
    for (uint cc = p.c0; cc < p.c1; cc++) {
      uint c = cc * ATTN_W;
      float acc[ATTN_W];
      [[unroll]] for (uint t = 0u; t < ATTN_W; t++) acc[t] = !first && c + t < p.dh ? p.o.v[qr + c + t] * rescale : 0.0;
      for (uint j = p.lo; j < end; j++) {
        uint kr = attn_krow(bh, j);
        float e = exp(p.scale * attn_dot(p.q, qr, p.k, kr) - m);
        [[unroll]] for (uint t = 0u; t < ATTN_W; t++)
          if (c + t < p.dh) acc[t] += e * p.v.v[kr + c + t];
      }
      [[unroll]] for (uint t = 0u; t < ATTN_W; t++)
        if (c + t < p.dh) p.o.v[qr + c + t] = acc[t] * inv;
    }
  }
}
