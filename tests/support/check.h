/* A minimal test harness: CHECK macros, a pass/fail tally and the closing "N passed, N failed" line. */
#ifndef TG_TEST_CHECK_H
#define TG_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include "tickgrad/status.h"

extern int tg_test_passed, tg_test_failed;

/* A check that does not stop the test. */
#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (cond) {                                                                     \
      tg_test_passed++;                                                             \
    } else {                                                                        \
      tg_test_failed++;                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
    }                                                                               \
  } while (0)

#define CHECK_MSG(cond, ...)                                                        \
  do {                                                                              \
    if (cond) {                                                                     \
      tg_test_passed++;                                                             \
    } else {                                                                        \
      tg_test_failed++;                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);      \
      fprintf(stderr, __VA_ARGS__);                                                 \
      fputc('\n', stderr);                                                          \
    }                                                                               \
  } while (0)

/* Expects a tickgrad call to succeed; prints tg_last_error() otherwise. */
#define CHECK_OK(expr)                                                              \
  do {                                                                              \
    tg_status st_ = (expr);                                                         \
    CHECK_MSG(st_ == TG_OK, "%s -> %s: %s", #expr, tg_status_name(st_), tg_last_error()); \
  } while (0)

/* Expects a specific failure status. */
#define CHECK_STATUS(expr, want)                                                    \
  do {                                                                              \
    tg_status st_ = (expr);                                                         \
    CHECK_MSG(st_ == (want), "%s -> %s (want %s): %s", #expr, tg_status_name(st_),  \
              tg_status_name(want), tg_last_error());                               \
  } while (0)

/* Prints "N passed, N failed" and returns the process exit code. */
int tg_test_finish(void);
/* Prints "skipped: <why>" and returns 77 (CTest's skip code in this project). */
int tg_test_skip(const char *why);
/* Seed from TG_TEST_SEED or the default; printed so a failure can be replayed. */
unsigned long long tg_test_seed(unsigned long long fallback);

#endif
