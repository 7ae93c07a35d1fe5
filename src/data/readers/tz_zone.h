/* Parsed zone files: a process-wide registry of TZif zones and POSIX TZ rules (timeconv.c's fast path). */
#ifndef TG_DATA_TZ_ZONE_H
#define TG_DATA_TZ_ZONE_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/status.h"

/* One change date of a POSIX TZ rule: Jn (day 1-365, February 29 never counted), n (day 0-365,
 * counting February 29) or Mm.w.d (weekday d, 0 = Sunday, of week w, 5 = last, of month m), at
 * secs after local midnight (negative or past 24 hours allowed). */
typedef struct tg_tz_date {
  char kind; /* 'J', 'D' (plain n) or 'M' */
  int m, w, d;
  int32_t secs;
} tg_tz_date;

/* A POSIX TZ string such as "EST5EDT,M3.2.0,M11.1.0" or "<+0330>-3:30". Offsets are seconds east
 * of UTC (the string's sign is the other way round). Without daylight time, dst_off == std_off. */
typedef struct tg_tz_rule {
  int32_t std_off, dst_off;
  int has_dst;
  tg_tz_date start, end; /* into daylight time (read on the standard clock), out of it (daylight clock) */
} tg_tz_rule;

/* Parses the whole of [s, s + n); 1 on success. A daylight name without a rule is not accepted. */
int tg_tz_rule_parse(const char *s, size_t n, tg_tz_rule *r);
/* The rule's offset at a UTC instant. Like the C library, the two changes are computed for the
 * instant's UTC year: daylight time holds between them (or outside them when the end comes first
 * in the year, as south of the equator). [*from, *until) receives the UTC span around utc_s where
 * the answer holds (pointers may be NULL). |utc_s| must be under TG_TZ_RULE_LIMIT. */
#define TG_TZ_RULE_LIMIT (1LL << 52)
int32_t tg_tz_rule_offset(const tg_tz_rule *r, int64_t utc_s, int64_t *from, int64_t *until);

/* A zone read from /usr/share/zoneinfo/<name>, immutable once built and kept for the process. */
typedef struct tg_tz_zone tg_tz_zone;

/* The zone named tz (loaded and registered on first use). TG_ERR_INVALID naming the zone when the
 * file is missing or is not a TZif file. Thread-safe; the zone stays valid for the process. */
tg_status tg_tz_zone_get(const char *tz, const tg_tz_zone **z);
/* The offset at a UTC instant from the zone's tables: 1, or 0 when only the C library can say (a
 * footer this parser does not read, leap-second zones, instants past TG_TZ_RULE_LIMIT). The UTC
 * span [*from, *until) around utc_s where it holds (INT64_MIN, INT64_MAX: unbounded) goes to from
 * and until when they are not NULL. */
int tg_tz_zone_offset(const tg_tz_zone *z, int64_t utc_s, int *off, int64_t *from, int64_t *until);

#endif
