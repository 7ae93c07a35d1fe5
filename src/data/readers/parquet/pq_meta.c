/* Parquet: the footer and FileMetaData (schema, row groups, column chunks), checked against the file. */
#include <stdio.h>
#include <strings.h>
#include "base/alloc.h"
#include "data/readers/parquet/parquet.h"
#include "data/readers/parquet/pq_fields.h"

/* One SchemaElement as read. */
typedef struct elem {
  int type, type_length, repetition, num_children, converted, scale, precision;
  const uint8_t *name;
  uint32_t name_len;
  int logical, time_unit, utc, int_bits, is_signed, lt_scale, lt_precision;
} elem;

static tg_status parse_unit(tg_thrift *t, int type, int *unit) {
  FIELDS_BEGIN(t, type, "TimeUnit") {
    case 1: *unit = TG_PQ_MILLIS; st = tg_thrift_skip(t, ft, 0); break;
    case 2: *unit = TG_PQ_MICROS; st = tg_thrift_skip(t, ft, 0); break;
    case 3: *unit = TG_PQ_NANOS; st = tg_thrift_skip(t, ft, 0); break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

static tg_status parse_time(tg_thrift *t, int type, elem *e) {
  FIELDS_BEGIN(t, type, "TimestampType") {
    case 1: st = tg_thrift_bool(t, ft, "isAdjustedToUTC", &e->utc); break;
    case 2: st = parse_unit(t, ft, &e->time_unit); break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

static tg_status parse_decimal(tg_thrift *t, int type, elem *e) {
  FIELDS_BEGIN(t, type, "DecimalType") {
    case 1: st = tg_thrift_int(t, ft, 0, 1000, "DecimalType.scale", &v); e->lt_scale = (int)v; break;
    case 2: st = tg_thrift_int(t, ft, 0, 1000, "DecimalType.precision", &v); e->lt_precision = (int)v; break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

static tg_status parse_inttype(tg_thrift *t, int type, elem *e) {
  FIELDS_BEGIN(t, type, "IntType") {
    case 1: st = tg_thrift_int(t, ft, 0, 64, "IntType.bitWidth", &v); e->int_bits = (int)v; break;
    case 2: st = tg_thrift_bool(t, ft, "IntType.isSigned", &e->is_signed); break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

static tg_status parse_logical(tg_thrift *t, int type, elem *e) {
  FIELDS_BEGIN(t, type, "LogicalType") {
    case TG_PQ_LT_DECIMAL: e->logical = id; st = parse_decimal(t, ft, e); break;
    case TG_PQ_LT_TIME:
    case TG_PQ_LT_TIMESTAMP: e->logical = id; st = parse_time(t, ft, e); break;
    case TG_PQ_LT_INTEGER: e->logical = id; st = parse_inttype(t, ft, e); break;
    default:
      /* members without parameters; unknown ones (newer writers) leave the column unannotated */
      if (id >= 1 && id <= TG_PQ_LT_FLOAT16 && id != 9) e->logical = id;
      st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

static tg_status parse_elem(tg_thrift *t, int type, elem *e) {
  memset(e, 0, sizeof *e);
  e->type = e->repetition = e->num_children = e->converted = -1;
  FIELDS_BEGIN(t, type, "SchemaElement") {
    case 1: st = tg_thrift_int(t, ft, 0, 7, "SchemaElement.type", &v); e->type = (int)v; break;
    case 2: st = tg_thrift_int(t, ft, 0, INT32_MAX, "SchemaElement.type_length", &v); e->type_length = (int)v; break;
    case 3: st = tg_thrift_int(t, ft, 0, 2, "SchemaElement.repetition_type", &v); e->repetition = (int)v; break;
    case 4: st = tg_thrift_binary(t, ft, "SchemaElement.name", &e->name, &e->name_len); break;
    case 5: st = tg_thrift_int(t, ft, 0, INT32_MAX, "SchemaElement.num_children", &v); e->num_children = (int)v; break;
    case 6: st = tg_thrift_int(t, ft, INT32_MIN, INT32_MAX, "SchemaElement.converted_type", &v); e->converted = (int)v; break;
    case 7: st = tg_thrift_int(t, ft, INT32_MIN, INT32_MAX, "SchemaElement.scale", &v); e->scale = (int)v; break;
    case 8: st = tg_thrift_int(t, ft, INT32_MIN, INT32_MAX, "SchemaElement.precision", &v); e->precision = (int)v; break;
    case 10: st = parse_logical(t, ft, e); break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

/* ColumnMetaData; *seen gets a bit per required field present. */
static tg_status parse_colmeta(tg_thrift *t, int type, tg_pq_chunk *c, int64_t *data_off, int64_t *dict_off, int *seen) {
  c->has_meta = 1;
  FIELDS_BEGIN(t, type, "ColumnMetaData") {
    case 1: st = tg_thrift_int(t, ft, 0, 7, "ColumnMetaData.type", &v); c->physical = (int)v; *seen |= 1; break;
    case 4: st = tg_thrift_int(t, ft, INT32_MIN, INT32_MAX, "ColumnMetaData.codec", &v); c->codec = (int)v; *seen |= 2; break;
    case 5: st = tg_thrift_int(t, ft, 0, INT64_MAX, "ColumnMetaData.num_values", &v); c->num_values = v; *seen |= 4; break;
    case 7: st = tg_thrift_int(t, ft, 0, INT64_MAX, "ColumnMetaData.total_compressed_size", &v); c->size = v; *seen |= 8; break;
    case 9: st = tg_thrift_int(t, ft, 0, INT64_MAX, "ColumnMetaData.data_page_offset", &v); *data_off = v; *seen |= 16; break;
    case 11: st = tg_thrift_int(t, ft, INT64_MIN, INT64_MAX, "ColumnMetaData.dictionary_page_offset", &v); *dict_off = v; break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

static tg_status parse_chunk(tg_thrift *t, int type, tg_pq_chunk *c, int64_t *data_off, int64_t *dict_off, int *seen) {
  FIELDS_BEGIN(t, type, "ColumnChunk") {
    case 1: {
      const uint8_t *p;
      uint32_t n = 0;
      st = tg_thrift_binary(t, ft, "ColumnChunk.file_path", &p, &n);
      if (n) c->external = 1;
      break;
    }
    case 3: st = parse_colmeta(t, ft, c, data_off, dict_off, seen); break;
    case 8:
    case 9: c->encrypted = 1; st = tg_thrift_skip(t, ft, 0); break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

typedef struct meta_ctx {
  tg_pq_file *f;
  elem *e;
  uint32_t ne, next;
  int chain[TG_PQ_MAX_NESTING + 2];
  int writing;       /* second pass: fill the columns */
  size_t name_bytes; /* first pass: bytes the names need */
  int nleaves;
  char *name_at;
} meta_ctx;

static void fill_column(meta_ctx *m, int depth, int def, int rep) {
  const elem *e = &m->e[m->chain[depth]];
  tg_pq_column *c = &m->f->cols[m->nleaves];
  memset(c, 0, sizeof *c);
  c->name = m->name_at;
  for (int d = 1; d <= depth; d++) {
    const elem *a = &m->e[m->chain[d]];
    if (d > 1) *m->name_at++ = '.';
    if (a->name_len) memcpy(m->name_at, a->name, a->name_len);
    m->name_at += a->name_len;
  }
  *m->name_at++ = '\0';
  c->physical = e->type;
  c->type_length = e->type_length;
  c->repetition = e->repetition < 0 ? TG_PQ_REQUIRED : e->repetition;
  c->max_def = def;
  c->max_rep = rep;
  c->converted = e->converted;
  c->logical = e->logical;
  c->time_unit = e->time_unit;
  c->utc = e->utc;
  c->scale = e->logical == TG_PQ_LT_DECIMAL ? e->lt_scale : e->scale;
  c->precision = e->logical == TG_PQ_LT_DECIMAL ? e->lt_precision : e->precision;
  c->int_bits = e->int_bits;
  c->is_signed = e->is_signed;
  if (!c->logical) { /* the legacy annotations */
    switch (e->converted) {
      case TG_PQ_CT_DECIMAL: c->logical = TG_PQ_LT_DECIMAL; break;
      case TG_PQ_CT_DATE: c->logical = TG_PQ_LT_DATE; break;
      case TG_PQ_CT_TIME_MILLIS:
      case TG_PQ_CT_TIME_MICROS:
        c->logical = TG_PQ_LT_TIME;
        c->time_unit = e->converted == TG_PQ_CT_TIME_MILLIS ? TG_PQ_MILLIS : TG_PQ_MICROS;
        c->utc = 1;
        break;
      case TG_PQ_CT_TIMESTAMP_MILLIS:
      case TG_PQ_CT_TIMESTAMP_MICROS:
        c->logical = TG_PQ_LT_TIMESTAMP;
        c->time_unit = e->converted == TG_PQ_CT_TIMESTAMP_MILLIS ? TG_PQ_MILLIS : TG_PQ_MICROS;
        c->utc = 1;
        break;
      default:
        if (e->converted >= TG_PQ_CT_UINT_8 && e->converted <= 18) { /* UINT_8 .. INT_64 */
          static const int bits[] = {8, 16, 32, 64, 8, 16, 32, 64};
          c->logical = TG_PQ_LT_INTEGER;
          c->int_bits = bits[e->converted - TG_PQ_CT_UINT_8];
          c->is_signed = e->converted >= 15;
        }
    }
  }
  if (c->logical == TG_PQ_LT_TIMESTAMP && !c->time_unit) c->logical = 0; /* no unit: unusable annotation */
}

/* Walks the element at m->next and its children (depth-first, as the schema list is ordered). */
static tg_status walk(meta_ctx *m, const tg_pq_where *w, int depth, int def, int rep) {
  if (depth > TG_PQ_MAX_NESTING)
    return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset, "file metadata: schema nested deeper than %d levels",
                      TG_PQ_MAX_NESTING);
  uint32_t i = m->next++;
  const elem *e = &m->e[i];
  m->chain[depth] = (int)i;
  if (i > 0) {
    if (e->repetition == TG_PQ_OPTIONAL) def++;
    if (e->repetition == TG_PQ_REPEATED) def++, rep++;
  }
  if (e->num_children > 0) {
    if (e->type >= 0 && i > 0)
      return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset, "file metadata: schema element %u has a type and children", i);
    for (int k = 0; k < e->num_children; k++) {
      if (m->next >= m->ne)
        return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset,
                          "file metadata: schema element %u claims %d children but the schema ends", i, e->num_children);
      tg_status st = walk(m, w, depth + 1, def, rep);
      if (st != TG_OK) return st;
    }
    return TG_OK;
  }
  if (i == 0) return TG_OK;
  if (e->type < 0) {
    if (e->num_children == 0) return TG_OK; /* an empty group */
    return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset, "file metadata: schema element %u has neither a type nor children", i);
  }
  if (e->type == TG_PQ_FIXED_LEN_BYTE_ARRAY && e->type_length <= 0)
    return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset, "file metadata: FIXED_LEN_BYTE_ARRAY column without a length");
  if (!m->writing) {
    size_t bytes = 0;
    for (int d = 1; d <= depth; d++) bytes += m->e[m->chain[d]].name_len + 1;
    if (bytes > 4096)
      return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset, "file metadata: column path of %zu bytes (over 4096)", bytes);
    m->name_bytes += bytes;
    if (m->name_bytes > 64 * (size_t)(m->f->len - (size_t)m->f->meta_offset) + 65536)
      return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset, "file metadata: column paths too long for the footer's size");
  } else {
    fill_column(m, depth, def, rep);
  }
  m->nleaves++;
  return TG_OK;
}

static tg_status parse_schema(meta_ctx *m, tg_thrift *t, int type, const tg_pq_where *w) {
  int et = 0;
  uint32_t n = 0;
  tg_status st = tg_thrift_list(t, type, "FileMetaData.schema", &et, &n);
  if (st != TG_OK) return st;
  if (n == 0) return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset, "file metadata: empty schema");
  m->e = tg_malloc((size_t)n * sizeof *m->e);
  if (!m->e) return tg_error(TG_ERR_NOMEM, "%s: out of memory for a schema of %u elements", w->path, n);
  m->ne = n;
  for (uint32_t i = 0; i < n; i++)
    if ((st = parse_elem(t, et, &m->e[i])) != TG_OK) return st;
  /* pass 1 counts leaves and name bytes, pass 2 fills them in */
  m->next = 0;
  if ((st = walk(m, w, 0, 0, 0)) != TG_OK) return st;
  if (m->next != n)
    return tg_pq_fail(w, TG_ERR_FORMAT, m->f->meta_offset, "file metadata: the schema has %u elements but its root "
                      "accounts for %u", n, m->next);
  tg_pq_file *f = m->f;
  f->cols = tg_calloc((size_t)m->nleaves + 1, sizeof *f->cols);
  f->names = tg_malloc(m->name_bytes + 1);
  if (!f->cols || !f->names) return tg_error(TG_ERR_NOMEM, "%s: out of memory for the schema", w->path);
  f->ncols = m->nleaves;
  m->writing = 1;
  m->nleaves = 0;
  m->next = 0;
  m->name_at = f->names;
  return walk(m, w, 0, 0, 0);
}

static tg_status check_chunk(tg_pq_file *f, const tg_pq_where *w, int r, int c, tg_pq_chunk *k, int64_t data_off,
                             int64_t dict_off) {
  if (!k->has_meta) return TG_OK; /* reported when the column is read */
  const tg_pq_column *col = &f->cols[c];
  tg_pq_where cw = *w;
  cw.column = col->name;
  cw.row_group = r;
  if (k->physical != col->physical)
    return tg_pq_fail(&cw, TG_ERR_FORMAT, f->meta_offset, "file metadata: column chunk type %s differs from the schema's %s",
                      tg_pq_type_name(k->physical), tg_pq_type_name(col->physical));
  if (k->external) return TG_OK;
  int64_t start = data_off;
  /* a dictionary page offset of 0 (some writers) or past the data page is no offset */
  if (dict_off >= 4 && dict_off < data_off) start = dict_off;
  int64_t lim = f->meta_offset;
  if (start < 4 || start >= lim)
    return tg_pq_fail(&cw, TG_ERR_FORMAT, f->meta_offset, "file metadata: column chunk starts at byte %lld, outside the "
                      "data region [4, %lld)", (long long)start, (long long)lim);
  if (k->size <= 0 || k->size > lim - start)
    return tg_pq_fail(&cw, TG_ERR_FORMAT, f->meta_offset, "file metadata: column chunk of %lld bytes at byte %lld runs "
                      "past the data region (ends at %lld)", (long long)k->size, (long long)start, (long long)lim);
  k->start = start;
  return TG_OK;
}

static tg_status parse_columns(tg_thrift *t, int type, tg_pq_file *f, int r, const tg_pq_where *w) {
  int et = 0;
  uint32_t n = 0;
  tg_status st = tg_thrift_list(t, type, "RowGroup.columns", &et, &n);
  if (st != TG_OK) return st;
  if (n != (uint32_t)f->ncols)
    return tg_pq_fail(w, TG_ERR_FORMAT, tg_thrift_offset(t), "file metadata: row group %d has %u column chunks for %d "
                      "columns", r, n, f->ncols);
  tg_pq_chunk *chunks = f->rgs[r].chunks;
  for (uint32_t c = 0; c < n; c++) {
    int64_t data_off = 0, dict_off = -1;
    int seen = 0;
    memset(&chunks[c], 0, sizeof chunks[c]);
    if ((st = parse_chunk(t, et, &chunks[c], &data_off, &dict_off, &seen)) != TG_OK) return st;
    if (chunks[c].has_meta && seen != 31)
      return tg_pq_fail(w, TG_ERR_FORMAT, tg_thrift_offset(t), "file metadata: row group %d column %u: ColumnMetaData "
                        "lacks a required field (type, codec, num_values, total_compressed_size or data_page_offset)", r, c);
    if ((st = check_chunk(f, w, r, (int)c, &chunks[c], data_off, dict_off)) != TG_OK) return st;
  }
  return TG_OK;
}

/* RowGroup; *seen: 1 num_rows, 2 columns. */
static tg_status parse_rowgroup(tg_thrift *t, int type, tg_pq_file *f, int r, const tg_pq_where *w, int *seen) {
  tg_pq_rowgroup *g = &f->rgs[r];
  g->chunks = f->chunk_store + (size_t)r * (size_t)f->ncols;
  FIELDS_BEGIN(t, type, "RowGroup") {
    case 1: st = parse_columns(t, ft, f, r, w); *seen |= 2; break;
    case 3: st = tg_thrift_int(t, ft, 0, INT64_MAX, "RowGroup.num_rows", &v); g->num_rows = v; *seen |= 1; break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

/* Walks a chunk's page headers: each must parse, lie inside the chunk, and the data pages must hold
 * the chunk's values. Catches damage in columns that are never decoded (strings). */
static tg_status check_pages(const tg_pq_file *f, int r, int c) {
  const tg_pq_chunk *k = &f->rgs[r].chunks[c];
  if (!k->has_meta || k->encrypted || k->external) return TG_OK;
  tg_pq_where w = {f->path, f->cols[c].name, r, 0};
  int64_t pos = k->start, end = k->start + k->size, values = 0;
  while (values < k->num_values) {
    if (pos >= end)
      return tg_pq_fail(&w, TG_ERR_FORMAT, pos, "column chunk ends after %lld of its %lld values", (long long)values,
                        (long long)k->num_values);
    tg_pq_page pg;
    tg_status st = tg_pq_page_read(&w, f->data, pos, end, &pg);
    if (st != TG_OK) return st;
    if (pg.type == TG_PQ_PAGE_DATA || pg.type == TG_PQ_PAGE_DATA_V2) values += pg.num_values;
    pos = pg.data + pg.csize;
    w.page++;
  }
  if (values != k->num_values)
    return tg_pq_fail(&w, TG_ERR_FORMAT, k->start, "column chunk pages hold %lld values, its metadata says %lld",
                      (long long)values, (long long)k->num_values);
  return TG_OK;
}

void tg_pq_close(tg_pq_file *f) {
  if (f->reuse) {
    tg_pq_codecs_free(&f->reuse->codecs);
    tg_free(f->reuse->page);
    tg_free(f->reuse->dict);
    tg_free(f->reuse);
  }
  tg_free(f->cols);
  tg_free(f->names);
  tg_free(f->rgs);
  tg_free(f->chunk_store);
  memset(f, 0, sizeof *f);
}

tg_status tg_pq_open(tg_pq_file *f, const char *path, const void *bytes, size_t len) {
  memset(f, 0, sizeof *f);
  f->path = path;
  f->data = bytes;
  f->len = len;
  tg_pq_where w = {path, NULL, -1, -1};
  const uint8_t *b = bytes;
  if (len < 12)
    return tg_pq_fail(&w, TG_ERR_FORMAT, 0, "%zu bytes is too short for a Parquet file (magic, footer length, magic: 12)", len);
  if (memcmp(b, "PAR1", 4) != 0) return tg_pq_fail(&w, TG_ERR_FORMAT, 0, "no PAR1 magic at the start");
  if (memcmp(b + len - 4, "PARE", 4) == 0)
    return tg_pq_fail(&w, TG_ERR_UNSUPPORTED, (int64_t)len - 4, "encrypted footer (PARE): Parquet modular encryption is "
                      "not supported");
  if (memcmp(b + len - 4, "PAR1", 4) != 0)
    return tg_pq_fail(&w, TG_ERR_FORMAT, (int64_t)len - 4, "no PAR1 magic at the end (truncated file?)");
  uint32_t mlen = tg_pq_le32(b + len - 8);
  if ((uint64_t)mlen > len - 12)
    return tg_pq_fail(&w, TG_ERR_FORMAT, (int64_t)len - 8, "footer length %u exceeds the %zu bytes before it", mlen, len - 12);
  f->meta_offset = (int64_t)(len - 8 - mlen);
  tg_thrift t = {b + f->meta_offset, b + len - 8, b, &w, "file metadata", 0};

  /* FileMetaData: remember where schema and row groups are, decode them in that order afterwards */
  tg_thrift schema_at = t, rgs_at = t;
  int schema_type = -1, rgs_type = -1, have_rows = 0;
  int64_t num_rows = 0;
  tg_status st = tg_thrift_begin(&t, TG_TT_STRUCT, "FileMetaData");
  int last = 0, id = 0, ft = 0;
  while (st == TG_OK && (st = tg_thrift_field(&t, &last, &id, &ft)) == TG_OK && ft != TG_TT_STOP) {
    int64_t v = 0;
    switch (id) {
      case 2: schema_at = t; schema_type = ft; st = tg_thrift_skip(&t, ft, 0); break;
      case 3: st = tg_thrift_int(&t, ft, 0, INT64_MAX, "FileMetaData.num_rows", &v); num_rows = v; have_rows = 1; break;
      case 4: rgs_at = t; rgs_type = ft; st = tg_thrift_skip(&t, ft, 0); break;
      case 8:
        st = tg_pq_fail(&w, TG_ERR_UNSUPPORTED, tg_thrift_offset(&t), "encrypted columns (plaintext footer with an "
                        "encryption algorithm): Parquet modular encryption is not supported");
        break;
      default: st = tg_thrift_skip(&t, ft, 0);
    }
  }
  if (st == TG_OK && (schema_type < 0 || !have_rows))
    st = tg_pq_fail(&w, TG_ERR_FORMAT, f->meta_offset, "file metadata: no %s", schema_type < 0 ? "schema" : "num_rows");
  meta_ctx m;
  memset(&m, 0, sizeof m);
  m.f = f;
  if (st == TG_OK) st = parse_schema(&m, &schema_at, schema_type, &w);
  tg_free(m.e);
  if (st == TG_OK && rgs_type >= 0) {
    int et = 0;
    uint32_t n = 0;
    st = tg_thrift_list(&rgs_at, rgs_type, "FileMetaData.row_groups", &et, &n);
    if (st == TG_OK && n > 0) {
      f->rgs = tg_calloc(n, sizeof *f->rgs);
      /* every chunk takes a byte of metadata at least, so this is bounded by the footer */
      f->chunk_store = tg_calloc((size_t)n * (size_t)(f->ncols ? f->ncols : 1), sizeof *f->chunk_store);
      if (!f->rgs || !f->chunk_store) st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %u row groups", path, n);
      if (st == TG_OK && (uint64_t)n * (uint64_t)f->ncols > mlen)
        st = tg_pq_fail(&w, TG_ERR_FORMAT, f->meta_offset, "file metadata: %u row groups of %d columns cannot fit in %u bytes",
                        n, f->ncols, mlen);
      int64_t first = 0;
      for (uint32_t r = 0; r < n && st == TG_OK; r++) {
        f->nrg = (int)r + 1;
        int seen = 0;
        st = parse_rowgroup(&rgs_at, et, f, (int)r, &w, &seen);
        if (st == TG_OK && seen != 3)
          st = tg_pq_fail(&w, TG_ERR_FORMAT, tg_thrift_offset(&rgs_at), "file metadata: row group %u lacks its %s", r,
                          seen & 1 ? "columns" : "num_rows");
        if (st == TG_OK) {
          f->rgs[r].first_row = first;
          if (f->rgs[r].num_rows > INT64_MAX - first) st = tg_pq_fail(&w, TG_ERR_FORMAT, f->meta_offset, "row counts overflow");
          else first += f->rgs[r].num_rows;
        }
      }
      f->num_rows = first;
    }
  }
  if (st == TG_OK && f->num_rows != num_rows)
    st = tg_pq_fail(&w, TG_ERR_FORMAT, f->meta_offset, "file metadata: num_rows is %lld but the row groups hold %lld",
                    (long long)num_rows, (long long)f->num_rows);
  if (st == TG_OK) {
    uint64_t limit = (uint64_t)len * TG_PQ_MAX_ROWS_PER_BYTE;
    if (limit < TG_PQ_MIN_ROW_LIMIT) limit = TG_PQ_MIN_ROW_LIMIT;
    if ((uint64_t)f->num_rows > limit)
      st = tg_pq_fail(&w, TG_ERR_FORMAT, f->meta_offset, "claims %lld rows in a %zu-byte file (over %d rows per byte); "
                      "refusing it as corrupt", (long long)f->num_rows, len, TG_PQ_MAX_ROWS_PER_BYTE);
  }
  for (int r = 0; r < f->nrg && st == TG_OK; r++)
    for (int c = 0; c < f->ncols && st == TG_OK; c++) st = check_pages(f, r, c);
  if (st == TG_OK && !(f->reuse = tg_calloc(1, sizeof *f->reuse)))
    st = tg_error(TG_ERR_NOMEM, "%s: out of memory for the column reader", path);
  if (st != TG_OK) tg_pq_close(f);
  return st;
}

int tg_pq_find(const tg_pq_file *f, const char *name) {
  for (int c = 0; c < f->ncols; c++)
    if (strcasecmp(f->cols[c].name, name) == 0) return c;
  for (int c = 0; c < f->ncols; c++) {
    const char *leaf = strrchr(f->cols[c].name, '.');
    if (leaf && strcasecmp(leaf + 1, name) == 0) return c;
  }
  return -1;
}

const char *tg_pq_type_name(int physical) {
  static const char *names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                                "FIXED_LEN_BYTE_ARRAY"};
  return physical >= 0 && physical < 8 ? names[physical] : "UNKNOWN";
}

const char *tg_pq_codec_name(int codec) {
  static const char *names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  return codec >= 0 && codec < 8 ? names[codec] : "UNKNOWN";
}

const char *tg_pq_encoding_name(int e) {
  static const char *names[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  return e >= 0 && e < 10 ? names[e] : "UNKNOWN";
}

void tg_pq_describe(const tg_pq_column *c, char *buf, size_t n) {
  static const char *units[] = {"", "MILLIS", "MICROS", "NANOS"};
  static const char *reps[] = {"required", "optional", "repeated"};
  char type[48], ann[64] = "";
  if (c->physical == TG_PQ_FIXED_LEN_BYTE_ARRAY) snprintf(type, sizeof type, "FIXED_LEN_BYTE_ARRAY(%d)", c->type_length);
  else snprintf(type, sizeof type, "%s", tg_pq_type_name(c->physical));
  switch (c->logical) {
    case TG_PQ_LT_TIMESTAMP: snprintf(ann, sizeof ann, " TIMESTAMP(%s,%s)", units[c->time_unit & 3], c->utc ? "UTC" : "local"); break;
    case TG_PQ_LT_TIME: snprintf(ann, sizeof ann, " TIME(%s)", units[c->time_unit & 3]); break;
    case TG_PQ_LT_DATE: snprintf(ann, sizeof ann, " DATE"); break;
    case TG_PQ_LT_DECIMAL: snprintf(ann, sizeof ann, " DECIMAL(%d,%d)", c->precision, c->scale); break;
    case TG_PQ_LT_INTEGER: snprintf(ann, sizeof ann, " %sINT%d", c->is_signed ? "" : "U", c->int_bits); break;
    case TG_PQ_LT_STRING: snprintf(ann, sizeof ann, " STRING"); break;
    case TG_PQ_LT_FLOAT16: snprintf(ann, sizeof ann, " FLOAT16"); break;
    case 0: break;
    default: snprintf(ann, sizeof ann, " (logical type %d)", c->logical);
  }
  snprintf(buf, n, "%s %s%s %s", c->name, type, ann, reps[c->repetition % 3]);
}
