/* Compressed bar files read transparently: gzip and zstd found by their magic bytes, inflated in memory. */
#ifndef TG_DATA_DECOMPRESS_H
#define TG_DATA_DECOMPRESS_H

#include <stddef.h>
#include "tickgrad/status.h"

/* When bytes[len] start with a gzip or zstd frame, *plain gets their inflated bytes (tg_malloc'ed, one NUL byte after
 * them; *plain_len of them) and *codec "gzip" or "zstd"; otherwise *plain is NULL and *codec NULL. bytes stay the
 * caller's. Corrupt, truncated or bomb-sized data is TG_ERR_FORMAT naming path and the byte. */
tg_status tg_data_inflate(const char *path, const unsigned char *bytes, size_t len, unsigned char **plain,
                          size_t *plain_len, const char **codec);

#endif
