/* The number parser behind every setting and flag value of the library: whole strings, closed ranges. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include "base/parse.h"

/* strtod and strtoll skip leading blanks; a value given as text must not start with one. */
static int starts_ok(const char *text) { return text && *text && !isspace((unsigned char)*text); }

tg_status tg_parse_double(const char *text, double lo, double hi, const char *what, double *out) {
  char *end;
  if (!starts_ok(text)) return tg_error(TG_ERR_INVALID, "%s: '%s' is not a number", what, text ? text : "");
  double v = strtod(text, &end); /* beyond the doubles: an infinity, which the range then judges */
  if (*end || isnan(v))
    return tg_error(TG_ERR_INVALID, "%s: '%s' is not a number", what, text);
  if (!(v >= lo && v <= hi))
    return tg_error(TG_ERR_INVALID, "%s: %s is out of range; want a number in [%g, %g]", what, text, lo, hi);
  *out = v;
  return TG_OK;
}

tg_status tg_parse_int64(const char *text, int64_t lo, int64_t hi, const char *what, int64_t *out) {
  char *end;
  const char *digits = text && (*text == '-' || *text == '+') ? text + 1 : text;
  if (!starts_ok(text) || !isdigit((unsigned char)*digits))
    return tg_error(TG_ERR_INVALID, "%s: '%s' is not a whole number", what, text ? text : "");
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (*end) return tg_error(TG_ERR_INVALID, "%s: '%s' is not a whole number", what, text);
  if (errno == ERANGE || v < lo || v > hi)
    return tg_error(TG_ERR_INVALID, "%s: %s is out of range; want a whole number in [%" PRId64 ", %" PRId64 "]", what,
                    text, lo, hi);
  *out = (int64_t)v;
  return TG_OK;
}

tg_status tg_parse_uint64(const char *text, const char *what, uint64_t *out) {
  char *end;
  if (!text || !isdigit((unsigned char)*text))
    return tg_error(TG_ERR_INVALID, "%s: '%s' is not an unsigned 64-bit integer", what, text ? text : "");
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (*end) return tg_error(TG_ERR_INVALID, "%s: '%s' is not an unsigned 64-bit integer", what, text);
  if (errno == ERANGE)
    return tg_error(TG_ERR_INVALID, "%s: %s is out of range; want a whole number in [0, %" PRIu64 "]", what, text,
                    UINT64_MAX);
  *out = (uint64_t)v;
  return TG_OK;
}
