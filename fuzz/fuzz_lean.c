/* libFuzzer target for Lean tick rows: any bytes, read as a zip member's lines into trades, into the quote book and as
 * open interest rows, must give records or a clean error (the zip itself is libzip's to check); a trade row and the
 * same row after a blank (which only the general path reads) must give the same trade or both fail. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/ticks/lean_internal.h"

typedef struct bytes {
  const uint8_t *p;
  size_t n, at;
} bytes;

static tg_status read_bytes(void *ctx, char *buf, size_t cap, size_t *got) {
  bytes *b = ctx;
  *got = b->n - b->at < cap ? b->n - b->at : cap;
  memcpy(buf, b->p + b->at, *got);
  b->at += *got;
  return TG_OK;
}

/* Aborts unless row [p, e) reads as the same row after a leading blank: the one-pass reading of plain trade rows must
 * agree with the general one, which trims the blank. */
static void same_after_blank(tg_tick_source *s, tg_lean_impl *L, const char *p, const char *e) {
  static char padded[TG_TICK_LINE_MAX + 1];
  size_t n = (size_t)(e - p);
  padded[0] = ' ';
  memcpy(padded + 1, p, n);
  tg_trade a, b;
  int made_a = 0, made_b = 0;
  tg_status sa = tg_lean_row(s, L, p, e, &a, &made_a), sb = tg_lean_row(s, L, padded, padded + n + 1, &b, &made_b);
  if (sa != sb) abort();
  if (sa == TG_OK && (made_a != made_b || a.ts != b.ts || memcmp(&a.price, &b.price, sizeof a.price) != 0 ||
                      a.size != b.size || a.flags != b.flags || a.side != b.side || a.line != b.line))
    abort();
}

static void rows(const uint8_t *data, size_t size, tg_tick_kind kind, double scale) {
  tg_tick_source *s = NULL;
  if (tg_tick_source_alloc("fuzz.zip:20131007_x_Trade_Tick.csv", kind, NULL, &s) != TG_OK) return;
  tg_lean_impl L = {.scale = scale, .day_s = tg_days_from_civil(2013, 10, 7) * 86400};
  bytes b = {data, size, 0};
  tg_quote rec; /* large enough for a tg_trade too */
  if (tg_line_reader_init_read(&L.lr, read_bytes, &b, s->name) == TG_OK) {
    const char *p, *e;
    int got = 1, made;
    while (tg_line_next(&L.lr, &p, &e, &got) == TG_OK && got) {
      if (kind == TG_TICK_TRADES) same_after_blank(s, &L, p, e);
      if (tg_lean_row(s, &L, p, e, &rec, &made) != TG_OK) break;
      int64_t n = made;
      if (tg_tick_check(s, &rec, &n) != TG_OK) break;
    }
  }
  tg_line_reader_free(&L.lr);
  tg_free(s);
}

/* ms,open_interest rows, as the continuous futures read them beside trades. */
static void open_interest(const uint8_t *data, size_t size) {
  tg_tick_source *s = NULL;
  if (tg_tick_source_alloc("fuzz.zip:20131007_gc_tick_openinterest_201312.csv", TG_TICK_TRADES, NULL, &s) != TG_OK)
    return;
  tg_lean_impl L = {.scale = 1, .day_s = tg_days_from_civil(2013, 10, 7) * 86400};
  bytes b = {data, size, 0};
  if (tg_line_reader_init_read(&L.lr, read_bytes, &b, s->name) == TG_OK) {
    const char *p, *e;
    int got = 1;
    int64_t ts;
    double oi;
    while (tg_line_next(&L.lr, &p, &e, &got) == TG_OK && got && tg_lean_oi_row(s, &L, p, e, &ts, &oi) == TG_OK) {
    }
  }
  tg_line_reader_free(&L.lr);
  tg_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rows(data, size, TG_TICK_TRADES, 10000);
  rows(data, size, TG_TICK_QUOTES, 1);
  open_interest(data, size);
  return 0;
}
