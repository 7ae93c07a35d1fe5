/* DBN definitions and statistics written as CSV (exact numbers), for cross-checks against Databento's decoder. */
#include <stdio.h>
#include <string.h>
#include "base/files.h"
#include "data/readers/dbn/dbn_internal.h"

#define LINE 320 /* a record's line at most: a 71-byte symbol and a few 20-digit numbers */

static tg_status write_line(tg_atomic_file *out, const char *text, int n) {
  return tg_atomic_write(out, text, (size_t)(n > 0 && n < LINE ? n : 0));
}

tg_status tg_dbn_refdata_dump(const tg_dbn_refdata *r, const char *out_path) {
  tg_atomic_file out;
  tg_status st = tg_atomic_open(&out, out_path);
  char line[LINE];
  int defs = r->n_defs > 0 || r->n_stats == 0;
  const char *header = defs ? "record,ts_ns,instrument_id,raw_symbol,instrument_class,expiration,multiplier,tick_size\n"
                            : "record,ts_ns,instrument_id,stat_type,update_action,ts_ref,price,quantity\n";
  if (st == TG_OK) st = tg_atomic_write(&out, header, strlen(header));
  for (int64_t i = 0; defs && st == TG_OK && i < r->n_defs; i++) {
    const tg_instrument_def *d = &r->defs[i];
    char cls[2] = {d->instrument_class, 0};
    st = write_line(&out, line,
                    snprintf(line, LINE, "%lld,%lld,%u,%s,%s,%lld,%.17g,%.17g\n", (long long)d->record,
                             (long long)d->ts, d->id, d->symbol, cls, (long long)d->expiration, d->multiplier,
                             d->tick_size));
  }
  for (int64_t i = 0; !defs && st == TG_OK && i < r->n_stats; i++) {
    const tg_dbn_stat *s = &r->stats[i];
    st = write_line(&out, line,
                    snprintf(line, LINE, "%lld,%lld,%u,%u,%u,%lld,%.17g,%.17g\n", (long long)s->record,
                             (long long)s->ts, s->id, (unsigned)s->type, (unsigned)s->update_action,
                             (long long)s->ts_ref, s->price, s->quantity));
  }
  if (st == TG_OK) return tg_atomic_commit(&out);
  tg_atomic_abort(&out);
  return st;
}
