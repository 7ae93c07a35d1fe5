/* DBN reference data: instrument definition (rtype 0x13) and statistics (rtype 0x18) records of versions 1-3. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/alloc.h"
#include "base/files.h"
#include "data/readers/dbn/dbn_internal.h"

enum { RTYPE_DEFINITION = 0x13, RTYPE_ERROR = 0x15, RTYPE_SYMBOL_MAPPING = 0x16, RTYPE_SYSTEM = 0x17, RTYPE_STAT = 0x18 };
enum { SCHEMA_DEFINITION = 9, SCHEMA_STATISTICS = 10, SCHEMA_NONE = 0xFFFF };

/* Where InstrumentDefMsg keeps the fields read here, by version (index 0: v1, 1: v2, 2: v3). ts_event (8),
 * instrument_id (4), min_price_increment (24) and expiration (40) are at the same place in every version. */
typedef struct def_layout {
  size_t len, unit_of_measure_qty, contract_multiplier, raw_symbol, symbol_len, instrument_class;
} def_layout;
static const def_layout k_def[3] = {
    {360, 88, 160, 200, 22, 325},
    {400, 88, 164, 200, 71, 374},
    {520, 80, 176, 238, 71, 487},
};

/* StatMsg: ts_ref (24) and price (32) everywhere; quantity is i32 before v3, i64 from v3. */
typedef struct stat_layout {
  size_t len, quantity_width, stat_type, update_action;
} stat_layout;
static const stat_layout k_stat[3] = {{64, 4, 52, 56}, {64, 4, 52, 56}, {80, 8, 56, 60}};

const char *tg_instrument_class_name(char c) {
  switch (c) {
    case 'B': return "bond";
    case 'C': return "call";
    case 'F': return "future";
    case 'K': return "stock";
    case 'M': return "mixed spread";
    case 'P': return "put";
    case 'S': return "future spread";
    case 'T': return "option spread";
    case 'X': return "fx spot";
    case 'Y': return "commodity spot";
    default: return "unknown";
  }
}

int tg_instrument_class_is_outright(char c) { return c == 'F'; }

static double fixed(int64_t raw) { return raw == TG_DBN_UNDEF_PRICE ? NAN : (double)raw / 1e9; }

static int64_t timestamp(uint64_t raw) { return raw > (uint64_t)INT64_MAX ? INT64_MIN : (int64_t)raw; }

/* Room for one more element in *v (each bytes wide) holding n of cap. */
static int grow(void **v, int64_t n, int64_t *cap, size_t each) {
  if (n < *cap) return 1;
  int64_t want = *cap ? *cap * 2 : 16;
  void *w = tg_malloc((size_t)want * each);
  if (!w) return 0;
  if (n) memcpy(w, *v, (size_t)n * each);
  tg_free(*v);
  *v = w;
  *cap = want;
  return 1;
}

static void decode_def(const unsigned char *r, const def_layout *l, uint64_t index, tg_instrument_def *d) {
  memset(d, 0, sizeof *d);
  d->id = tg_dbn_u32(r + 4);
  d->ts = timestamp(tg_dbn_u64(r + 8));
  d->record = (int64_t)index;
  size_t n = strnlen((const char *)r + l->raw_symbol, l->symbol_len);
  if (n >= sizeof d->symbol) n = sizeof d->symbol - 1;
  memcpy(d->symbol, r + l->raw_symbol, n);
  d->instrument_class = (char)r[l->instrument_class];
  d->expiration = timestamp(tg_dbn_u64(r + 40));
  d->tick_size = fixed((int64_t)tg_dbn_u64(r + 24));
  int64_t uom = (int64_t)tg_dbn_u64(r + l->unit_of_measure_qty);
  int32_t cm = (int32_t)tg_dbn_u32(r + l->contract_multiplier);
  d->multiplier = uom != TG_DBN_UNDEF_PRICE && uom > 0 ? (double)uom / 1e9
                  : cm != INT32_MAX && cm > 0         ? (double)cm
                                                      : NAN;
}

static void decode_stat(const unsigned char *r, const stat_layout *l, uint64_t index, tg_dbn_stat *s) {
  memset(s, 0, sizeof *s);
  s->id = tg_dbn_u32(r + 4);
  s->ts = timestamp(tg_dbn_u64(r + 8));
  s->ts_ref = timestamp(tg_dbn_u64(r + 24));
  s->price = fixed((int64_t)tg_dbn_u64(r + 32));
  if (l->quantity_width == 4) {
    int32_t q = (int32_t)tg_dbn_u32(r + 40);
    s->quantity = q == INT32_MAX ? NAN : (double)q;
  } else {
    int64_t q = (int64_t)tg_dbn_u64(r + 40);
    s->quantity = q == INT64_MAX ? NAN : (double)q;
  }
  s->type = tg_dbn_u16(r + l->stat_type);
  s->update_action = r[l->update_action];
  s->record = (int64_t)index;
}

static tg_status records(const tg_dbn_stream *s, const tg_dbn_meta *m, tg_dbn_refdata *out) {
  const def_layout *dl = &k_def[m->version - 1];
  const stat_layout *sl = &k_stat[m->version - 1];
  size_t extra = m->ts_out ? 8 : 0, pos = m->records_at;
  int64_t def_cap = 0, stat_cap = 0;
  for (uint64_t index = 0; pos < s->len; index++) {
    size_t left = s->len - pos, rec_len = 4u * s->p[pos];
    if (rec_len < 16)
      return tg_dbn_fail(s, TG_ERR_FORMAT, pos,
                         "record %llu: length field %u (x4 = %zu bytes) is shorter than the 16-byte record header",
                         (unsigned long long)index, s->p[pos], rec_len);
    if (rec_len > left)
      return tg_dbn_fail(s, TG_ERR_FORMAT, pos, "record %llu declares %zu bytes but only %zu remain; the data is truncated",
                         (unsigned long long)index, rec_len, left);
    const unsigned char *r = s->p + pos;
    unsigned rtype = r[1];
    pos += rec_len;
    if (rtype == RTYPE_ERROR || rtype == RTYPE_SYMBOL_MAPPING || rtype == RTYPE_SYSTEM) continue;
    if (rtype != RTYPE_DEFINITION && rtype != RTYPE_STAT)
      return tg_dbn_fail(s, TG_ERR_UNSUPPORTED, pos - rec_len + 1,
                         "record %llu has rtype 0x%02X; reference data is read from definition (0x13) and statistics "
                         "(0x18) records", (unsigned long long)index, rtype);
    size_t want = (rtype == RTYPE_DEFINITION ? dl->len : sl->len) + extra;
    if (rec_len < want)
      return tg_dbn_fail(s, TG_ERR_FORMAT, pos - rec_len,
                         "record %llu (%s) is %zu bytes; a DBN version %d %s record%s needs %zu",
                         (unsigned long long)index, rtype == RTYPE_DEFINITION ? "definition" : "statistics", rec_len,
                         m->version, rtype == RTYPE_DEFINITION ? "definition" : "statistics",
                         extra ? " with ts_out" : "", want);
    int ok = rtype == RTYPE_DEFINITION ? grow((void **)&out->defs, out->n_defs, &def_cap, sizeof *out->defs)
                                       : grow((void **)&out->stats, out->n_stats, &stat_cap, sizeof *out->stats);
    if (!ok) return tg_error(TG_ERR_NOMEM, "%s: out of memory at record %llu", s->path, (unsigned long long)index);
    if (rtype == RTYPE_DEFINITION) decode_def(r, dl, index, &out->defs[out->n_defs++]);
    else decode_stat(r, sl, index, &out->stats[out->n_stats++]);
  }
  return TG_OK;
}

tg_status tg_dbn_refdata_parse(const char *path, const void *bytes, size_t len, tg_dbn_refdata *out) {
  memset(out, 0, sizeof *out);
  if (!path) path = "(dbn data)";
  tg_dbn_stream s;
  unsigned char *plain = NULL;
  tg_status st = tg_dbn_stream_open(path, bytes, len, &s, &plain);
  tg_dbn_meta m;
  if (st == TG_OK) st = tg_dbn_meta_read(&s, &m);
  if (st == TG_OK && m.schema != SCHEMA_DEFINITION && m.schema != SCHEMA_STATISTICS && m.schema != SCHEMA_NONE) {
    const char *name = tg_dbn_schema_name(m.schema);
    st = tg_dbn_fail(&s, TG_ERR_UNSUPPORTED, 24,
                     "the file holds %s records (schema %u); definitions and statistics are read from definition or "
                     "statistics files", name ? name : "unknown", (unsigned)m.schema);
  }
  if (st == TG_OK) {
    const char *name = tg_dbn_schema_name(m.schema);
    snprintf(out->schema, sizeof out->schema, "%s", name ? name : "none");
    out->version = m.version;
    st = records(&s, &m, out);
  }
  if (st == TG_OK) st = tg_dbn_refdata_index(out);
  tg_free(plain);
  if (st != TG_OK) tg_dbn_refdata_free(out);
  return st;
}

tg_status tg_dbn_refdata_read(const char *path, tg_dbn_refdata *out) {
  memset(out, 0, sizeof *out);
  char *bytes = NULL;
  size_t len = 0;
  tg_status st = tg_read_file(path, &bytes, &len);
  if (st == TG_OK) st = tg_dbn_refdata_parse(path, bytes, len, out);
  tg_free(bytes);
  return st;
}

void tg_dbn_refdata_free(tg_dbn_refdata *r) {
  if (!r) return;
  tg_free(r->defs);
  tg_free(r->stats);
  tg_free(r->by_id);
  memset(r, 0, sizeof *r);
}

int tg_dbn_refdata_sniff(const char *path) {
  unsigned char head[26];
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(head, 1, sizeof head, f) : 0;
  if (f) fclose(f);
  if (got < sizeof head || memcmp(head, "DBN", 3) != 0) return 0;
  unsigned schema = tg_dbn_u16(head + 24);
  return schema == SCHEMA_DEFINITION || schema == SCHEMA_STATISTICS;
}

/* A definition's id and index, ordered by id, then by index. */
typedef struct id_at {
  uint32_t id;
  int64_t at;
} id_at;

static int by_id_then_at(const void *a, const void *b) {
  const id_at *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return (x->at > y->at) - (x->at < y->at);
}

tg_status tg_dbn_refdata_index(tg_dbn_refdata *r) {
  tg_free(r->by_id);
  r->by_id = NULL;
  r->n_ids = 0;
  if (r->n_defs == 0) return TG_OK;
  id_at *v = tg_malloc((size_t)r->n_defs * sizeof *v);
  int64_t *out = tg_malloc((size_t)r->n_defs * sizeof *out);
  if (!v || !out) {
    tg_free(v), tg_free(out);
    return tg_error(TG_ERR_NOMEM, "out of memory indexing %lld definitions", (long long)r->n_defs);
  }
  for (int64_t i = 0; i < r->n_defs; i++) v[i] = (id_at){r->defs[i].id, i};
  qsort(v, (size_t)r->n_defs, sizeof *v, by_id_then_at);
  int64_t n = 0;
  for (int64_t i = 0; i < r->n_defs; i++) /* the last of each id's run */
    if (i + 1 == r->n_defs || v[i + 1].id != v[i].id) out[n++] = v[i].at;
  tg_free(v);
  r->by_id = out;
  r->n_ids = n;
  return TG_OK;
}

const tg_instrument_def *tg_dbn_refdata_find(const tg_dbn_refdata *r, uint32_t id) {
  int64_t lo = 0, hi = r->n_ids; /* by_id[lo..hi) may hold id */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    uint32_t at = r->defs[r->by_id[mid]].id;
    if (at == id) return &r->defs[r->by_id[mid]];
    if (at < id) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}
