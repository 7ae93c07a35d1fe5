/* Parquet: the column reader: pages of every row group decoded straight into one output array (numbers or codes). */
#include <math.h>
#include "base/alloc.h"
#include "data/readers/parquet/parquet.h"

enum { CONV_NONE, CONV_I2D, CONV_U2D, CONV_U32, CONV_U32D };

typedef struct reader {
  const tg_pq_file *f;
  const tg_pq_column *col;
  tg_pq_kind kind;
  tg_pq_where w;
  int conv;             /* lane -> output, applied to decoded values (and once to a dictionary) */
  uint64_t null_bits;   /* what a null reads as: NaN or 0 */
  tg_pq_reuse *reuse;   /* the file's page buffer, dictionary storage and codecs */
  uint64_t *dict;       /* [ndict] lanes already converted to the output; NULL until the chunk's dictionary page */
  int64_t ndict;
  uint8_t *scratch;     /* validity when the caller passes none */
  size_t scratch_cap;
  int64_t nulls;
} reader;

tg_status tg_pq_column_kind(const tg_pq_file *f, int c, tg_pq_kind *k) {
  tg_pq_where w = {f->path, NULL, -1, -1};
  if (c < 0 || c >= f->ncols) return tg_error(TG_ERR_INVALID, "%s: no column %d (the file has %d)", f->path, c, f->ncols);
  const tg_pq_column *col = &f->cols[c];
  w.column = col->name;
  memset(k, 0, sizeof *k);
  k->physical = col->physical;
  k->type_length = col->type_length;
  if (col->max_rep > 0)
    return tg_pq_fail(&w, TG_ERR_UNSUPPORTED, -1, "repeated (list) columns are not supported; tickgrad reads flat columns");
  switch (col->physical) {
    case TG_PQ_BOOLEAN:
    case TG_PQ_INT32:
    case TG_PQ_INT64:
    case TG_PQ_INT96: k->lane = TG_PQ_LANE_I64; return TG_OK;
    case TG_PQ_FLOAT:
    case TG_PQ_DOUBLE: k->lane = TG_PQ_LANE_F64; return TG_OK;
    case TG_PQ_FIXED_LEN_BYTE_ARRAY:
      if (col->logical == TG_PQ_LT_FLOAT16 && col->type_length == 2) {
        k->lane = TG_PQ_LANE_F64;
        k->flba = 1;
        return TG_OK;
      }
      if (col->logical == TG_PQ_LT_DECIMAL && col->type_length >= 1 && col->type_length <= 8) {
        k->lane = TG_PQ_LANE_I64;
        k->flba = 2;
        return TG_OK;
      }
      return tg_pq_fail(&w, TG_ERR_UNSUPPORTED, -1, "FIXED_LEN_BYTE_ARRAY(%d) is read only as FLOAT16 or a DECIMAL of up "
                        "to 8 bytes", col->type_length);
    case TG_PQ_BYTE_ARRAY:
      return tg_pq_fail(&w, TG_ERR_UNSUPPORTED, -1, "BYTE_ARRAY (string/binary) columns are not numbers; strings are "
                        "read as category codes");
    default: return tg_pq_fail(&w, TG_ERR_FORMAT, -1, "unknown physical type %d", col->physical);
  }
}

tg_status tg_pq_string_kind(const tg_pq_file *f, int c, tg_pq_kind *k) {
  tg_pq_where w = {f->path, NULL, -1, -1};
  if (c < 0 || c >= f->ncols) return tg_error(TG_ERR_INVALID, "%s: no column %d (the file has %d)", f->path, c, f->ncols);
  const tg_pq_column *col = &f->cols[c];
  w.column = col->name;
  memset(k, 0, sizeof *k);
  k->physical = col->physical;
  k->lane = TG_PQ_LANE_CODE;
  if (col->max_rep > 0)
    return tg_pq_fail(&w, TG_ERR_UNSUPPORTED, -1, "repeated (list) columns are not supported; tickgrad reads flat columns");
  if (col->physical != TG_PQ_BYTE_ARRAY)
    return tg_pq_fail(&w, TG_ERR_UNSUPPORTED, -1, "%s is not a string type", tg_pq_type_name(col->physical));
  if (col->logical != 0 && col->logical != TG_PQ_LT_STRING && col->logical != TG_PQ_LT_ENUM)
    return tg_pq_fail(&w, TG_ERR_UNSUPPORTED, -1, "BYTE_ARRAY with logical type %d is not text", col->logical);
  return TG_OK;
}

static void convert(unsigned char *d, int64_t n, int conv) {
  switch (conv) {
    case CONV_I2D:
      for (int64_t i = 0; i < n; i++) {
        double x = (double)(int64_t)tg_pq_ld64(d + 8 * i);
        memcpy(d + 8 * i, &x, 8);
      }
      break;
    case CONV_U2D:
      for (int64_t i = 0; i < n; i++) {
        double x = (double)tg_pq_ld64(d + 8 * i);
        memcpy(d + 8 * i, &x, 8);
      }
      break;
    case CONV_U32:
      for (int64_t i = 0; i < n; i++) tg_pq_st64(d + 8 * i, tg_pq_ld64(d + 8 * i) & 0xffffffffu);
      break;
    case CONV_U32D:
      for (int64_t i = 0; i < n; i++) {
        double x = (double)(tg_pq_ld64(d + 8 * i) & 0xffffffffu);
        memcpy(d + 8 * i, &x, 8);
      }
      break;
    default: break;
  }
}

/* Moves nn dense values to their rows among n (valid marks them); nulls get null_bits. */
static void spread(unsigned char *d, const uint8_t *valid, int64_t n, int64_t nn, uint64_t null_bits) {
  int64_t j = nn - 1;
  for (int64_t i = n - 1; i > j; i--) {
    if (valid[i]) {
      memcpy(d + 8 * i, d + 8 * j, 8);
      j--;
    } else {
      tg_pq_st64(d + 8 * i, null_bits);
    }
  }
}

static tg_status grow(reader *r, uint8_t **p, size_t *cap, size_t need) {
  if (need <= *cap) return TG_OK;
  tg_free(*p);
  *p = tg_malloc(need);
  *cap = *p ? need : 0;
  if (!*p) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %zu bytes (column '%s')", r->f->path, need, r->col->name);
  if (need <= ((size_t)8 << 20)) tg_prefault(*p, need); /* written whole; a larger size may be a corrupt page's claim */
  return TG_OK;
}

/* The page's data from byte skip on, decompressed when compressed; points into the file when it is not. */
static tg_status page_bytes(reader *r, const tg_pq_page *pg, int codec, int32_t skip, const uint8_t **out, size_t *n) {
  const uint8_t *src = r->f->data + pg->data + skip;
  size_t srclen = (size_t)(pg->csize - skip), ulen = (size_t)(pg->usize - skip);
  if (codec == TG_PQ_UNCOMPRESSED || (pg->type == TG_PQ_PAGE_DATA_V2 && !pg->is_compressed)) {
    if (srclen != ulen)
      return tg_pq_fail(&r->w, TG_ERR_FORMAT, pg->offset, "uncompressed page data of %zu bytes says it holds %zu", srclen,
                        ulen);
    *out = src;
    *n = srclen;
    return TG_OK;
  }
  if (srclen == 0) { /* nothing was compressed (v2 pages of nulls): there is nothing to inflate */
    if (ulen != 0)
      return tg_pq_fail(&r->w, TG_ERR_FORMAT, pg->offset, "empty compressed page says it holds %zu bytes", ulen);
    *out = src;
    *n = 0;
    return TG_OK;
  }
  if ((uint64_t)ulen > tg_pq_codec_bound(codec, srclen))
    return tg_pq_fail(&r->w, TG_ERR_FORMAT, pg->offset, "page says %zu %s bytes inflate to %zu, more than the codec can "
                      "produce", srclen, tg_pq_codec_name(codec), ulen);
  tg_status st = grow(r, &r->reuse->page, &r->reuse->page_cap, ulen + 64); /* 64: room for whole-vector copies */
  if (st != TG_OK) return st;
  st = tg_pq_decompress(&r->w, pg->offset, codec, &r->reuse->codecs, src, srclen, r->reuse->page, ulen,
                        r->reuse->page_cap);
  *out = r->reuse->page;
  *n = ulen;
  return st;
}

static tg_status read_dict(reader *r, const tg_pq_page *pg, int codec) {
  if (pg->encoding != TG_PQ_PLAIN && pg->encoding != TG_PQ_PLAIN_DICTIONARY)
    return tg_pq_fail(&r->w, TG_ERR_UNSUPPORTED, pg->offset, "dictionary page in encoding %s (%d)",
                      tg_pq_encoding_name(pg->encoding), pg->encoding);
  const uint8_t *p;
  size_t n;
  tg_status st = page_bytes(r, pg, codec, 0, &p, &n);
  if (st != TG_OK) return st;
  int64_t nd = pg->num_values;
  /* every entry takes a bit at least: refuse before allocating for a count the page cannot hold */
  if ((uint64_t)nd > (uint64_t)n * 8)
    return tg_pq_fail(&r->w, TG_ERR_FORMAT, pg->offset, "dictionary of %lld entries in %zu bytes", (long long)nd, n);
  if ((size_t)nd + 1 > r->reuse->dict_cap) {
    tg_free(r->reuse->dict);
    r->reuse->dict = tg_malloc(((size_t)nd + 1) * 8);
    r->reuse->dict_cap = r->reuse->dict ? (size_t)nd + 1 : 0;
    if (!r->reuse->dict)
      return tg_error(TG_ERR_NOMEM, "%s: out of memory for a dictionary of %lld", r->f->path, (long long)nd);
  }
  r->dict = r->reuse->dict;
  r->ndict = nd;
  st = tg_pq_decode_plain(&r->w, pg->offset, &r->kind, p, n, nd, (unsigned char *)r->dict);
  if (st == TG_OK) convert((unsigned char *)r->dict, nd, r->conv);
  return st;
}

static tg_status read_data(reader *r, const tg_pq_page *pg, int codec, unsigned char *dst, uint8_t *valid) {
  int64_t count = pg->num_values, present = count;
  int max_def = r->col->max_def;
  const uint8_t *p, *e;
  size_t n;
  tg_status st;
  if (max_def > 0 && !valid) {
    if ((st = grow(r, &r->scratch, &r->scratch_cap, (size_t)count + 1)) != TG_OK) return st;
    valid = r->scratch;
  }
  if (pg->type == TG_PQ_PAGE_DATA) {
    if ((st = page_bytes(r, pg, codec, 0, &p, &n)) != TG_OK) return st;
    e = p + n;
    if (max_def > 0) {
      const uint8_t *lv = p;
      size_t ln;
      if (pg->def_encoding == TG_PQ_RLE) {
        if (e - p < 4) return tg_pq_fail(&r->w, TG_ERR_FORMAT, pg->offset, "definition levels: no length prefix");
        ln = tg_pq_le32(p);
        lv = p + 4;
        if (ln > (size_t)(e - lv))
          return tg_pq_fail(&r->w, TG_ERR_FORMAT, pg->offset, "definition levels of %zu bytes run past the page", ln);
      } else {
        ln = ((size_t)count * (size_t)tg_pq_bit_width((uint32_t)max_def) + 7) / 8;
        if (ln > (size_t)(e - lv))
          return tg_pq_fail(&r->w, TG_ERR_FORMAT, pg->offset, "definition levels of %zu bytes run past the page", ln);
      }
      st = tg_pq_decode_levels(&r->w, pg->offset, pg->def_encoding, lv, ln, max_def, count, valid, &present);
      if (st != TG_OK) return st;
      p = lv + ln;
    }
  } else {
    const uint8_t *lv = r->f->data + pg->data + pg->rep_len;
    if (max_def > 0) {
      st = tg_pq_decode_levels(&r->w, pg->offset, TG_PQ_RLE, lv, (size_t)pg->def_len, max_def, count, valid, &present);
      if (st != TG_OK) return st;
    }
    if (pg->num_nulls != count - present)
      return tg_pq_fail(&r->w, TG_ERR_FORMAT, pg->offset, "v2 page says %d nulls, its definition levels give %lld",
                        pg->num_nulls, (long long)(count - present));
    if ((st = page_bytes(r, pg, codec, pg->rep_len + pg->def_len, &p, &n)) != TG_OK) return st;
    e = p + n;
  }
  if (max_def == 0 && valid) memset(valid, 1, (size_t)count);
  size_t len = (size_t)(e - p);
  int from_dict = 0;
  switch (pg->encoding) {
    case TG_PQ_PLAIN: st = tg_pq_decode_plain(&r->w, pg->offset, &r->kind, p, len, present, dst); break;
    case TG_PQ_PLAIN_DICTIONARY:
    case TG_PQ_RLE_DICTIONARY:
      st = tg_pq_decode_dict(&r->w, pg->offset, p, len, r->dict, r->ndict, present, dst);
      from_dict = 1;
      break;
    case TG_PQ_RLE:
      if (r->kind.physical != TG_PQ_BOOLEAN)
        return tg_pq_fail(&r->w, TG_ERR_UNSUPPORTED, pg->offset, "RLE values of type %s",
                          tg_pq_type_name(r->kind.physical));
      st = tg_pq_decode_rle_bool(&r->w, pg->offset, p, len, present, dst);
      break;
    case TG_PQ_DELTA_BINARY_PACKED: st = tg_pq_decode_delta(&r->w, pg->offset, &r->kind, p, len, present, dst, NULL); break;
    case TG_PQ_DELTA_LENGTH_BYTE_ARRAY:
    case TG_PQ_DELTA_BYTE_ARRAY:
      if (r->kind.lane != TG_PQ_LANE_CODE)
        return tg_pq_fail(&r->w, TG_ERR_UNSUPPORTED, pg->offset, "value encoding %s (%d) is not supported for %s",
                          tg_pq_encoding_name(pg->encoding), pg->encoding, tg_pq_type_name(r->kind.physical));
      st = tg_pq_decode_delta_strings(&r->w, pg->offset, &r->kind, p, len, present,
                                      pg->encoding == TG_PQ_DELTA_BYTE_ARRAY, dst);
      break;
    case TG_PQ_BYTE_STREAM_SPLIT: st = tg_pq_decode_split(&r->w, pg->offset, &r->kind, p, len, present, dst); break;
    default:
      return tg_pq_fail(&r->w, TG_ERR_UNSUPPORTED, pg->offset, "value encoding %s (%d) is not supported for %s",
                        tg_pq_encoding_name(pg->encoding), pg->encoding, tg_pq_type_name(r->kind.physical));
  }
  if (st != TG_OK) return st;
  if (!from_dict) convert(dst, present, r->conv); /* dictionary entries were converted once, when read */
  if (present < count) spread(dst, valid, count, present, r->null_bits);
  r->nulls += count - present;
  return TG_OK;
}

static tg_status read_chunk(reader *r, int g, unsigned char *out, uint8_t *valid) {
  const tg_pq_rowgroup *rg = &r->f->rgs[g];
  const tg_pq_chunk *k = &rg->chunks[r->col - r->f->cols];
  r->w.row_group = g;
  r->w.page = -1;
  if (!k->has_meta || k->encrypted)
    return tg_pq_fail(&r->w, TG_ERR_UNSUPPORTED, r->f->meta_offset, "encrypted column chunk (no readable metadata): "
                      "Parquet modular encryption is not supported");
  if (k->external)
    return tg_pq_fail(&r->w, TG_ERR_UNSUPPORTED, r->f->meta_offset, "column chunk stored in another file (file_path)");
  if (k->codec != TG_PQ_UNCOMPRESSED && k->codec != TG_PQ_SNAPPY && k->codec != TG_PQ_GZIP && k->codec != TG_PQ_ZSTD)
    return tg_pq_fail(&r->w, TG_ERR_UNSUPPORTED, k->start, "compression codec %s (%d) is not supported (tickgrad reads "
                      "UNCOMPRESSED, SNAPPY, GZIP and ZSTD)", tg_pq_codec_name(k->codec), k->codec);
  if (k->num_values != rg->num_rows)
    return tg_pq_fail(&r->w, TG_ERR_FORMAT, r->f->meta_offset, "column chunk holds %lld values for a row group of %lld rows",
                      (long long)k->num_values, (long long)rg->num_rows);
  int64_t rows = rg->num_rows, done = 0, pos = k->start, end = k->start + k->size;
  unsigned char *dst = out + 8 * rg->first_row;
  uint8_t *vdst = valid ? valid + rg->first_row : NULL;
  r->dict = NULL; /* each chunk has its own dictionary */
  r->ndict = 0;
  int have_dict = 0;
  tg_status st = TG_OK;
  for (int page = 0; done < rows && st == TG_OK; page++) {
    r->w.page = page;
    if (pos >= end)
      return tg_pq_fail(&r->w, TG_ERR_FORMAT, pos, "column chunk ends after %lld of its %lld values", (long long)done,
                        (long long)rows);
    tg_pq_page pg;
    if ((st = tg_pq_page_read(&r->w, r->f->data, pos, end, &pg)) != TG_OK) return st;
    if ((st = tg_pq_page_crc(&r->w, r->f->data, &pg)) != TG_OK) return st;
    switch (pg.type) {
      case TG_PQ_PAGE_DICTIONARY:
        if (have_dict || done > 0)
          return tg_pq_fail(&r->w, TG_ERR_FORMAT, pos, "%s", have_dict ? "a second dictionary page" :
                            "dictionary page after data pages");
        have_dict = 1;
        st = read_dict(r, &pg, k->codec);
        break;
      case TG_PQ_PAGE_DATA:
      case TG_PQ_PAGE_DATA_V2:
        if (pg.num_values > rows - done)
          return tg_pq_fail(&r->w, TG_ERR_FORMAT, pos, "page holds %d values but only %lld of the row group's rows remain",
                            pg.num_values, (long long)(rows - done));
        if (pg.type == TG_PQ_PAGE_DATA_V2 && pg.num_rows != pg.num_values)
          return tg_pq_fail(&r->w, TG_ERR_FORMAT, pos, "v2 page of a flat column says %d rows and %d values", pg.num_rows,
                            pg.num_values);
        st = read_data(r, &pg, k->codec, dst + 8 * done, vdst ? vdst + done : NULL);
        done += pg.num_values;
        break;
      default: break; /* index pages and page types from the future carry no values */
    }
    pos = pg.data + pg.csize;
  }
  return st;
}

/* Column c into out[num_rows] lanes: doubles (to_f64), int64, or codes when cats is not NULL. */
static tg_status read_column(const tg_pq_file *f, int c, int to_f64, tg_categories *cats, unsigned char *out,
                             uint8_t *valid, int64_t *nulls) {
  if (!f->reuse) return tg_error(TG_ERR_INVALID, "%s: column read of a Parquet file that is not open", f->path);
  reader r;
  memset(&r, 0, sizeof r);
  tg_status st = cats ? tg_pq_string_kind(f, c, &r.kind) : tg_pq_column_kind(f, c, &r.kind);
  if (st != TG_OK) return st;
  r.kind.cats = cats;
  r.f = f;
  r.reuse = f->reuse;
  r.col = &f->cols[c];
  r.w = (tg_pq_where){f->path, r.col->name, -1, -1};
  const tg_pq_column *col = r.col;
  int is_unsigned = col->logical == TG_PQ_LT_INTEGER && !col->is_signed;
  if (!to_f64 && r.kind.lane == TG_PQ_LANE_F64)
    return tg_error(TG_ERR_INVALID, "%s: column '%s' is floating point; read it as doubles", f->path, col->name);
  if (cats) {
    r.null_bits = TG_CATEGORY_MISSING;
  } else if (to_f64) {
    double nan = NAN;
    memcpy(&r.null_bits, &nan, 8);
    if (r.kind.lane == TG_PQ_LANE_I64)
      r.conv = col->physical == TG_PQ_INT32 && is_unsigned ? CONV_U32D
               : col->physical == TG_PQ_INT64 && is_unsigned ? CONV_U2D : CONV_I2D;
  } else if (col->physical == TG_PQ_INT32 && is_unsigned) {
    r.conv = CONV_U32;
  }
  for (int g = 0; g < f->nrg && st == TG_OK; g++) st = read_chunk(&r, g, out, valid);
  tg_free(r.scratch);
  if (st != TG_OK) return st;
  if (to_f64 && col->logical == TG_PQ_LT_DECIMAL && col->scale > 0) {
    double div = pow(10.0, col->scale);
    for (int64_t i = 0; i < f->num_rows; i++) {
      double x;
      memcpy(&x, out + 8 * i, 8);
      x /= div;
      memcpy(out + 8 * i, &x, 8);
    }
  }
  if (nulls) *nulls = r.nulls;
  return TG_OK;
}

tg_status tg_pq_read_f64(const tg_pq_file *f, int c, double *out, uint8_t *valid, int64_t *nulls) {
  return read_column(f, c, 1, NULL, (unsigned char *)out, valid, nulls);
}

tg_status tg_pq_read_i64(const tg_pq_file *f, int c, int64_t *out, uint8_t *valid, int64_t *nulls) {
  return read_column(f, c, 0, NULL, (unsigned char *)out, valid, nulls);
}

tg_status tg_pq_read_codes(const tg_pq_file *f, int c, tg_categories *cats, uint32_t *codes, int64_t *nulls) {
  uint64_t *lanes = tg_malloc(((size_t)f->num_rows + 1) * sizeof *lanes);
  if (!lanes) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld rows", f->path, (long long)f->num_rows);
  tg_status st = read_column(f, c, 0, cats, (unsigned char *)lanes, NULL, nulls);
  if (st == TG_OK)
    for (int64_t i = 0; i < f->num_rows; i++) codes[i] = (uint32_t)lanes[i];
  tg_free(lanes);
  return st;
}
