/* The bars' cadence against a run's: a warning line when the median bar interval is not the one a run trained on. */
#include <stdio.h>
#include "data/readers/timeconv.h"
#include "tickgrad/data.h"

int tg_bars_interval_warn(const tg_bars *b, int64_t want_ns, const char *what, FILE *warn) {
  tg_bars_report r;
  if (want_ns <= 0 || !b || tg_bars_inspect(b, &r) != TG_OK || r.median_interval_ns == 0 ||
      r.median_interval_ns == want_ns)
    return 0;
  if (warn) {
    char got[32], want[32];
    fprintf(warn, "warning: %s: the bars' median interval is %s but %s was trained on bars %s apart; its features and "
            "horizons assume that cadence (resample the bars, or train on bars like these)\n", b->source,
            tg_format_duration(r.median_interval_ns, got, sizeof got), what, tg_format_duration(want_ns, want, sizeof want));
  }
  return 1;
}
