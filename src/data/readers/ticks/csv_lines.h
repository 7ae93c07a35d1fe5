/* Lines of a text file read through one fixed buffer, so a file of any length is read in constant memory, or of bytes
 * already in memory (a zip member inflated whole). */
#ifndef TG_DATA_TICKS_CSV_LINES_H
#define TG_DATA_TICKS_CSV_LINES_H

#include <stdint.h>
#include <stdio.h>
#include "tickgrad/status.h"

#define TG_TICK_LINE_MAX ((size_t)1 << 16) /* longest line a tick file may have, in bytes */

/* Reads up to cap bytes into buf, *got = 0 at the end; an error names what it reads. */
typedef tg_status (*tg_line_read_fn)(void *ctx, char *buf, size_t cap, size_t *got);

typedef struct tg_line_reader {
  FILE *f;             /* the file read, or NULL when read is set */
  tg_line_read_fn read; /* bytes from elsewhere (a zip member); ctx is its own */
  void *ctx;
  const char *path;
  char *own;       /* [TG_TICK_LINE_MAX * 4]: the buffer filled, or NULL over bytes in memory */
  const char *buf; /* [len]: the bytes read so far (own), or the bytes in memory */
  size_t len, pos;
  int eof;
  int64_t no; /* the last line's number */
} tg_line_reader;

tg_status tg_line_reader_init(tg_line_reader *r, FILE *f, const char *path);
/* The same over bytes that read gives; freeing the reader leaves ctx to its owner. */
tg_status tg_line_reader_init_read(tg_line_reader *r, tg_line_read_fn read, void *ctx, const char *path);
/* The same over the len bytes at p, which stay the caller's and must outlive the reader; nothing is copied. */
tg_status tg_line_reader_init_span(tg_line_reader *r, const char *p, size_t len, const char *path);
/* The next line's content [*p, *e) (no line break) in *p, *e, valid until the next call; *got = 0 at the end. An error
 * names the file and line: a line over TG_TICK_LINE_MAX, a NUL byte or bytes that are not UTF-8, a read error. */
tg_status tg_line_next(tg_line_reader *r, const char **p, const char **e, int *got);
void tg_line_reader_free(tg_line_reader *r); /* closes the file; leaves bytes in memory to their owner */

#endif
