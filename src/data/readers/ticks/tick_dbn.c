/* DBN tick files, streamed record by record: trades (rtype 0) and the trade and top of book of tbbo and mbp-1
 * (rtype 1) records; the metadata through the DBN reader, prices 1e-9 fixed point, side 'A' (sell) 'B' (buy) 'N'. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/ticks/tick_dbn_internal.h"

enum { RTYPE_TRADE = 0x00, RTYPE_MBP1 = 0x01, RTYPE_ERROR = 0x15, RTYPE_SYMBOL_MAPPING = 0x16, RTYPE_SYSTEM = 0x17 };
enum { SCHEMA_MBP1 = 1, SCHEMA_TBBO = 3, SCHEMA_TRADES = 4, SCHEMA_NONE = 0xFFFF };
#define TRADE_LEN 48 /* TradeMsg: header 16, price 16, size 24, action 28, side 29, flags 30, depth 31, ts_recv 32 */
#define MBP1_LEN 80  /* Mbp1Msg: TradeMsg's fields, then bid_px 48, ask_px 56, bid_sz 64, ask_sz 68, counts 72, 76 */

static double px(const unsigned char *p) {
  int64_t raw = (int64_t)tg_dbn_u64(p);
  return raw == TG_DBN_UNDEF_PRICE ? NAN : (double)raw / 1e9;
}

static int8_t side_of(unsigned char c) { return c == 'B' ? TG_SIDE_BUY : c == 'A' ? TG_SIDE_SELL : TG_SIDE_UNKNOWN; }

/* Reads the next record into d->rec: *len 0 at a clean end of file. */
static tg_status read_record(tg_tick_source *s, tg_dbn_impl *d, size_t *len) {
  int c = fgetc(d->f);
  *len = 0;
  if (c == EOF) return ferror(d->f) ? tg_error(TG_ERR_IO, "%s: read error: %s", s->name, strerror(errno)) : TG_OK;
  size_t n = 4u * (unsigned)c;
  if (n < 16)
    return tg_error(TG_ERR_FORMAT, "%s: record %llu: length %zu is shorter than the 16-byte record header", s->name,
                    (unsigned long long)d->index, n);
  d->rec[0] = (unsigned char)c;
  if (fread(d->rec + 1, 1, n - 1, d->f) != n - 1)
    return tg_error(TG_ERR_FORMAT, "%s: record %llu declares %zu bytes but the file ends first; it is truncated",
                    s->name, (unsigned long long)d->index, n);
  *len = n;
  return TG_OK;
}

/* One record into out (a trade or a quote by the source's kind): 1 when it made one, 0 when skipped. */
/* Lenient reading: the instrument counted among the distinct ones (the first TG_TICK_MAX_INSTRUMENTS told apart). */
static void count_instrument(tg_tick_source *s, uint32_t id) {
  int64_t n = s->counts.instruments;
  for (int64_t i = 0; i < n && i < TG_TICK_MAX_INSTRUMENTS; i++)
    if (s->ids[i] == id) return;
  if (n < TG_TICK_MAX_INSTRUMENTS) s->ids[n] = id, s->counts.instruments++;
}

/* 1 when the record is the file's one instrument (the first record's; lenient: any, counted), else 0 after the
 * error. */
static int same_instrument(tg_tick_source *s, tg_dbn_impl *d, tg_status *st) {
  uint32_t id = tg_dbn_u32(d->rec + 4);
  if (!d->have_id) d->have_id = 1, d->id = id;
  if (s->opts.lenient) count_instrument(s, id);
  if (id == d->id || s->opts.lenient) return 1;
  *st = tg_error(TG_ERR_UNSUPPORTED, "%s: record %llu is instrument %u, the first record's is %u; bars of several instruments "
                 "in one pass are not built yet (split the file by instrument; several futures contracts of one root are read "
                 "as contracts when a DBN definition file beside it or the symbol mappings name them)", s->name, (unsigned long long)d->index,
                 id, d->id);
  return 0;
}

static int decode(tg_tick_source *s, tg_dbn_impl *d, size_t len, void *out, tg_status *st) {
  const unsigned char *r = d->rec;
  unsigned rtype = r[1];
  *st = TG_OK;
  if (rtype == RTYPE_ERROR || rtype == RTYPE_SYMBOL_MAPPING || rtype == RTYPE_SYSTEM) return 0;
  size_t want = rtype == RTYPE_TRADE ? TRADE_LEN : MBP1_LEN;
  if ((rtype != RTYPE_TRADE && rtype != RTYPE_MBP1) || (rtype == RTYPE_TRADE && s->kind == TG_TICK_QUOTES)) {
    *st = tg_error(TG_ERR_UNSUPPORTED, "%s: record %llu has rtype 0x%02X, which holds no %s", s->name,
                   (unsigned long long)d->index, rtype, s->kind == TG_TICK_TRADES ? "trade" : "quote");
    return 0;
  }
  uint64_t ts = tg_dbn_u64(r + 8);
  if (len < want || ts > (uint64_t)INT64_MAX) {
    *st = tg_error(TG_ERR_FORMAT, "%s: record %llu: %s", s->name, (unsigned long long)d->index,
                   len < want ? "shorter than its rtype's layout" : "ts_event is undefined or out of range");
    return 0;
  }
  if (d->n_want) { /* one contract's records: the others are skipped */
    if (!tg_tick_dbn_wants(d, tg_dbn_u32(r + 4))) return 0;
  } else if (!same_instrument(s, d, st)) {
    return 0;
  }
  if (s->kind == TG_TICK_TRADES) {
    if (rtype == RTYPE_MBP1 && r[28] != 'T') return 0; /* a book update, not a trade */
    *(tg_trade *)out = (tg_trade){.ts = (int64_t)ts, .price = px(r + 16), .size = tg_dbn_u32(r + 24),
                                  .side = side_of(r[29]), .line = (int64_t)d->index};
    return 1;
  }
  tg_quote q = {.ts = (int64_t)ts, .bid = px(r + 48), .ask = px(r + 56), .bid_size = tg_dbn_u32(r + 64),
                .ask_size = tg_dbn_u32(r + 68), .line = (int64_t)d->index};
  if (isnan(q.bid) || isnan(q.ask)) return 0; /* one side of the book is empty: no top of book to quote */
  *(tg_quote *)out = q;
  return 1;
}

static tg_status dbn_fill(tg_tick_source *s, void *buf, int64_t cap, int64_t *n) {
  tg_dbn_impl *d = s->impl;
  size_t each = s->kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  for (*n = 0; *n < cap; d->index++) {
    size_t len;
    tg_status st = read_record(s, d, &len);
    if (st != TG_OK || len == 0) return st;
    *n += decode(s, d, len, (char *)buf + (size_t)*n * each, &st);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

/* Frees d and what it holds; the file stays the caller's. */
static void free_impl(tg_dbn_impl *d) {
  tg_free(d->names);
  tg_free(d->want);
  tg_dbn_refdata_free(&d->ref);
  tg_free(d);
}

static void dbn_close(tg_tick_source *s) {
  tg_dbn_impl *d = s->impl;
  fclose(d->f);
  free_impl(d);
}

static tg_status check_schema(const tg_tick_source *s, unsigned schema) {
  if (schema == SCHEMA_TBBO || schema == SCHEMA_MBP1 || schema == SCHEMA_NONE) return TG_OK;
  if (schema == SCHEMA_TRADES && s->kind == TG_TICK_TRADES) return TG_OK;
  const char *name = tg_dbn_schema_name(schema);
  return tg_error(TG_ERR_UNSUPPORTED, "%s: the file holds %s records (schema %u); %s are read from %s", s->name,
                  name ? name : "unknown", schema, s->kind == TG_TICK_TRADES ? "trades" : "quotes",
                  s->kind == TG_TICK_TRADES ? "trades, tbbo or mbp-1" : "tbbo or mbp-1");
}

/* The prelude and metadata, read whole (they name the schema and the instruments) and checked by the DBN reader; f
 * then at the records. */
static tg_status read_meta(tg_tick_source *s, tg_dbn_impl *d) {
  unsigned char pre[TG_DBN_PRELUDE_LEN];
  if (fread(pre, 1, sizeof pre, d->f) != sizeof pre)
    return tg_error(TG_ERR_FORMAT, "%s: the file ends inside the 8-byte DBN prelude", s->name);
  size_t n = TG_DBN_PRELUDE_LEN + (size_t)tg_dbn_u32(pre + 4);
  unsigned char *buf = tg_malloc(n);
  if (!buf) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %zu bytes of metadata", s->name, n);
  memcpy(buf, pre, sizeof pre);
  size_t got = fread(buf + sizeof pre, 1, n - sizeof pre, d->f);
  tg_dbn_stream ds = {s->name, buf, sizeof pre + got, 0};
  tg_dbn_meta m;
  tg_status st = tg_dbn_meta_read(&ds, &m);
  if (st == TG_OK) st = tg_dbn_mapping_names(&ds, &m, &d->names, &d->n_names);
  tg_free(buf);
  if (st == TG_OK && m.ts_out)
    st = tg_error(TG_ERR_UNSUPPORTED, "%s: records with ts_out (a live capture) are not read yet", s->name);
  const char *schema = st == TG_OK ? tg_dbn_schema_name(m.schema) : NULL;
  snprintf(s->format, sizeof s->format, "dbn %s", schema ? schema : "(mixed schemas)");
  return st == TG_OK ? check_schema(s, m.schema) : st;
}

/* opts.contract: the instrument ids named so (by the definitions beside the file, or its mappings). */
static tg_status select_contract(tg_tick_source *s, tg_dbn_impl *d, const char *contract) {
  tg_status st = tg_tick_dbn_load_beside(d, s->name);
  int cap = d->n_names + (int)d->ref.n_defs;
  d->want = st == TG_OK ? tg_malloc((size_t)(cap ? cap : 1) * sizeof *d->want) : NULL;
  if (st == TG_OK && !d->want) st = tg_error(TG_ERR_NOMEM, "%s: out of memory", s->name);
  for (int i = 0; st == TG_OK && i < cap; i++) {
    uint32_t id = i < d->n_names ? d->names[i].id : d->ref.defs[i - d->n_names].id;
    const char *name = tg_tick_dbn_name(d, id);
    if (!tg_tick_dbn_wants(d, id) && name && strcmp(name, contract) == 0) d->want[d->n_want++] = id;
  }
  if (st == TG_OK && d->n_want == 0)
    st = tg_error(TG_ERR_INVALID, "%s: no instrument is named '%s' (by the definition files beside it or its symbol "
                  "mappings)", s->name, contract);
  return st;
}

tg_status tg_tick_dbn_open(tg_tick_source *s, FILE *f) {
  tg_dbn_impl *d = tg_calloc(1, sizeof *d);
  if (!d) return tg_error(TG_ERR_NOMEM, "%s: out of memory", s->name);
  d->f = f;
  tg_status st = read_meta(s, d);
  if (st == TG_OK && s->opts.contract) st = select_contract(s, d, s->opts.contract);
  if (st != TG_OK) {
    free_impl(d);
    return st;
  }
  s->impl = d;
  s->fill = dbn_fill;
  s->close = dbn_close;
  return TG_OK;
}
