/* Parquet: strings (BYTE_ARRAY: PLAIN, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY), each added to a category table
 * and decoded as its code. */
#include "base/alloc.h"
#include "data/readers/parquet/parquet.h"

tg_status tg_pq_decode_strings(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p, size_t len,
                               int64_t n, unsigned char *dst) {
  size_t at = 0;
  for (int64_t i = 0; i < n; i++) {
    if (len - at < 4)
      return tg_pq_fail(w, TG_ERR_FORMAT, off, "PLAIN strings end after %lld of %lld values (no length)", (long long)i,
                        (long long)n);
    uint32_t l = tg_pq_le32(p + at);
    at += 4;
    if (l > len - at)
      return tg_pq_fail(w, TG_ERR_FORMAT, off, "PLAIN string %lld of %u bytes runs past the page's %zu", (long long)i, l,
                        len);
    uint32_t code;
    tg_status st = tg_categories_intern(k->cats, (const char *)p + at, l, &code);
    if (st != TG_OK) return st;
    tg_pq_st64(dst + 8 * i, code);
    at += l;
  }
  return TG_OK;
}

/* n string lengths (DELTA_BINARY_PACKED) from p into out[n]; *used receives the bytes they took. */
static tg_status lengths(const tg_pq_where *w, int64_t off, const uint8_t *p, size_t len, int64_t n, int64_t *out,
                         size_t *used) {
  tg_pq_kind k32;
  memset(&k32, 0, sizeof k32);
  k32.physical = TG_PQ_INT32;
  k32.lane = TG_PQ_LANE_I64;
  return tg_pq_decode_delta(w, off, &k32, p, len, n, (unsigned char *)out, used);
}

tg_status tg_pq_decode_delta_strings(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p,
                                     size_t len, int64_t n, int prefixed, unsigned char *dst) {
  const char *what = prefixed ? "DELTA_BYTE_ARRAY" : "DELTA_LENGTH_BYTE_ARRAY";
  int64_t *pre = tg_malloc(((size_t)n + 1) * 2 * sizeof *pre), *suf = pre ? pre + n + 1 : NULL;
  char *val = prefixed ? tg_malloc(len + 1) : NULL; /* a value is at most the suffix bytes so far */
  if (!pre || (prefixed && !val)) {
    tg_free(pre);
    tg_free(val);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld %s strings", w->path, (long long)n, what);
  }
  size_t at = 0, u = 0;
  tg_status st = prefixed ? lengths(w, off, p, len, n, pre, &at) : TG_OK;
  if (st == TG_OK) st = lengths(w, off, p + at, len - at, n, suf, &u);
  at += u;
  size_t vlen = 0;
  for (int64_t i = 0; i < n && st == TG_OK; i++) {
    int64_t a = prefixed ? pre[i] : 0, b = suf[i];
    if (a < 0 || (size_t)a > vlen || b < 0 || (uint64_t)b > len - at) {
      st = tg_pq_fail(w, TG_ERR_FORMAT, off, "%s: string %lld (prefix %lld, %lld bytes) does not fit the page", what,
                      (long long)i, (long long)a, (long long)b);
      break;
    }
    const char *s = (const char *)p + at;
    if (prefixed) {
      memcpy(val + a, s, (size_t)b);
      s = val;
    }
    vlen = (size_t)(a + b);
    uint32_t code;
    st = tg_categories_intern(k->cats, s, vlen, &code);
    tg_pq_st64(dst + 8 * i, code);
    at += (size_t)b;
  }
  tg_free(pre);
  tg_free(val);
  return st;
}
