/* Parallel loops that enter OpenMP only when more than one thread will run them (libgomp allocates a team per one-thread region). */
#ifndef TG_CPU_PAR_H
#define TG_CPU_PAR_H

#include <omp.h>

#define TG_PRAGMA(x) _Pragma(#x)

/* 1 when a parallel region here would get more than one thread. */
static inline int tg_par_ok(void) { return omp_get_max_threads() > 1 && !omp_in_parallel(); }

/* TG_PAR_FOR(cond, clauses, for-statement): the loop under `#pragma omp parallel for clauses` when cond holds and
 * more threads are allowed, else as plain C. An OpenMP region that runs on one thread (an `if` clause that is
 * false, one thread allowed, or a region nested in another) still makes libgomp allocate and free a team, about
 * 0.5 us and a heap call per region: too much for batch-1 inference and for steps that must not allocate. The loop
 * is compiled twice; where the plain copy runs, OpenMP would have run the same loop on one thread, so results do
 * not change. */
#define TG_PAR_FOR(cond, clauses, ...)              \
  do {                                              \
    if ((cond) && tg_par_ok()) {                    \
      TG_PRAGMA(omp parallel for clauses)           \
      __VA_ARGS__                                   \
    } else {                                        \
      __VA_ARGS__                                   \
    }                                               \
  } while (0)

#endif
