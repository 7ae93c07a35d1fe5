/* Placeholder until resampling lands (the synthetic-market work replaces this file). */
#include "tickgrad/data.h"

tg_status tg_bars_resample(const tg_bars *in, const tg_resample_opts *opts, tg_bars *out) {
  (void)in; (void)opts; (void)out;
  return tg_error(TG_ERR_UNSUPPORTED, "resample: not built yet");
}

tg_status tg_interval_parse(const char *s, int64_t *ns) {
  (void)ns;
  return tg_error(TG_ERR_UNSUPPORTED, "interval '%s': not built yet", s ? s : "");
}
