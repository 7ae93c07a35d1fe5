/* DBN tick files: not yet read (placeholder replaced by the trades decoder). */
#include "data/ticks/source_internal.h"

tg_status tg_tick_dbn_open(tg_tick_source *s, FILE *f) {
  (void)f;
  return tg_error(TG_ERR_UNSUPPORTED, "%s: DBN tick files are not read yet", s->name);
}
