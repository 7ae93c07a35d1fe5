/* Shared pieces of the benchmark cases: the case signature, a clock, the median, the precision, the roofline pass. */
#ifndef TG_BENCH_H
#define TG_BENCH_H

#include "tickgrad/graph.h"

/* A case sets itself up, runs warmup untimed and reps timed iterations, and returns 0 with the
 * median microseconds of one iteration in *median_us; 1 on failure; BENCH_SKIP (after printing
 * why) when the machine cannot run it, e.g. a GPU case without a GPU. tickgrad_bench exits with
 * the same status. */
#define BENCH_SKIP 3
typedef int (*bench_fn)(int warmup, int reps, double *median_us);

double bench_now_us(void);
/* Sorts times[n] and returns its median. */
double bench_median(double *times, int n);

/* --precision: what the training-step cases and gemm_peak plan their graphs with (fp32 unless given). */
extern tg_precision bench_precision;

/* Lines a case leaves for tickgrad_bench to print after "<case> <median us>" (the roofline line, gemm_peak's peak and
 * ISA lines), each ending in a newline; "" when none. */
extern char bench_extra[16384];
/* Appends a formatted line to bench_extra. */
void bench_extra_add(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* --ops: the roofline pass also leaves one line per op kind, "op <case> <op> key=value..." (bench_profile.c). */
extern int bench_ops;

/* One training step of a case (0: done, else failed). */
typedef int (*bench_step_fn)(void *ctx);

/* Times a training-step case: warmup untimed steps, then reps timed ones (the median into *median_us); then the
 * roofline pass (bench_profile.c): max(3, reps / 4) more steps with the profile of graphs[0..n) on, which leaves the
 * line "roofline <case> ..." in bench_extra. Returns 0, or 1 when a step or the profile failed. */
int bench_time_step(const char *name, bench_step_fn step, void *ctx, tg_graph *const *graphs, int n_graphs,
                    int warmup, int reps, double *median_us);

/* The ISA line: "isa simd=<tickgrad devices' SIMD level> avx512f=yes|no avx512_bf16=yes|no amx_bf16=yes|no"
 * (the last three from /proc/cpuinfo's flags; "?" where it cannot be read), into bench_extra (bench_isa.c). */
void bench_isa_line(void);

#endif
