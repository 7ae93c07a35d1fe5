/* The one monotonic clock: seconds since an arbitrary start, for durations and rates. */
#ifndef TG_BASE_CLOCK_H
#define TG_BASE_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in seconds (never goes back; unrelated to the wall clock). */
double tg_clock_seconds(void);

#ifdef __cplusplus
}
#endif
#endif
