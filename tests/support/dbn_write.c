/* Synthetic DBN files for tests: the byte layouts of Databento's DBN versions 1-3, written little-endian. */
#include "support/dbn_write.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(tg_test_dbn *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->n + n) cap *= 2;
    unsigned char *w = realloc(b->p, cap);
    if (!w) abort();
    b->p = w;
    b->cap = cap;
  }
  if (src) memcpy(b->p + b->n, src, n);
  else memset(b->p + b->n, 0, n);
  b->n += n;
}

static void le(tg_test_dbn *b, uint64_t v, int width) {
  unsigned char x[8];
  for (int k = 0; k < width; k++) x[k] = (unsigned char)(v >> (8 * k));
  put(b, x, (size_t)width);
}

/* text in a field of len bytes, NUL-padded. */
static void cstr(tg_test_dbn *b, const char *text, size_t len) {
  size_t n = strlen(text);
  if (n >= len) n = len - 1;
  put(b, text, n);
  put(b, NULL, len - n);
}

/* Overwrites width bytes at off of the record starting at rec. */
static void set(tg_test_dbn *b, size_t rec, size_t off, uint64_t v, int width) {
  for (int k = 0; k < width; k++) b->p[rec + off + (size_t)k] = (unsigned char)(v >> (8 * k));
}

static uint64_t fixed(double v) { return isnan(v) ? (uint64_t)INT64_MAX : (uint64_t)(int64_t)llround(v * 1e9); }

void tg_test_dbn_begin(tg_test_dbn *b, int version, unsigned schema, int n_maps, const char *const *raw,
                       const uint32_t *ids) {
  memset(b, 0, sizeof *b);
  b->version = version;
  size_t L = version == 1 ? 22 : 71;
  size_t len = 100 + 4 + 4 + 4 + 4 + 4 + (size_t)n_maps * (L + 4 + 8 + L);
  if (version >= 3) len = (len + 7) & ~(size_t)7;
  put(b, "DBN", 3);
  le(b, (uint64_t)version, 1);
  le(b, len, 4);
  cstr(b, "GLBX.MDP3", 16);
  le(b, schema, 2);
  le(b, 1577836800000000000ull, 8); /* start 2020-01-01 */
  le(b, UINT64_MAX, 8);             /* end */
  le(b, 0, 8);                      /* limit */
  if (version == 1) le(b, UINT64_MAX, 8);
  le(b, 3, 1); /* stype_in parent */
  le(b, 0, 1); /* stype_out instrument_id */
  le(b, 0, 1); /* ts_out */
  if (version >= 2) {
    le(b, L, 2);
    put(b, NULL, 53);
  } else {
    put(b, NULL, 47);
  }
  le(b, 0, 4); /* schema definition */
  le(b, 0, 4); /* symbols */
  le(b, 0, 4); /* partial */
  le(b, 0, 4); /* not found */
  le(b, (uint64_t)n_maps, 4);
  for (int i = 0; i < n_maps; i++) {
    char id[16];
    snprintf(id, sizeof id, "%u", ids[i]);
    cstr(b, raw[i], L);
    le(b, 1, 4);
    le(b, 20200101, 4);
    le(b, 20300101, 4);
    cstr(b, id, L);
  }
  put(b, NULL, 8 + len - b->n);
}

/* The 16-byte header of a record of len bytes. */
static size_t header(tg_test_dbn *b, size_t len, unsigned rtype, uint32_t id, int64_t ts) {
  size_t at = b->n;
  put(b, NULL, len);
  set(b, at, 0, len / 4, 1);
  set(b, at, 1, rtype, 1);
  set(b, at, 2, 1, 2);
  set(b, at, 4, id, 4);
  set(b, at, 8, (uint64_t)ts, 8);
  return at;
}

void tg_test_dbn_trade(tg_test_dbn *b, uint32_t id, int64_t ts, double price, uint32_t size, char side) {
  size_t at = header(b, 48, 0x00, id, ts);
  set(b, at, 16, fixed(price), 8);
  set(b, at, 24, size, 4);
  set(b, at, 28, 'T', 1);
  set(b, at, 29, (unsigned char)side, 1);
  set(b, at, 32, (uint64_t)ts, 8); /* ts_recv */
}

void tg_test_dbn_definition(tg_test_dbn *b, uint32_t id, int64_t ts, const char *raw_symbol, char instrument_class,
                            int64_t expiration, double multiplier, double tick_size) {
  /* by version: length, unit_of_measure_qty, contract_multiplier, raw_symbol (and its length), instrument_class */
  static const size_t lay[3][6] = {{360, 88, 160, 200, 22, 325}, {400, 88, 164, 200, 71, 374},
                                   {520, 80, 176, 238, 71, 487}};
  const size_t *l = lay[b->version - 1];
  size_t at = header(b, l[0], 0x13, id, ts);
  set(b, at, 16, (uint64_t)ts, 8);
  set(b, at, 24, fixed(tick_size), 8);
  set(b, at, 40, expiration == INT64_MIN ? UINT64_MAX : (uint64_t)expiration, 8);
  set(b, at, 48, UINT64_MAX, 8); /* activation */
  set(b, at, l[1], fixed(multiplier), 8);
  set(b, at, l[2], INT32_MAX, 4);
  size_t n = strlen(raw_symbol);
  memcpy(b->p + at + l[3], raw_symbol, n < l[4] ? n : l[4] - 1);
  set(b, at, l[5], (unsigned char)instrument_class, 1);
}

void tg_test_dbn_stat(tg_test_dbn *b, uint32_t id, int64_t ts, uint16_t stat_type, int64_t ts_ref, int64_t quantity) {
  int v3 = b->version >= 3;
  size_t at = header(b, v3 ? 80 : 64, 0x18, id, ts);
  set(b, at, 16, (uint64_t)ts, 8);
  set(b, at, 24, ts_ref == INT64_MIN ? UINT64_MAX : (uint64_t)ts_ref, 8);
  set(b, at, 32, (uint64_t)INT64_MAX, 8);
  set(b, at, 40, (uint64_t)quantity, v3 ? 8 : 4);
  set(b, at, v3 ? 56 : 52, stat_type, 2);
  set(b, at, v3 ? 60 : 56, 1, 1);
}

int tg_test_dbn_save(const tg_test_dbn *b, const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(b->p, 1, b->n, f);
  return fclose(f) != 0 || w != b->n ? -1 : 0;
}

void tg_test_dbn_free(tg_test_dbn *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}
