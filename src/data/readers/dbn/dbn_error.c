/* DBN error messages (file, byte offset, reason) and the schema names they use. */
#include <stdarg.h>
#include <stdio.h>
#include "data/readers/dbn/dbn_internal.h"

tg_status tg_dbn_fail(const tg_dbn_stream *s, tg_status code, size_t off, const char *fmt, ...) {
  char reason[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return tg_error(code, "%s: byte %zu%s: %s", s->path, off, s->decompressed ? " of the decompressed stream" : "",
                  reason);
}

const char *tg_dbn_schema_name(unsigned schema) {
  static const char *const names[] = {"mbo",        "mbp-1",    "mbp-10",   "tbbo",      "trades",
                                      "ohlcv-1s",   "ohlcv-1m", "ohlcv-1h", "ohlcv-1d",  "definition",
                                      "statistics", "status",   "imbalance", "ohlcv-eod", "cmbp-1",
                                      "cbbo-1s",    "cbbo-1m",  "tcbbo",    "bbo-1s",    "bbo-1m"};
  if (schema < sizeof names / sizeof names[0]) return names[schema];
  if (schema == 0xFFFF) return "none";
  return NULL;
}
