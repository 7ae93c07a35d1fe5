/* The extra columns of a bar series, as bars.c keeps them in step with the bars (growth, missing values, append). */
#ifndef TG_DATA_BAR_COLUMNS_H
#define TG_DATA_BAR_COLUMNS_H

#include "tickgrad/data.h"

/* Gives every column room for cap bars, keeping the first n values. 0 when out of memory (the columns that grew
 * keep their new room). */
int tg_bar_columns_grow(tg_bars *b, int64_t n, int64_t cap);
/* Sets bars [from, to) of column c missing. */
void tg_bar_column_set_missing(tg_bar_column *c, int64_t from, int64_t to);
/* The first half of tg_bars_append: checks the kinds of the columns both have, then adds to dst (with missing
 * values) the columns only src has. On failure dst's columns are as they were. */
tg_status tg_bar_columns_match(tg_bars *dst, const tg_bars *src);
/* The second half, once dst has room for src's bars after its own n: writes src's values at rows [dst->n,
 * dst->n + src->n) of every dst column (missing where src lacks it), merging category names. */
tg_status tg_bar_columns_copy(tg_bars *dst, const tg_bars *src);
/* Moves bar i to row k (k <= i), the instrument and the extra columns with it (compacting a series in place). */
void tg_bars_move_row(tg_bars *b, int64_t i, int64_t k);
/* Drops the columns from index keep on (undoing tg_bar_columns_match or a reader's additions). */
void tg_bar_columns_truncate(tg_bars *b, int keep);

#endif
