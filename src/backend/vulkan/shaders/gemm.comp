// C[i] = op(A)[i] op(B)[i] (+ bias) (+ C[i] when accumulating) for i < batch, each operand by element strides over
// (batch, row, column), so transposed, batched, shared (stride 0) and interleaved layouts need no copy. 16 x 16 tiles
// of C per workgroup, through shared-memory tiles of A and B; every loop bound is uniform across a workgroup, so the
// barriers are reached by all of it, and grid-stride loops cover what the capped group counts do not.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define TILE 16
layout(local_size_x = TILE, local_size_y = TILE) in;
layout(push_constant) uniform Args {
  F32 a; F32 b; F32 c; F32 bias;
  uint m, n, k, batch;
  uint a_b, a_r, a_c, b_b, b_r, b_c, c_b, c_r, c_c; // strides of op(A) [m, k], op(B) [k, n], C [m, n]
  uint bias_b, has_bias, accumulate;                 // bias [batch or 1, n] (bias_b 0: shared by the batches)
} p;

shared float sa[TILE][TILE + 1]; // [row][k] of op(A)'s tile (+1: no bank conflicts on the column reads)
shared float sb[TILE][TILE + 1]; // [k][column] of op(B)'s tile

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y; // column, row within the tile
  uint tiles_m = (p.m + TILE - 1) / TILE, tiles_n = (p.n + TILE - 1) / TILE;
  for (uint z = gl_WorkGroupID.z; z < p.batch; z += gl_NumWorkGroups.z)
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y)
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        uint row = tm * TILE + ty, col = tn * TILE + tx;
        float acc = 0.0;
        for (uint k0 = 0u; k0 < p.k; k0 += TILE) {
          uint ka = k0 + tx, kb = k0 + ty;
          sa[ty][tx] = row < p.m && ka < p.k ? p.a.v[z * p.a_b + row * p.a_r + ka * p.a_c] : 0.0;
          sb[ty][tx] = kb < p.k && col < p.n ? p.b.v[z * p.b_b + kb * p.b_r + col * p.b_c] : 0.0;
          barrier();
          for (uint kk = 0u; kk < TILE; kk++) acc += sa[ty][kk] * sb[kk][tx];
          barrier();
        }
        if (row < p.m && col < p.n) {
          uint ci = z * p.c_b + row * p.c_r + col * p.c_c;
          if (p.has_bias != 0u) acc += p.bias.v[z * p.bias_b + col];
          p.c.v[ci] = p.accumulate != 0u ? p.c.v[ci] + acc : acc; // C is never read when written fresh
        }
      }
}
