/* Compressed bar files: gzip through zlib (several members in a row), zstd through the DBN reader's inflater. */
#include <string.h>
#include <zlib.h>
#include "base/alloc.h"
#include "data/readers/dbn/dbn_internal.h"
#include "data/readers/decompress.h"

static tg_status gunzip(const char *path, const unsigned char *src, size_t len, unsigned char **out, size_t *out_len) {
  size_t limit = tg_dbn_zstd_limit(len), cap = len * 4 < 4096 ? 4096 : len * 4, used = 0;
  if (cap > limit + 1) cap = limit + 1;
  unsigned char *buf = tg_malloc(cap + 1);
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (!buf || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    tg_free(buf);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory for gzip decompression", path);
  }
  zs.next_in = (unsigned char *)src;
  zs.avail_in = 0;
  size_t in_pos = 0;
  int rc = Z_OK;
  tg_status st = TG_OK;
  for (;;) {
    if (used == cap) {
      if (cap > limit) {
        st = tg_error(TG_ERR_FORMAT, "%s: byte %zu of the compressed file: the gzip data decompresses to more than %zu "
                      "bytes (%zu compressed bytes); refusing it as a likely decompression bomb", path, in_pos, limit, len);
        break;
      }
      size_t want = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
      unsigned char *p = tg_malloc(want + 1);
      if (!p) {
        st = tg_error(TG_ERR_NOMEM, "%s: out of memory decompressing (%zu bytes so far)", path, used);
        break;
      }
      memcpy(p, buf, used);
      tg_free(buf);
      buf = p, cap = want;
    }
    size_t in_chunk = len - in_pos > (1u << 30) ? (1u << 30) : len - in_pos, out_chunk = cap - used > (1u << 30) ? (1u << 30) : cap - used;
    zs.next_in = (unsigned char *)src + in_pos, zs.avail_in = (uInt)in_chunk;
    zs.next_out = buf + used, zs.avail_out = (uInt)out_chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_chunk - zs.avail_in;
    used += out_chunk - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (in_pos == len) break;
      if (inflateReset(&zs) != Z_OK) rc = Z_DATA_ERROR; /* another member follows */
      else continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      st = tg_error(TG_ERR_FORMAT, "%s: byte %zu of the compressed file: corrupt gzip data: %s (%zu bytes decompressed "
                    "before it)", path, in_pos, zs.msg ? zs.msg : "inflate failed", used);
      break;
    }
    if (in_pos == len && used < cap) {
      st = tg_error(TG_ERR_FORMAT, "%s: byte %zu of the compressed file: the file ends inside the gzip data (%zu bytes "
                    "decompressed); the file is truncated", path, len, used);
      break;
    }
  }
  inflateEnd(&zs);
  if (st != TG_OK) {
    tg_free(buf);
    return st;
  }
  buf[used] = '\0';
  *out = buf;
  *out_len = used;
  return TG_OK;
}

tg_status tg_data_inflate(const char *path, const unsigned char *bytes, size_t len, unsigned char **plain_out,
                          size_t *plain_len_out, const char **codec) {
  const unsigned char *p = bytes;
  unsigned char *plain = NULL;
  size_t plain_len = 0;
  tg_status st;
  *codec = NULL;
  *plain_out = NULL;
  *plain_len_out = 0;
  if (len >= 3 && p[0] == 0x1F && p[1] == 0x8B && p[2] == 8) {
    *codec = "gzip";
    st = gunzip(path, p, len, &plain, &plain_len);
  } else if (len >= 4 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD) {
    *codec = "zstd";
    st = tg_dbn_zstd_inflate(path, p, len, tg_dbn_zstd_limit(len), &plain, &plain_len);
    if (st == TG_OK) { /* room for the NUL the text readers rely on */
      unsigned char *q = tg_malloc(plain_len + 1);
      if (!q) st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %zu bytes", path, plain_len);
      else {
        if (plain_len) memcpy(q, plain, plain_len);
        q[plain_len] = '\0';
      }
      tg_free(plain);
      plain = q;
    }
  } else {
    return TG_OK;
  }
  if (st != TG_OK) return st;
  *plain_out = plain;
  *plain_len_out = plain_len;
  return TG_OK;
}
