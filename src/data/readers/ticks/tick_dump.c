/* Every record a tick source hands out, written as CSV (exact numbers) for cross-checks against other decoders. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/files.h"
#include "tickgrad/ticks.h"

#define CHUNK 4096
#define LINE 192 /* a record's line at most: six 17-digit numbers and the commas */

/* Appends the chunk's lines to out (an open atomic file); text has room for CHUNK lines. */
static tg_status write_chunk(tg_atomic_file *out, tg_tick_kind kind, const void *buf, int64_t n, char *text) {
  size_t len = 0;
  for (int64_t i = 0; i < n; i++) {
    int k;
    if (kind == TG_TICK_TRADES) {
      const tg_trade *t = (const tg_trade *)buf + i;
      k = snprintf(text + len, LINE, "%lld,%.17g,%.17g,%d,%u,%lld\n", (long long)t->ts, t->price, t->size, t->side,
                   (unsigned)t->flags, (long long)t->line);
    } else {
      const tg_quote *q = (const tg_quote *)buf + i;
      k = snprintf(text + len, LINE, "%lld,%.17g,%.17g,%.17g,%.17g,%lld\n", (long long)q->ts, q->bid, q->ask,
                   q->bid_size, q->ask_size, (long long)q->line);
    }
    len += (size_t)(k > 0 && k < LINE ? k : 0);
  }
  return tg_atomic_write(out, text, len);
}

tg_status tg_tick_dump(const char *path, tg_tick_kind kind, const tg_tick_opts *opts, const char *out_path) {
  tg_tick_source *s = NULL;
  tg_atomic_file out;
  out.fd = -1;
  tg_status st = tg_tick_open(path, kind, opts, &s);
  size_t each = kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  void *buf = st == TG_OK ? tg_malloc(CHUNK * each) : NULL;
  char *text = buf ? tg_malloc((size_t)CHUNK * LINE) : NULL;
  if (st == TG_OK && !text) st = tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  if (st == TG_OK) st = tg_atomic_open(&out, out_path);
  const char *header = kind == TG_TICK_TRADES ? "ts_ns,price,size,side,flags,record\n"
                                              : "ts_ns,bid,ask,bid_size,ask_size,record\n";
  if (st == TG_OK) st = tg_atomic_write(&out, header, strlen(header));
  for (int64_t n = 1; st == TG_OK && n > 0;) {
    st = tg_tick_next(s, buf, CHUNK, &n);
    if (st == TG_OK && n > 0) st = write_chunk(&out, kind, buf, n, text);
  }
  if (st == TG_OK) st = tg_atomic_commit(&out);
  else tg_atomic_abort(&out);
  tg_free(text);
  tg_free(buf);
  tg_tick_close(s);
  return st;
}
