/* Parquet: snappy pages decoded in place of libsnappy's decoder, copying 16 bytes at a time where the buffers have
 * room (libsnappy calls memmove for every literal longer than 16 bytes, which made it half of a Parquet read). */
#include "data/readers/parquet/parquet.h"

/* The preamble: the uncompressed length as a varint of at most 5 bytes (32 bits). Returns the bytes it took, 0 when
 * it is malformed. */
static size_t preamble(const uint8_t *p, size_t n, uint64_t *len) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && i < 5; i++) {
    v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      if (v > UINT32_MAX) return 0;
      *len = v;
      return i + 1;
    }
  }
  return 0;
}

int tg_pq_snappy_length(const uint8_t *src, size_t n, uint64_t *len) { return preamble(src, n, len) != 0; }

/* The tags (the format's description: https://github.com/google/snappy/blob/main/format_description.txt): the low two
 * bits of a tag byte pick a literal (00: its length - 1 in the upper six bits, or in the 1-4 bytes after when those
 * say 60-63), or a copy of earlier output: 01 length 4-11 and an 11-bit offset, 10 length 1-64 and a 16-bit offset,
 * 11 length 1-64 and a 32-bit offset. */
int tg_pq_snappy_decode(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, size_t cap) {
  uint64_t want = 0;
  size_t head = preamble(src, n, &want);
  if (!head || want != dn || cap < dn) return 0;
  const uint8_t *p = src + head, *pe = src + n;
  uint8_t *q = dst, *qe = dst + dn, *qcap = dst + cap;
  while (p < pe) {
    uint32_t tag = *p++;
    size_t len, off;
    if ((tag & 3) == 0) {
      len = (tag >> 2) + 1;
      if (len > 60) { /* the length's bytes follow */
        size_t k = len - 60;
        if ((size_t)(pe - p) < k) return 0;
        len = 0;
        for (size_t i = 0; i < k; i++) len |= (size_t)p[i] << (8 * i);
        len += 1;
        p += k;
      }
      if ((size_t)(pe - p) < len || (size_t)(qe - q) < len) return 0;
      if (len <= 16 && pe - p >= 16 && qcap - q >= 16) memcpy(q, p, 16); /* the bytes past len are written again */
      else memcpy(q, p, len);
      p += len;
      q += len;
      continue;
    }
    if ((tag & 3) == 1) {
      if (p >= pe) return 0;
      len = ((tag >> 2) & 7) + 4;
      off = ((size_t)(tag >> 5) << 8) | *p++;
    } else if ((tag & 3) == 2) {
      if (pe - p < 2) return 0;
      len = (tag >> 2) + 1;
      off = (size_t)p[0] | (size_t)p[1] << 8;
      p += 2;
    } else {
      if (pe - p < 4) return 0;
      len = (tag >> 2) + 1;
      off = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
      p += 4;
    }
    if (off == 0 || off > (size_t)(q - dst) || (size_t)(qe - q) < len) return 0;
    const uint8_t *from = q - off;
    if (off >= 16 && qcap - q >= 64) { /* whole 16-byte pieces, each read after the output it reads is written */
      for (size_t k = 0; k < len; k += 16) memcpy(q + k, from + k, 16);
    } else if (off >= 8 && qcap - q >= 64) {
      for (size_t k = 0; k < len; k += 8) memcpy(q + k, from + k, 8);
    } else { /* a short period repeats: byte by byte */
      for (size_t k = 0; k < len; k++) q[k] = from[k];
    }
    q += len;
  }
  return q == qe;
}
