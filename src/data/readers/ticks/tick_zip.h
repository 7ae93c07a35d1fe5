/* Zip archives read member by member through libzip (tick_zip.c), or refused naming the package (tick_zip_none.c). */
#ifndef TG_DATA_TICKS_ZIP_H
#define TG_DATA_TICKS_ZIP_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/status.h"

typedef struct tg_zip tg_zip;

/* Opens the archive at path, its directory checked; an error names the file (not a zip, truncated, no libzip). */
tg_status tg_zip_open(const char *path, tg_zip **out);
int64_t tg_zip_count(const tg_zip *z);
const char *tg_zip_name(const tg_zip *z, int64_t i); /* member i's name */
/* Starts reading member i (closing the one read before). */
tg_status tg_zip_member_open(tg_zip *z, int64_t i);
/* Up to cap bytes of the open member into buf, *got = 0 at its end; an error names the file and member (a bad
 * checksum, data cut short). Its signature is a tg_line_read_fn's, ctx the tg_zip. */
tg_status tg_zip_member_read(void *z, char *buf, size_t cap, size_t *got);
void tg_zip_close(tg_zip *z);

#endif
