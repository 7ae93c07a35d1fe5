/* Shared pieces of the benchmark cases: the case signature, a clock, the median. */
#ifndef TG_BENCH_H
#define TG_BENCH_H

/* A case sets itself up, runs warmup untimed and reps timed iterations, and returns 0 with the
 * median microseconds of one iteration in *median_us; 1 on failure; BENCH_SKIP (after printing
 * why) when the machine cannot run it, e.g. a GPU case without a GPU. tickgrad_bench exits with
 * the same status. */
#define BENCH_SKIP 3
typedef int (*bench_fn)(int warmup, int reps, double *median_us);

double bench_now_us(void);
/* Sorts times[n] and returns its median. */
double bench_median(double *times, int n);

#endif
