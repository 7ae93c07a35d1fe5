/* Lines of a tick file through one fixed buffer refilled as lines are used, or over bytes in memory; each line checked
 * by the CSV scanner. */
#include <errno.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/csv/csv_internal.h"
#include "data/readers/ticks/csv_lines.h"

#define BUF_LEN (TG_TICK_LINE_MAX * 4)

tg_status tg_line_reader_init(tg_line_reader *r, FILE *f, const char *path) {
  *r = (tg_line_reader){.f = f, .path = path, .own = tg_malloc(BUF_LEN)};
  r->buf = r->own;
  return r->own ? TG_OK : tg_error(TG_ERR_NOMEM, "%s: out of memory for the line buffer", path);
}

tg_status tg_line_reader_init_read(tg_line_reader *r, tg_line_read_fn read, void *ctx, const char *path) {
  tg_status st = tg_line_reader_init(r, NULL, path);
  r->read = read;
  r->ctx = ctx;
  return st;
}

tg_status tg_line_reader_init_span(tg_line_reader *r, const char *p, size_t len, const char *path) {
  *r = (tg_line_reader){.path = path, .buf = p, .len = len, .eof = 1};
  return TG_OK;
}

/* Moves the unread bytes to the front and reads more after them. */
static tg_status refill(tg_line_reader *r) {
  memmove(r->own, r->own + r->pos, r->len - r->pos);
  r->len -= r->pos;
  r->pos = 0;
  size_t got = 0;
  if (r->read) {
    tg_status st = r->read(r->ctx, r->own + r->len, BUF_LEN - r->len, &got);
    if (st != TG_OK) return st;
  } else {
    got = fread(r->own + r->len, 1, BUF_LEN - r->len, r->f);
    if (got == 0 && ferror(r->f)) return tg_error(TG_ERR_IO, "%s: read error: %s", r->path, strerror(errno));
  }
  r->len += got;
  r->eof = got == 0;
  return TG_OK;
}

tg_status tg_line_next(tg_line_reader *r, const char **p, const char **e, int *got) {
  *got = 0;
  for (;;) {
    const char *s = r->buf + r->pos, *end = r->buf + r->len;
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    if (nl || (r->eof && s < end)) {
      const char *stop = nl ? nl + 1 : end;
      tg_csv_line ln;
      tg_status st = tg_csv_line_read(r->path, s, stop, r->no + 1, &ln);
      if (st != TG_OK) return st;
      if ((size_t)(stop - s) > TG_TICK_LINE_MAX) break;
      r->no++;
      r->pos += (size_t)(stop - s);
      *p = ln.p;
      *e = ln.e;
      *got = 1;
      return TG_OK;
    }
    if (r->eof) return TG_OK;
    if (r->len - r->pos >= TG_TICK_LINE_MAX) break;
    tg_status st = refill(r);
    if (st != TG_OK) return st;
  }
  return tg_error(TG_ERR_FORMAT, "%s: line %lld: longer than %zu bytes", r->path, (long long)r->no + 1,
                  TG_TICK_LINE_MAX);
}

void tg_line_reader_free(tg_line_reader *r) {
  if (r->f) fclose(r->f);
  tg_free(r->own);
  *r = (tg_line_reader){0};
}
