/* Parquet: page headers, page CRC32 checks and decompression (snappy, gzip, zstd). */
#include <zlib.h>
#include <zstd.h>
#include "base/alloc.h"
#include "data/readers/parquet/parquet.h"
#include "data/readers/parquet/pq_fields.h"

/* seen bits: 1 num_values, 2 encoding, 4 num_nulls, 8 num_rows, 16 def length, 32 rep length */
static tg_status parse_v1(tg_thrift *t, int type, tg_pq_page *pg, int *seen) {
  FIELDS_BEGIN(t, type, "DataPageHeader") {
    case 1: st = tg_thrift_int(t, ft, 0, INT32_MAX, "num_values", &v); pg->num_values = (int32_t)v; *seen |= 1; break;
    case 2: st = tg_thrift_int(t, ft, 0, INT32_MAX, "encoding", &v); pg->encoding = (int)v; *seen |= 2; break;
    case 3: st = tg_thrift_int(t, ft, 0, INT32_MAX, "definition_level_encoding", &v); pg->def_encoding = (int)v; break;
    case 4: st = tg_thrift_int(t, ft, 0, INT32_MAX, "repetition_level_encoding", &v); pg->rep_encoding = (int)v; break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

static tg_status parse_dict(tg_thrift *t, int type, tg_pq_page *pg, int *seen) {
  FIELDS_BEGIN(t, type, "DictionaryPageHeader") {
    case 1: st = tg_thrift_int(t, ft, 0, INT32_MAX, "num_values", &v); pg->num_values = (int32_t)v; *seen |= 1; break;
    case 2: st = tg_thrift_int(t, ft, 0, INT32_MAX, "encoding", &v); pg->encoding = (int)v; *seen |= 2; break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

static tg_status parse_v2(tg_thrift *t, int type, tg_pq_page *pg, int *seen) {
  FIELDS_BEGIN(t, type, "DataPageHeaderV2") {
    case 1: st = tg_thrift_int(t, ft, 0, INT32_MAX, "num_values", &v); pg->num_values = (int32_t)v; *seen |= 1; break;
    case 2: st = tg_thrift_int(t, ft, 0, INT32_MAX, "num_nulls", &v); pg->num_nulls = (int32_t)v; *seen |= 4; break;
    case 3: st = tg_thrift_int(t, ft, 0, INT32_MAX, "num_rows", &v); pg->num_rows = (int32_t)v; *seen |= 8; break;
    case 4: st = tg_thrift_int(t, ft, 0, INT32_MAX, "encoding", &v); pg->encoding = (int)v; *seen |= 2; break;
    case 5: st = tg_thrift_int(t, ft, 0, INT32_MAX, "definition_levels_byte_length", &v); pg->def_len = (int32_t)v; *seen |= 16; break;
    case 6: st = tg_thrift_int(t, ft, 0, INT32_MAX, "repetition_levels_byte_length", &v); pg->rep_len = (int32_t)v; *seen |= 32; break;
    case 7: st = tg_thrift_bool(t, ft, "is_compressed", &pg->is_compressed); break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

/* seen bits: 1 type, 2 uncompressed size, 4 compressed size; *sub gets the type-specific header's bits,
 * *which the member (5, 7 or 8) that was present */
static tg_status parse_header(tg_thrift *t, tg_pq_page *pg, int *seen, int *sub, int *which) {
  FIELDS_BEGIN(t, TG_TT_STRUCT, "PageHeader") {
    case 1: st = tg_thrift_int(t, ft, INT32_MIN, INT32_MAX, "type", &v); pg->type = (int)v; *seen |= 1; break;
    case 2: st = tg_thrift_int(t, ft, 0, INT32_MAX, "uncompressed_page_size", &v); pg->usize = (int32_t)v; *seen |= 2; break;
    case 3: st = tg_thrift_int(t, ft, 0, INT32_MAX, "compressed_page_size", &v); pg->csize = (int32_t)v; *seen |= 4; break;
    case 4: st = tg_thrift_int(t, ft, INT32_MIN, INT32_MAX, "crc", &v); pg->crc = (uint32_t)(int32_t)v; pg->has_crc = 1; break;
    case 5: *sub = 0; st = parse_v1(t, ft, pg, sub); *which = 5; break;
    case 7: *sub = 0; st = parse_dict(t, ft, pg, sub); *which = 7; break;
    case 8: *sub = 0; st = parse_v2(t, ft, pg, sub); *which = 8; break;
    default: st = tg_thrift_skip(t, ft, 0);
  }
  FIELDS_END(t);
}

tg_status tg_pq_page_read(const tg_pq_where *w, const uint8_t *file, int64_t pos, int64_t end, tg_pq_page *pg) {
  memset(pg, 0, sizeof *pg);
  pg->is_compressed = 1;
  pg->offset = pos;
  tg_thrift t = {file + pos, file + end, file, w, "page header", 0};
  int seen = 0, sub = 0, which = 0;
  tg_status st = parse_header(&t, pg, &seen, &sub, &which);
  if (st != TG_OK) return st;
  if (seen != 7)
    return tg_pq_fail(w, TG_ERR_FORMAT, pos, "page header lacks its %s", !(seen & 1) ? "type" : "sizes");
  pg->data = tg_thrift_offset(&t);
  if (pg->csize > end - pg->data)
    return tg_pq_fail(w, TG_ERR_FORMAT, pos, "page of %d bytes runs past the end of its column chunk (byte %lld)",
                      pg->csize, (long long)end);
  int want = pg->type == TG_PQ_PAGE_DATA ? 5 : pg->type == TG_PQ_PAGE_DICTIONARY ? 7 : pg->type == TG_PQ_PAGE_DATA_V2 ? 8 : 0;
  if (want && which != want)
    return tg_pq_fail(w, TG_ERR_FORMAT, pos, "%s page without its %s header",
                      want == 7 ? "dictionary" : want == 8 ? "v2 data" : "data",
                      want == 7 ? "DictionaryPageHeader" : want == 8 ? "DataPageHeaderV2" : "DataPageHeader");
  int need = want == 8 ? 63 : 3;
  if (want && (sub & need) != need)
    return tg_pq_fail(w, TG_ERR_FORMAT, pos, "page header lacks a required field (num_values, encoding%s)",
                      want == 8 ? ", num_nulls, num_rows or level lengths" : "");
  if (want == 8 && (int64_t)pg->def_len + pg->rep_len > pg->csize)
    return tg_pq_fail(w, TG_ERR_FORMAT, pos, "v2 page levels (%d + %d bytes) exceed the page's %d bytes", pg->rep_len,
                      pg->def_len, pg->csize);
  if (want == 8 && (int64_t)pg->def_len + pg->rep_len > pg->usize)
    return tg_pq_fail(w, TG_ERR_FORMAT, pos, "v2 page levels (%d + %d bytes) exceed its uncompressed size %d", pg->rep_len,
                      pg->def_len, pg->usize);
  return TG_OK;
}

tg_status tg_pq_page_crc(const tg_pq_where *w, const uint8_t *file, const tg_pq_page *pg) {
  if (!pg->has_crc) return TG_OK;
  uint32_t got = (uint32_t)crc32(crc32(0L, Z_NULL, 0), file + pg->data, (uInt)pg->csize);
  if (got != pg->crc)
    return tg_pq_fail(w, TG_ERR_FORMAT, pg->offset, "page CRC mismatch: header says 0x%08x, the %d bytes give 0x%08x",
                      pg->crc, pg->csize, got);
  return TG_OK;
}

uint64_t tg_pq_codec_bound(int codec, uint64_t n) {
  switch (codec) {
    case TG_PQ_SNAPPY: return n * 32 + 64;         /* a 3-byte copy makes at most 64 bytes */
    case TG_PQ_GZIP: return n * 1032 + 1024;       /* deflate's largest ratio */
    case TG_PQ_ZSTD: return n * 32768 + 131072;    /* a 4-byte RLE block makes at most 128 KiB */
    default: return n;
  }
}

static voidpf zalloc_tg(voidpf opaque, uInt items, uInt size) {
  (void)opaque;
  return tg_calloc(items, size);
}

static void zfree_tg(voidpf opaque, voidpf p) {
  (void)opaque;
  tg_free(p);
}

void tg_pq_codecs_free(tg_pq_codecs *cx) {
  if (cx->zstd) ZSTD_freeDCtx(cx->zstd);
  if (cx->zlib) {
    inflateEnd(cx->zlib);
    tg_free(cx->zlib);
  }
  cx->zstd = cx->zlib = NULL;
}

/* gzip (or zlib) data, possibly several concatenated members, into exactly dn bytes. */
static tg_status inflate_gzip(const tg_pq_where *w, int64_t offset, tg_pq_codecs *cx, const uint8_t *src, size_t n,
                              uint8_t *dst, size_t dn) {
  z_stream *zs = cx->zlib;
  if (!zs) {
    zs = tg_calloc(1, sizeof *zs);
    if (!zs) return tg_error(TG_ERR_NOMEM, "%s: out of memory for zlib", w->path);
    zs->zalloc = zalloc_tg;
    zs->zfree = zfree_tg;
    if (inflateInit2(zs, 15 + 32) != Z_OK) {
      tg_free(zs);
      return tg_error(TG_ERR_NOMEM, "%s: zlib initialisation failed", w->path);
    }
    cx->zlib = zs;
  } else if (inflateReset(zs) != Z_OK) {
    return tg_error(TG_ERR_NOMEM, "%s: zlib reset failed", w->path);
  }
  unsigned char dummy = 0;
  zs->next_in = (Bytef *)(uintptr_t)src;
  zs->avail_in = (uInt)n;
  zs->next_out = dn ? dst : &dummy;
  zs->avail_out = (uInt)dn;
  tg_status st = TG_OK;
  for (;;) {
    int r = inflate(zs, Z_NO_FLUSH);
    if (r == Z_STREAM_END) {
      if (zs->avail_in > 0 && zs->avail_out > 0) { /* another gzip member follows */
        if (inflateReset(zs) != Z_OK) r = Z_DATA_ERROR;
        else continue;
      } else {
        break;
      }
    }
    if (r == Z_OK) continue;
    if (r == Z_BUF_ERROR && zs->avail_out == 0)
      st = tg_pq_fail(w, TG_ERR_FORMAT, offset, "gzip data inflates to more than the page's %zu bytes", dn);
    else if (r == Z_BUF_ERROR)
      st = tg_pq_fail(w, TG_ERR_FORMAT, offset, "gzip data truncated after %zu bytes of output", dn - zs->avail_out);
    else
      st = tg_pq_fail(w, TG_ERR_FORMAT, offset, "corrupt gzip data: %s", zs->msg ? zs->msg : "inflate failed");
    break;
  }
  size_t got = dn - zs->avail_out;
  if (st == TG_OK && got != dn)
    st = tg_pq_fail(w, TG_ERR_FORMAT, offset, "gzip data inflates to %zu bytes, the page says %zu", got, dn);
  return st;
}

tg_status tg_pq_decompress(const tg_pq_where *w, int64_t offset, int codec, tg_pq_codecs *cx, const uint8_t *src,
                           size_t n, uint8_t *dst, size_t dn, size_t dcap) {
  unsigned char dummy = 0;
  switch (codec) {
    case TG_PQ_UNCOMPRESSED:
      if (n != dn) return tg_pq_fail(w, TG_ERR_FORMAT, offset, "uncompressed page of %zu bytes says it holds %zu", n, dn);
      memcpy(dst, src, n);
      return TG_OK;
    case TG_PQ_SNAPPY: {
      uint64_t ulen = 0;
      if (!tg_pq_snappy_length(src, n, &ulen))
        return tg_pq_fail(w, TG_ERR_FORMAT, offset, "corrupt snappy data (bad length preamble)");
      if (ulen != dn)
        return tg_pq_fail(w, TG_ERR_FORMAT, offset, "snappy data holds %zu bytes, the page says %zu", (size_t)ulen, dn);
      if (!tg_pq_snappy_decode(src, n, dst, dn, dcap)) return tg_pq_fail(w, TG_ERR_FORMAT, offset, "corrupt snappy data");
      return TG_OK;
    }
    case TG_PQ_GZIP: return inflate_gzip(w, offset, cx, src, n, dst, dn);
    case TG_PQ_ZSTD: {
      if (!cx->zstd) {
        if (!(cx->zstd = ZSTD_createDCtx())) return tg_error(TG_ERR_NOMEM, "%s: out of memory for zstd", w->path);
        tg_alloc_note(); /* allocated by libzstd */
      }
      size_t r = ZSTD_decompressDCtx(cx->zstd, dn ? dst : &dummy, dn, src, n);
      if (ZSTD_isError(r)) return tg_pq_fail(w, TG_ERR_FORMAT, offset, "corrupt zstd data: %s", ZSTD_getErrorName(r));
      if (r != dn) return tg_pq_fail(w, TG_ERR_FORMAT, offset, "zstd data holds %zu bytes, the page says %zu", r, dn);
      return TG_OK;
    }
    default:
      return tg_pq_fail(w, TG_ERR_UNSUPPORTED, offset, "compression codec %s (%d) is not supported (tickgrad reads "
                        "UNCOMPRESSED, SNAPPY, GZIP and ZSTD)", tg_pq_codec_name(codec), codec);
  }
}
