/* Parquet: the RLE / bit-packed hybrid (definition levels, dictionary indices, RLE booleans). */
#include "data/readers/parquet/parquet.h"

int tg_pq_bit_width(uint32_t max) {
  int b = 0;
  while (max) {
    b++;
    max >>= 1;
  }
  return b;
}

void tg_pq_rle_init(tg_pq_rle *r, const uint8_t *p, const uint8_t *end, int bw) {
  memset(r, 0, sizeof *r);
  r->p = p;
  r->end = end;
  r->bw = bw;
}

/* 1: a run started; 0: no data left; -1: malformed */
static int read_header(tg_pq_rle *r) {
  if (r->p >= r->end) return 0;
  uint64_t h = 0;
  for (int shift = 0;; shift += 7) {
    if (r->p >= r->end || shift > 28) return -1; /* truncated, or longer than a 32-bit varint */
    uint8_t b = *r->p++;
    h |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if (h > UINT32_MAX) return -1;
  int bw = r->bw;
  if (h & 1) { /* bit-packed: groups of 8 values, bw bytes per group */
    uint64_t groups = h >> 1, count = groups * 8, bytes = groups * (uint64_t)bw;
    size_t avail = (size_t)(r->end - r->p);
    r->lit = r->p;
    if (bytes <= avail) {
      r->lit_left = count;
      r->p += bytes;
    } else { /* a short final run: only the values whose bits are all present */
      r->lit_left = avail * 8 / (uint64_t)bw;
      r->p = r->end;
      if (r->lit_left == 0) return -1;
    }
    r->lit_end = r->p;
    r->lit_pos = 0;
  } else { /* repeated: a count and one value of ceil(bw/8) bytes */
    int nb = (bw + 7) / 8;
    if (r->end - r->p < nb) return -1;
    uint32_t v = 0;
    for (int i = 0; i < nb; i++) v |= (uint32_t)r->p[i] << (8 * i);
    r->p += nb;
    if (bw < 32 && (v >> bw)) return -1;
    r->run_left = h >> 1;
    r->run_value = v;
  }
  return 1;
}

/* k values of width bw starting at value index first of a bit-packed run (LSB first). */
static void unpack(const uint8_t *base, const uint8_t *end, uint64_t first, uint64_t k, int bw, uint32_t *out) {
  if (bw == 0) {
    memset(out, 0, (size_t)k * sizeof *out);
    return;
  }
  uint64_t mask = bw == 32 ? 0xffffffffu : ((1u << bw) - 1);
  uint64_t bit = first * (uint64_t)bw, avail = (uint64_t)(end - base), i = 0;
  /* values whose 8-byte window lies inside the run are loaded without checks */
  if (avail >= 8) {
    uint64_t last_bit = (avail - 8) * 8 + 7; /* the last bit position a full load can start at */
    uint64_t fast = bit <= last_bit ? (last_bit - bit) / (uint64_t)bw + 1 : 0;
    if (fast > k) fast = k;
    for (; i < fast; i++, bit += (uint64_t)bw) out[i] = (uint32_t)((tg_pq_le64(base + (bit >> 3)) >> (bit & 7)) & mask);
  }
  for (; i < k; i++, bit += (uint64_t)bw) {
    const uint8_t *q = base + (bit >> 3);
    uint64_t wv = 0;
    for (int j = 0; j < end - q && j < 8; j++) wv |= (uint64_t)q[j] << (8 * j);
    out[i] = (uint32_t)((wv >> (bit & 7)) & mask);
  }
}

int tg_pq_rle_next(tg_pq_rle *r, uint32_t *buf, uint64_t max, uint64_t *n, uint32_t *value) {
  for (;;) {
    if (r->run_left) {
      uint64_t k = r->run_left < max ? r->run_left : max;
      r->run_left -= k;
      *n = k;
      *value = r->run_value;
      return 1;
    }
    if (r->lit_left) {
      uint64_t k = r->lit_left < max ? r->lit_left : max;
      unpack(r->lit, r->lit_end, r->lit_pos, k, r->bw, buf);
      r->lit_pos += k;
      r->lit_left -= k;
      *n = k;
      return 2;
    }
    int h = read_header(r);
    if (h <= 0) return h;
  }
}

#define CHUNK 1024

tg_status tg_pq_decode_levels(const tg_pq_where *w, int64_t off, int encoding, const uint8_t *p, size_t len,
                              int max_def, int64_t n, uint8_t *valid, int64_t *present) {
  int bw = tg_pq_bit_width((uint32_t)max_def);
  int64_t got = 0;
  if (encoding == TG_PQ_BIT_PACKED) { /* deprecated: most significant bit first, no runs */
    uint64_t need = ((uint64_t)n * (uint64_t)bw + 7) / 8;
    if (need > len)
      return tg_pq_fail(w, TG_ERR_FORMAT, off, "bit-packed definition levels need %llu bytes, the page has %zu",
                        (unsigned long long)need, len);
    for (int64_t i = 0; i < n; i++) {
      uint64_t bit = (uint64_t)i * (uint64_t)bw;
      uint32_t v = 0;
      for (int j = 0; j < bw; j++, bit++) v = (v << 1) | ((p[bit >> 3] >> (7 - (bit & 7))) & 1u);
      if (v > (uint32_t)max_def)
        return tg_pq_fail(w, TG_ERR_FORMAT, off, "definition level %u above the column's maximum %d", v, max_def);
      valid[i] = v == (uint32_t)max_def;
      got += valid[i];
    }
    *present = got;
    return TG_OK;
  }
  if (encoding != TG_PQ_RLE)
    return tg_pq_fail(w, TG_ERR_UNSUPPORTED, off, "definition levels in encoding %s (%d) are not supported",
                      tg_pq_encoding_name(encoding), encoding);
  tg_pq_rle r;
  tg_pq_rle_init(&r, p, p + len, bw);
  uint32_t buf[CHUNK];
  int64_t i = 0;
  while (i < n) {
    uint64_t k;
    uint32_t v;
    int kind = tg_pq_rle_next(&r, buf, (uint64_t)(n - i < CHUNK ? n - i : CHUNK), &k, &v);
    if (kind <= 0)
      return tg_pq_fail(w, TG_ERR_FORMAT, off, "definition levels %s after %lld of %lld values",
                        kind < 0 ? "are malformed" : "end", (long long)i, (long long)n);
    if (kind == 1) {
      if (v > (uint32_t)max_def)
        return tg_pq_fail(w, TG_ERR_FORMAT, off, "definition level %u above the column's maximum %d", v, max_def);
      memset(valid + i, v == (uint32_t)max_def, (size_t)k);
      if (v == (uint32_t)max_def) got += (int64_t)k;
    } else {
      for (uint64_t j = 0; j < k; j++) {
        if (buf[j] > (uint32_t)max_def)
          return tg_pq_fail(w, TG_ERR_FORMAT, off, "definition level %u above the column's maximum %d", buf[j], max_def);
        valid[i + (int64_t)j] = buf[j] == (uint32_t)max_def;
        got += buf[j] == (uint32_t)max_def;
      }
    }
    i += (int64_t)k;
  }
  *present = got;
  return TG_OK;
}

tg_status tg_pq_decode_dict(const tg_pq_where *w, int64_t off, const uint8_t *p, size_t len, const uint64_t *dict,
                            int64_t ndict, int64_t n, unsigned char *dst) {
  if (n == 0) return TG_OK;
  if (len < 1) return tg_pq_fail(w, TG_ERR_FORMAT, off, "dictionary indices: no bit width byte");
  int bw = p[0];
  if (bw > 32) return tg_pq_fail(w, TG_ERR_FORMAT, off, "dictionary indices: bit width %d (over 32)", bw);
  if (!dict) return tg_pq_fail(w, TG_ERR_FORMAT, off, "dictionary-encoded page without a dictionary page");
  tg_pq_rle r;
  tg_pq_rle_init(&r, p + 1, p + len, bw);
  uint32_t buf[CHUNK];
  int64_t i = 0;
  while (i < n) {
    uint64_t k;
    uint32_t v;
    int kind = tg_pq_rle_next(&r, buf, (uint64_t)(n - i < CHUNK ? n - i : CHUNK), &k, &v);
    if (kind <= 0)
      return tg_pq_fail(w, TG_ERR_FORMAT, off, "dictionary indices %s after %lld of %lld values",
                        kind < 0 ? "are malformed" : "end", (long long)i, (long long)n);
    unsigned char *d = dst + 8 * i;
    if (kind == 1) {
      if ((int64_t)v >= ndict)
        return tg_pq_fail(w, TG_ERR_FORMAT, off, "dictionary index %u out of range (the dictionary has %lld entries)", v,
                          (long long)ndict);
      uint64_t x = dict[v];
      for (uint64_t j = 0; j < k; j++) tg_pq_st64(d + 8 * j, x);
    } else {
      uint32_t mx = 0;
      for (uint64_t j = 0; j < k; j++) mx = buf[j] > mx ? buf[j] : mx;
      if ((int64_t)mx >= ndict)
        return tg_pq_fail(w, TG_ERR_FORMAT, off, "dictionary index %u out of range (the dictionary has %lld entries)", mx,
                          (long long)ndict);
      for (uint64_t j = 0; j < k; j++) tg_pq_st64(d + 8 * j, dict[buf[j]]);
    }
    i += (int64_t)k;
  }
  return TG_OK;
}

tg_status tg_pq_decode_rle_bool(const tg_pq_where *w, int64_t off, const uint8_t *p, size_t len, int64_t n,
                                unsigned char *dst) {
  if (n == 0) return TG_OK;
  if (len < 4) return tg_pq_fail(w, TG_ERR_FORMAT, off, "RLE booleans: no length prefix");
  uint32_t l = tg_pq_le32(p);
  if (l > len - 4) return tg_pq_fail(w, TG_ERR_FORMAT, off, "RLE booleans: %u bytes stated, %zu present", l, len - 4);
  tg_pq_rle r;
  tg_pq_rle_init(&r, p + 4, p + 4 + l, 1);
  uint32_t buf[CHUNK];
  int64_t i = 0;
  while (i < n) {
    uint64_t k;
    uint32_t v;
    int kind = tg_pq_rle_next(&r, buf, (uint64_t)(n - i < CHUNK ? n - i : CHUNK), &k, &v);
    if (kind <= 0)
      return tg_pq_fail(w, TG_ERR_FORMAT, off, "RLE booleans %s after %lld of %lld values",
                        kind < 0 ? "are malformed" : "end", (long long)i, (long long)n);
    for (uint64_t j = 0; j < k; j++) tg_pq_st64(dst + 8 * (i + (int64_t)j), kind == 1 ? v : buf[j]);
    i += (int64_t)k;
  }
  return TG_OK;
}
