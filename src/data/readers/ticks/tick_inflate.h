/* Deflated zip members inflated whole at once: through libdeflate (tick_inflate.c), or in a build without it not at all
 * (tick_inflate_none.c), and tick_zip.c streams every member through libzip. */
#ifndef TG_DATA_TICKS_INFLATE_H
#define TG_DATA_TICKS_INFLATE_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/status.h"

/* 1 when this build inflates members whole (it has libdeflate). */
int tg_inflate_whole_built(void);
/* Inflates the raw deflate stream raw[raw_len] into out[size], where size and crc are the member's uncompressed size
 * and CRC-32 from the zip's directory: it must fill out exactly and match crc. An error (TG_ERR_FORMAT) begins with
 * what ("ZIP: member NAME") and says which: damaged deflate data, more or fewer bytes than the directory says, or a
 * CRC mismatch. */
tg_status tg_inflate_member(const char *what, const void *raw, size_t raw_len, void *out, size_t size, uint32_t crc);

#endif
