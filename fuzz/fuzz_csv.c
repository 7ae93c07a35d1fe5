/* libFuzzer target: the CSV bar reader must accept or reject any bytes without a crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include "tickgrad/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tg_read_opts o = {0};
  tg_bars b;
  tg_bars_init(&b);
  (void)tg_csv_parse("fuzz.csv", data, size, &o, &b);
  (void)tg_csv_parse("again.csv", data, size, &o, &b); /* into a series that holds the first's bars and columns */
  tg_bars_free(&b);
  /* again as a dated Lean file (milliseconds since midnight) in New York, with NaN for nulls */
  o.tz = "America/New_York";
  o.nulls = TG_NULLS_NAN;
  o.price_scale = 1e-4;
  (void)tg_csv_parse("lean/20131007_fuzz_minute_trade.csv", data, size, &o, &b);
  tg_bars_free(&b);
  return 0;
}
