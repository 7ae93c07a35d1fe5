/* The bar reader's side of ticks: bars made from tick files under --by, and a tick file named where bars were wanted. */
#ifndef TG_DATA_TICKS_TICK_FILES_H
#define TG_DATA_TICKS_TICK_FILES_H

#include "tickgrad/ticks.h"

/* Bars from the tick file (folder, glob) path by opts->by, with opts->quotes merged when set; opts->tz is the zone of
 * naive CSV times and opts->warn gets the sources' warnings. Reader options with no meaning for ticks (a column map, a
 * price scale, nulls as NaN) are TG_ERR_INVALID naming them. out is initialised by this call; its bars are not
 * checked here (the caller checks them as it checks a file's). */
tg_status tg_tick_bars_read(const char *path, const tg_read_opts *opts, tg_bars *out);
/* After a bar read of path failed with st: when path holds trade (or quote) ticks, TG status st with a message that
 * says so and names --by; else st with the message as it was. */
tg_status tg_tick_hint_ticks(const char *path, tg_status st);

#endif
