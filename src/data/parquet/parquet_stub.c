/* Placeholder until the parquet reader lands: refuses every input. */
#include "tickgrad/data.h"

tg_status tg_parquet_parse(const char *path, const void *bytes, size_t len, const tg_read_opts *opts, tg_bars *out) {
  (void)bytes; (void)len; (void)opts; (void)out;
  return tg_error(TG_ERR_UNSUPPORTED, "%s: the parquet reader is not built yet", path);
}
