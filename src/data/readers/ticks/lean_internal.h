/* Lean's AlgoSeek tick zips inside: the source's state, member names and row parsing (tick_lean*.c). */
#ifndef TG_DATA_TICKS_LEAN_INTERNAL_H
#define TG_DATA_TICKS_LEAN_INTERNAL_H

#include "data/readers/ticks/csv_lines.h"
#include "data/readers/ticks/source_internal.h"
#include "data/readers/ticks/tick_zip.h"
#include "data/readers/timeconv.h"

#define TG_LEAN_TZ "America/New_York" /* the zone of every Lean tick time (ms since the exchange day's midnight) */

/* What a member's name says: equity YYYYMMDD_sym_Trade_Tick.csv (_Quote_Tick), futures
 * YYYYMMDD_sym_tick_trade_YYYYMM.csv (_tick_quote_, _tick_openinterest_). */
typedef enum tg_lean_what { TG_LEAN_TRADES, TG_LEAN_QUOTES, TG_LEAN_OPEN_INTEREST } tg_lean_what;
typedef struct tg_lean_member {
  tg_lean_what what;
  int futures;      /* prices in dollars (equity: 1/10,000 dollar) */
  char contract[8]; /* futures: the expiry YYYYMM */
} tg_lean_member;

typedef struct tg_lean_impl {
  char root[512];  /* the zip, folder or glob opened, for messages */
  char **paths;   /* the zips in date order */
  int64_t n_paths, next;
  char contract[16]; /* the futures contract asked for, "" for none */
  char read[16];     /* the contract of the member read now ("" for equity) */
  int64_t members;   /* members read so far (a contract asked for must be in some zip) */
  char held[256];    /* the contracts of the last zip without the one asked for, for the error if none has it */
  tg_zip *zip;       /* the zip read now (NULL between files) */
  tg_zip_buffers buffers; /* the members read whole, kept from one zip to the next */
  tg_line_reader lr; /* its member's lines */
  int64_t day_s;     /* the zip's date at 00:00 as naive seconds */
  double scale;      /* price units per dollar */
  tg_tz_memo memo;
  double bid, bid_size, ask, ask_size; /* the book so far this day (0: that side not known yet) */
} tg_lean_impl;

/* Reads member name (of the zip at path whose date is yyyymmdd) into *m; an error names both when it is not a Lean
 * tick CSV of that date. */
tg_status tg_lean_member_parse(const char *path, const char *name, const char *yyyymmdd, tg_lean_member *m);
/* One data line [p, e) into *rec (a tg_trade or tg_quote by s->kind); *made = 0 when the row makes no record (a trade
 * of size 0, a suspicious quote row, a quote before both sides are known: counted as skipped). Errors name s->name
 * (zip:member), the line and the value. */
tg_status tg_lean_row(tg_tick_source *s, tg_lean_impl *L, const char *p, const char *e, void *rec, int *made);
/* One open interest row ms,open_interest [p, e) into its time (ns UTC) and value (not negative); errors as
 * tg_lean_row's. */
tg_status tg_lean_oi_row(tg_tick_source *s, tg_lean_impl *L, const char *p, const char *e, int64_t *ts, double *oi);

#endif
