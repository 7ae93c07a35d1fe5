/* Zip archives read member by member through libzip (tick_zip.c), or refused naming the package (tick_zip_none.c). */
#ifndef TG_DATA_TICKS_ZIP_H
#define TG_DATA_TICKS_ZIP_H

#include <stddef.h>
#include <stdint.h>
#include "data/readers/ticks/csv_lines.h"
#include "tickgrad/status.h"

/* The largest member (inflated or deflated size) held whole in memory, inflated at once; a larger one streams. */
#define TG_ZIP_WHOLE_MAX ((size_t)256 << 20)

typedef struct tg_zip tg_zip;

/* The memory of members read whole, which a caller keeps across the zips it opens (a folder's days) so that each
 * member reuses the last one's pages instead of faulting in new ones; it grows to the largest member read. Starts
 * zeroed. */
typedef struct tg_zip_buffers {
  char *whole; /* [whole_cap]: a member inflated */
  char *raw;   /* [raw_cap]: its deflated bytes */
  size_t whole_cap, raw_cap;
} tg_zip_buffers;
void tg_zip_buffers_free(tg_zip_buffers *b);

/* Opens the archive at path, its directory checked; an error names the file (not a zip, truncated, no libzip).
 * Members read whole use buffers (the caller's until the zip is closed), or with NULL the zip's own. */
tg_status tg_zip_open(const char *path, tg_zip_buffers *buffers, tg_zip **out);
int64_t tg_zip_count(const tg_zip *z);
const char *tg_zip_name(const tg_zip *z, int64_t i); /* member i's name */
/* Opens member i (closing the one open before): a deflated member of at most TG_ZIP_WHOLE_MAX bytes is read and
 * inflated whole here (in a build with libdeflate), its size and CRC-32 checked against the directory; any other is
 * streamed through libzip as it is read. An error names the file and member (damaged data, cut short, a bad checksum);
 * a streamed member's may come as it is read. */
tg_status tg_zip_member_open(tg_zip *z, int64_t i);
/* The same with another limit on a member held whole (0: every member streams). */
tg_status tg_zip_member_open_within(tg_zip *z, int64_t i, size_t whole_max);
int tg_zip_member_whole(const tg_zip *z); /* 1 when the open member is held whole, inflated */
/* Lines of the open member into r (named name in messages): over the inflated bytes or streamed. The member stays
 * the zip's: free r before opening another member or closing the zip. */
tg_status tg_zip_member_lines(tg_zip *z, tg_line_reader *r, const char *name);
void tg_zip_close(tg_zip *z);

#endif
