/* Ticks from Python: read_ticks (a tick file's records as columns), make_bars (tg_ticks_read_bars), write_bars. */
#include <string.h>
#include "python/core.h"

#define CHUNK 4096

/* The records of a source, grown as read: trades or quotes by kind. */
typedef struct records {
  void *p;
  int64_t n, cap;
  size_t each;
} records;

static tg_status read_all(tg_tick_source *s, records *r) {
  for (;;) {
    if (r->cap - r->n < CHUNK) {
      int64_t cap = r->cap ? r->cap * 2 : 4 * CHUNK;
      void *p = realloc(r->p, (size_t)cap * r->each);
      if (!p) return tg_error(TG_ERR_NOMEM, "read_ticks: out of memory for %lld records", (long long)cap);
      r->p = p, r->cap = cap;
    }
    int64_t got = 0;
    tg_status st = tg_tick_next(s, (char *)r->p + (size_t)r->n * r->each, CHUNK, &got);
    if (st != TG_OK) return st;
    if (got == 0) return TG_OK;
    r->n += got;
  }
}

/* A bytes object of n items of size each, filled from field at offset off of every record. */
static PyObject *column(const records *r, size_t off, size_t size) {
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)r->n * size));
  if (!b) return NULL;
  char *dst = PyBytes_AS_STRING(b);
  const char *src = (const char *)r->p + off;
  for (int64_t i = 0; i < r->n; i++) memcpy(dst + (size_t)i * size, src + (size_t)i * r->each, size);
  return b;
}

static PyObject *counts_dict(const tg_tick_counts *c) {
  return Py_BuildValue("{s:L,s:L,s:L,s:L}", "records", (long long)c->records, "out_of_order",
                       (long long)c->out_of_order, "crossed", (long long)c->crossed, "skipped", (long long)c->skipped);
}

/* The columns of trades (ts, price, size, side, flags) or quotes (ts, bid, ask, bid_size, ask_size) as bytes. */
static PyObject *columns_of(const records *r, tg_tick_kind kind) {
  if (kind == TG_TICK_TRADES)
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N}", "ts", column(r, offsetof(tg_trade, ts), 8), "price",
                         column(r, offsetof(tg_trade, price), 8), "size", column(r, offsetof(tg_trade, size), 8),
                         "side", column(r, offsetof(tg_trade, side), 1), "flags",
                         column(r, offsetof(tg_trade, flags), 1));
  return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N}", "ts", column(r, offsetof(tg_quote, ts), 8), "bid",
                       column(r, offsetof(tg_quote, bid), 8), "ask", column(r, offsetof(tg_quote, ask), 8), "bid_size",
                       column(r, offsetof(tg_quote, bid_size), 8), "ask_size",
                       column(r, offsetof(tg_quote, ask_size), 8));
}

/* read_ticks(path, quotes, tz, order_error, contract) -> (columns {name: bytes}, counts, warnings) */
static PyObject *py_read_ticks(PyObject *self, PyObject *args) {
  (void)self;
  const char *path, *tz = NULL, *contract = NULL;
  int quotes = 0, order_error = 0;
  if (!PyArg_ParseTuple(args, "spzpz", &path, &quotes, &tz, &order_error, &contract)) return NULL;
  tgpy_capture warn;
  if (tgpy_capture_open(&warn) < 0) return NULL;
  tg_tick_opts o = {.tz = tz, .order = order_error ? TG_TICKS_ORDER_ERROR : TG_TICKS_ORDER_DROP, .warn = warn.f,
                    .contract = contract};
  tg_tick_kind kind = quotes ? TG_TICK_QUOTES : TG_TICK_TRADES;
  records r = {.each = quotes ? sizeof(tg_quote) : sizeof(tg_trade)};
  tg_tick_source *s = NULL;
  tg_tick_counts counts;
  memset(&counts, 0, sizeof counts);
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_tick_open(path, kind, &o, &s);
  if (st == TG_OK) st = read_all(s, &r);
  if (st == TG_OK) counts = *tg_tick_source_counts(s);
  tg_tick_close(s);
  Py_END_ALLOW_THREADS
  PyObject *w = tgpy_capture_close(&warn);
  PyObject *out = NULL;
  if (st != TG_OK) tgpy_raise(st, NULL);
  else if (w) out = Py_BuildValue("(NNO)", columns_of(&r, kind), counts_dict(&counts), w);
  free(r.p);
  Py_XDECREF(w);
  return out;
}

/* make_bars(trades, quotes | None, recipe, tz, keep_flagged, no_tick_rule, order_error, contract)
 *   -> (Bars, report {bars, trades, quotes, excluded, floor_hits, cap_hits, trade_counts, quote_counts}, warnings) */
static PyObject *py_make_bars(PyObject *self, PyObject *args) {
  (void)self;
  const char *trades, *quotes = NULL, *recipe, *tz = NULL, *contract = NULL;
  int keep_flagged = 0, no_tick_rule = 0, order_error = 0;
  if (!PyArg_ParseTuple(args, "szszpppz", &trades, &quotes, &recipe, &tz, &keep_flagged, &no_tick_rule, &order_error,
                        &contract))
    return NULL;
  tg_bar_recipe r;
  if (tg_bar_recipe_parse(recipe, &r) != TG_OK) return tgpy_raise(TG_ERR_INVALID, "by");
  PyObject *o = tgpy_bars_new();
  tgpy_capture warn;
  if (!o || tgpy_capture_open(&warn) < 0) {
    Py_XDECREF(o);
    return NULL;
  }
  tg_tick_opts to = {.tz = tz, .order = order_error ? TG_TICKS_ORDER_ERROR : TG_TICKS_ORDER_DROP, .warn = warn.f,
                     .contract = contract};
  tg_bar_opts bo = {.keep_flagged = keep_flagged, .no_tick_rule = no_tick_rule};
  tg_tick_bars_report rep;
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_ticks_read_bars(trades, quotes, &r, &to, &bo, &((tgpy_bars *)o)->b, &rep);
  Py_END_ALLOW_THREADS
  PyObject *w = tgpy_capture_close(&warn);
  if (st != TG_OK || !w) {
    Py_DECREF(o);
    Py_XDECREF(w);
    return st != TG_OK ? tgpy_raise(st, NULL) : NULL;
  }
  const tg_bar_stats *s = &rep.stats;
  PyObject *report = Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:N,s:N}", "bars", (long long)s->bars, "trades",
                                   (long long)s->trades, "quotes", (long long)s->quotes, "excluded",
                                   (long long)s->excluded, "floor_hits", (long long)s->floor_hits, "cap_hits",
                                   (long long)s->cap_hits, "trade_counts", counts_dict(&rep.trades), "quote_counts",
                                   counts_dict(&rep.quotes));
  if (!report) {
    Py_DECREF(o);
    Py_DECREF(w);
    return NULL;
  }
  return Py_BuildValue("(NNN)", o, report, w);
}

/* write_bars(Bars, path): CSV, or Parquet when path ends in .parquet (tg_bars_write). */
static PyObject *py_write_bars(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  const char *path;
  if (!PyArg_ParseTuple(args, "Os", &obj, &path)) return NULL;
  const tg_bars *b = tgpy_bars_of(obj, "bars");
  if (!b) return NULL;
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_bars_write(b, path);
  Py_END_ALLOW_THREADS
  if (st != TG_OK) return tgpy_raise(st, NULL);
  Py_RETURN_NONE;
}

PyMethodDef tgpy_ticks_methods[] = {
    {"read_ticks", py_read_ticks, METH_VARARGS,
     "read_ticks(path, quotes, tz, order_error, contract) -> ({column: bytes}, counts, warnings)"},
    {"make_bars", py_make_bars, METH_VARARGS,
     "make_bars(trades, quotes, recipe, tz, keep_flagged, no_tick_rule, order_error, contract) -> "
     "(Bars, report, warnings)"},
    {"write_bars", py_write_bars, METH_VARARGS, "write_bars(bars, path): CSV, or Parquet by the .parquet extension"},
    {NULL, NULL, 0, NULL},
};
