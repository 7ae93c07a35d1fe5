/* Placeholder until the dbn reader lands: refuses every input. */
#include "tickgrad/data.h"

tg_status tg_dbn_parse(const char *path, const void *bytes, size_t len, const tg_read_opts *opts, tg_bars *out) {
  (void)bytes; (void)len; (void)opts; (void)out;
  return tg_error(TG_ERR_UNSUPPORTED, "%s: the dbn reader is not built yet", path);
}
