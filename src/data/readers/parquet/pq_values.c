/* Parquet: value encodings PLAIN, DELTA_BINARY_PACKED and BYTE_STREAM_SPLIT, decoded into 8-byte lanes. */
#include <math.h>
#include "data/readers/parquet/parquet.h"

#define JULIAN_EPOCH 2440588LL /* Julian day number of 1970-01-01 */
#define NS_PER_DAY 86400000000000LL

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0) v = ldexp((double)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexp((double)(m + 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

static void st_f64(unsigned char *d, double x) { memcpy(d, &x, 8); }

/* One FIXED_LEN_BYTE_ARRAY value of l bytes (l <= 8) as a lane. */
static uint64_t flba_lane(const uint8_t *p, int l, int flba) {
  if (flba == 1) { /* float16, little-endian */
    double x = half_to_double((uint16_t)(p[0] | p[1] << 8));
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
  }
  uint64_t v = 0; /* decimal: big-endian two's complement */
  for (int i = 0; i < l; i++) v = (v << 8) | p[i];
  if (l < 8 && (p[0] & 0x80)) v |= ~0ULL << (8 * l);
  return v;
}

static int plain_size(const tg_pq_kind *k, int64_t n, uint64_t *need) {
  uint64_t u = (uint64_t)n;
  switch (k->physical) {
    case TG_PQ_BOOLEAN: *need = (u + 7) / 8; return 1;
    case TG_PQ_INT32:
    case TG_PQ_FLOAT: *need = u * 4; return 1;
    case TG_PQ_INT64:
    case TG_PQ_DOUBLE: *need = u * 8; return 1;
    case TG_PQ_INT96: *need = u * 12; return 1;
    case TG_PQ_FIXED_LEN_BYTE_ARRAY: *need = u * (uint64_t)k->type_length; return k->type_length <= 8;
    default: return 0;
  }
}

tg_status tg_pq_decode_plain(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p, size_t len,
                             int64_t n, unsigned char *dst) {
  if (k->lane == TG_PQ_LANE_CODE) return tg_pq_decode_strings(w, off, k, p, len, n, dst);
  uint64_t need;
  if (!plain_size(k, n, &need))
    return tg_pq_fail(w, TG_ERR_UNSUPPORTED, off, "PLAIN values of type %s are not read", tg_pq_type_name(k->physical));
  if (need > len)
    return tg_pq_fail(w, TG_ERR_FORMAT, off, "PLAIN data has %zu bytes; %lld %s values need %llu", len, (long long)n,
                      tg_pq_type_name(k->physical), (unsigned long long)need);
  switch (k->physical) {
    case TG_PQ_BOOLEAN:
      for (int64_t i = 0; i < n; i++) tg_pq_st64(dst + 8 * i, (p[i >> 3] >> (i & 7)) & 1u);
      break;
    case TG_PQ_INT32:
      for (int64_t i = 0; i < n; i++) tg_pq_st64(dst + 8 * i, (uint64_t)(int64_t)(int32_t)tg_pq_le32(p + 4 * i));
      break;
    case TG_PQ_INT64:
    case TG_PQ_DOUBLE:
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      if (n) memcpy(dst, p, (size_t)n * 8);
#else
      for (int64_t i = 0; i < n; i++) tg_pq_st64(dst + 8 * i, tg_pq_le64(p + 8 * i));
#endif
      break;
    case TG_PQ_FLOAT:
      for (int64_t i = 0; i < n; i++) {
        uint32_t u = tg_pq_le32(p + 4 * i);
        float x;
        memcpy(&x, &u, 4);
        st_f64(dst + 8 * i, (double)x);
      }
      break;
    case TG_PQ_INT96:
      for (int64_t i = 0; i < n; i++) { /* nanoseconds of the day, then the Julian day */
        uint64_t nanos = tg_pq_le64(p + 12 * i);
        int64_t days = (int64_t)tg_pq_le32(p + 12 * i + 8) - JULIAN_EPOCH, ns;
        if (nanos > (uint64_t)INT64_MAX || __builtin_mul_overflow(days, NS_PER_DAY, &ns) ||
            __builtin_add_overflow(ns, (int64_t)nanos, &ns))
          return tg_pq_fail(w, TG_ERR_FORMAT, off, "INT96 timestamp (day %lld, %llu ns) is outside the int64 "
                            "nanosecond range", (long long)days, (unsigned long long)nanos);
        tg_pq_st64(dst + 8 * i, (uint64_t)ns);
      }
      break;
    case TG_PQ_FIXED_LEN_BYTE_ARRAY:
      for (int64_t i = 0; i < n; i++) tg_pq_st64(dst + 8 * i, flba_lane(p + (size_t)k->type_length * (size_t)i, k->type_length, k->flba));
      break;
  }
  return TG_OK;
}

/* ---------------------------------------------------------------- DELTA_BINARY_PACKED */

static int uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t x = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*p >= end) return 0;
    uint8_t b = *(*p)++;
    if (shift == 63 && (b & 0x7e)) return 0;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return 1;
    }
  }
  return 0;
}

/* bw (0..64) bits at bit offset bit of p (LSB first); the bytes are known to be present up to end. */
static uint64_t bits_at(const uint8_t *p, const uint8_t *end, uint64_t bit, int bw) {
  if (bw == 0) return 0;
  const uint8_t *q = p + (bit >> 3);
  int sh = (int)(bit & 7);
  uint8_t tmp[9] = {0};
  size_t have = (size_t)(end - q) < 9 ? (size_t)(end - q) : 9;
  memcpy(tmp, q, have);
  uint64_t v = tg_pq_le64(tmp) >> sh;
  if (sh && sh + bw > 64) v |= (uint64_t)tmp[8] << (64 - sh);
  return bw == 64 ? v : v & ((1ULL << bw) - 1);
}

tg_status tg_pq_decode_delta(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p, size_t len,
                             int64_t n, unsigned char *dst, size_t *used) {
  int is32 = k->physical == TG_PQ_INT32;
  if (!is32 && k->physical != TG_PQ_INT64)
    return tg_pq_fail(w, TG_ERR_UNSUPPORTED, off, "DELTA_BINARY_PACKED for %s is not supported", tg_pq_type_name(k->physical));
  const uint8_t *q = p, *end = p + len;
  uint64_t block, nmini, total, first;
  if (!uvarint(&q, end, &block) || !uvarint(&q, end, &nmini) || !uvarint(&q, end, &total) || !uvarint(&q, end, &first))
    return tg_pq_fail(w, TG_ERR_FORMAT, off, "DELTA_BINARY_PACKED: truncated header");
  if (block == 0 || block % 128 || block > (1u << 20) || nmini == 0 || block % nmini || (block / nmini) % 32)
    return tg_pq_fail(w, TG_ERR_FORMAT, off, "DELTA_BINARY_PACKED: bad block layout (%llu values in %llu miniblocks)",
                      (unsigned long long)block, (unsigned long long)nmini);
  if (total < (uint64_t)n)
    return tg_pq_fail(w, TG_ERR_FORMAT, off, "DELTA_BINARY_PACKED: header holds %llu values, the page needs %lld",
                      (unsigned long long)total, (long long)n);
  if (used) *used = (size_t)(q - p);
  if (n == 0) return TG_OK;
  uint64_t mini = block / nmini, cur = (first >> 1) ^ (0 - (first & 1)); /* zigzag */
  int maxbw = is32 ? 32 : 64;
#define EMIT(i, x) tg_pq_st64(dst + 8 * (i), is32 ? (uint64_t)(int64_t)(int32_t)(uint32_t)(x) : (x))
  EMIT(0, cur);
  int64_t got = 1;
  while (got < n) {
    uint64_t zz;
    if (!uvarint(&q, end, &zz)) return tg_pq_fail(w, TG_ERR_FORMAT, off, "DELTA_BINARY_PACKED: truncated block header");
    uint64_t min_delta = (zz >> 1) ^ (0 - (zz & 1));
    if ((uint64_t)(end - q) < nmini)
      return tg_pq_fail(w, TG_ERR_FORMAT, off, "DELTA_BINARY_PACKED: truncated miniblock widths");
    const uint8_t *widths = q;
    q += nmini;
    for (uint64_t m = 0; m < nmini && got < n; m++) {
      int bw = widths[m];
      if (bw > maxbw) return tg_pq_fail(w, TG_ERR_FORMAT, off, "DELTA_BINARY_PACKED: miniblock bit width %d", bw);
      uint64_t take = (uint64_t)(n - got) < mini ? (uint64_t)(n - got) : mini;
      uint64_t need = (take * (uint64_t)bw + 7) / 8, full = mini * (uint64_t)bw / 8;
      if (need > (uint64_t)(end - q))
        return tg_pq_fail(w, TG_ERR_FORMAT, off, "DELTA_BINARY_PACKED: truncated miniblock after %lld of %lld values",
                          (long long)got, (long long)n);
      const uint8_t *mend = q + need;
      for (uint64_t j = 0; j < take; j++) {
        cur += min_delta + bits_at(q, mend, j * (uint64_t)bw, bw);
        EMIT(got + (int64_t)j, cur);
      }
      got += (int64_t)take;
      q += full < (uint64_t)(end - q) ? full : (uint64_t)(end - q);
    }
  }
#undef EMIT
  if (used) *used = (size_t)(q - p);
  return TG_OK;
}

/* ---------------------------------------------------------------- BYTE_STREAM_SPLIT */

tg_status tg_pq_decode_split(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p, size_t len,
                             int64_t n, unsigned char *dst) {
  int width;
  switch (k->physical) {
    case TG_PQ_INT32:
    case TG_PQ_FLOAT: width = 4; break;
    case TG_PQ_INT64:
    case TG_PQ_DOUBLE: width = 8; break;
    case TG_PQ_FIXED_LEN_BYTE_ARRAY: width = k->type_length; break;
    default:
      return tg_pq_fail(w, TG_ERR_FORMAT, off, "BYTE_STREAM_SPLIT is not defined for %s", tg_pq_type_name(k->physical));
  }
  if (width < 1 || width > 8) return tg_pq_fail(w, TG_ERR_UNSUPPORTED, off, "BYTE_STREAM_SPLIT of %d-byte values", width);
  if ((uint64_t)len != (uint64_t)n * (uint64_t)width)
    return tg_pq_fail(w, TG_ERR_FORMAT, off, "BYTE_STREAM_SPLIT data has %zu bytes; %lld values of %d bytes need %llu", len,
                      (long long)n, width, (unsigned long long)n * (unsigned long long)width);
  /* regroup a block at a time into PLAIN layout, then decode that */
  enum { BLOCK = 512 };
  uint8_t tmp[BLOCK * 8];
  size_t stride = (size_t)n;
  for (int64_t i = 0; i < n; i += BLOCK) {
    int64_t m = n - i < BLOCK ? n - i : BLOCK;
    for (int b = 0; b < width; b++) {
      const uint8_t *s = p + (size_t)b * stride + (size_t)i;
      for (int64_t j = 0; j < m; j++) tmp[j * width + b] = s[j];
    }
    tg_status st = tg_pq_decode_plain(w, off, k, tmp, (size_t)m * (size_t)width, m, dst + 8 * i);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}
