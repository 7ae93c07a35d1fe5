/* The DBN reader's internal interface: little-endian field reads, the stream being parsed, the metadata summary. */
#ifndef TG_DBN_INTERNAL_H
#define TG_DBN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tickgrad/data.h"

/* Field reads at any offset: memcpy (no aligned loads from the file buffer), then little-endian to host. */
static inline uint16_t tg_dbn_u16(const unsigned char *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap16(v);
#endif
  return v;
}

static inline uint32_t tg_dbn_u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

static inline uint64_t tg_dbn_u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#define TG_DBN_PRELUDE_LEN 8     /* "DBN", version, u32 metadata length */
#define TG_DBN_META_FIXED_LEN 100 /* the fixed part of the metadata, every version */
#define TG_DBN_MAX_VERSION 3
#define TG_DBN_OHLCV_LEN 56      /* OhlcvMsg in every version */
#define TG_DBN_UNDEF_PRICE INT64_MAX
#define TG_DBN_UNDEF_TS UINT64_MAX

/* A plain (decompressed) DBN byte stream and how to name places in it. */
typedef struct tg_dbn_stream {
  const char *path;        /* the source, for messages */
  const unsigned char *p;  /* [len] */
  size_t len;
  int decompressed;        /* offsets count bytes of the decompressed stream, not of the file */
} tg_dbn_stream;

/* What the records stage needs from the metadata. */
typedef struct tg_dbn_meta {
  int version;             /* 1..3 */
  uint16_t schema;         /* 0xFFFF: none (mixed or live) */
  int ts_out;              /* every record carries a trailing u64 send time */
  uint32_t symbol_len;     /* fixed length of every symbol string: 22 in v1, the header field later */
  char dataset[17];
  size_t records_at;       /* offset of the first record: 8 + metadata length */
  size_t mappings_at;      /* offset of the symbol mappings' count (checked to fit by tg_dbn_meta_read) */
} tg_dbn_meta;

/* Formats "<path>: byte <off>[ of the decompressed stream]: <reason>" and returns code. */
tg_status tg_dbn_fail(const tg_dbn_stream *s, tg_status code, size_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Name of a schema value ("ohlcv-1m"), or NULL when unknown. */
const char *tg_dbn_schema_name(unsigned schema);

/* The most bytes a compressed input of compressed_len bytes may decompress to. */
size_t tg_dbn_zstd_limit(size_t compressed_len);
/* Decompresses one or more concatenated zstd frames (skippable frames are skipped). Fails with
 * TG_ERR_FORMAT on corrupt data, a frame that ends early, or output above limit. *out is a
 * tg_malloc buffer the caller frees; *out_len its length. */
tg_status tg_dbn_zstd_inflate(const char *path, const unsigned char *src, size_t len, size_t limit,
                              unsigned char **out, size_t *out_len);

/* The plain DBN stream of a file's bytes: zstd frames decompressed into *plain (a tg_malloc buffer the caller frees,
 * NULL when the bytes were plain), legacy DBZ refused by name, anything not starting "DBN" TG_ERR_FORMAT. */
tg_status tg_dbn_stream_open(const char *path, const void *bytes, size_t len, tg_dbn_stream *s,
                             unsigned char **plain);

/* Checks the prelude and metadata against the buffer and fills m, whatever the schema (the tick reader's entry:
 * src/data/ticks/tick_dbn.c). Versions above 3 are TG_ERR_UNSUPPORTED; anything malformed is TG_ERR_FORMAT. */
tg_status tg_dbn_meta_read(const tg_dbn_stream *s, tg_dbn_meta *m);
/* Checks the prelude and metadata against the buffer and fills m. Versions above 3 and
 * non-OHLCV schemas are TG_ERR_UNSUPPORTED; anything malformed is TG_ERR_FORMAT. */
tg_status tg_dbn_meta_parse(const tg_dbn_stream *s, tg_dbn_meta *m);

/* An instrument id and the raw symbol the metadata's mappings give it. */
typedef struct tg_dbn_named_id {
  uint32_t id;
  char name[72];
} tg_dbn_named_id;
/* The instrument ids the mappings name (raw symbol -> an id written as digits) into v[*n] (empty on entry: a tg_malloc
 * array grown as needed that the caller frees); m must come from tg_dbn_meta_read of s. */
tg_status tg_dbn_mapping_names(const tg_dbn_stream *s, const tg_dbn_meta *m, tg_dbn_named_id **v, int *n);

/* Futures contracts by name: when out's bars from row n0 on hold several instrument ids that the metadata's mappings
 * name (raw symbol -> instrument id) as outright contracts of one root (ESH1, ESM1: a root, a month code, a year),
 * with perhaps its spreads ("ESH1-ESM1") and options ("ESH1 C3700"), every bar gets its name in a category column
 * contract (docs/TICKS.md "Continuous futures"); anything else leaves out as it is. */
tg_status tg_dbn_contract_tag(const tg_dbn_stream *s, const tg_dbn_meta *m, tg_bars *out, int64_t n0);

/* Appends every OHLCV record after the metadata to out (which gets an instrument column). */
tg_status tg_dbn_records_parse(const tg_dbn_stream *s, const tg_dbn_meta *m, const tg_read_opts *opts, tg_bars *out);

#endif
