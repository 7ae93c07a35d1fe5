/* Parquet reader internals: thrift decoding, file metadata, pages, encodings and the column API. */
#ifndef TG_DATA_PARQUET_H
#define TG_DATA_PARQUET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tickgrad/data.h"

/* ---------------------------------------------------------------- enums of the format */

enum { /* physical types */
  TG_PQ_BOOLEAN = 0, TG_PQ_INT32 = 1, TG_PQ_INT64 = 2, TG_PQ_INT96 = 3, TG_PQ_FLOAT = 4, TG_PQ_DOUBLE = 5,
  TG_PQ_BYTE_ARRAY = 6, TG_PQ_FIXED_LEN_BYTE_ARRAY = 7
};
enum { TG_PQ_REQUIRED = 0, TG_PQ_OPTIONAL = 1, TG_PQ_REPEATED = 2 };
enum { /* encodings */
  TG_PQ_PLAIN = 0, TG_PQ_PLAIN_DICTIONARY = 2, TG_PQ_RLE = 3, TG_PQ_BIT_PACKED = 4, TG_PQ_DELTA_BINARY_PACKED = 5,
  TG_PQ_DELTA_LENGTH_BYTE_ARRAY = 6, TG_PQ_DELTA_BYTE_ARRAY = 7, TG_PQ_RLE_DICTIONARY = 8, TG_PQ_BYTE_STREAM_SPLIT = 9
};
enum { /* compression codecs */
  TG_PQ_UNCOMPRESSED = 0, TG_PQ_SNAPPY = 1, TG_PQ_GZIP = 2, TG_PQ_LZO = 3, TG_PQ_BROTLI = 4, TG_PQ_LZ4 = 5,
  TG_PQ_ZSTD = 6, TG_PQ_LZ4_RAW = 7
};
enum { TG_PQ_PAGE_DATA = 0, TG_PQ_PAGE_INDEX = 1, TG_PQ_PAGE_DICTIONARY = 2, TG_PQ_PAGE_DATA_V2 = 3 };
enum { /* LogicalType union members (0: none or unknown) */
  TG_PQ_LT_STRING = 1, TG_PQ_LT_MAP = 2, TG_PQ_LT_LIST = 3, TG_PQ_LT_ENUM = 4, TG_PQ_LT_DECIMAL = 5,
  TG_PQ_LT_DATE = 6, TG_PQ_LT_TIME = 7, TG_PQ_LT_TIMESTAMP = 8, TG_PQ_LT_INTEGER = 10, TG_PQ_LT_NULL = 11,
  TG_PQ_LT_JSON = 12, TG_PQ_LT_BSON = 13, TG_PQ_LT_UUID = 14, TG_PQ_LT_FLOAT16 = 15
};
enum { /* ConvertedType values used here (-1: none) */
  TG_PQ_CT_DECIMAL = 5, TG_PQ_CT_DATE = 6, TG_PQ_CT_TIME_MILLIS = 7, TG_PQ_CT_TIME_MICROS = 8,
  TG_PQ_CT_TIMESTAMP_MILLIS = 9, TG_PQ_CT_TIMESTAMP_MICROS = 10, TG_PQ_CT_UINT_8 = 11, TG_PQ_CT_UINT_16 = 12,
  TG_PQ_CT_UINT_32 = 13, TG_PQ_CT_UINT_64 = 14
};
enum { TG_PQ_UNIT_NONE = 0, TG_PQ_MILLIS = 1, TG_PQ_MICROS = 2, TG_PQ_NANOS = 3 };

/* Files claiming more rows than this many per byte of file are refused as corrupt: it bounds the
 * output arrays of a tiny file (RLE can state a billion nulls in five bytes). */
#define TG_PQ_MAX_ROWS_PER_BYTE 1024
#define TG_PQ_MIN_ROW_LIMIT 65536
#define TG_PQ_MAX_NESTING 64 /* thrift structs/lists, and schema groups */

/* ---------------------------------------------------------------- errors */

/* Where a failure happened; column NULL and row_group/page -1 outside a column. */
typedef struct tg_pq_where {
  const char *path;
  const char *column;
  int row_group, page;
} tg_pq_where;

/* Records "<path>: byte <offset>: <reason> (column 'c', row group r, page p)" and returns st.
 * offset < 0 leaves the byte out. */
tg_status tg_pq_fail(const tg_pq_where *w, tg_status st, int64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ---------------------------------------------------------------- thrift compact protocol */

enum { TG_TT_STOP = 0, TG_TT_TRUE = 1, TG_TT_FALSE = 2, TG_TT_BYTE = 3, TG_TT_I16 = 4, TG_TT_I32 = 5, TG_TT_I64 = 6,
       TG_TT_DOUBLE = 7, TG_TT_BINARY = 8, TG_TT_LIST = 9, TG_TT_SET = 10, TG_TT_MAP = 11, TG_TT_STRUCT = 12 };

typedef struct tg_thrift {
  const uint8_t *p, *end; /* the unread part of the encoded structure */
  const uint8_t *base;    /* the start of the file, for byte offsets in errors */
  const tg_pq_where *w;
  const char *what;       /* "file metadata", "page header" */
  int depth;              /* open structs, lists and maps */
} tg_thrift;

/* Reads a field header. *type is TG_TT_STOP at the end of a struct. *last carries the previous id. */
tg_status tg_thrift_field(tg_thrift *t, int *last, int *id, int *type);
/* An integer of wire type I8/I16/I32/I64 (checked) within [lo, hi]; name is for the error. */
tg_status tg_thrift_int(tg_thrift *t, int type, int64_t lo, int64_t hi, const char *name, int64_t *v);
/* A boolean field: the value is the wire type. */
tg_status tg_thrift_bool(tg_thrift *t, int type, const char *name, int *v);
tg_status tg_thrift_binary(tg_thrift *t, int type, const char *name, const uint8_t **p, uint32_t *n);
/* A list or set header; the count is bounded by the bytes left (every element takes one at least). */
tg_status tg_thrift_list(tg_thrift *t, int type, const char *name, int *elem, uint32_t *n);
/* Enters a struct (type checked, nesting bounded); tg_thrift_end leaves it. */
tg_status tg_thrift_begin(tg_thrift *t, int type, const char *name);
void tg_thrift_end(tg_thrift *t);
/* Skips a value of the given wire type; in_list: booleans are a byte inside lists and maps. */
tg_status tg_thrift_skip(tg_thrift *t, int type, int in_list);
int64_t tg_thrift_offset(const tg_thrift *t);

/* ---------------------------------------------------------------- file metadata */

/* A leaf column of the schema. */
typedef struct tg_pq_column {
  char *name;          /* dotted path, "b_struct.b_c_int" */
  int physical;        /* TG_PQ_INT32 ... */
  int type_length;     /* FIXED_LEN_BYTE_ARRAY width */
  int repetition;      /* of the leaf */
  int max_def, max_rep;
  int converted;       /* ConvertedType, -1 when none */
  int logical;         /* TG_PQ_LT_*, 0 when none */
  int time_unit;       /* TIMESTAMP and TIME (also from the converted types) */
  int utc;             /* TIMESTAMP/TIME isAdjustedToUTC (the converted types are UTC) */
  int scale, precision;
  int int_bits, is_signed; /* INTEGER logical type or the INT_/UINT_ converted types; 0 bits: none */
} tg_pq_column;

/* One column chunk: where its pages lie and how they are compressed. */
typedef struct tg_pq_chunk {
  int has_meta;        /* ColumnMetaData present (absent: encrypted) */
  int encrypted, external;
  int codec, physical;
  int64_t num_values;
  int64_t start, size; /* byte range of the pages (dictionary page first when there is one) */
} tg_pq_chunk;

typedef struct tg_pq_rowgroup {
  int64_t num_rows, first_row;
  tg_pq_chunk *chunks; /* [ncols] */
} tg_pq_rowgroup;

typedef struct tg_pq_file {
  const char *path;
  const uint8_t *data; /* the whole file */
  size_t len;
  int ncols, nrg;
  tg_pq_column *cols;  /* [ncols] leaves in schema order */
  tg_pq_rowgroup *rgs; /* [nrg] */
  int64_t num_rows;
  int64_t meta_offset; /* where the footer's FileMetaData starts */
  char *names;         /* storage of every column name */
  tg_pq_chunk *chunk_store;
  struct tg_pq_reuse *reuse; /* what every column read of the file reuses (pages, below) */
} tg_pq_file;

/* Opens a file held in memory (not copied; it must outlive f): checks both magics, the footer length,
 * the metadata, the schema and every column chunk's byte range against the buffer. */
tg_status tg_pq_open(tg_pq_file *f, const char *path, const void *bytes, size_t len);
void tg_pq_close(tg_pq_file *f);
/* Index of the column whose dotted path (or, failing that, leaf name) equals name ignoring case; -1. */
int tg_pq_find(const tg_pq_file *f, const char *name);
/* "ts INT64 TIMESTAMP(MICROS,local) optional" */
void tg_pq_describe(const tg_pq_column *c, char *buf, size_t n);
const char *tg_pq_type_name(int physical);
const char *tg_pq_codec_name(int codec);
const char *tg_pq_encoding_name(int encoding);

/* ---------------------------------------------------------------- pages */

typedef struct tg_pq_page {
  int type;
  int32_t usize, csize;   /* uncompressed and on-disk sizes of the data after the header */
  int has_crc;
  uint32_t crc;
  int32_t num_values;     /* data pages: values incl. nulls; dictionary: entries */
  int encoding;           /* of the values */
  int def_encoding, rep_encoding; /* v1 */
  int32_t num_nulls, num_rows, def_len, rep_len; /* v2 */
  int is_compressed;      /* v2 */
  int64_t offset;         /* of the header in the file */
  int64_t data;           /* of the data (after the header) */
} tg_pq_page;

/* Parses the page header at file offset pos; the header and the page's data must end by end. */
tg_status tg_pq_page_read(const tg_pq_where *w, const uint8_t *file, int64_t pos, int64_t end, tg_pq_page *pg);
/* Checks the page CRC (when the header has one) over the on-disk data. */
tg_status tg_pq_page_crc(const tg_pq_where *w, const uint8_t *file, const tg_pq_page *pg);
/* Largest output a codec can make of n input bytes (a bound used before allocating). */
uint64_t tg_pq_codec_bound(int codec, uint64_t n);
/* Decompression state kept across pages (creating a zstd context per page costs more than the page);
 * zero-initialise, release with tg_pq_codecs_free. */
typedef struct tg_pq_codecs {
  void *zstd; /* ZSTD_DCtx */
  void *zlib; /* z_stream, initialised for gzip or zlib streams */
} tg_pq_codecs;
void tg_pq_codecs_free(tg_pq_codecs *cx);
/* The state one file's column reads share, so that reading a column allocates nothing the one before had: the
 * decompression contexts, the buffer pages inflate into and the dictionary's lanes (each grown to the largest). */
typedef struct tg_pq_reuse {
  tg_pq_codecs codecs;
  uint8_t *page;
  size_t page_cap;
  uint64_t *dict;
  size_t dict_cap; /* lanes */
} tg_pq_reuse;
/* Decompresses src[n] into exactly dst[dn] (dst holds dcap >= dn bytes; snappy writes up to 64 past the data where
 * they fit); offset is for errors. */
tg_status tg_pq_decompress(const tg_pq_where *w, int64_t offset, int codec, tg_pq_codecs *cx, const uint8_t *src,
                           size_t n, uint8_t *dst, size_t dn, size_t dcap);
/* Snappy (pq_snappy.c): the uncompressed length its preamble states (0: a malformed preamble), and src[n] decoded into
 * exactly dst[dn] in a buffer of cap >= dn bytes, 1 on success and 0 for data that is not snappy or does not make dn
 * bytes. Bytes of dst past dn (up to cap) may be overwritten. */
int tg_pq_snappy_length(const uint8_t *src, size_t n, uint64_t *len);
int tg_pq_snappy_decode(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, size_t cap);

/* ---------------------------------------------------------------- encodings */

/* Values are decoded into 8-byte lanes: integers (BOOLEAN, INT32, INT64, INT96 as ns, decimals unscaled)
 * as int64, floating point (FLOAT, DOUBLE, FLOAT16) as double, strings (BYTE_ARRAY) as their category code. */
enum { TG_PQ_LANE_I64 = 1, TG_PQ_LANE_F64 = 2, TG_PQ_LANE_CODE = 3 };

/* How one column's values are decoded: physical type and the annotations that change the bits. */
typedef struct tg_pq_kind {
  int physical, type_length;
  int lane;               /* TG_PQ_LANE_* */
  int flba;               /* FIXED_LEN_BYTE_ARRAY: 1 float16, 2 big-endian decimal */
  tg_categories *cats;    /* TG_PQ_LANE_CODE: the table strings are added to */
} tg_pq_kind;

/* RLE / bit-packed hybrid decoder (levels, dictionary indices, booleans). */
typedef struct tg_pq_rle {
  const uint8_t *p, *end;
  int bw;
  uint64_t run_left;  /* values left in the current repeated run */
  uint32_t run_value;
  uint64_t lit_left;  /* values left in the current bit-packed run whose bits are present */
  const uint8_t *lit; /* that run's bytes */
  const uint8_t *lit_end;
  uint64_t lit_pos;   /* index of its next value */
} tg_pq_rle;

void tg_pq_rle_init(tg_pq_rle *r, const uint8_t *p, const uint8_t *end, int bw);
/* The next piece of the stream: a run of *n copies of *value (returns 1), or *n <= max literal values
 * into buf (returns 2); 0 at the end of the data; -1 when malformed (header overflow, truncated run). */
int tg_pq_rle_next(tg_pq_rle *r, uint32_t *buf, uint64_t max, uint64_t *n, uint32_t *value);
/* Bits needed for values 0..max. */
int tg_pq_bit_width(uint32_t max);

/* Decoders write n dense values as lanes into dst; each returns TG_OK or an error naming w and offset. PLAIN
 * strings (4-byte length, then the bytes) go to tg_pq_decode_strings, which adds each to k->cats. */
tg_status tg_pq_decode_plain(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p, size_t len,
                             int64_t n, unsigned char *dst);
tg_status tg_pq_decode_strings(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p, size_t len,
                               int64_t n, unsigned char *dst);
/* DELTA_LENGTH_BYTE_ARRAY (the lengths, then every string's bytes) and, when prefixed, DELTA_BYTE_ARRAY (each
 * string the first prefix-length bytes of the one before and a suffix) into codes, each string added to k->cats. */
tg_status tg_pq_decode_delta_strings(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p,
                                     size_t len, int64_t n, int prefixed, unsigned char *dst);
/* DELTA_BINARY_PACKED; *used (may be NULL) receives the bytes the n values took, up to the end of the last
 * miniblock they need (where the next stream of a delta string encoding starts). */
tg_status tg_pq_decode_delta(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p, size_t len,
                             int64_t n, unsigned char *dst, size_t *used);
tg_status tg_pq_decode_split(const tg_pq_where *w, int64_t off, const tg_pq_kind *k, const uint8_t *p, size_t len,
                             int64_t n, unsigned char *dst);
/* RLE-encoded booleans (4-byte length, then the hybrid stream of width 1). */
tg_status tg_pq_decode_rle_bool(const tg_pq_where *w, int64_t off, const uint8_t *p, size_t len, int64_t n,
                                unsigned char *dst);
/* Dictionary indices (a width byte, then the hybrid stream) gathered from dict[ndict] lanes. */
tg_status tg_pq_decode_dict(const tg_pq_where *w, int64_t off, const uint8_t *p, size_t len, const uint64_t *dict,
                            int64_t ndict, int64_t n, unsigned char *dst);
/* Definition levels of n values into valid[n] (1 where level == max_def); *present counts them.
 * encoding is TG_PQ_RLE (hybrid, no length prefix here) or TG_PQ_BIT_PACKED. */
tg_status tg_pq_decode_levels(const tg_pq_where *w, int64_t off, int encoding, const uint8_t *p, size_t len,
                              int max_def, int64_t n, uint8_t *valid, int64_t *present);

/* ---------------------------------------------------------------- columns */

/* Column c of every row group into out[num_rows], converted to double (decimals scaled, unsigned
 * types as unsigned, booleans 0/1). valid[num_rows] (may be NULL) gets 1 for a value and 0 for a null;
 * nulls read as NaN. *nulls (may be NULL) counts them. Repeated columns and non-numeric types:
 * TG_ERR_UNSUPPORTED naming the column. */
tg_status tg_pq_read_f64(const tg_pq_file *f, int c, double *out, uint8_t *valid, int64_t *nulls);
/* The same as int64 for integer-like columns (BOOLEAN, INT32, INT64, INT96 as ns since the epoch,
 * decimals unscaled); nulls read as 0. Floating point columns: TG_ERR_INVALID. */
tg_status tg_pq_read_i64(const tg_pq_file *f, int c, int64_t *out, uint8_t *valid, int64_t *nulls);
/* Whether column c can be read, and in which lane; TG_ERR_UNSUPPORTED with the reason otherwise. */
tg_status tg_pq_column_kind(const tg_pq_file *f, int c, tg_pq_kind *k);
/* Whether column c can be read as category codes: a flat BYTE_ARRAY that is a STRING, an ENUM or unannotated
 * (older writers leave strings so); TG_ERR_UNSUPPORTED with the reason otherwise. */
tg_status tg_pq_string_kind(const tg_pq_file *f, int c, tg_pq_kind *k);
/* Column c's strings into codes[num_rows], each distinct one added to cats (TG_CATEGORY_MISSING for a null);
 * *nulls (may be NULL) counts the nulls. PLAIN, dictionary, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY
 * encodings; others are TG_ERR_UNSUPPORTED naming them. */
tg_status tg_pq_read_codes(const tg_pq_file *f, int c, tg_categories *cats, uint32_t *codes, int64_t *nulls);

/* ---------------------------------------------------------------- bars */

/* The extra columns of a file whose bar fields took the columns marked in used[ncols]: every other column read as
 * numbers or codes into out's rows [base, base + num_rows) (out has room), by name, added to out when new; out's
 * columns the file lacks get missing values there. A column that cannot be kept (lists, binary or time types, an
 * encoding not read) is skipped with a warning line to warn naming it and why; one out holds with the other kind
 * is TG_ERR_FORMAT naming it. */
tg_status tg_pq_read_extras(const tg_pq_file *f, const unsigned char *used, FILE *warn, tg_bars *out, int64_t base);

/* ---------------------------------------------------------------- little-endian loads */

static inline uint32_t tg_pq_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tg_pq_le64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
#else
  return (uint64_t)tg_pq_le32(p) | (uint64_t)tg_pq_le32(p + 4) << 32;
#endif
}
static inline void tg_pq_st64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint64_t tg_pq_ld64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

#endif
