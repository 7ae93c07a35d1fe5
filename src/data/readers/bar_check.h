/* The bar checks over streamed rows: tg_bars_check naming lines from a given one instead of the file's rows. */
#ifndef TG_DATA_BAR_CHECK_H
#define TG_DATA_BAR_CHECK_H

#include "tickgrad/data.h"

/* tg_bars_check with bar i named as line (line + i) of source. */
tg_status tg_bars_check_line(const tg_bars *b, const tg_read_opts *opts, const char *source, int64_t line);

#endif
