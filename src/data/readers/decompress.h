/* Compressed bar files read transparently: gzip and zstd found by their magic bytes, inflated in memory. */
#ifndef TG_DATA_DECOMPRESS_H
#define TG_DATA_DECOMPRESS_H

#include <stddef.h>
#include "tickgrad/status.h"

/* When [*buf, *buf + *len) starts with a gzip or zstd frame, replaces it (tg_free'd) with its inflated bytes (one NUL
 * byte after them) and sets *codec to "gzip" or "zstd"; otherwise leaves it and sets *codec to NULL. Corrupt,
 * truncated or bomb-sized data is TG_ERR_FORMAT naming path and the byte. */
tg_status tg_data_inflate(const char *path, unsigned char **buf, size_t *len, const char **codec);

#endif
