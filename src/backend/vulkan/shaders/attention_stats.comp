// attention's softmax statistics, an invocation per query row r, over the keys [lo, hi) of one key chunk: the row max
// m and the sum l of exp(s_j - m) of the scores s_j = scale q . k_j it sees there, carried from the chunks before
// (flag 2: none) as an online softmax. Forward: the previous max read from slot 0 and the new one written to slot 2
// (flag 8: the other way), l in slot 1, so that attention_out.comp can rescale its partial output. Backward (flag 16):
// the max in place in slot 0, and at the last chunk (flag 4) slot 1 = 1 / l (0 for a row that sees no key) and slot 2
// = D = dO . o.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "attention.glsl"

void main() {
  uint R = attn_rows();
  bool bwd = attn_has(ATTN_BWD), swap = attn_has(ATTN_SWAP);
  uint src = bwd || !swap ? 0u : 2u, dst = bwd || swap ? 0u : 2u; // the slots of the previous max and the new one
  for (uint r = gl_GlobalInvocationID.x; r < R; r += TG_STRIDE) {
    bool first = attn_has(ATTN_FIRST);
    float m = first ? ATTN_NO_KEY : p.ws.v[src * R + r];
    // l summed with Kahan's compensation (precise: kept from reassociation), rescaled with it at a new max: every
    // probability is divided by l, and a plain float sum over 20,000 keys was off by 4e-6
    precise float l = first ? 0.0 : p.ws.v[R + r], comp = 0.0;
    uint qr = attn_qrow(r), bh = r / p.Tq, end = min(p.hi, attn_visible(r % p.Tq));
    for (uint j = p.lo; j < end; j++) {
      float s = p.scale * attn_dot(p.q, qr, p.k, attn_krow(bh, j));
      if (s > m) { // a new max: the sum so far rescaled to it (exp of a non-positive argument only)
        float f = exp(m - s);
        l *= f;
        comp *= f;
        m = s;
      }
      precise float y = exp(s - m) - comp, t = l + y;
      comp = (t - l) - y;
      l = t;
    }
    p.ws.v[dst * R + r] = m;
    if (bwd && attn_has(ATTN_LAST)) {
      p.ws.v[R + r] = l > 0.0 ? 1.0 / l : 0.0;
      p.ws.v[2u * R + r] = l > 0.0 ? attn_dot(p.dO, qr, p.o, qr) : 0.0;
    } else {
      p.ws.v[R + r] = l;
    }
  }
}
