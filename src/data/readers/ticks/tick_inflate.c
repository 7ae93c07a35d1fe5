/* Whole zip members inflated through libdeflate, their size and CRC-32 checked against the zip's directory. */
#include <libdeflate.h>
#include "data/readers/ticks/tick_inflate.h"

int tg_inflate_whole_built(void) { return 1; }

tg_status tg_inflate_member(const char *what, const void *raw, size_t raw_len, void *out, size_t size, uint32_t crc) {
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (!d) return tg_error(TG_ERR_NOMEM, "%s: out of memory for the decompressor", what);
  size_t got = 0;
  enum libdeflate_result r = libdeflate_deflate_decompress(d, raw, raw_len, out, size, &got);
  libdeflate_free_decompressor(d);
  if (r == LIBDEFLATE_BAD_DATA)
    return tg_error(TG_ERR_FORMAT, "%s: the deflated data is damaged (it does not inflate)", what);
  if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
    return tg_error(TG_ERR_FORMAT, "%s: inflates to more than the %zu bytes the zip's directory says", what, size);
  if (r != LIBDEFLATE_SUCCESS || got != size)
    return tg_error(TG_ERR_FORMAT, "%s: inflates to %zu bytes where the zip's directory says %zu", what, got, size);
  uint32_t have = libdeflate_crc32(0, out, size);
  if (have != crc)
    return tg_error(TG_ERR_FORMAT, "%s: CRC error: the data's CRC-32 is %08x where the zip's directory says %08x",
                    what, (unsigned)have, (unsigned)crc);
  return TG_OK;
}
