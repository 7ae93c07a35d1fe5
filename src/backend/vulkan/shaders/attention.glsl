// The attention op's push constants, indexing, visibility rule and dot product (ops/attention_args.h, in 32-bit words)
// for the attention_* shaders, which include this after common.glsl. q, o, dO, dq [B, Tq, H dh] and k, v, dk, dv
// [B, Tk, H dh]: head h is columns [h dh, (h+1) dh) of every row. A query row is r = (b H + h) Tq + i, a key row
// (b H + h) Tk + j. The workspace ws [3, B, H, Tq] holds per query row the softmax statistics: slots 0 and 2 the row
// max (the forward alternates them between key chunks), slot 1 the sum of exponentials; the backward's first pass
// leaves the max in slot 0, 1 / sum in slot 1 and D = dO . o in slot 2.
//
// Work is cut so that no invocation loops more than about 32,768 times in a dispatch (vk_k_attention.c plans it):
// lavapipe's limit of 65,535 counts every loop's iterations in an invocation together, nested ones included. Column
// loops therefore run in unrolled chunks of ATTN_W columns, each a single iteration.

#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 64) in;
layout(push_constant) uniform Args {
  F32 q; F32 k; F32 v; F32 o; F32 dO; F32 dq; F32 dk; F32 dv; F32 ws;
  uint B; uint Tq; uint Tk; uint H; uint dh;
  int offset;  // causal only, clamped by the host to [-Tq, Tk - 1]
  uint lo; uint hi; // the keys (the rows for the key gradients) this dispatch covers
  uint c0; uint c1; // the column chunks it covers
  uint mode; uint flags; float scale;
} p;

#define ATTN_W 16u
#define ATTN_CAUSAL 1u
#define ATTN_FIRST 2u  // the first key chunk: no statistics or output yet
#define ATTN_LAST 4u   // the last key chunk: the output normalised, the backward's statistics finished
#define ATTN_SWAP 8u   // forward: the previous max in slot 2 and the new one in slot 0 (else 0 and 2)
#define ATTN_BWD 16u   // statistics for the backward: the max in place in slot 0, and at the last chunk 1/sum and D
#define ATTN_DK 32u
#define ATTN_DV 64u
// The max of a row that has seen no key yet: finite, so that exp(old - new) is 0 or 1 and never NaN.
#define ATTN_NO_KEY (-3.402823466e38)

bool attn_has(uint bit) { return (p.flags & bit) != 0u; }
uint attn_d() { return p.H * p.dh; }
uint attn_rows() { return p.B * p.H * p.Tq; }
uint attn_keys() { return p.B * p.H * p.Tk; }
uint attn_ncols() { return (p.dh + ATTN_W - 1u) / ATTN_W; }

// Offset of column 0 of the head of query row r (q, o, dO, dq) and of key row (b H + h) Tk + j (k, v, dk, dv).
uint attn_qrow(uint r) {
  uint bh = r / p.Tq, i = r % p.Tq;
  return ((bh / p.H) * p.Tq + i) * attn_d() + (bh % p.H) * p.dh;
}
uint attn_krow(uint bh, uint j) { return ((bh / p.H) * p.Tk + j) * attn_d() + (bh % p.H) * p.dh; }

// Keys query row i sees, j < the result (tg_attn_visible), without overflow for any clamped offset.
uint attn_visible(uint i) {
  if (!attn_has(ATTN_CAUSAL)) return p.Tk;
  if (p.offset >= 0) {
    uint off = uint(p.offset); // < Tk
    return i >= p.Tk - off - 1u ? p.Tk : i + off + 1u;
  }
  uint neg = uint(-p.offset);
  return i + 1u > neg ? i + 1u - neg : 0u;
}

// The first query row that sees key j (every later row does too); Tq when none does.
uint attn_first_row(uint j) {
  if (!attn_has(ATTN_CAUSAL)) return 0u;
  if (p.offset >= 0) return j > uint(p.offset) ? min(j - uint(p.offset), p.Tq) : 0u;
  return min(j + uint(-p.offset), p.Tq); // j < 2^31 and -offset <= Tq < 2^31: no overflow
}

// a[ra, ra + dh) . b[rb, rb + dh), in order, ATTN_W columns an iteration.
float attn_dot(F32 a, uint ra, F32 b, uint rb) {
  float s = 0.0;
  for (uint c = 0u; c < p.dh; c += ATTN_W) {
    [[unroll]] for (uint t = 0u; t < ATTN_W; t++)
      if (c + t < p.dh) s += a.v[ra + c + t] * b.v[rb + c + t];
  }
  return s;
}
