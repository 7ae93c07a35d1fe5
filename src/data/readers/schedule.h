/* A market's weekly bar schedule learnt from bars (local times of day per weekday), and the next bar after an instant. */
#ifndef TG_DATA_SCHEDULE_H
#define TG_DATA_SCHEDULE_H

#include <stdint.h>
#include "tickgrad/status.h"

/* Local times of day at which bars were seen on one weekday: first, first + step, .., count of them (step 0: one). */
typedef struct tg_sched_run {
  int dow;           /* 0 Monday .. 6 Sunday, of the local date */
  int64_t first_ns;  /* time of day, ns after local midnight */
  int64_t step_ns;
  int64_t count;
} tg_sched_run;

typedef struct tg_schedule {
  char tz[64];       /* the zone whose wall clock the times are in ("" : UTC) */
  int n;             /* runs, sorted by weekday then first time; 0: no schedule */
  tg_sched_run *runs;
} tg_schedule;

/* The union over the bars at ts [n] (UTC ns) of their local (weekday, time of day), kept as runs of equal steps.
 * TG_ERR_INVALID naming an unknown zone; TG_ERR_NOMEM. */
tg_status tg_schedule_learn(const int64_t *ts, int64_t n, const char *tz, tg_schedule *out);
/* The first scheduled instant after ts (UTC ns) into *next: the next time of day on ts's local weekday, else the first
 * one of the next weekday that has any (a week ahead at most). *on: 1 when ts itself is a scheduled time. An empty
 * schedule is TG_ERR_INVALID. */
tg_status tg_schedule_next(const tg_schedule *s, int64_t ts, int64_t *next, int *on);
void tg_schedule_free(tg_schedule *s);

#endif
