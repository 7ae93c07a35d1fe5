/* Parquet: PLAIN strings (BYTE_ARRAY), each added to a category table and decoded as its code. */
#include "data/parquet/parquet.h"

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
