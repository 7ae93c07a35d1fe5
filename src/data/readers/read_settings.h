/* The settings rows of tg_read_settings, for every table that holds one (the reader flags, the trainer's config). */
#ifndef TG_DATA_READ_SETTINGS_H
#define TG_DATA_READ_SETTINGS_H

#include <stddef.h>
#include "base/settings.h"
#include "tickgrad/data.h"

extern const char *const tg_read_nulls_names[];     /* tg_null_policy's order */
extern const char *const tg_read_dups_names[];      /* tg_dup_policy's order */
extern const char *const tg_read_adjust_names[];    /* tg_adjust's order */

/* What the rows' ranges cannot say: a bar recipe that does not parse is TG_ERR_INVALID naming it. */
tg_status tg_read_settings_check(const tg_read_settings *s);

/* The rows of a tg_read_settings member at byte offset base of a config struct: keys data_columns, data_tz,
 * price_scale, nulls, duplicates, allow_ohlc, skip_bad_files, then the futures rows (TG_READ_ROLL_ROWS: roll,
 * adjust) and the tick rows (TG_READ_TICK_ROWS: bar_recipe, quotes); flags --columns, --data-tz, --price-scale,
 * --nulls, --duplicates, --allow-ohlc, --skip-bad-files, --roll, --adjust, --by, --quotes. */
#define TG_READ_OFF(base, m) ((base) + offsetof(tg_read_settings, m))
#define TG_READ_SETTING_ROWS(base)                                                                                     \
  {.key = "data_columns", .flag = "--columns", .type = TG_SET_STRING, .off = TG_READ_OFF(base, columns),               \
   .size = sizeof(((tg_read_settings *)0)->columns), .arg = "MAP",                                                     \
   .help = "CSV column map, e.g. ts=Date,close=Adj Close (or ts=0,open=1,...; default: found from the header)"},      \
  {.key = "data_tz", .flag = "--data-tz", .type = TG_SET_STRING, .off = TG_READ_OFF(base, tz),                        \
   .size = sizeof(((tg_read_settings *)0)->tz), .arg = "ZONE",                                                         \
   .help = "zone of naive timestamps in the files (default UTC), e.g. America/New_York"},                             \
  {.key = "price_scale", .type = TG_SET_DOUBLE, .off = TG_READ_OFF(base, price_scale), .lo = 0, .hi = 1e300,          \
   .help = "multiply prices by X (Lean equities: 0.0001; default 0: as read)"},                                        \
  {.key = "nulls", .type = TG_SET_ENUM, .off = TG_READ_OFF(base, nulls), .names = tg_read_nulls_names,                \
   .help = "null or missing prices: error (default) or nan"},                                                          \
  {.key = "duplicates", .type = TG_SET_ENUM, .off = TG_READ_OFF(base, duplicates), .names = tg_read_dups_names,       \
   .help = "bars of one instrument sharing a timestamp: error (default), first or last (keep that one)"},             \
  {.key = "allow_ohlc", .type = TG_SET_BOOL, .off = TG_READ_OFF(base, allow_ohlc),                                     \
   .help = "1: let bars through whose high is below open/close/low or low above open/close (default 0: an error)"},   \
  {.key = "skip_bad_files", .type = TG_SET_BOOL, .off = TG_READ_OFF(base, skip_bad_files),                             \
   .help = "1: a folder's or glob's files that cannot be read are skipped, each named on a warning line (default 0)"}, \
  TG_READ_ROLL_ROWS(base),                                                                                           \
  TG_READ_TICK_ROWS(base)

/* Several futures contracts in one source: how the front is chosen and how rolls are back-adjusted. */
#define TG_READ_ROLL_ROWS(base)                                                                                        \
  {.key = "roll", .type = TG_SET_STRING, .off = TG_READ_OFF(base, roll),                                             \
   .size = sizeof(((tg_read_settings *)0)->roll), .arg = "RULE",                                                       \
   .help = "futures contracts in one source: front by volume, open_interest or calendar[:N] (N days before expiry, "  \
           "default 5); default: an error naming them"},                                                              \
  {.key = "adjust", .type = TG_SET_ENUM, .off = TG_READ_OFF(base, adjust), .names = tg_read_adjust_names,             \
   .help = "prices before a roll: difference (default; added), ratio (multiplied) or none"}

/* The tick rows: --by makes bars from tick files as they are read, --quotes merges quote ticks into them. */
#define TG_READ_TICK_ROWS(base)                                                                                        \
  {.key = "bar_recipe", .flag = "--by", .type = TG_SET_STRING, .off = TG_READ_OFF(base, by),                          \
   .size = sizeof(((tg_read_settings *)0)->by), .arg = "RECIPE",                                                       \
   .help = "the data are trade ticks: make bars of them by RECIPE (time:1m, volume:1e4, dollar:5e6; docs/TICKS.md)"}, \
  {.key = "quotes", .flag = "--quotes", .type = TG_SET_STRING, .off = TG_READ_OFF(base, quotes),                       \
   .size = sizeof(((tg_read_settings *)0)->quotes), .arg = "FILE",                                                     \
   .help = "with --by: quote ticks merged into the bars (columns bid, ask, spread_mean, mid)"}

#endif
