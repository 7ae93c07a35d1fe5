/* libFuzzer target for the DBN reader: any bytes, plain or zstd, must give bars (or definitions and statistics) or a
 * clean error. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tickgrad/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tg_read_opts opts;
  memset(&opts, 0, sizeof opts);
  tg_bars bars;
  tg_bars_init(&bars);
  (void)tg_dbn_parse("fuzz.dbn", data, size, &opts, &bars);
  tg_bars_free(&bars);
  /* the other null policy takes another path through the price checks */
  opts.nulls = TG_NULLS_NAN;
  opts.price_scale = 0.01;
  (void)tg_dbn_parse("fuzz.dbn", data, size, &opts, &bars);
  tg_bars_free(&bars);
  /* the same bytes as definition and statistics records */
  tg_dbn_refdata ref;
  if (tg_dbn_refdata_parse("fuzz.dbn", data, size, &ref) == TG_OK) tg_dbn_refdata_free(&ref);
  return 0;
}
