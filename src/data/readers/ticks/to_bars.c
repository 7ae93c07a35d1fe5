/* One pass from tick sources to bars: trades and quotes merged by time through the builder, in fixed chunks. */
#include <stdio.h>
#include "base/alloc.h"
#include "data/readers/ticks/source_internal.h"

#define CHUNK 4096

/* A source's current chunk and the next record in it. */
typedef struct cursor {
  tg_tick_source *src;
  void *buf;
  int64_t n, at;
} cursor;

/* Refills an empty cursor; *more = 0 at the end of its source (or with no source). */
static tg_status peek(cursor *c, int *more) {
  *more = 0;
  if (!c->src) return TG_OK;
  if (c->at == c->n) {
    tg_status st = tg_tick_next(c->src, c->buf, CHUNK, &c->n);
    c->at = 0;
    if (st != TG_OK) return st;
  }
  *more = c->at < c->n;
  return TG_OK;
}

static tg_status merge(cursor *tc, cursor *qc, tg_bar_builder *b) {
  for (;;) {
    int more_t, more_q;
    tg_status st = peek(tc, &more_t);
    if (st == TG_OK) st = peek(qc, &more_q);
    if (st != TG_OK) return st;
    if (!more_t && !more_q) return TG_OK;
    const tg_trade *t = more_t ? (const tg_trade *)tc->buf + tc->at : NULL;
    const tg_quote *q = more_q ? (const tg_quote *)qc->buf + qc->at : NULL;
    if (q && (!t || q->ts <= t->ts)) {
      qc->at++;
      st = tg_bar_builder_quote(b, q);
    } else {
      tc->at++;
      st = tg_bar_builder_trade(b, t);
    }
    if (st != TG_OK) return st;
  }
}

static tg_status check_kinds(tg_tick_source *trades, tg_tick_source *quotes) {
  if (!trades || tg_tick_source_kind(trades) != TG_TICK_TRADES)
    return tg_error(TG_ERR_INVALID, "ticks to bars: the first source must be a source of trades");
  if (quotes && tg_tick_source_kind(quotes) != TG_TICK_QUOTES)
    return tg_error(TG_ERR_INVALID, "ticks to bars: the second source must be a source of quotes");
  return TG_OK;
}

tg_status tg_ticks_to_bars(tg_tick_source *trades, tg_tick_source *quotes, const tg_bar_recipe *r,
                           const tg_bar_opts *opts, tg_bars *out, tg_bar_stats *stats) {
  tg_bars_init(out);
  tg_status st = check_kinds(trades, quotes);
  if (st != TG_OK) return st;
  tg_bar_opts o = opts ? *opts : (tg_bar_opts){0};
  o.quotes = quotes != NULL;
  cursor tc = {.src = trades, .buf = tg_malloc(CHUNK * sizeof(tg_trade))};
  cursor qc = {.src = quotes, .buf = quotes ? tg_malloc(CHUNK * sizeof(tg_quote)) : NULL};
  tg_bar_builder *b = NULL;
  if (!tc.buf || (quotes && !qc.buf)) st = tg_error(TG_ERR_NOMEM, "ticks to bars: out of memory");
  if (st == TG_OK) st = tg_bar_builder_new(r, &o, out, &b);
  if (st == TG_OK) st = merge(&tc, &qc, b);
  if (st == TG_OK) st = tg_bar_builder_finish(b);
  if (st == TG_OK && stats) *stats = *tg_bar_builder_stats(b);
  tg_bar_builder_free(b);
  tg_free(tc.buf);
  tg_free(qc.buf);
  if (st != TG_OK) {
    tg_bars_free(out);
    return st;
  }
  snprintf(out->source, sizeof out->source, "%.*s", (int)sizeof out->source - 1, trades->name);
  snprintf(out->format, sizeof out->format, "ticks");
  return TG_OK;
}
