/* tg_bars_check over long series: each kind of bad bar is found and named by its row wherever it sits (first row, both
 * sides of a block of the vectorised pass, odd and even rows, the last), the first of two is the one named, the
 * relaxations let theirs through, and duplicate times are found in series sorted by time, by instrument, or neither. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/data.h"

enum { N = 10001 };

/* N good bars, an hour apart: low 99.5 <= open 100 and close 100.25 <= high 101, volume 10 (NaN when no_volume). */
static void make(tg_bars *b, int no_volume, int with_instrument) {
  tg_bars_init(b);
  CHECK_OK(tg_bars_reserve(b, N, with_instrument));
  int pushed = 1;
  for (int64_t i = 0; i < N; i++)
    pushed &= tg_bars_push(b, (1609459200LL + 3600 * i) * 1000000000LL, 100, 101, 99.5, 100.25, no_volume ? NAN : 10,
                           0) == TG_OK;
  CHECK(pushed && b->n == N);
}

static int named(const char *row, const char *what) {
  const char *m = tg_last_error();
  int ok = strstr(m, row) && strstr(m, what);
  if (!ok) fprintf(stderr, "message: %s (want '%s' and '%s')\n", m, row, what);
  return ok;
}

typedef struct fault {
  const char *name, *says; /* what the message must hold */
  int column;              /* 0 open, 1 high, 2 low, 3 close, 4 volume */
  double value;
  int nan_ok, ohlc_ok;     /* 1: the relaxation lets it through */
} fault;

static double *column(tg_bars *b, int c) {
  double *cols[5] = {b->open, b->high, b->low, b->close, b->volume};
  return cols[c];
}

static void test_faults(void) {
  const fault faults[] = {
      {"NaN close", "close is NaN", 3, NAN, 1, 0},
      {"NaN high", "high is NaN", 1, NAN, 1, 0},
      {"negative volume", "volume is -1", 4, -1, 0, 0},
      {"high below close", "the high must be", 1, 100.1, 0, 1},
      {"low above open", "the low <= open", 2, 100.2, 0, 1},
      {"zero low", "low is 0", 2, 0, 0, 0},
      {"huge high", "high is 1.0000000000000001e+300", 1, 1e300, 0, 0},
      {"infinite open", "open is inf", 0, INFINITY, 0, 0},
      {"subnormal close", "close is", 3, 1e-310, 0, 0},
  };
  const int64_t rows[] = {0, 1, 2, 4094, 4095, 4096, 4097, 8191, 8192, N - 2, N - 1};
  for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
      tg_bars b;
      make(&b, 0, 0);
      column(&b, faults[f].column)[rows[r]] = faults[f].value;
      tg_read_opts o;
      memset(&o, 0, sizeof o);
      char row[64];
      snprintf(row, sizeof row, "src: row %lld (", (long long)rows[r] + 1);
      CHECK_MSG(tg_bars_check(&b, &o, "src") == TG_ERR_FORMAT && named(row, faults[f].says), "%s at row %lld",
                faults[f].name, (long long)rows[r]);
      o.nulls = TG_NULLS_NAN;
      CHECK_MSG((tg_bars_check(&b, &o, "src") == TG_OK) == faults[f].nan_ok, "%s at row %lld with nulls NaN",
                faults[f].name, (long long)rows[r]);
      o.nulls = TG_NULLS_ERROR;
      o.allow_ohlc = 1;
      CHECK_MSG((tg_bars_check(&b, &o, "src") == TG_OK) == faults[f].ohlc_ok, "%s at row %lld with allow_ohlc",
                faults[f].name, (long long)rows[r]);
      tg_bars_free(&b);
    }
  }
  /* two faults: the earlier row is named, whichever kind it is and in whichever block */
  tg_bars b;
  make(&b, 0, 0);
  b.volume[9000] = -2;
  b.high[4100] = 99;
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  CHECK(tg_bars_check(&b, &o, "src") == TG_ERR_FORMAT && named("row 4101 (", "the high must be"));
  b.close[4097] = NAN; /* a NaN allowed before a bad bar of the same block: the bad bar is still found */
  o.nulls = TG_NULLS_NAN;
  CHECK(tg_bars_check(&b, &o, "src") == TG_ERR_FORMAT && named("row 4101 (", "the high must be"));
  o.allow_ohlc = 1;
  CHECK(tg_bars_check(&b, &o, "src") == TG_ERR_FORMAT && named("row 9001 (", "volume is -2"));
  b.volume[9000] = 1;
  CHECK_OK(tg_bars_check(&b, &o, "src"));
  tg_bars_free(&b);
  /* a file without volumes (NaN) passes, with the OHLC order checked or not */
  make(&b, 1, 0);
  memset(&o, 0, sizeof o);
  CHECK_OK(tg_bars_check(&b, &o, "src"));
  o.allow_ohlc = 1;
  CHECK_OK(tg_bars_check(&b, &o, "src"));
  tg_bars_free(&b);
}

static void test_duplicates(void) {
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  tg_bars b;
  make(&b, 0, 0);
  b.ts[7000] = b.ts[6999]; /* rising times but for one repeat */
  CHECK(tg_bars_check(&b, &o, "src") == TG_ERR_FORMAT && named("row 7000 (", "and row 7001 share one timestamp"));
  b.ts[7000] = b.ts[6999] + 1;
  CHECK_OK(tg_bars_check(&b, &o, "src"));
  tg_bars_free(&b);
  /* two instruments: sorted by instrument then time, by time then instrument, and interleaved in no order */
  make(&b, 0, 1);
  for (int64_t i = 0; i < N; i++)
    b.instrument[i] = i < N / 2 ? 1 : 2, b.ts[i] = (i < N / 2 ? i : i - N / 2) * 60000000000LL;
  CHECK_OK(tg_bars_check(&b, &o, "src"));
  for (int64_t i = 0; i < N; i++) b.instrument[i] = (uint32_t)(i % 2), b.ts[i] = (i / 2) * 60000000000LL;
  CHECK_OK(tg_bars_check(&b, &o, "src"));
  for (int64_t i = 0; i < N; i++) b.instrument[i] = (uint32_t)(i % 3), b.ts[i] = ((i * 7919) % N) * 60000000000LL;
  CHECK_OK(tg_bars_check(&b, &o, "src"));
  b.ts[5] = b.ts[8]; /* rows 6 and 9: both instrument 2 */
  CHECK(tg_bars_check(&b, &o, "src") == TG_ERR_FORMAT && named("row 6 (", "and row 9 share one timestamp"));
  b.instrument[8] = 0;
  CHECK_OK(tg_bars_check(&b, &o, "src")); /* the same time for another instrument is no duplicate */
  tg_bars_free(&b);
}

int main(void) {
  test_faults();
  test_duplicates();
  return tg_test_finish();
}
