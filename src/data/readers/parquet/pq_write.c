/* Bars as Parquet: ts INT64 TIMESTAMP(NANOS, UTC), prices and numeric columns DOUBLE, category columns dictionary-
 * encoded BYTE_ARRAY STRING; one row group, zstd-compressed v1 data pages; written atomically. */
#include <stdio.h>
#include <string.h>
#include <zstd.h>
#include "base/alloc.h"
#include "base/files.h"
#include "data/readers/parquet/pq_write.h"
#include "tickgrad/ticks.h"
#include "tickgrad/version.h"

#define PAGE_ROWS (1 << 20) /* values per data page: 8 MiB of doubles */
#define ZSTD_LEVEL 3

enum { COL_TS, COL_F64, COL_I64, COL_CAT };

/* One column of the file: where its values are, and where its pages went. */
typedef struct out_col {
  const char *name;
  int kind;                  /* COL_* */
  const int64_t *ts;         /* COL_TS */
  const double *f64;         /* COL_F64 */
  const uint32_t *u32;       /* COL_I64: the instrument ids, written as int64 */
  const tg_bar_column *cat;  /* COL_CAT */
  int64_t start, dict_at, data_at; /* file offsets of the chunk, its dictionary page, its first data page */
  int64_t usize, csize;            /* the chunk's pages, headers included, before and after compression */
} out_col;

/* The file as it is written: the atomic file, the bytes so far, and scratch buffers for a page. */
typedef struct sink {
  tg_atomic_file f;
  const char *path;
  int64_t at;
  tg_text body, header;
  char *packed;  /* [packed_cap]: a page's body compressed */
  size_t packed_cap;
  ZSTD_CCtx *zc;
} sink;

static tg_status put(sink *s, const void *p, size_t n) {
  tg_status st = tg_atomic_write(&s->f, p, n);
  s->at += (int64_t)n;
  return st;
}

static void le32(tg_text *b, uint32_t v) {
  uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  tg_text_append(b, (const char *)x, 4);
}

static void le64(tg_text *b, uint64_t v) {
  le32(b, (uint32_t)v);
  le32(b, (uint32_t)(v >> 32));
}

/* values[n] (each below 2^bw) as one bit-packed run of the RLE / bit-packing hybrid, padded to a multiple of 8. */
static void bit_packed(tg_text *b, const uint32_t *values, int64_t n, int bw) {
  tg_thrift_out t = {.b = b};
  int64_t groups = (n + 7) / 8;
  tg_tw_varint(&t, (uint64_t)groups << 1 | 1);
  uint64_t acc = 0;
  int bits = 0;
  for (int64_t i = 0; i < groups * 8; i++) {
    acc |= (uint64_t)(i < n ? values[i] : 0) << bits;
    for (bits += bw; bits >= 8; bits -= 8, acc >>= 8) {
      uint8_t byte = (uint8_t)acc;
      tg_text_append(b, (const char *)&byte, 1);
    }
  }
}

/* The page's body (s->body) compressed, after its header: type, sizes and the page kind's own header. */
static tg_status page(sink *s, out_col *c, int type, int32_t nvalues, int encoding) {
  if (s->body.oom) return tg_error(TG_ERR_NOMEM, "%s: out of memory for a page of column '%s'", s->path, c->name);
  size_t bound = ZSTD_compressBound(s->body.len);
  if (s->body.len > INT32_MAX || bound > INT32_MAX)
    return tg_error(TG_ERR_INVALID, "%s: column '%s': a page of %zu bytes is past Parquet's 2 GiB", s->path, c->name,
                    s->body.len);
  if (s->packed_cap < bound + 1) {
    tg_free(s->packed);
    s->packed_cap = 0;
    if (!(s->packed = tg_malloc(bound + 1)))
      return tg_error(TG_ERR_NOMEM, "%s: out of memory compressing column '%s'", s->path, c->name);
    s->packed_cap = bound + 1;
  }
  size_t z = ZSTD_compressCCtx(s->zc, s->packed, bound, s->body.data ? s->body.data : "", s->body.len, ZSTD_LEVEL);
  if (ZSTD_isError(z))
    return tg_error(TG_ERR_INVALID, "%s: column '%s': zstd: %s", s->path, c->name, ZSTD_getErrorName(z));
  s->header.len = 0;
  tg_thrift_out t = {.b = &s->header};
  tg_tw_begin(&t, 0);
  tg_tw_i32(&t, 1, type);
  tg_tw_i32(&t, 2, (int32_t)s->body.len);
  tg_tw_i32(&t, 3, (int32_t)z);
  tg_tw_begin(&t, type == TG_PQ_PAGE_DICTIONARY ? 7 : 5); /* DictionaryPageHeader or DataPageHeader */
  tg_tw_i32(&t, 1, nvalues);
  tg_tw_i32(&t, 2, encoding);
  if (type == TG_PQ_PAGE_DATA) {
    tg_tw_i32(&t, 3, TG_PQ_RLE); /* definition levels */
    tg_tw_i32(&t, 4, TG_PQ_RLE); /* repetition levels (none: the columns are flat) */
  }
  tg_tw_end(&t);
  tg_tw_end(&t);
  if (s->header.oom) return tg_error(TG_ERR_NOMEM, "%s: out of memory", s->path);
  c->usize += (int64_t)(s->header.len + s->body.len);
  c->csize += (int64_t)(s->header.len + z);
  tg_status st = put(s, s->header.data, s->header.len);
  return st == TG_OK ? put(s, s->packed, z) : st;
}

/* A category column's names in code order: the dictionary page (PLAIN: a 4-byte length, then the bytes). */
static tg_status dictionary(sink *s, out_col *c) {
  const tg_categories *k = &c->cat->cats;
  s->body.len = 0;
  for (uint32_t i = 0; i < k->n; i++) {
    uint64_t len = k->off[i + 1] - k->off[i] - 1;
    le32(&s->body, (uint32_t)len);
    tg_text_append(&s->body, k->text + k->off[i], (size_t)len);
  }
  c->dict_at = s->at;
  return page(s, c, TG_PQ_PAGE_DICTIONARY, (int32_t)k->n, TG_PQ_PLAIN);
}

/* Rows [a, a + n) of a category column: definition levels (1 present, 0 missing; length-prefixed), then the present
 * rows' codes as dictionary indices (a bit-width byte, then the hybrid). */
static tg_status category_page(sink *s, out_col *c, int64_t a, int64_t n) {
  const uint32_t *codes = c->cat->codes + a;
  uint32_t *scratch = tg_malloc((size_t)n * sizeof *scratch + 1);
  if (!scratch) return tg_error(TG_ERR_NOMEM, "%s: out of memory for column '%s'", s->path, c->name);
  int64_t present = 0;
  for (int64_t i = 0; i < n; i++) scratch[i] = codes[i] != TG_CATEGORY_MISSING;
  tg_text levels = {0};
  bit_packed(&levels, scratch, n, 1);
  le32(&s->body, (uint32_t)levels.len);
  tg_text_append(&s->body, levels.data ? levels.data : "", levels.len);
  if (levels.oom) s->body.oom = 1;
  tg_text_free(&levels);
  for (int64_t i = 0; i < n; i++)
    if (codes[i] != TG_CATEGORY_MISSING) scratch[present++] = codes[i];
  uint32_t n_names = c->cat->cats.n;
  int bw = n_names > 1 ? tg_pq_bit_width(n_names - 1) : 1;
  uint8_t width = (uint8_t)bw;
  if (n_names) {
    tg_text_append(&s->body, (const char *)&width, 1);
    bit_packed(&s->body, scratch, present, bw);
  }
  tg_free(scratch);
  return page(s, c, TG_PQ_PAGE_DATA, (int32_t)n, n_names ? TG_PQ_RLE_DICTIONARY : TG_PQ_PLAIN);
}

/* The column chunk: a dictionary page for a category with names, then data pages of PAGE_ROWS rows. */
static tg_status column(sink *s, out_col *c, int64_t rows) {
  c->start = s->at;
  c->dict_at = -1;
  tg_status st = TG_OK;
  if (c->kind == COL_CAT && c->cat->cats.n) st = dictionary(s, c);
  c->data_at = s->at;
  for (int64_t a = 0; st == TG_OK && a < rows; a += PAGE_ROWS) {
    int64_t n = rows - a < PAGE_ROWS ? rows - a : PAGE_ROWS;
    s->body.len = 0;
    if (c->kind == COL_CAT) {
      st = category_page(s, c, a, n);
      continue;
    }
    for (int64_t i = a; i < a + n; i++) {
      uint64_t bits;
      if (c->kind == COL_TS) bits = (uint64_t)c->ts[i];
      else if (c->kind == COL_I64) bits = c->u32[i];
      else memcpy(&bits, &c->f64[i], 8);
      le64(&s->body, bits);
    }
    st = page(s, c, TG_PQ_PAGE_DATA, (int32_t)n, TG_PQ_PLAIN);
  }
  return st;
}

/* The schema element of a column (after the root's). */
static void schema_element(tg_thrift_out *t, const out_col *c) {
  static const int physical[] = {TG_PQ_INT64, TG_PQ_DOUBLE, TG_PQ_INT64, TG_PQ_BYTE_ARRAY};
  tg_tw_begin(t, 0);
  tg_tw_i32(t, 1, physical[c->kind]);
  tg_tw_i32(t, 3, c->kind == COL_CAT ? TG_PQ_OPTIONAL : TG_PQ_REQUIRED);
  tg_tw_string(t, 4, c->name);
  if (c->kind == COL_CAT) {
    tg_tw_i32(t, 6, 0); /* ConvertedType UTF8 */
    tg_tw_begin(t, 10); /* LogicalType: STRING */
    tg_tw_begin(t, TG_PQ_LT_STRING);
    tg_tw_end(t);
    tg_tw_end(t);
  } else if (c->kind == COL_TS) {
    tg_tw_begin(t, 10); /* LogicalType: TIMESTAMP(isAdjustedToUTC, NANOS) */
    tg_tw_begin(t, TG_PQ_LT_TIMESTAMP);
    tg_tw_bool(t, 1, 1);
    tg_tw_begin(t, 2);
    tg_tw_begin(t, TG_PQ_NANOS);
    tg_tw_end(t);
    tg_tw_end(t);
    tg_tw_end(t);
    tg_tw_end(t);
  }
  tg_tw_end(t);
}

static void column_chunk(tg_thrift_out *t, const out_col *c, int64_t rows) {
  static const int physical[] = {TG_PQ_INT64, TG_PQ_DOUBLE, TG_PQ_INT64, TG_PQ_BYTE_ARRAY};
  tg_tw_begin(t, 0);
  tg_tw_i64(t, 2, c->start); /* file_offset */
  tg_tw_begin(t, 3);         /* ColumnMetaData */
  tg_tw_i32(t, 1, physical[c->kind]);
  int dict = c->dict_at >= 0;
  tg_tw_list(t, 2, TG_TT_I32, dict ? 3 : 2);
  tg_tw_elem_i32(t, TG_PQ_PLAIN);
  tg_tw_elem_i32(t, TG_PQ_RLE);
  if (dict) tg_tw_elem_i32(t, TG_PQ_RLE_DICTIONARY);
  tg_tw_list(t, 3, TG_TT_BINARY, 1);
  tg_tw_elem_string(t, c->name);
  tg_tw_i32(t, 4, TG_PQ_ZSTD);
  tg_tw_i64(t, 5, rows);
  tg_tw_i64(t, 6, c->usize);
  tg_tw_i64(t, 7, c->csize);
  tg_tw_i64(t, 9, c->data_at);
  if (dict) tg_tw_i64(t, 11, c->dict_at);
  tg_tw_end(t);
  tg_tw_end(t);
}

/* FileMetaData: version, the schema (a root of every column), the rows, one row group (none for no rows). */
static void file_meta(tg_text *b, const out_col *cols, int ncols, int64_t rows) {
  tg_thrift_out t = {.b = b};
  tg_tw_begin(&t, 0);
  tg_tw_i32(&t, 1, 2);
  tg_tw_list(&t, 2, TG_TT_STRUCT, (uint32_t)ncols + 1);
  tg_tw_begin(&t, 0);
  tg_tw_string(&t, 4, "schema");
  tg_tw_i32(&t, 5, ncols);
  tg_tw_end(&t);
  for (int k = 0; k < ncols; k++) schema_element(&t, &cols[k]);
  tg_tw_i64(&t, 3, rows);
  tg_tw_list(&t, 4, TG_TT_STRUCT, rows > 0);
  if (rows > 0) {
    int64_t bytes = 0;
    for (int k = 0; k < ncols; k++) bytes += cols[k].usize;
    tg_tw_begin(&t, 0);
    tg_tw_list(&t, 1, TG_TT_STRUCT, (uint32_t)ncols);
    for (int k = 0; k < ncols; k++) column_chunk(&t, &cols[k], rows);
    tg_tw_i64(&t, 2, bytes);
    tg_tw_i64(&t, 3, rows);
    tg_tw_end(&t);
  }
  char by[64];
  snprintf(by, sizeof by, "tickgrad version %s", tg_version());
  tg_tw_string(&t, 6, by);
  tg_tw_end(&t);
}

/* The file's columns: ts, the prices and volume, the instrument when there is one, then every extra column. A name
 * used twice (an extra column named like a bar field) is TG_ERR_INVALID naming it. */
static tg_status plan(const tg_bars *b, const char *path, out_col *cols, int *ncols) {
  static const char *const fields[] = {"ts", "open", "high", "low", "close", "volume", "instrument"};
  const double *values[] = {b->open, b->high, b->low, b->close, b->volume};
  int n = 0;
  cols[n++] = (out_col){.name = fields[0], .kind = COL_TS, .ts = b->ts};
  for (int k = 0; k < 5; k++) cols[n++] = (out_col){.name = fields[k + 1], .kind = COL_F64, .f64 = values[k]};
  if (b->instrument) cols[n++] = (out_col){.name = fields[6], .kind = COL_I64, .u32 = b->instrument};
  for (int k = 0; k < b->n_cols; k++) {
    const tg_bar_column *c = &b->cols[k];
    for (int j = 0; j < n; j++)
      if (strcmp(cols[j].name, c->name) == 0)
        return tg_error(TG_ERR_INVALID, "%s: two columns named '%s' (an extra column named like a bar field); "
                        "Parquet names each column once", path, c->name);
    if (c->kind == TG_COLUMN_NUMERIC) cols[n++] = (out_col){.name = c->name, .kind = COL_F64, .f64 = c->values};
    else cols[n++] = (out_col){.name = c->name, .kind = COL_CAT, .cat = c};
  }
  *ncols = n;
  return TG_OK;
}

tg_status tg_bars_write_parquet(const tg_bars *b, const char *path) {
  out_col *cols = tg_calloc((size_t)b->n_cols + 7, sizeof *cols);
  if (!cols) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  int ncols = 0;
  tg_status st = plan(b, path, cols, &ncols);
  sink s;
  memset(&s, 0, sizeof s);
  s.path = path;
  if (st == TG_OK && !(s.zc = ZSTD_createCCtx())) st = tg_error(TG_ERR_NOMEM, "%s: out of memory for zstd", path);
  int open = st == TG_OK && (st = tg_atomic_open(&s.f, path)) == TG_OK;
  if (st == TG_OK) st = put(&s, "PAR1", 4);
  for (int k = 0; k < ncols && st == TG_OK && b->n > 0; k++) st = column(&s, &cols[k], b->n);
  tg_text meta = {0};
  if (st == TG_OK) {
    file_meta(&meta, cols, ncols, b->n);
    le32(&meta, (uint32_t)meta.len);
    tg_text_append(&meta, "PAR1", 4);
    st = meta.oom ? tg_error(TG_ERR_NOMEM, "%s: out of memory", path) : put(&s, meta.data, meta.len);
  }
  if (st == TG_OK) st = tg_atomic_commit(&s.f);
  else if (open && s.f.fd >= 0) tg_atomic_abort(&s.f);
  tg_text_free(&meta);
  tg_text_free(&s.body);
  tg_free(s.packed);
  tg_text_free(&s.header);
  ZSTD_freeCCtx(s.zc);
  tg_free(cols);
  return st;
}
