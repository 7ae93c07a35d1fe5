/* Calendar arithmetic and time-zone conversion shared by the readers, resampling and features. */
#ifndef TG_DATA_TIMECONV_H
#define TG_DATA_TIMECONV_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/status.h"

#define TG_NS_PER_S 1000000000LL
#define TG_NS_PER_DAY (86400LL * TG_NS_PER_S)

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1-12), and back. */
int64_t tg_days_from_civil(int64_t y, int m, int d);
void tg_civil_from_days(int64_t days, int64_t *y, int *m, int *d);
/* 1 for a valid calendar date. */
int tg_valid_date(int64_t y, int m, int d);

/* A zone name as in /usr/share/zoneinfo ("America/New_York"); NULL, "", "UTC" or "Etc/UTC" mean UTC.
 * Zones are read from their files once per process and answered from memory (tz_zone.c), so the
 * functions below cost tens of nanoseconds; they are thread-safe.
 * 1 when tz means UTC (no file is read). */
int tg_tz_is_utc(const char *tz);
/* Returns TG_ERR_INVALID naming the zone when it is unknown or its file is not a zone file. */
tg_status tg_tz_check(const char *tz);
/* Offset of local time from UTC, in seconds (New York winter: -18000), at the UTC instant. */
tg_status tg_tz_offset_at_utc(const char *tz, int64_t utc_s, int *offset_s);
/* The UTC instant of a local wall-clock time (seconds since the epoch of that wall clock read as
 * if it were UTC). Ambiguous times (the repeated autumn hour) take the first (daylight) one;
 * nonexistent times (the skipped spring hour) move forward by the gap. */
tg_status tg_tz_local_to_utc(const char *tz, int64_t local_s, int64_t *utc_s);
/* The same answers for many times of one zone (a reader's rows): the memo (zero-initialised, one
 * per thread and zone) keeps the span of wall-clock times around the last answer that all convert
 * with its offset, so a time in that span costs two comparisons. */
typedef struct tg_tz_memo {
  int64_t lo, hi; /* local seconds [lo, hi) ... */
  int off;        /* ... are UTC + off; empty when lo >= hi */
} tg_tz_memo;
tg_status tg_tz_local_to_utc_memo(const char *tz, tg_tz_memo *memo, int64_t local_s, int64_t *utc_s);

/* "YYYY-MM-DD HH:MM:SS" (UTC) of an instant in ns; "YYYY-MM-DD HH:MM:SS.fffffffff" when frac. */
const char *tg_format_utc(int64_t ns, int frac, char *buf, size_t n);
/* A bar's time as messages name it: tg_format_utc with the nanoseconds only when the time has a fraction of a second.
 * TG_TIME_TEXT bytes hold any time. Every message that names a time uses this, never the raw nanoseconds. */
#define TG_TIME_TEXT 48
const char *tg_format_time(int64_t ns, char *buf, size_t n);
/* A split's bound as tg_format_time writes it, or "start" (INT64_MIN) and "end" (INT64_MAX) for an open one. */
const char *tg_format_bound(int64_t ns, char *buf, size_t n);
/* A duration as "90s", "5m", "1h", "4d 2h", ... */
const char *tg_format_duration(int64_t ns, char *buf, size_t n);

#endif
