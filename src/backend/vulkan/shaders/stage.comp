// The staged-batch gather (base/shuffle.h's tg_batch_entry) on the device, an invocation per batch element i: element
// cursor + i of the epoch's order (the keyed Feistel permutation with cycle walking when shuffling), its split start by
// binary search over the runs, then the window's rows idx [b, L] (i64), its last row rows [b] (i64), that row's class
// labels [b] (i32) and instrument inst [b] (i64). 64-bit values are (low, high) words: no 64-bit integers needed.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "philox.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  U32 rows; U32 inst; U32 cls; U32 prefix; U32 begin; U32 idx; U32 orows; U32 labels; U32 oinst;
  uint k; uint shuffle; uvec2 count; uvec2 seed; uvec2 epoch; uvec2 cursor; uint L; uint b;
} p;

uvec2 add64(uvec2 a, uvec2 b) {
  uint lo = a.x + b.x;
  return uvec2(lo, a.y + b.y + (lo < a.x ? 1u : 0u));
}
uvec2 sub64(uvec2 a, uvec2 b) { return uvec2(a.x - b.x, a.y - b.y - (a.x < b.x ? 1u : 0u)); }
bool less64(uvec2 a, uvec2 b) { return a.y < b.y || (a.y == b.y && a.x < b.x); }
uvec2 shl64(uvec2 a, int s) {
  if (s == 0) return a;
  return s >= 32 ? uvec2(0u, a.x << uint(s - 32)) : uvec2(a.x << uint(s), (a.y << uint(s)) | (a.x >> uint(32 - s)));
}
uvec2 shr64(uvec2 a, int s) {
  if (s == 0) return a;
  return s >= 32 ? uvec2(a.y >> uint(s - 32), 0u) : uvec2((a.x >> uint(s)) | (a.y << uint(32 - s)), a.y >> uint(s));
}
uvec2 mask64(int bits) { return sub64(shl64(uvec2(1u, 0u), bits), uvec2(1u, 0u)); } // bits < 64
uvec2 word64(U32 t, uint i) { return uvec2(t.v[2u * i], t.v[2u * i + 1u]); }

int shuffle_bits(uvec2 count) { // the smallest bits with 2^bits >= count
  int bits = 0;
  while (bits < 63 && less64(shl64(uvec2(1u, 0u), bits), count)) bits++;
  return bits;
}

uvec2 feistel_round(int bits, int round, uvec2 x) {
  int a = (round & 1) != 0 ? bits - bits / 2 : bits / 2, b = bits - a;
  uvec2 lo = x & mask64(b), hi = shr64(x, b);
  uvec2 stream = add64(uvec2(0u, 0x40000000u), p.epoch); // TG_SAMPLER_STREAM (2^62) + epoch
  uvec2 ctr = uvec2(lo.x, lo.y | (uint(round) << 24));   // round << 56 | lo
  uint w0 = tg_philox(p.seed, stream, ctr).x;
  return shl64(lo, a) | ((hi ^ uvec2(w0, 0u)) & mask64(a));
}

uvec2 shuffle_index(uvec2 e) {
  int bits = shuffle_bits(p.count);
  uvec2 x = e;
  do {
    for (int r = 0; r < 8; r++) x = feistel_round(bits, r, x); // TG_SHUFFLE_ROUNDS
  } while (!less64(x, p.count));
  return x;
}

uint split_start(uvec2 e) { // begin[r] + (e - prefix[r]), r the last run with prefix[r] <= e
  int lo = 0, hi = int(p.k) - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (!less64(e, word64(p.prefix, uint(mid)))) lo = mid;
    else hi = mid - 1;
  }
  return add64(word64(p.begin, uint(lo)), sub64(e, word64(p.prefix, uint(lo)))).x;
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.b; i += TG_STRIDE) {
    uvec2 e = add64(p.cursor, uvec2(i, 0u));
    if (p.shuffle != 0u) e = shuffle_index(e);
    uint start = split_start(e);
    for (uint l = 0u; l < p.L; l++) {
      p.idx.v[2u * (i * p.L + l)] = p.rows.v[2u * (start + l)];
      p.idx.v[2u * (i * p.L + l) + 1u] = p.rows.v[2u * (start + l) + 1u];
    }
    uint last = p.rows.v[2u * (start + p.L - 1u)]; // a row index below 2^32
    p.orows.v[2u * i] = last, p.orows.v[2u * i + 1u] = p.rows.v[2u * (start + p.L - 1u) + 1u];
    p.labels.v[i] = p.cls.v[last];
    uint in_ = p.inst.v[last];
    p.oinst.v[2u * i] = in_, p.oinst.v[2u * i + 1u] = (in_ & 0x80000000u) != 0u ? 0xFFFFFFFFu : 0u;
  }
}
