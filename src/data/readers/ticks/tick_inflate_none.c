/* Zip members in a build without libdeflate: none is inflated whole, so tick_zip.c streams each through libzip. */
#include "data/readers/ticks/tick_inflate.h"

int tg_inflate_whole_built(void) { return 0; }

tg_status tg_inflate_member(const char *what, const void *raw, size_t raw_len, void *out, size_t size, uint32_t crc) {
  (void)raw, (void)raw_len, (void)out, (void)size, (void)crc;
  return tg_error(TG_ERR_UNSUPPORTED, "%s: this tickgrad was built without libdeflate (libdeflate-dev)", what);
}
