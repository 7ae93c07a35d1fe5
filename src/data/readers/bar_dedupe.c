/* Duplicate times in a sorted series: an error naming them, or all but the first or the last of each kept. */
#include <stdio.h>
#include <string.h>
#include "data/readers/bar_columns.h"
#include "data/readers/timeconv.h"
#include "tickgrad/data.h"

static int same(const tg_bars *b, int64_t i, int64_t j) {
  return b->ts[i] == b->ts[j] && (!b->instrument || b->instrument[i] == b->instrument[j]);
}

/* The first bar whose time equals the one before it (b->n when none): where a duplicate can start. */
static int64_t first_repeat(const tg_bars *b) {
  const int64_t *ts = b->ts;
  for (int64_t i = 1; i < b->n; i++)
    if (ts[i] == ts[i - 1]) return i;
  return b->n;
}

tg_status tg_bars_dedupe(tg_bars *b, tg_dup_policy policy, const char *what) {
  int64_t start = first_repeat(b); /* the rows before it are neither duplicates nor moved */
  if (start == b->n) return TG_OK;
  int64_t k = start - 1;
  for (int64_t i = start - 1; i < b->n; i++) {
    int dup_prev = i > 0 && same(b, i, i - 1), dup_next = i + 1 < b->n && same(b, i, i + 1);
    if (dup_prev && policy == TG_DUPS_ERROR) {
      char t[48], inst[40] = "";
      if (b->instrument) snprintf(inst, sizeof inst, " of instrument %u", b->instrument[i]);
      return tg_error(TG_ERR_FORMAT, "%s: two bars%s share the time %s (they come from different files); duplicate "
                      "times are an error (give --duplicates first or last to keep one of them)", what, inst,
                      tg_format_time(b->ts[i], t, sizeof t));
    }
    if ((policy == TG_DUPS_FIRST && dup_prev) || (policy == TG_DUPS_LAST && dup_next)) continue;
    if (k != i) tg_bars_move_row(b, i, k);
    k++;
  }
  b->n = k;
  return TG_OK;
}
