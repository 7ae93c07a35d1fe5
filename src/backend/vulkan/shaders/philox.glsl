// Philox4x32-10 (base/philox.h) in 32-bit words: the four words of counter ctr under key seed and stream, each 64-bit
// value as (low, high), so the Vulkan kernels draw the bits the CPU and CUDA kernels draw.
uvec4 tg_philox(uvec2 seed, uvec2 stream, uvec2 ctr) {
  uint c0 = ctr.x, c1 = ctr.y, c2 = stream.x, c3 = stream.y, k0 = seed.x, k1 = seed.y;
  for (int round = 0; round < 10; round++) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c0, hi0, lo0);
    umulExtended(0xCD9E8D57u, c2, hi1, lo1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return uvec4(c0, c1, c2, c3);
}

// The run's key (offset << 20) | stream, 64-bit values as (low, high).
uvec2 tg_philox_key(uvec2 offset, uvec2 stream) {
  return uvec2((offset.x << 20) | stream.x, (offset.y << 20) | (offset.x >> 12) | stream.y);
}
