/* zstd decompression of a .dbn.zst file: several frames in a row, bounded output, clear errors. */
#include <stdint.h>
#include <string.h>
#include <zstd.h>
#include "base/alloc.h"
#include "data/readers/dbn/dbn_internal.h"

/* Real DBN compresses well under 100:1; a stream that grows past 1000x its compressed size (and
 * past 16 MiB, so small files are never refused) is treated as a decompression bomb. */
#define TG_DBN_BOMB_RATIO 1000u
#define TG_DBN_BOMB_FLOOR ((size_t)16 << 20)

size_t tg_dbn_zstd_limit(size_t compressed_len) {
  size_t cap = SIZE_MAX / 4;
  if (compressed_len > cap / TG_DBN_BOMB_RATIO) return cap;
  size_t limit = compressed_len * TG_DBN_BOMB_RATIO;
  return limit < TG_DBN_BOMB_FLOOR ? TG_DBN_BOMB_FLOOR : limit;
}

/* Grows *buf from *cap to min(2 * *cap, most) bytes, keeping the first used bytes. */
static int grow(unsigned char **buf, size_t *cap, size_t used, size_t most) {
  size_t want = *cap > most / 2 ? most : *cap * 2;
  unsigned char *p = tg_malloc(want);
  if (!p) return 0;
  if (used) memcpy(p, *buf, used);
  tg_free(*buf);
  *buf = p;
  *cap = want;
  return 1;
}

tg_status tg_dbn_zstd_inflate(const char *path, const unsigned char *src, size_t len, size_t limit,
                              unsigned char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (limit == 0) limit = 1;
  if (limit > SIZE_MAX / 2) limit = SIZE_MAX / 2;
  size_t most = limit + 1; /* room for one byte more than allowed, which proves the output too long */
  size_t cap = len > most / 4 ? most : len * 4;
  if (cap < 4096) cap = most < 4096 ? most : 4096;
  unsigned char *buf = tg_malloc(cap);
  ZSTD_DCtx *dctx = ZSTD_createDCtx();
  if (!buf || !dctx) {
    tg_free(buf);
    ZSTD_freeDCtx(dctx);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory for zstd decompression", path);
  }
  ZSTD_inBuffer in = {src, len, 0};
  ZSTD_outBuffer ob = {buf, cap, 0};
  size_t ret = 1;         /* 0 once the current frame is complete and flushed */
  size_t frame_start = 0; /* where the current frame begins in src */
  tg_status st = TG_OK;
  for (;;) {
    if (ob.pos > limit) {
      st = tg_error(TG_ERR_FORMAT,
                    "%s: byte %zu of the compressed file: the zstd data decompresses to more than %zu bytes "
                    "(%zu compressed bytes); refusing it as a likely decompression bomb",
                    path, in.pos, limit, len);
      break;
    }
    if (ob.pos == ob.size) {
      if (in.pos == in.size && ret == 0) break; /* finished exactly at the buffer's end */
      if (!grow(&buf, &cap, ob.pos, most)) {
        st = tg_error(TG_ERR_NOMEM, "%s: out of memory decompressing (%zu bytes so far)", path, ob.pos);
        break;
      }
      ob.dst = buf;
      ob.size = cap;
    }
    size_t in_before = in.pos, out_before = ob.pos;
    if (ret == 0) frame_start = in.pos;
    ret = ZSTD_decompressStream(dctx, &ob, &in);
    if (ZSTD_isError(ret)) {
      st = tg_error(TG_ERR_FORMAT,
                    "%s: byte %zu of the compressed file (in the zstd frame starting at byte %zu): corrupt zstd "
                    "data: %s (%zu bytes decompressed before it)",
                    path, in.pos, frame_start, ZSTD_getErrorName(ret), ob.pos);
      break;
    }
    if (in.pos == in.size && ob.pos < ob.size) break; /* input used up and everything flushed */
    if (in.pos == in_before && ob.pos == out_before) {
      st = tg_error(TG_ERR_FORMAT, "%s: byte %zu of the compressed file: zstd makes no progress", path, in.pos);
      break;
    }
  }
  ZSTD_freeDCtx(dctx);
  if (st == TG_OK && ret != 0)
    st = tg_error(TG_ERR_FORMAT,
                  "%s: byte %zu of the compressed file: the file ends inside the zstd frame starting at byte %zu "
                  "(%zu bytes decompressed); the file is truncated",
                  path, len, frame_start, ob.pos);
  if (st != TG_OK) {
    tg_free(buf);
    return st;
  }
  *out = buf;
  *out_len = ob.pos;
  return TG_OK;
}
