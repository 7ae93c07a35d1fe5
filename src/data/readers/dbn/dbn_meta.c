/* DBN metadata: the prelude, the fixed fields of versions 1-3, and a bounds-checked walk of the variable part. */
#include <stdio.h>
#include "data/readers/dbn/dbn_internal.h"

/* A cursor over the metadata body that never moves past end. */
typedef struct cursor {
  const tg_dbn_stream *s;
  size_t pos, end;
} cursor;

/* Fails unless n more bytes (n may be huge: a count times a length) fit before the metadata end. */
static tg_status need(cursor *c, uint64_t n, const char *what) {
  if (n > c->end - c->pos)
    return tg_dbn_fail(c->s, TG_ERR_FORMAT, c->pos,
                       "metadata %s needs %llu bytes but the metadata ends %zu bytes later (at byte %zu)", what,
                       (unsigned long long)n, c->end - c->pos, c->end);
  return TG_OK;
}

static tg_status take_u32(cursor *c, const char *what, uint32_t *v) {
  tg_status st = need(c, 4, what);
  if (st != TG_OK) return st;
  *v = tg_dbn_u32(c->s->p + c->pos);
  c->pos += 4;
  return TG_OK;
}

/* A u32 count followed by count fixed-length symbol strings. */
static tg_status skip_symbols(cursor *c, uint32_t symbol_len, const char *what) {
  uint32_t count;
  tg_status st = take_u32(c, what, &count);
  if (st != TG_OK) return st;
  st = need(c, (uint64_t)count * symbol_len, what);
  if (st != TG_OK) return st;
  c->pos += (size_t)count * symbol_len;
  return TG_OK;
}

/* mappings: u32 count, then per mapping a raw symbol, u32 interval count, and intervals of
 * (u32 start date, u32 end date, symbol). Each mapping takes at least 5 bytes, so the loop ends. */
static tg_status skip_mappings(cursor *c, uint32_t symbol_len) {
  uint32_t count;
  tg_status st = take_u32(c, "mapping count", &count);
  for (uint32_t i = 0; st == TG_OK && i < count; i++) {
    uint32_t intervals;
    st = need(c, symbol_len, "mapping symbol");
    if (st != TG_OK) break;
    c->pos += symbol_len;
    st = take_u32(c, "mapping interval count", &intervals);
    if (st != TG_OK) break;
    uint64_t bytes = (uint64_t)intervals * (8u + symbol_len);
    st = need(c, bytes, "mapping intervals");
    if (st == TG_OK) c->pos += (size_t)bytes;
  }
  return st;
}

static int schema_is_ohlcv(unsigned schema) {
  return (schema >= 5 && schema <= 8) || schema == 13 || schema == 0xFFFF;
}

tg_status tg_dbn_meta_read(const tg_dbn_stream *s, tg_dbn_meta *m) {
  const unsigned char *p = s->p;
  size_t n = s->len;
  memset(m, 0, sizeof *m);
  if (n == 0) return tg_dbn_fail(s, TG_ERR_FORMAT, 0, "no data: the DBN stream is empty");
  size_t magic_len = n < 3 ? n : 3;
  if (memcmp(p, "DBN", magic_len) != 0)
    return tg_dbn_fail(s, TG_ERR_FORMAT, 0, "not DBN data: it does not start with \"DBN\"");
  if (n < 4)
    return tg_dbn_fail(s, TG_ERR_FORMAT, n, "the data ends inside the 8-byte DBN prelude (%zu bytes)", n);
  m->version = p[3];
  if (m->version > TG_DBN_MAX_VERSION)
    return tg_dbn_fail(s, TG_ERR_UNSUPPORTED, 3,
                       "DBN version %d is newer than this reader supports (versions 1 to %d); "
                       "re-encode it as DBN version %d or older with Databento's tools",
                       m->version, TG_DBN_MAX_VERSION, TG_DBN_MAX_VERSION);
  if (m->version == 0) return tg_dbn_fail(s, TG_ERR_FORMAT, 3, "DBN version 0 is not a valid version");
  if (n < TG_DBN_PRELUDE_LEN)
    return tg_dbn_fail(s, TG_ERR_FORMAT, n, "the data ends inside the 8-byte DBN prelude (%zu bytes)", n);
  uint32_t meta_len = tg_dbn_u32(p + 4);
  if (meta_len < TG_DBN_META_FIXED_LEN)
    return tg_dbn_fail(s, TG_ERR_FORMAT, 4, "metadata length %u is below the %d-byte minimum", meta_len,
                       TG_DBN_META_FIXED_LEN);
  if (meta_len > n - TG_DBN_PRELUDE_LEN)
    return tg_dbn_fail(s, TG_ERR_FORMAT, 4,
                       "metadata length %u runs past the end of the data (%zu bytes follow the prelude); "
                       "the file is truncated or corrupt",
                       meta_len, n - TG_DBN_PRELUDE_LEN);
  m->records_at = TG_DBN_PRELUDE_LEN + (size_t)meta_len;

  memcpy(m->dataset, p + 8, 16);
  m->dataset[16] = '\0';
  m->schema = tg_dbn_u16(p + 24);
  /* start, end, limit at 26, 34, 42; v1 then has a deprecated record count */
  size_t flags = m->version == 1 ? 58 : 50; /* stype_in, stype_out, ts_out */
  unsigned ts_out = p[flags + 2];
  if (ts_out > 1)
    return tg_dbn_fail(s, TG_ERR_FORMAT, flags + 2, "metadata ts_out is %u; it must be 0 or 1", ts_out);
  m->ts_out = (int)ts_out;
  m->symbol_len = m->version == 1 ? 22 : tg_dbn_u16(p + 53);
  if (m->symbol_len == 0)
    return tg_dbn_fail(s, TG_ERR_FORMAT, 53, "metadata symbol length is 0; symbol strings need at least a NUL");

  cursor c = {s, TG_DBN_PRELUDE_LEN + TG_DBN_META_FIXED_LEN, m->records_at};
  uint32_t schema_def_len;
  tg_status st = take_u32(&c, "schema definition length", &schema_def_len);
  if (st == TG_OK) st = need(&c, schema_def_len, "schema definition");
  if (st == TG_OK) c.pos += schema_def_len;
  if (st == TG_OK) st = skip_symbols(&c, m->symbol_len, "symbols");
  if (st == TG_OK) st = skip_symbols(&c, m->symbol_len, "partial symbols");
  if (st == TG_OK) st = skip_symbols(&c, m->symbol_len, "not-found symbols");
  m->mappings_at = c.pos;
  if (st == TG_OK) st = skip_mappings(&c, m->symbol_len);
  if (st != TG_OK) return st;
  /* Whatever follows (v3 pads to a multiple of 8) up to records_at is skipped. */
  return TG_OK;
}

tg_status tg_dbn_meta_parse(const tg_dbn_stream *s, tg_dbn_meta *m) {
  tg_status st = tg_dbn_meta_read(s, m);
  if (st != TG_OK) return st;
  if (!schema_is_ohlcv(m->schema)) {
    const char *name = tg_dbn_schema_name(m->schema);
    if (name)
      return tg_dbn_fail(s, TG_ERR_UNSUPPORTED, 24,
                         "the file holds %s records (schema %u); this reader reads OHLCV bars only", name,
                         (unsigned)m->schema);
    return tg_dbn_fail(s, TG_ERR_UNSUPPORTED, 24, "unknown schema %u; this reader reads OHLCV bars only",
                       (unsigned)m->schema);
  }
  return TG_OK;
}
