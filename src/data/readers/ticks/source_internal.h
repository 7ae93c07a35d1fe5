/* Tick sources inside: the common record checks around each format's reader of raw records. */
#ifndef TG_DATA_TICKS_SOURCE_INTERNAL_H
#define TG_DATA_TICKS_SOURCE_INTERNAL_H

#include <stdio.h>
#include "tickgrad/ticks.h"

struct tg_tick_source {
  tg_tick_kind kind;
  char name[512];       /* the file, for messages */
  const char *unit;     /* what a record's line counts: "line" (CSV) or "record" (DBN, memory) */
  char tz[64];
  tg_tick_opts opts;    /* opts.tz points at tz */
  tg_tick_counts counts;
  int64_t last_ts;      /* INT64_MIN before the first record */
  char format[32];      /* tg_tick_source_format: set by the format's open */
  char contracts[256];  /* Lean futures: the expiries named so far, ", " between them */
  uint32_t ids[TG_TICK_MAX_INSTRUMENTS]; /* DBN, lenient: the distinct instruments so far (counts.instruments) */
  /* Up to cap raw records into buf, *n = 0 at the end; errors name the file and line. */
  tg_status (*fill)(tg_tick_source *s, void *buf, int64_t cap, int64_t *n);
  void (*close)(tg_tick_source *s); /* frees impl */
  void *impl;
};

/* A new source of kind named name (calloc'd, opts copied); the caller sets fill, close and impl. */
tg_status tg_tick_source_alloc(const char *name, tg_tick_kind kind, const tg_tick_opts *opts, tg_tick_source **out);
/* Checks the n records in buf, drops out-of-order and crossed ones (counted, the first of each warned) and returns the
 * count kept in *n; an error names the file, the record's line and the value. */
tg_status tg_tick_check(tg_tick_source *s, void *buf, int64_t *n);

/* The formats (tick_csv.c, tick_dbn.c): f is open at its start; on success the source owns it. */
tg_status tg_tick_csv_open(tg_tick_source *s, FILE *f);
tg_status tg_tick_dbn_open(tg_tick_source *s, FILE *f);
/* Lean's tick zips (tick_lean.c): path is one zip, a folder of them or a glob; the zips open as they are read. */
tg_status tg_tick_lean_open(tg_tick_source *s, const char *path);
/* The futures contracts of an open Lean source's zips into out (empty on entry): each zip's members listed, none read. */
tg_status tg_tick_lean_contracts(tg_tick_source *s, tg_tick_contracts *out);

/* Open interest over time: (ts, value) rows in time order. */
typedef struct tg_oi_series {
  int64_t *ts;
  double *value;
  int64_t n, cap;
} tg_oi_series;
void tg_oi_series_free(tg_oi_series *o);
/* Appends (ts, v) to o; TG_ERR_NOMEM naming name. */
tg_status tg_oi_series_push(tg_oi_series *o, int64_t ts, double v, const char *name);
/* The open interest of contract from the YYYYMMDD_openinterest.zip beside each of an open Lean trade source's zips
 * (the same folder and date; a day without one, or without the contract in it, gives none) into out (empty on entry).
 * Errors name the zip, member, line and value. */
tg_status tg_tick_lean_open_interest(tg_tick_source *s, const char *contract, tg_oi_series *out);

/* DBN contracts (tick_dbn_contracts.c). The outright futures contracts of an open DBN source that has been read to
 * its end leniently (its instruments counted) into out (empty on entry; none unless they are named contracts of one
 * root, spreads and options counted and left out). */
tg_status tg_tick_dbn_contracts(tg_tick_source *s, tg_tick_contracts *out);
/* A DBN source opened for one contract (opts.contract): the open interest of the statistics files beside it (stat type
 * open interest, by ts_event, deletions left out) into out (empty on entry), and its latest definition (NULL without
 * one). */
tg_status tg_tick_dbn_open_interest(tg_tick_source *s, tg_oi_series *out);
const tg_instrument_def *tg_tick_dbn_definition(const tg_tick_source *s);

#endif
