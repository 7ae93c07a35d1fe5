/* One number parser for user text: the whole string, a closed range, errors naming what was parsed and where. */
#ifndef TG_BASE_PARSE_H
#define TG_BASE_PARSE_H

#include <stdint.h>
#include "tickgrad/status.h"

/* text (all of it: no leading or trailing blanks, no junk) as a double in [lo, hi]. NaN is never a number here;
 * an infinity only where the range includes it. what names the value and its source ("config: lr (--lr)"); an error
 * is TG_ERR_INVALID "<what>: '<text>' is not a number" or "<what>: <v> is out of range; want a number in [lo, hi]". */
tg_status tg_parse_double(const char *text, double lo, double hi, const char *what, double *out);
/* text as a decimal integer (an optional sign, digits) in [lo, hi]; overflow of int64 is an error. */
tg_status tg_parse_int64(const char *text, int64_t lo, int64_t hi, const char *what, int64_t *out);
/* text as an unsigned decimal integer (digits only) that fits 64 bits. */
tg_status tg_parse_uint64(const char *text, const char *what, uint64_t *out);

#endif
